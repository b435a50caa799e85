/*
 * http_parse.c: llhttp's callbacks (with http_parse_exec.c, the only
 * files that include llhttp). Strict parsing, span
 * joining across reads, the header's size limits, and translation of
 * llhttp's errors into HTTP statuses and reasons for the log.
 *
 * The answer never depends on how the reads cut the bytes: a limit is
 * decided by where in the header a byte lies, not by where a read ended
 * (nginx never sees a byte past its buffers, whatever the reads).
 *
 * Line ends: the request line and the header lines may end in a bare LF,
 * as in nginx (RFC 9112 2.2 lets a recipient take it); strict llhttp
 * refuses one after a header value, so execute_head() hands llhttp a CR
 * of its own before each such LF. A bare CR stays an error, and so does a
 * bare LF in chunked framing (sizes, data ends, trailer), where a parser
 * in front that reads it otherwise would be desynchronized.
 */
#include <llhttp.h>
#include "http.h"
#include "http_parse.h"
#include "http_parse_int.h"

static llhttp_settings_t request_settings;

/* The CR fed to llhttp before a bare LF of the head (execute_head()). */
const char rx_http_parse_bare_lf_cr[1] = { '\r' };

/* A piece llhttp hands over from that CR: empty, not in the owner's
 * buffer, and at a line's end. */
bool
rx_http_parse_injected(const char *at)
{
    return at == rx_http_parse_bare_lf_cr;
}

static rx_http_parser_t *
from(llhttp_t *l)
{
    return l->data;
}

static int
fail(rx_http_parser_t *p, rx_uint_t status, const char *reason)
{
    p->status = status;
    p->reason = reason;
    return HPE_USER;
}

/* The byte before `at`, which may have ended the previous execute. */
char
rx_http_parse_byte_before(rx_http_parser_t *p, const char *at)
{
    return at > p->exec_start ? at[-1] : p->prev_byte;
}

/* Joins a span that llhttp delivers in pieces (one per read). */
static int
grow_span(rx_http_parser_t *p, size_t *off, size_t *len, const char *at,
    size_t n, size_t max, rx_uint_t status, const char *reason)
{
    size_t pos = (size_t) (at - *p->base);

    if (*len == 0) {
        *off = pos;
    }
    *len = pos + n - *off;   /* pieces are contiguous in the owner's buffer */
    if (*len > max) {
        return fail(p, status, reason);
    }
    return 0;
}

/* Places a header line of n bytes as nginx's buffers would hold it. */
static int
account_line(rx_http_parser_t *p, size_t n)
{
    if (p->large_count == 0 && p->first_used + n <= p->first_size) {
        p->first_used += n;
        return 0;
    }
    if (n > p->large_size) {
        return fail(p, RX_HTTP_REQUEST_HEADER_TOO_LARGE,
                    "client sent too long header line");
    }
    if (p->large_count == 0 || p->large_used + n > p->large_size) {
        if (++p->large_count > p->large_num) {
            return fail(p, RX_HTTP_REQUEST_HEADER_TOO_LARGE,
                        "client sent too large request");
        }
        p->large_used = 0;
    }
    p->large_used += n;
    return 0;
}

static int
on_message_begin(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);

    p->in_message = true;
    p->in_header = true;
    p->first_used = p->large_used = 0;
    p->large_count = 0;
    p->url_len = p->field_len = p->value_len = 0;
    p->version_len = 0;
    p->method_end = 0;
    p->ext_len = p->trailer_len = 0;
    p->have_field = false;
    p->line_counted = false;
    p->url_done = false;
    p->fields = false;
    p->last = SPAN_NONE;
    return 0;
}

static int
on_method(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    if (rx_http_parse_injected(at)) {
        return 0;               /* "GET\n": llhttp refuses the CR */
    }
    p->method_end = (size_t) (at + n - *p->base);
    return 0;
}

