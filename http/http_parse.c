/*
 * http_parse.c: the only file that includes llhttp. Strict parsing, span
 * joining across reads, per-span limits, and translation of llhttp's
 * errors into HTTP statuses and reasons for the log.
 */
#include <llhttp.h>
#include "http.h"
#include "http_parse.h"

typedef enum { SPAN_NONE = 0, SPAN_URL, SPAN_FIELD, SPAN_VALUE } span_kind_t;

struct rx_http_parser_s {
    llhttp_t                        llhttp;
    const rx_http_parse_handlers_t *h;
    void                           *data;
    char                          **base;        /* owner's buffer */
    size_t                          max_url;
    size_t                          max_header_line;
    /* spans as offsets into *base: the buffer may move between reads */
    size_t                          url_off, url_len;
    size_t                          field_off, field_len;
    size_t                          value_off, value_len;
    span_kind_t                     last;
    rx_uint_t                       status;      /* when we stopped it */
    const char                     *reason;
    bool                            in_message;
    bool                            in_header;   /* before headers complete */
    /* nginx's header buffers, modelled: lines fill the first buffer, then
     * large ones; a line never spans two buffers */
    size_t                          first_size;
    size_t                          large_size;
    rx_uint_t                       large_num;
    size_t                          first_used;
    size_t                          large_used;
    rx_uint_t                       large_count;
    size_t                          line_start;  /* offset of the next line */
    char                            reason_buf[256];
};

static llhttp_settings_t request_settings;

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
    p->last = SPAN_NONE;
    return 0;
}

static int
on_url(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);
    return grow_span(p, &p->url_off, &p->url_len, at, n, p->max_url,
                     RX_HTTP_REQUEST_URI_TOO_LARGE, "client sent too long URI");
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
    rc = p->h->on_url(p->data, *p->base + p->url_off, p->url_len);
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

static int
on_version_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc;
    const char       *method = llhttp_method_name((llhttp_method_t) l->method);

    /* "METHOD SP target SP HTTP/x.y CRLF" */
    p->line_start = p->url_off + p->url_len + sizeof(" HTTP/1.1\r\n") - 1;
    if (account_line(p, strlen(method) + 1 + p->url_len
                        + sizeof(" HTTP/1.1\r\n") - 1) != 0) {
        return HPE_USER;
    }
    rc = p->h->on_request_line(p->data);
    return rc == RX_OK ? 0 : fail(p, (rx_uint_t) rc, NULL);
}

static int
on_header_field(llhttp_t *l, const char *at, size_t n)
{
    rx_http_parser_t *p = from(l);

    if (!p->in_header) {
        /* a chunked body's trailer: dropped, as nginx does; its bytes may
         * no longer be in the owner's buffer, so no span is kept */
        return 0;
    }

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

    if (!p->in_header) {
        return 0;                        /* trailer: dropped */
    }

    p->last = SPAN_VALUE;
    return grow_span(p, &p->value_off, &p->value_len, at, n,
                     p->max_header_line > p->field_len
                     ? p->max_header_line - p->field_len : 0,
                     RX_HTTP_REQUEST_HEADER_TOO_LARGE,
                     "client sent too long header line");
}

