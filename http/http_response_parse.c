/*
 * http_response_parse.c: upstream responses: the plain way for a plain
 * head that comes whole (below, before rx_http_response_parse), and
 * llhttp glue for any other (the request side is http_parse.c). Strict:
 * a response with both Content-Length and Transfer-Encoding, a bad chunk
 * size, or a malformed header line is an error (502 "upstream sent
 * invalid header" / a cut body), never guessed.
 */
#include <llhttp.h>
#include "http.h"
#include "http_response_parse.h"

struct rx_http_response_parser_s {
    llhttp_t                        llhttp;
    rx_pool_t                      *pool;
    rx_http_upstream_headers_in_t  *h;
    rx_http_response_body_pt        on_body;
    void                           *data;
    const char                     *reason;      /* span of the phrase */
    size_t                          reason_len;
    const char                     *field;
    size_t                          field_len;
    const char                     *value;
    size_t                          value_len;
    const char                     *error;
    bool                            head;
    bool                            header_done;
    bool                            message_done;
    bool                            keepalive;
    /* the plain way (below): tried at the first read; when it took the
     * head, the body is counted off here and llhttp never runs */
    bool                            plain_tried;
    bool                            plain_body;
    int64_t                         plain_left;
    /* trailer fields of a chunked body, when asked for: copied as they
     * come (body reads do not stay where they are) */
    rx_http_response_trailer_pt     on_trailer;
    char                           *tbuf;        /* name, then value */
    size_t                          tname;       /* name's length */
    size_t                          tlen;
    bool                            tin_value;
};

/* The most bytes of one trailer field (name and value) kept. */
#define RX_TRAILER_MAX  4096

static llhttp_settings_t response_settings;

static rx_http_response_parser_t *
from(llhttp_t *l)
{
    return l->data;
}

/* Spans arrive in pieces that are contiguous (one buffer), or once. */
static void
grow(const char **start, size_t *len, const char *at, size_t n)
{
    if (*start == NULL) {
        *start = at;
        *len = 0;
    }
    *len = (size_t) (at + n - *start);
}

static void
begin_message(rx_http_response_parser_t *p)
{
    /* a 1xx before the final response leaves nothing behind */
    p->h->headers.nelts = 0;
    p->h->content_length_n = -1;
    p->h->chunked = p->h->connection_close = false;
    p->h->location = p->h->x_accel_redirect = p->h->x_accel_buffering = NULL;
    p->reason = p->field = p->value = NULL;
    p->reason_len = p->field_len = p->value_len = 0;
}

static int
on_message_begin(llhttp_t *l)
{
    begin_message(from(l));
    return 0;
}

static int
on_status(llhttp_t *l, const char *at, size_t n)
{
    grow(&from(l)->reason, &from(l)->reason_len, at, n);
    return 0;
}

/* A piece of a trailer field's name or value, when they are wanted. */
static int
trailer_piece(rx_http_response_parser_t *p, const char *at, size_t n,
    bool value)
{
    if (p->on_trailer == NULL) {
        return 0;
    }
    if (value && !p->tin_value) {
        p->tin_value = true;
        p->tname = p->tlen;
    }
    if (p->tbuf == NULL
        && (p->tbuf = rx_pnalloc(p->pool, RX_TRAILER_MAX)) == NULL) {
        return HPE_USER;
    }
    if (n > RX_TRAILER_MAX - p->tlen) {
        p->error = "upstream sent too long trailer field";
        return HPE_USER;
    }
    memcpy(p->tbuf + p->tlen, at, n);
    p->tlen += n;
    return 0;
}

static int
on_header_field(llhttp_t *l, const char *at, size_t n)
{
    if (from(l)->header_done) {
        return trailer_piece(from(l), at, n, false);
    }
    grow(&from(l)->field, &from(l)->field_len, at, n);
    return 0;
}

static int
on_header_value(llhttp_t *l, const char *at, size_t n)
{
    if (from(l)->header_done) {
        return trailer_piece(from(l), at, n, true);
    }
    grow(&from(l)->value, &from(l)->value_len, at, n);
    return 0;
}

/* A field of the final header, pointing into the bytes read; its
 * lower-cased name at lowcase (NUL-ended), or made here when NULL. */