static int
on_url(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    if (rx_http_parse_injected(at)) {
        /* "GET /x\n": the target ends the line (below, for a CR) */
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent HTTP/0.9 request");
    }
    /* one SP between method and target (RFC 9112 3): llhttp skips any
     * number, which would let "GET  /" through as an autocorrection */
    if (p->url_len == 0 && (size_t) (at - *p->base) != p->method_end + 1) {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent invalid request: "
                    "more than one space in the request line");
    }
    /* the limit first: a read that ends inside a long target finds it
     * there, before the line end below is seen */
    if (grow_span(p, &p->url_off, &p->url_len, at, n, p->max_url,
                  RX_HTTP_REQUEST_URI_TOO_LARGE, "client sent too long URI")
        != 0) {
        return HPE_USER;
    }
    /* strict llhttp reads "GET /\r\n" as the start of HTTP/0.9 and
     * waits for more, without url_complete: a piece that ends at a line
     * end (not at the end of the input) is such a request */
    if (at + n < p->exec_end && (at[n] == '\r' || at[n] == '\n')) {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent HTTP/0.9 request");
    }
    return 0;
}

static int
on_version(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    if (rx_http_parse_injected(at)) {
        return 0;
    }
    if (p->version_len == 0) {
        p->version_off = (size_t) (at - *p->base);
    }
    p->version_len += n;
    return 0;
}

static int
on_url_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc;

    /* llhttp reads "GET /\r\n" as HTTP/0.9 and waits for more; the
     * delimiter it just saw (it is in the buffer) tells: 0.9 is refused */
    if ((*p->base)[p->url_off + p->url_len] != ' ') {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent HTTP/0.9 request");
    }
    p->url_done = true;
    rc = p->h->on_url(p->data, *p->base + p->url_off, p->url_len);
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

static int
on_version_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc;

    /* "METHOD SP target SP HTTP/x.y" exactly: llhttp skips extra spaces
     * before the version, which makes a line another parser may cut
     * differently (RFC 9112 3) */
    if (p->version_off != p->url_off + p->url_len + sizeof(" HTTP/") - 1) {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent invalid request: "
                    "more than one space in the request line");
    }

    /* counted by request_line_counted() */
    p->line_start = p->url_off + p->url_len + sizeof(" HTTP/1.1\r\n") - 1;
    p->fields = true;
    rc = p->h->on_request_line(p->data);
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

/* Trailer bytes are not body: without a bound they would be an endless
 * stream client_max_body_size never sees. */
static int
trailer_bytes(rx_http_parser_t *p, size_t n)
{
    p->trailer_len += n;
    if (p->trailer_len > p->first_size + p->large_num * p->large_size) {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent too large trailer");
    }
    return 0;
}

/* obs-fold (RFC 9112 5.2): llhttp joins "X: a CRLF SP b" into one value
 * and hands over its pieces; a piece that follows a LF and blanks only
 * is a continuation line ("X: CRLF SP b" too: there the blanks are not
 * in the piece). Forwarded as is, the CRLF would make a new header line
 * upstream; reject it, as the RFC allows. */
static bool
obs_fold(rx_http_parser_t *p, const char *at, size_t n)
{
    const char *b = at;
    char        c;

    while (b > p->exec_start && (b[-1] == ' ' || b[-1] == '\t')) {
        b--;
    }
    c = b > p->exec_start ? b[-1]
                          : p->prev_nonws;     /* the blanks began before */
    /* llhttp marks an empty value ("X:   CRLF") by an empty piece right
     * after that line's own LF: no blanks between, no fold */
    return c == '\n' && (n > 0 || b < at);
}

/* Notes how the input [start, end) ended, for the checks above. */
void
rx_http_parse_remember_tail(rx_http_parser_t *p, const char *start, const char *end)
{
    const char *b;

    if (end == start) {
        return;
    }
    p->prev_byte = end[-1];
    for (b = end; b > start && (b[-1] == ' ' || b[-1] == '\t'); b--) {
        /* back over blanks */
    }
    if (b > start) {
        p->prev_nonws = b[-1];
    }
}

/* The request line in nginx's buffers, counted once the next line has
 * begun: llhttp ends the version at its last digit, before the line's
 * end (CRLF, or a bare LF a byte shorter) may have arrived. */