static int
on_header_value_complete(llhttp_t *l)
{
    rx_http_parser_t *p = from(l);
    rx_int_t          rc;

    if (!p->in_header) {
        return 0;                        /* trailer: dropped */
    }
    size_t            end = p->value_len ? p->value_off + p->value_len
                                         : p->field_off + p->field_len + 1;

    if (end + 2 > p->line_start
        && account_line(p, end + 2 - p->line_start) != 0) {
        return HPE_USER;
    }
    p->line_start = end + 2;
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

    p->in_header = false;
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
    rx_http_parser_t *p = rx_calloc(sizeof(rx_http_parser_t), log);

    if (p == NULL) {
        return NULL;
    }
    if (request_settings.on_message_complete == NULL) {
        request_settings.on_message_begin = on_message_begin;
        request_settings.on_url = on_url;
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
    return p;
}

/* llhttp's findings in nginx's words where nginx has words for them. */
static const char *
nginx_reason(rx_http_parser_t *p, llhttp_errno_t err, const char *end)
{
    const char *reason = llhttp_get_error_reason(&p->llhttp);
    const char *pos = llhttp_get_error_pos(&p->llhttp), *v;

    if (reason == NULL) {
        return "client sent invalid request";
    }
    if (strcmp(reason, "Content-Length can't be present with Transfer-Encoding") == 0
        || strcmp(reason, "Transfer-Encoding can't be present with Content-Length") == 0) {
        return "client sent \"Content-Length\" and \"Transfer-Encoding\" "
               "headers at the same time";
    }
    if (err == HPE_INVALID_CHUNK_SIZE || err == HPE_CB_CHUNK_HEADER
        || err == HPE_CB_CHUNK_COMPLETE
        || (p->llhttp.flags & F_CHUNKED && !p->in_header)) {
        return "client sent invalid chunked body";
    }
    if (err == HPE_INVALID_CONTENT_LENGTH) {
        return "client sent invalid \"Content-Length\" header";
    }
    if (err == HPE_INVALID_HEADER_TOKEN) {
        /* a control byte in a value, a bad byte in a name, a bare LF */
        return "client sent invalid header line";
    }
    if (strcmp(reason, "Duplicate Content-Length") == 0 && pos) {
        /* the new value starts where llhttp stopped */
        for (v = pos; v < end && (*v == ' ' || *v == '\t'); v++) { }
        const char *e = v;
        while (e < end && *e >= '0' && *e <= '9') e++;
        snprintf(p->reason_buf, sizeof(p->reason_buf), "client sent duplicate "
                 "header line: \"Content-Length: %.*s\", previous value: "
                 "\"Content-Length: %" PRIu64 "\"", (int) (e - v), v,
                 p->llhttp.content_length);
        return p->reason_buf;
    }
    snprintf(p->reason_buf, sizeof(p->reason_buf), "client sent invalid "
             "request: %s", reason);
    return p->reason_buf;
}

void
rx_http_parser_free(rx_http_parser_t *p)
{
    free(p);
}

rx_http_parse_rc_t
rx_http_parser_execute(rx_http_parser_t *p, size_t from_off, size_t len,
    size_t *consumed)
{
    const char     *start = *p->base + from_off;
    llhttp_errno_t  err;

    err = llhttp_execute(&p->llhttp, start, len);
    switch (err) {
    case HPE_OK:
        *consumed = len;
        return RX_HTTP_PARSE_AGAIN;
    case HPE_PAUSED:
    case HPE_PAUSED_UPGRADE:
        *consumed = (size_t) (llhttp_get_error_pos(&p->llhttp) - start);
        return p->in_message ? RX_HTTP_PARSE_HEADER_DONE
                             : RX_HTTP_PARSE_MESSAGE_DONE;
    case HPE_USER:
        *consumed = (size_t) (llhttp_get_error_pos(&p->llhttp) - start);
        return RX_HTTP_PARSE_ERROR;
    default:
        *consumed = (size_t) (llhttp_get_error_pos(&p->llhttp) - start);
        if (p->status == 0) {
            /* llhttp's own finding; a callback's status stays as it is */
            p->status = RX_HTTP_BAD_REQUEST;   /* every llhttp finding */
            p->reason = nginx_reason(p, err, start + len);
        }
        return RX_HTTP_PARSE_ERROR;
    }
}

void
rx_http_parser_resume(rx_http_parser_t *p)
{
    if (llhttp_get_errno(&p->llhttp) == HPE_PAUSED_UPGRADE) {
        llhttp_resume_after_upgrade(&p->llhttp);
    } else {
        llhttp_resume(&p->llhttp);
    }
}

static const struct { uint8_t llhttp; rx_uint_t method; } methods[] = {
    { HTTP_GET, RX_HTTP_GET }, { HTTP_HEAD, RX_HTTP_HEAD },
    { HTTP_POST, RX_HTTP_POST }, { HTTP_PUT, RX_HTTP_PUT },
    { HTTP_DELETE, RX_HTTP_DELETE }, { HTTP_MKCOL, RX_HTTP_MKCOL },
    { HTTP_COPY, RX_HTTP_COPY }, { HTTP_MOVE, RX_HTTP_MOVE },
    { HTTP_OPTIONS, RX_HTTP_OPTIONS }, { HTTP_PROPFIND, RX_HTTP_PROPFIND },
    { HTTP_PROPPATCH, RX_HTTP_PROPPATCH }, { HTTP_LOCK, RX_HTTP_LOCK },
    { HTTP_UNLOCK, RX_HTTP_UNLOCK }, { HTTP_PATCH, RX_HTTP_PATCH },
    { HTTP_TRACE, RX_HTTP_TRACE }, { HTTP_CONNECT, RX_HTTP_CONNECT },
};

void
rx_http_parser_info(rx_http_parser_t *p, rx_http_message_info_t *info)
{
    llhttp_t *l = &p->llhttp;
    size_t    i;

    info->method = RX_HTTP_UNKNOWN;
    for (i = 0; i < rx_nelems(methods); i++) {
        if (methods[i].llhttp == l->method) {
            info->method = methods[i].method;
            break;
        }
    }
    info->method_name = llhttp_method_name((llhttp_method_t) l->method);
    info->http_major = l->http_major;
    info->http_minor = l->http_minor;
    info->content_length = (l->flags & F_CONTENT_LENGTH)
                           ? (int64_t) l->content_length : -1;
    info->chunked = (l->flags & F_CHUNKED) != 0;
    info->keep_alive = llhttp_should_keep_alive(l) != 0;
    info->upgrade = l->upgrade != 0;
}

rx_uint_t
rx_http_parser_status(rx_http_parser_t *p)
{
    return p->status ? p->status : RX_HTTP_BAD_REQUEST;
}

/* How loud the reason is: nginx logs a broken chunked body at error. */
unsigned
rx_http_parser_reason_level(rx_http_parser_t *p)
{
    return p->reason && strcmp(p->reason, "client sent invalid chunked body") == 0
           ? RX_LOG_ERR : RX_LOG_INFO;
}

const char *
rx_http_parser_reason(rx_http_parser_t *p)
{
    /* a status a callback chose was logged by that callback */
    return p->reason;
}

bool
rx_http_parser_idle(rx_http_parser_t *p)
{
    return p == NULL || !p->in_message;
}