static rx_int_t
add_field(rx_http_response_parser_t *p, const char *name, size_t name_len,
    const char *value, size_t value_len, char *lowcase)
{
    rx_table_elt_t *e = rx_http_upstream_header_push(p->h);

    if (e == NULL) {
        return RX_ERROR;
    }
    e->key.data = (char *) name;
    e->key.len = name_len;
    e->value.data = (char *) value;
    e->value.len = value_len;
    e->deleted = false;
    if (lowcase == NULL) {
        lowcase = rx_pnalloc(p->pool, name_len + 1);
        if (lowcase == NULL) {
            return RX_ERROR;
        }
        rx_strlow_ascii(lowcase, name, name_len);
        lowcase[name_len] = '\0';
    }
    e->lowcase_key = lowcase;
    /* the length first: most fields are none of these */
    if (name_len == 8 && memcmp(e->lowcase_key, "location", 8) == 0) {
        p->h->location = e;
    } else if (name_len == 16
               && memcmp(e->lowcase_key, "x-accel-redirect", 16) == 0) {
        p->h->x_accel_redirect = e;
    } else if (name_len == 17
               && memcmp(e->lowcase_key, "x-accel-buffering", 17) == 0) {
        p->h->x_accel_buffering = e;
    }
    return RX_OK;
}

static int
on_header_value_complete(llhttp_t *l)
{
    rx_http_response_parser_t *p = from(l);

    if (p->header_done) {
        /* a trailer of a chunked body: dropped, as nginx drops them,
         * unless the protocol asked for them (proxy_pass_trailers) */
        rx_str_t name, value;

        if (p->on_trailer == NULL) {
            return 0;
        }
        if (!p->tin_value) {
            p->tname = p->tlen;           /* an empty value */
        }
        name.data = p->tbuf;
        name.len = p->tname;
        value.data = p->tbuf + p->tname;
        value.len = p->tlen - p->tname;
        p->tbuf = NULL;                   /* the field keeps its copy */
        p->tlen = p->tname = 0;
        p->tin_value = false;
        if (name.len == 0 || memchr(value.data, '\r', value.len)
            || memchr(value.data, '\n', value.len)) {
            p->error = "upstream sent invalid trailer";
            return HPE_USER;
        }
        return p->on_trailer(p->data, &name, &value) == RX_OK ? 0 : HPE_USER;
    }
    if (p->field_len == 0
        || (p->value && (memchr(p->value, '\r', p->value_len)
                         || memchr(p->value, '\n', p->value_len)))) {
        /* llhttp 8 takes ": v" (and a bare CR ending the status line eats
         * the first byte of the next one, leaving such a line) and folded
         * lines (obs-fold, the CRLF kept in the value): refused, as nginx
         * does, rather than passed on to the client */
        p->error = "upstream sent invalid header";
        return HPE_USER;
    }
    if (add_field(p, p->field, p->field_len, p->value ? p->value : "",
                  p->value ? p->value_len : 0, NULL) != RX_OK) {
        return HPE_USER;
    }
    p->field = p->value = NULL;
    p->field_len = p->value_len = 0;
    return 0;
}

/* "200 OK" from h->status and the reason span. */
static rx_int_t
set_status_line(rx_http_response_parser_t *p)
{
    rx_http_upstream_headers_in_t *h = p->h;
    char                          *line;

    line = rx_pnalloc(p->pool, 4 + p->reason_len);
    if (line == NULL) {
        return RX_ERROR;
    }
    /* 100..999 (llhttp takes three digits): no printf on every response */
    line[0] = (char) ('0' + h->status / 100);
    line[1] = (char) ('0' + h->status / 10 % 10);
    line[2] = (char) ('0' + h->status % 10);
    line[3] = '\0';
    h->status_line.len = 3;
    if (p->reason_len) {
        line[3] = ' ';
        memcpy(line + 4, p->reason, p->reason_len);
        h->status_line.len = 4 + p->reason_len;
    }
    h->status_line.data = line;
    return RX_OK;
}

static int
on_headers_complete(llhttp_t *l)
{
    rx_http_response_parser_t *p = from(l);
    rx_http_upstream_headers_in_t *h = p->h;

    h->status = l->status_code;
    if (h->status < 100) {
        /* llhttp takes "000", "034" or a blank for a digit */
        p->error = "upstream sent no valid HTTP/1.0 header";
        return HPE_USER;
    }
    if (h->status >= 100 && h->status < 200 && h->status != 101) {
        /* interim: it has no content whatever its framing says (RFC 9110
         * 15.2), and llhttp expects the next response after it */
        return 1;
    }
    if (set_status_line(p) != RX_OK) {
        return HPE_USER;
    }
    h->chunked = (l->flags & F_CHUNKED) != 0;
    h->content_length_n = (l->flags & F_CONTENT_LENGTH) && !h->chunked
                          ? (int64_t) l->content_length : -1;
    h->connection_close = (l->flags & F_CONNECTION_CLOSE) != 0;
    p->header_done = true;
    if (h->status == 101) {
        return 2;        /* the bytes after it are not HTTP */
    }
    if (p->head || h->status == 204 || h->status == 304) {
        /* no body whatever Content-Length or Transfer-Encoding say (RFC
         * 9112 6.3): the response ends here and the connection serves
         * the next one. llhttp 8 itself skips the body of a 204 or 304
         * only when no length is given, and would wait for that many
         * bytes that never come */
        return 1;
    }
    return 0;
}