static int
request_line_counted(rx_http_parser_t *p)
{
    const char *method = llhttp_method_name((llhttp_method_t) p->llhttp.method);
    size_t      end = p->version_off + p->version_len;
    size_t      eol = (*p->base)[end] == '\r' ? 2 : 1;
    size_t      n = strlen(method) + 1 + p->url_len + sizeof(" HTTP/1.1") - 1
                    + eol;

    if (p->line_counted) {
        return 0;
    }
    p->line_counted = true;
    p->line_start = end + eol;
    if (n > p->first_size && n > p->large_size) {
        /* nginx: a request line that no buffer holds is a too long URI
         * (414), whatever the URL's own length */
        return fail(p, RX_HTTP_REQUEST_URI_TOO_LARGE,
                    "client sent too long URI");
    }
    return account_line(p, n);
}

/* The request line counted, and where the first header line starts, for
 * an error found at offset pos (llhttp drops a span that ends in an
 * error, so the first field's piece may never have come to count the
 * request line): a request line over the limit decides before a bad byte
 * after it, as it does when a read ends in the first field (fuzz finding
 * F14). */
void
rx_http_parse_request_line_end(rx_http_parser_t *p, size_t pos)
{
    size_t end = p->version_off + p->version_len;

    if (p->fields && !p->line_counted && pos > end) {
        (void) request_line_counted(p);   /* its failure sets p->status */
    }
}

static int
on_header_field(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    if (!p->in_header) {
        /* a chunked body's trailer: dropped, as nginx does; its bytes may
         * no longer be in the owner's buffer, so no span is kept; only
         * its size is bounded, by the header's own limit */
        p->have_field |= n > 0;
        return trailer_bytes(p, n);
    }

    if (rx_http_parse_injected(at)) {
        return 0;               /* "X\n": llhttp refuses the CR */
    }
    if (request_line_counted(p) != 0) {
        return HPE_USER;
    }
    p->have_field |= n > 0;               /* ": x" comes as an empty name */
    if (p->last != SPAN_FIELD) {
        p->field_len = 0;
        p->value_len = 0;
        p->last = SPAN_FIELD;
    }
    return grow_span(p, &p->field_off, &p->field_len, at, n,
                     p->max_header_line, RX_HTTP_REQUEST_HEADER_TOO_LARGE,
                     "client sent too long header line");
}

static int
on_header_value(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    if (rx_http_parse_injected(at)) {
        /* the value ends at a bare LF; an empty one lies there */
        if (p->value_len == 0) {
            p->value_off = p->real_end;
        }
        p->last = SPAN_VALUE;
        return 0;
    }
    if (obs_fold(p, at, n)) {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent invalid header "
                    "line: obsolete line folding");
    }
    if (!p->in_header) {
        return trailer_bytes(p, n);      /* trailer: dropped */
    }

    p->last = SPAN_VALUE;
    return grow_span(p, &p->value_off, &p->value_len, at, n,
                     p->max_header_line > p->field_len
                     ? p->max_header_line - p->field_len : 0,
                     RX_HTTP_REQUEST_HEADER_TOO_LARGE,
                     "client sent too long header line");
}

/* Where the line whose value ends at `end` is followed: past its LF
 * (after a CR or not, blanks before). llhttp has read the LF: it tells
 * the value's end only at the byte after it (a fold?), which may be in
 * a later read, or our CR before the next bare LF. (Strict llhttp also
 * ends a value at a CR and a byte other than LF, and refuses it only
 * later: that line counts as if it ended in CRLF, whatever the reads.) */
static size_t
line_after(rx_http_parser_t *p, size_t end)
{
    size_t q;
    char   c;

    for (q = end; q < p->real_end; q++) {
        c = (*p->base)[q];
        if (c == '\n') {
            return q + 1;
        }
        if (c != ' ' && c != '\t' && c != '\r') {
            break;
        }
    }
    return end + 2;
}

static int
on_header_value_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc;

    /* ": value": llhttp takes an empty field name; a name is a token */
    if (!p->have_field) {
        return fail(p, RX_HTTP_BAD_REQUEST, "client sent invalid header "
                    "line: empty name");
    }
    p->have_field = false;
    if (!p->in_header) {
        return 0;                        /* trailer: dropped */
    }
    size_t            end = p->value_len ? p->value_off + p->value_len
                                         : p->field_off + p->field_len + 1;
    size_t            next = line_after(p, end);

    if (next > p->line_start
        && account_line(p, next - p->line_start) != 0) {
        return HPE_USER;
    }
    p->line_start = next;
    rc = p->h->on_header(p->data, *p->base + p->field_off, p->field_len,
                         *p->base + p->value_off, p->value_len);
    p->last = SPAN_NONE;
    p->field_len = p->value_len = 0;
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

