/*
 * http_v2_fields.c: a request's header block, from the client's HPACK to
 * the stream's fields (rx_http_v2_stream_header), with RFC 9113's rules
 * for requests (8.2, 8.3) checked on the way: a malformed request (8.1.1)
 * resets its stream with PROTOCOL_ERROR and is logged, the block is still
 * decoded to its end (the client's table must stay in step). What the
 * request layer checks again (the request line, Host, the limits of
 * large_client_header_buffers as 400/414/494) it checks as for HTTP/1.1.
 * Also the request body's DATA against its content-length.
 */
#include "http_v2_int.h"

/* the pseudo-header fields of a request, as bits */
#define PS_METHOD     0x01
#define PS_SCHEME     0x02
#define PS_PATH       0x04
#define PS_AUTHORITY  0x08

typedef struct {
    rx_http_v2_conn_t   *h2;
    rx_http_v2_stream_t *st;         /* NULL: the block is only decoded */
    size_t               limit;      /* decoded bytes a request may have */
    unsigned             pseudo;     /* PS_* seen */
    bool                 connect;    /* :method CONNECT */
    const char          *why;        /* the first malformation */
} fields_t;

/* The HPACK decoder's scratch: one per worker (decoding is synchronous),
 * grown to the largest max_field a server asked for. */
static u_char *scratch;
static size_t  scratch_size;

/* A name's bytes (RFC 9110 5.1's token, lower case: RFC 9113 8.2.1). */
static bool
name_ok(const u_char *p, size_t n)
{
    /* 1: a byte a name may hold */
    static const uint8_t tchar[256] = {
        ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
        ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
        ['`'] = 1, ['|'] = 1, ['~'] = 1,
        ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
        ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
        ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
        ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
        ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
        ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
        ['y'] = 1, ['z'] = 1
    };
    size_t i;

    for (i = 0; i < n; i++) {
        if (!tchar[p[i]]) {
            return false;
        }
    }
    return n > 0;
}

/* A value: no NUL, CR or LF, no white space at its ends (8.2.1). */
static bool
value_ok(const u_char *p, size_t n)
{
    size_t i;

    if (n && (p[0] == ' ' || p[0] == '\t' || p[n - 1] == ' '
              || p[n - 1] == '\t')) {
        return false;
    }
    for (i = 0; i < n; i++) {
        if (p[i] == '\0' || p[i] == '\r' || p[i] == '\n') {
            return false;
        }
    }
    return true;
}

static bool
is(const u_char *p, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* Bytes a client sent, for a log line: printable ASCII as is, the rest
 * as \xNN, at most size - 1 characters. */
static void
escape(char *out, size_t size, const u_char *in, size_t len)
{
    size_t i, n = 0;

    for (i = 0; i < len && n + 5 < size; i++) {
        n += (size_t) (in[i] >= 0x20 && in[i] < 0x7f && in[i] != '\\'
            ? snprintf(out + n, size - n, "%c", in[i])
            : snprintf(out + n, size - n, "\\x%02x", in[i]));
    }
    out[n] = '\0';
}

/* A pseudo-header field: known, once, before every regular one. */
static const char *
pseudo_field(fields_t *f, const u_char *name, size_t nlen,
    const u_char *value, size_t vlen)
{
    unsigned bit;

    if (f->st->regular_seen) {
        return "a pseudo-header field after a regular one";
    }
    bit = is(name, nlen, ":method") ? PS_METHOD
        : is(name, nlen, ":scheme") ? PS_SCHEME
        : is(name, nlen, ":path") ? PS_PATH
        : is(name, nlen, ":authority") ? PS_AUTHORITY : 0;
    if (bit == 0) {
        return "an unknown pseudo-header field";
    }
    if (f->pseudo & bit) {
        return "a pseudo-header field twice";
    }
    f->pseudo |= bit;
    if (bit == PS_PATH && vlen == 0) {
        return "an empty :path";
    }
    if (bit == PS_METHOD && is(value, vlen, "CONNECT")) {
        f->connect = true;
    }
    return NULL;
}

/* A regular field: not HTTP/1.1's connection-specific ones (8.2.2), TE
 * only "trailers", one content-length. */
static const char *
regular_field(fields_t *f, const u_char *name, size_t nlen,
    const u_char *value, size_t vlen)
{
    rx_http_v2_stream_t *st = f->st;
    int64_t              n = 0;
    size_t               i;

    st->regular_seen = true;
    if (is(name, nlen, "connection") || is(name, nlen, "keep-alive")
        || is(name, nlen, "proxy-connection")
        || is(name, nlen, "transfer-encoding") || is(name, nlen, "upgrade")) {
        return "a connection-specific field";
    }
    if (is(name, nlen, "te") && !is(value, vlen, "trailers")) {
        return "TE other than \"trailers\"";
    }
    if (is(name, nlen, "content-length")) {
        for (i = 0; i < vlen; i++) {
            if (value[i] < '0' || value[i] > '9' || n > (INT64_MAX - 9) / 10) {
                return "an invalid content-length";
            }
            n = n * 10 + (value[i] - '0');
        }
        if (vlen == 0 || (st->content_length >= 0 && st->content_length != n)) {
            return "an invalid content-length";
        }
        st->content_length = n;
    }
    return NULL;
}

/* The decoder's handler: one field of the block. */
static int
field(void *data, const u_char *name, size_t nlen, const u_char *value,
    size_t vlen, rx_uint_t never_indexed)
{
    fields_t            *f = data;
    rx_http_v2_stream_t *st = f->st;
    char                 shown[128];

    (void) never_indexed;
    if (st == NULL || st->malformed || st->too_large) {
        return 0;                      /* decoded only: the table's step */
    }
    /* HPACK bombs: what the fields decode to is bounded as an HTTP/1.1
     * header is, by large_client_header_buffers */
    st->header_bytes += nlen + vlen + 4;
    if (st->header_bytes > f->limit) {
        st->too_large = true;
        rx_http_log_error_action(f->h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent too large header in HTTP/2 stream %d", (int) st->id);
        return 0;
    }
    if (!name_ok(name + (nlen && name[0] == ':'), nlen - (nlen && name[0] == ':'))) {
        escape(shown, sizeof(shown), name, nlen);
        rx_http_log_error_action(f->h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent invalid header \"%s\" in HTTP/2 stream %d",
            shown, (int) st->id);
        st->malformed = true;
        f->why = "an invalid field name";
        return 0;
    }
    f->why = !value_ok(value, vlen) ? "an invalid field value"
             : name[0] == ':' ? pseudo_field(f, name, nlen, value, vlen)
             : regular_field(f, name, nlen, value, vlen);
    if (f->why) {
        st->malformed = true;
        return 0;
    }
    return rx_http_v2_stream_header(st, name, nlen, value, vlen) == 0 ? 0 : 1;
}

/* The block's HPACK error as the connection's end, in nginx's words for
 * a field beyond large_client_header_buffers' size. */
static void
decode_failed(rx_http_v2_conn_t *h2, int rc)
{
    if (rc == RX_HPACK_FIELD_TOO_LONG) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent too large header field, closing HTTP/2 connection");
        rx_h2_session_terminate(h2->session, RX_H2_ENHANCE_YOUR_CALM);
        return;
    }
    if (rc == RX_HPACK_COMPRESSION_ERROR) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent invalid HPACK, closing HTTP/2 connection with "
            "GOAWAY COMPRESSION_ERROR");
        rx_h2_session_terminate(h2->session, RX_H2_COMPRESSION_ERROR);
        return;
    }
    rx_h2_session_terminate(h2->session, RX_H2_INTERNAL_ERROR);
}