static int
parse_on_body(llhttp_t *l, const char *at, size_t n)
{
    rx_http_response_parser_t *p = from(l);

    if (p->on_body(p->data, at, n) != RX_OK) {
        p->error = "cannot buffer the response body";
        return HPE_USER;
    }
    return 0;
}

static int
on_message_complete(llhttp_t *l)
{
    rx_http_response_parser_t *p = from(l);

    if (!p->header_done) {
        return 0;        /* a 1xx ended: the final response follows */
    }
    p->message_done = true;
    /* after a 101 the connection is the other protocol's, whether bytes
     * of it came in this read or not */
    p->keepalive = llhttp_should_keep_alive(l) != 0 && p->h->status != 101;
    return HPE_PAUSED;   /* whatever follows is not ours */
}

rx_http_response_parser_t *
rx_http_response_parser_create(rx_pool_t *pool, rx_http_upstream_headers_in_t *h,
    bool head, rx_http_response_body_pt on_body, void *data)
{
    rx_http_response_parser_t *p = rx_pcalloc(pool, sizeof(*p));

    if (p == NULL) {
        return NULL;
    }
    if (response_settings.on_message_complete == NULL) {
        response_settings.on_message_begin = on_message_begin;
        response_settings.on_status = on_status;
        response_settings.on_header_field = on_header_field;
        response_settings.on_header_value = on_header_value;
        response_settings.on_header_value_complete = on_header_value_complete;
        response_settings.on_headers_complete = on_headers_complete;
        response_settings.on_body = parse_on_body;
        response_settings.on_message_complete = on_message_complete;
    }
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &response_settings);
    p->llhttp.data = p;
    p->pool = pool;
    p->h = h;
    p->head = head;
    p->on_body = on_body;
    p->data = data;
    if (h->headers.elts == NULL
        && rx_array_init(&h->headers, pool, 16, sizeof(rx_table_elt_t)) != RX_OK) {
        return NULL;
    }
    h->headers.nelts = 0;
    h->content_length_n = -1;
    return p;
}

static const char *
describe(rx_http_response_parser_t *p, llhttp_errno_t err)
{
    if (p->error) {
        return p->error;
    }
    switch (err) {
    case HPE_UNEXPECTED_CONTENT_LENGTH:
        return "upstream sent \"Content-Length\" and \"Transfer-Encoding\" "
               "headers at the same time";
    case HPE_INVALID_CHUNK_SIZE:
        return "upstream sent invalid chunked response";
    case HPE_INVALID_CONTENT_LENGTH:
        return "upstream sent invalid \"Content-Length\" header";
    case HPE_INVALID_STATUS:
    case HPE_INVALID_VERSION:
    case HPE_INVALID_CONSTANT:
        return "upstream sent no valid HTTP/1.0 header";
    case HPE_INVALID_EOF_STATE:
        return "upstream prematurely closed connection";
    default:
        return "upstream sent invalid header";
    }
}

/*
 * ---- the plain response, without llhttp ----
 *
 * Most responses of an upstream are plain: HTTP/1.x, a final status with
 * a reason, some fields of token names and printable values, a
 * Content-Length, the whole head in the first read. Such a head is read
 * here in one pass over byte tables (llhttp and its callbacks spent
 * ~3,000 instructions on a 240-byte head) and its body counted off.
 * Anything else goes to llhttp from the first byte, which it has not yet
 * seen, so that the answer is llhttp's: a head cut by the read, 1xx, 101,
 * 204, 304, a status past 599, HEAD, no Content-Length or two of them,
 * Transfer-Encoding, Upgrade, Proxy-Connection, a Connection other than
 * one "close" or "keep-alive", a byte outside printable ASCII (but tabs
 * and spaces inside a value or reason), whitespace at either end of a
 * reason or at the end of a value, an empty value or reason, more than
 * PLAIN_FIELDS_MAX fields, names of more than PLAIN_NAMES_MAX bytes in
 * all. fuzz_response holds the two ways to one answer: its cut reads send
 * a head to llhttp that its whole read reads here.
 */