static int
on_headers_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc;

    if (request_line_counted(p) != 0) {
        return HPE_USER;
    }
    p->in_header = false;
    /* llhttp takes up to 2^64-1; ringx counts in off_t like nginx, and a
     * length it cannot hold must not turn into "no body" (the bytes
     * would then be read as the next request) */
    if ((l->flags & F_CONTENT_LENGTH) && l->content_length > INT64_MAX) {
        return fail(p, RX_HTTP_BAD_REQUEST,
                    "client sent invalid \"Content-Length\" header");
    }
    /* ringx does not switch protocols on Upgrade (nor tunnel CONNECT):
     * the request is an ordinary one and what follows is the next */
    l->upgrade = 0;
    rc = p->h->on_headers_complete(p->data);

    if (rc != RX_OK) {
        return fail(p, (rx_uint_t) rc, NULL);
    }
    return HPE_PAUSED;
}

static int
on_body(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);
    rx_int_t rc = p->h->on_body(p->data, at, n);
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

/* Chunk extensions are skipped, but not without end: the bytes of one
 * chunk-size line are held to a header line's limit. */
static int
on_chunk_extension(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    p->ext_len += n;
    if (p->ext_len > p->max_header_line) {
        return fail(p, RX_HTTP_BAD_REQUEST,
                    "client sent too long chunk extension");
    }
    return 0;
}

/* llhttp holds the chunk's size in content_length here: a size beyond
 * what the owner will take is answered before any of it is read. */
static int
on_chunk_header(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc = RX_OK;

    p->ext_len = 0;
    if (p->h->on_chunk_size && l->content_length > 0) {
        rc = p->h->on_chunk_size(p->data, l->content_length);
    }
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

static int
on_message_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t rc = p->h->on_message_complete(p->data);

    p->in_message = false;
    if (rc != RX_OK) {
        return fail(p, (rx_uint_t) rc, NULL);
    }
    return HPE_PAUSED;
}

rx_http_parser_t *
rx_http_parser_create_request(rx_log_t *log, const rx_http_parse_handlers_t *h,
    void *data, char **base, size_t first_size, size_t large_size,
    rx_uint_t large_num)
{
    size_t max_url = large_size, max_header_line = large_size;
    /* from the spare blocks: a keep-alive connection's parser is freed
     * while it waits idle and made again for each request */
    rx_http_parser_t *p = rx_spare_block_get(sizeof(rx_http_parser_t), log);

    if (p == NULL) {
        return NULL;
    }
    /* reason_buf is written before it is read (rx_http_parser_reason) */
    memset(p, 0, offsetof(rx_http_parser_t, reason_buf));
    if (request_settings.on_message_complete == NULL) {
        request_settings.on_message_begin = on_message_begin;
        request_settings.on_method = on_method;
        request_settings.on_url = on_url;
        request_settings.on_version = on_version;
        request_settings.on_chunk_extension_name = on_chunk_extension;
        request_settings.on_chunk_extension_value = on_chunk_extension;
        request_settings.on_chunk_header = on_chunk_header;
        request_settings.on_url_complete = on_url_complete;
        request_settings.on_version_complete = on_version_complete;
        request_settings.on_header_field = on_header_field;
        request_settings.on_header_value = on_header_value;
        request_settings.on_header_value_complete = on_header_value_complete;
        request_settings.on_headers_complete = on_headers_complete;
        request_settings.on_body = on_body;
        request_settings.on_message_complete = on_message_complete;
    }
    llhttp_init(&p->llhttp, HTTP_REQUEST, &request_settings);
    p->llhttp.data = p;
    p->h = h;
    p->data = data;
    p->base = base;
    p->max_url = max_url;
    p->max_header_line = max_header_line;
    p->first_size = first_size;
    p->large_size = large_size;
    p->large_num = large_num;
    p->header_max = first_size + large_num * large_size;
    return p;
}

/* llhttp's findings in nginx's words where nginx has words for them. */