/* The decoder, set up at the connection's first block: its table limit
 * is the protocol's default (our SETTINGS name none), its longest field
 * the default server's large_client_header_buffers size. */
static bool
decoder(rx_http_v2_conn_t *h2)
{
    size_t max_field = h2->hc->default_server->large_client_header_buffers_size;
    size_t need = rx_hpack_scratch_size(max_field);

    if (need > scratch_size) {
        u_char *p = realloc(scratch, need);

        if (p == NULL) {
            return false;
        }
        scratch = p;
        scratch_size = need;
    }
    if (h2->dec.scratch == NULL) {
        rx_hpack_dec_init(&h2->dec, RX_HPACK_DEFAULT_TABLE_SIZE, max_field,
                          scratch);
    }
    h2->dec.scratch = scratch;           /* the worker's: it may have grown */
    return true;
}

rx_int_t
rx_http_v2_fields(rx_http_v2_conn_t *h2, rx_http_v2_stream_t *st,
    const uint8_t *block, size_t len)
{
    rx_http_core_srv_conf_t *cscf = h2->hc->default_server;
    fields_t                 f;
    int                      rc;

    memset(&f, 0, sizeof(f));
    f.h2 = h2;
    f.st = st;
    f.limit = cscf->large_client_header_buffers_size
              * (size_t) cscf->large_client_header_buffers_num;
    if (!decoder(h2)) {
        rx_h2_session_terminate(h2->session, RX_H2_INTERNAL_ERROR);
        return RX_ERROR;
    }
    rc = rx_hpack_decode(&h2->dec, block, len, field, &f);
    if (rc != RX_HPACK_OK) {
        decode_failed(h2, rc);
        return RX_ERROR;
    }
    if (st == NULL) {
        return RX_DECLINED;
    }
    if (!st->malformed && !st->too_large) {
        f.why = f.connect
                ? ((f.pseudo & (PS_SCHEME | PS_PATH)) || !(f.pseudo & PS_AUTHORITY)
                   ? "CONNECT's pseudo-header fields" : NULL)
                : !(f.pseudo & PS_METHOD) ? "no :method"
                : !(f.pseudo & PS_PATH) ? "no :path"
                : !(f.pseudo & PS_SCHEME) ? "no :scheme"
                /* RFC 9113 8.3.1: the authority is :authority or host */
                : !(f.pseudo & PS_AUTHORITY) && !st->has_host
                  ? "neither :authority nor host" : NULL;
        st->malformed = f.why != NULL;
    }
    if (st->too_large) {
        rx_h2_submit_rst_stream(h2->session, st->id, RX_H2_INTERNAL_ERROR);
        return RX_DECLINED;
    }
    if (st->malformed) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent invalid HTTP/2 HEADERS frame on stream %d: Invalid "
            "HTTP header field was received: %s", (int) st->id, f.why);
        rx_h2_submit_rst_stream(h2->session, st->id, RX_H2_PROTOCOL_ERROR);
        return RX_DECLINED;
    }
    return RX_OK;
}

bool
rx_http_v2_fields_data(rx_http_v2_stream_t *st, size_t len, bool end_stream)
{
    st->data_len += (int64_t) len;
    if (st->content_length < 0
        || (st->data_len <= st->content_length
            && (!end_stream || st->data_len == st->content_length))) {
        return true;
    }
    /* RFC 9113 8.1.1: DATA against content-length makes it malformed */
    rx_h2_submit_rst_stream(st->h2->session, st->id, RX_H2_PROTOCOL_ERROR);
    return false;
}