#define PLAIN_FIELDS_MAX  32
#define PLAIN_NAMES_MAX   1024     /* the lower-cased names, NULs counted */

typedef struct {
    const char  *name, *value;
    size_t       name_len, value_len;
    size_t       lower;                /* its lower-cased name in names[] */
} plain_field_t;

typedef struct {
    plain_field_t  f[PLAIN_FIELDS_MAX];
    rx_uint_t      n;
    int64_t        content_length;     /* -1: none yet */
    bool           http10, close, keepalive, connection;
    size_t         names_len;
    char           names[PLAIN_NAMES_MAX];
} plain_head_t;

enum { PB_NO = 0, PB_VCHAR = 1, PB_WS = 2 };

/* What a value or a reason may hold: VCHAR, and SP and HTAB inside it
 * (a name's bytes, the tchar, are plain_lower's below) */
static const uint8_t plain_byte[256] = {
    ['!' ... '~'] = PB_VCHAR, [' '] = PB_WS, ['\t'] = PB_WS,
};

/* A name's byte lower-cased, 0 for a byte no name has (not a tchar): the
 * scan of a name checks it and makes its lower-cased copy in one go. */
#define PL_TCHAR(c)  (((c) >= '0' && (c) <= '9') || ((c) >= 'a' && (c) <= 'z') \
                      || ((c) >= 'A' && (c) <= 'Z') || (c) == '!'             \
                      || ((c) >= '#' && (c) <= '\'') || (c) == '*' || (c) == '+' \
                      || (c) == '-' || (c) == '.' || (c) == '^' || (c) == '_'  \
                      || (c) == '`' || (c) == '|' || (c) == '~')
#define PL(c)    (PL_TCHAR(c) ? ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20 : (c)) : 0)
#define PL4(c)   PL(c), PL((c) + 1), PL((c) + 2), PL((c) + 3)
#define PL16(c)  PL4(c), PL4((c) + 4), PL4((c) + 8), PL4((c) + 12)
#define PL64(c)  PL16(c), PL16((c) + 16), PL16((c) + 32), PL16((c) + 48)
static const char plain_lower[256] = {
    PL64(0), PL64(64), PL64(128), PL64(192)
};

static bool
plain_name_is(const plain_field_t *f, const char *lower, size_t len)
{
    return f->name_len == len && strncasecmp(f->name, lower, len) == 0;
}

/* What the fields llhttp reads itself say; false: llhttp's to read. */
static bool
plain_special(plain_head_t *ph, const plain_field_t *f)
{
    switch (f->name_len) {
    case 7:
        return !plain_name_is(f, "upgrade", 7);
    case 10:
        if (!plain_name_is(f, "connection", 10)) {
            return true;
        }
        if (ph->connection) {
            return false;
        }
        ph->connection = true;
        if (f->value_len == 5 && strncasecmp(f->value, "close", 5) == 0) {
            ph->close = true;
            return true;
        }
        ph->keepalive = f->value_len == 10
                        && strncasecmp(f->value, "keep-alive", 10) == 0;
        return ph->keepalive;
    case 14:
        if (!plain_name_is(f, "content-length", 14)) {
            return true;
        }
        if (ph->content_length >= 0) {
            return false;
        }
        ph->content_length = rx_atoi(f->value, f->value_len);  /* digits */
        return ph->content_length >= 0;
    case 16:
        return !plain_name_is(f, "proxy-connection", 16);
    case 17:
        return !plain_name_is(f, "transfer-encoding", 17);
    }
    return true;
}

/* A value or a reason from d[start]: where its CR is (an LF after it),
 * printable bytes and blanks before it but not last; or 0. While eight
 * bytes are left the scan takes eight a step: a step flags its bytes
 * under 0x20 and from 0x7f on, and the first flag is exact (a borrow or
 * a carry runs only to later bytes), so it stops there or, at a tab,
 * goes on after it. The bytes past the last eight, one at a time. */
