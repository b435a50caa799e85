/*
 * http_response_parse.c: llhttp glue for upstream responses (the request
 * side is http_parse.c). Strict: a response with both Content-Length and
 * Transfer-Encoding, a bad chunk size, or a malformed header line is an
 * error (502 "upstream sent invalid header" / a cut body), never guessed.
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

static int
on_message_begin(llhttp_t *l)
{
    rx_http_response_parser_t *p = from(l);

    /* a 1xx before the final response leaves nothing behind */
    p->h->headers.nelts = 0;
    p->h->content_length_n = -1;
    p->h->chunked = p->h->connection_close = false;
    p->h->location = p->h->x_accel_redirect = p->h->x_accel_buffering = NULL;
    p->reason = p->field = p->value = NULL;
    p->reason_len = p->field_len = p->value_len = 0;
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

static int
on_header_value_complete(llhttp_t *l)
{
    rx_http_response_parser_t *p = from(l);
    rx_table_elt_t            *e;

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
    e = rx_http_upstream_header_push(p->h);
    if (e == NULL) {
        return HPE_USER;
    }
    e->key.data = (char *) p->field;
    e->key.len = p->field_len;
    e->value.data = (char *) (p->value ? p->value : "");
    e->value.len = p->value ? p->value_len : 0;
    e->deleted = false;
    e->lowcase_key = rx_pnalloc(p->pool, e->key.len + 1);
    if (e->lowcase_key == NULL) {
        return HPE_USER;
    }
    rx_strlow_ascii(e->lowcase_key, e->key.data, e->key.len);
    e->lowcase_key[e->key.len] = '\0';
    /* the length first: most fields are none of these */
    if (e->key.len == 8 && memcmp(e->lowcase_key, "location", 8) == 0) {
        p->h->location = e;
    } else if (e->key.len == 16
               && memcmp(e->lowcase_key, "x-accel-redirect", 16) == 0) {
        p->h->x_accel_redirect = e;
    } else if (e->key.len == 17
               && memcmp(e->lowcase_key, "x-accel-buffering", 17) == 0) {
        p->h->x_accel_buffering = e;
    }
    p->field = p->value = NULL;
    p->field_len = p->value_len = 0;
    return 0;
}

static int
on_headers_complete(llhttp_t *l)
{
    rx_http_response_parser_t *p = from(l);
    rx_http_upstream_headers_in_t *h = p->h;
    char                      *line;

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
    line = rx_pnalloc(p->pool, 4 + p->reason_len);
    if (line == NULL) {
        return HPE_USER;
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

rx_int_t
rx_http_response_parse(rx_http_response_parser_t *p, const char *data,
    size_t len, size_t *used)
{
    llhttp_errno_t err;

    if (p->message_done) {
        *used = 0;
        p->keepalive = false;      /* bytes after the response */
        return RX_DONE;
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
    if (!p->header_done) {
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