static size_t
plain_text_end(const unsigned char *d, size_t len, size_t start)
{
    size_t pos = start;

#if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    const uint64_t ones = 0x0101010101010101ULL, high = ones << 7;
    uint64_t       x, flags;

    while (len - pos >= 8) {
        memcpy(&x, d + pos, 8);
        flags = (((x - ones * 0x20) & ~x) | x | (x + ones)) & high;
        if (flags == 0) {
            pos += 8;
            continue;
        }
        pos += (size_t) __builtin_ctzll(flags) >> 3;
        if (d[pos] != '\t') {
            break;
        }
        pos++;
    }
#endif
    for ( ; pos < len && plain_byte[d[pos]] != PB_NO; pos++) { }
    if (pos == start || len - pos < 2 || d[pos] != '\r' || d[pos + 1] != '\n'
        || plain_byte[d[pos - 1]] == PB_WS) {
        return 0;
    }
    return pos;
}

/* A name from d[pos] up to its colon, its lower-cased copy put in
 * ph->names: where the colon is, or 0. */
static size_t
plain_name(const unsigned char *d, size_t len, size_t pos, plain_head_t *ph,
    plain_field_t *f)
{
    size_t  start = pos, room = sizeof(ph->names) - ph->names_len - 1;
    size_t  end = len - pos > room ? pos + room : len;
    char   *out = ph->names + ph->names_len, c;

    for ( ; pos < end && (c = plain_lower[d[pos]]) != 0; pos++) {
        *out++ = c;
    }
    if (pos == start || pos == len || d[pos] != ':') {
        return 0;           /* at the end of room too: llhttp's to read */
    }
    *out = '\0';
    f->name = (const char *) d + start;
    f->name_len = pos - start;
    f->lower = ph->names_len;
    ph->names_len += f->name_len + 1;
    return pos;
}

/* The fields from d[pos]: where the head ends, or 0. */
static size_t
plain_fields(const unsigned char *d, size_t len, size_t pos,
    plain_head_t *ph)
{
    plain_field_t *f;
    size_t         start;

    for ( ;; ) {
        if (len - pos < 2) {
            return 0;
        }
        if (d[pos] == '\r' && d[pos + 1] == '\n') {
            return pos + 2;
        }
        if (ph->n == PLAIN_FIELDS_MAX) {
            return 0;
        }
        f = &ph->f[ph->n++];
        if ((pos = plain_name(d, len, pos, ph, f)) == 0) {
            return 0;
        }
        for (pos++; pos < len && plain_byte[d[pos]] == PB_WS; pos++) { }
        start = pos;
        if ((pos = plain_text_end(d, len, start)) == 0) {
            return 0;
        }
        f->value = (const char *) d + start;
        f->value_len = pos - start;
        pos += 2;
        if (!plain_special(ph, f)) {
            return 0;
        }
    }
}

/* The status line "HTTP/1.x DDD reason": the status (200-599 but 204
 * and 304) with the reason's span, where the fields start; or 0. */
static size_t
plain_status_line(rx_http_response_parser_t *p, const unsigned char *d,
    size_t len, plain_head_t *ph)
{
    unsigned  status;
    size_t    pos;

    if (len < 17 || memcmp(d, "HTTP/1.", 7) != 0
        || (d[7] != '0' && d[7] != '1') || d[8] != ' ' || d[12] != ' '
        || d[9] < '2' || d[9] > '5' || d[10] < '0' || d[10] > '9'
        || d[11] < '0' || d[11] > '9') {
        return 0;
    }
    status = (unsigned) (d[9] - '0') * 100 + (unsigned) (d[10] - '0') * 10
             + (unsigned) (d[11] - '0');
    if (status == 204 || status == 304 || plain_byte[d[13]] != PB_VCHAR) {
        return 0;
    }
    if ((pos = plain_text_end(d, len, 13)) == 0) {
        return 0;
    }
    ph->http10 = d[7] == '0';
    p->h->status = status;
    p->reason = (const char *) d + 13;
    p->reason_len = pos - 13;
    return pos + 2;
}

/* The body after a plain head: counted off, handed over as it comes. */
static rx_int_t
plain_body(rx_http_response_parser_t *p, const char *data, size_t len,
    size_t *used)
{
    size_t n = p->plain_left < (int64_t) len ? (size_t) p->plain_left : len;

    if (n && p->on_body(p->data, data, n) != RX_OK) {
        *used = 0;
        p->error = "cannot buffer the response body";
        return RX_ERROR;
    }
    p->plain_left -= (int64_t) n;
    *used = n;
    if (p->plain_left > 0) {
        return RX_OK;
    }
    p->message_done = true;
    p->keepalive = p->keepalive && n == len;   /* nothing after it */
    return RX_DONE;
}

/* A whole plain head at data (see above): RX_DECLINED for llhttp. */
static rx_int_t
plain_response(rx_http_response_parser_t *p, const char *data, size_t len,
    size_t *used)
{
    const unsigned char *d = (const unsigned char *) data;
    plain_head_t         ph;
    size_t               pos, n;
    char                *names;
    rx_int_t             rc;
    rx_uint_t            i;

    if (p->head) {
        return RX_DECLINED;
    }
    ph.n = 0;
    ph.names_len = 0;
    ph.content_length = -1;
    ph.close = ph.keepalive = ph.connection = false;
    begin_message(p);
    pos = plain_status_line(p, d, len, &ph);
    if (pos == 0 || (pos = plain_fields(d, len, pos, &ph)) == 0
        || ph.content_length < 0) {
        begin_message(p);
        p->h->status = 0;
        return RX_DECLINED;
    }
    names = rx_pnalloc(p->pool, ph.names_len);
    if (names == NULL) {
        p->error = "upstream sent invalid header";
        return RX_ERROR;
    }
    memcpy(names, ph.names, ph.names_len);
    for (i = 0; i < ph.n; i++) {
        if (add_field(p, ph.f[i].name, ph.f[i].name_len, ph.f[i].value,
                      ph.f[i].value_len, names + ph.f[i].lower) != RX_OK) {
            p->error = "upstream sent invalid header";
            return RX_ERROR;
        }
    }
    if (set_status_line(p) != RX_OK) {
        p->error = "upstream sent invalid header";
        return RX_ERROR;
    }
    p->h->content_length_n = ph.content_length;
    p->h->connection_close = ph.close;
    p->header_done = true;
    p->plain_body = true;
    p->plain_left = ph.content_length;
    /* llhttp_should_keep_alive() for a framed body; read only once the
     * message is done, and then kept if nothing follows it */
    p->keepalive = ph.http10 ? ph.keepalive : !ph.close;
    rc = plain_body(p, data + pos, len - pos, &n);
    *used = pos + n;
    return rc;
}

rx_int_t
rx_http_response_parse(rx_http_response_parser_t *p, const char *data,
    size_t len, size_t *used)
{
    llhttp_errno_t err;
    rx_int_t       rc;

    if (p->message_done) {
        *used = 0;
        p->keepalive = false;      /* bytes after the response */
        return RX_DONE;
    }
    if (p->plain_body) {
        return plain_body(p, data, len, used);
    }
    if (!p->plain_tried) {
        p->plain_tried = true;
        rc = plain_response(p, data, len, used);
        if (rc != RX_DECLINED) {
            return rc;
        }
    }
    err = llhttp_execute(&p->llhttp, data, len);
    if (err == HPE_OK) {
        *used = len;
        return p->header_done ? RX_OK : RX_AGAIN;
    }
    if (err == HPE_PAUSED) {
        *used = (size_t) (llhttp_get_error_pos(&p->llhttp) - data);
        if (*used < len) {
            p->keepalive = false;
        }
        return RX_DONE;
    }
    if (err == HPE_PAUSED_UPGRADE) {
        /* 101: the rest belongs to the upgraded protocol */
        *used = (size_t) (llhttp_get_error_pos(&p->llhttp) - data);
        p->message_done = true;
        p->keepalive = false;
        return RX_DONE;
    }
    *used = 0;
    p->error = describe(p, err);
    return RX_ERROR;
}

rx_int_t
rx_http_response_parse_eof(rx_http_response_parser_t *p)
{
    if (p->message_done) {
        return RX_DONE;
    }
    if (!p->header_done || p->plain_body) {
        /* a plain body has a length, and it was cut short */
        p->error = "upstream prematurely closed connection";
        return RX_ERROR;
    }
    if (llhttp_finish(&p->llhttp) == HPE_OK || p->message_done) {
        p->message_done = true;
        p->keepalive = false;
        return RX_DONE;
    }
    p->error = "upstream prematurely closed connection";
    return RX_ERROR;
}

bool
rx_http_response_parser_header_done(rx_http_response_parser_t *p)
{
    return p->header_done;
}

bool
rx_http_response_parser_keepalive(rx_http_response_parser_t *p)
{
    return p->message_done && p->keepalive;
}

bool
rx_http_response_parser_plain(rx_http_response_parser_t *p)
{
    return p->plain_body;
}

const char *
rx_http_response_parser_error(rx_http_response_parser_t *p)
{
    return p->error;
}

void
rx_http_response_parser_on_trailer(rx_http_response_parser_t *p,
    rx_http_response_trailer_pt cb)
{
    p->on_trailer = cb;
}
