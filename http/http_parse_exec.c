/*
 * http_parse_exec.c: the request parser run over the bytes: llhttp over
 * the head with a CR of ours before each bare LF (see http_parse.c), the
 * body as it comes, and llhttp's errors turned into nginx's statuses and
 * reasons; the parser's accessors.
 */
#include "http_parse_int.h"

static const char *
nginx_reason(rx_http_parser_t *p, llhttp_errno_t err, const char *end)
{
    const char *reason = llhttp_get_error_reason(&p->llhttp);
    const char *pos = llhttp_get_error_pos(&p->llhttp), *v;

    if (rx_http_parse_injected(pos)) {
        pos = NULL;             /* at our CR: no value to quote */
    }

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
    rx_spare_block_put(p, sizeof(rx_http_parser_t));
}

/* The next LF in [s, end) that no CR precedes, or NULL. */
static const char *
bare_lf(rx_http_parser_t *p, const char *s, const char *end)
{
    const char *q;

    for (q = memchr(s, '\n', (size_t) (end - s)); q != NULL;
         q = memchr(q + 1, '\n', (size_t) (end - q - 1))) {
        if ((q > s ? q[-1] : p->prev_byte) != '\r') {
            return q;
        }
        if (q + 1 == end) {
            break;
        }
    }
    return NULL;
}

/* In the head (before a request's header is complete), or between
 * requests: where a bare LF ends a line. */
static bool
in_head(rx_http_parser_t *p)
{
    return !p->in_message || p->in_header;
}

/*
 * llhttp_execute() over [start, end), with a CR of ours before each bare
 * LF of the head (see the top of the file). Which LF gets one depends on
 * the byte before it, which prev_byte keeps across reads, and on the
 * parser's state at it: not on where a read ended. *stop gets where
 * llhttp stopped, in [start, end]: a stop at our CR is at its LF.
 */
static llhttp_errno_t
execute_head(rx_http_parser_t *p, const char *start, const char *end,
    const char **stop)
{
    const char     *s = start, *lf;
    llhttp_errno_t  err;

    for (;;) {
        lf = in_head(p) ? bare_lf(p, s, end) : NULL;
        p->exec_start = s;
        p->exec_end = lf ? lf : end;
        p->real_end = (size_t) (p->exec_end - *p->base);
        err = llhttp_execute(&p->llhttp, s, (size_t) (p->exec_end - s));
        if (err != HPE_OK) {
            *stop = llhttp_get_error_pos(&p->llhttp);
            return err;
        }
        rx_http_parse_remember_tail(p, s, p->exec_end);
        if (lf == NULL) {
            *stop = end;
            return HPE_OK;
        }
        /* still in the head: llhttp pauses when the header ends */
        p->exec_start = rx_http_parse_bare_lf_cr;
        p->exec_end = rx_http_parse_bare_lf_cr + 1;
        err = llhttp_execute(&p->llhttp, rx_http_parse_bare_lf_cr, 1);
        if (err != HPE_OK) {
            *stop = lf;
            return err;
        }
        rx_http_parse_remember_tail(p, rx_http_parse_bare_lf_cr, rx_http_parse_bare_lf_cr + 1);
        s = lf;
    }
}

rx_http_parse_rc_t
rx_http_parser_execute(rx_http_parser_t *p, size_t from_off, size_t len,
    size_t *consumed)
{
    const char     *start = *p->base + from_off, *pos;
    llhttp_errno_t  err;
    bool            chunked = p->llhttp.flags & F_CHUNKED;
    size_t          room = len;

    if ((!p->in_message || p->in_header) && from_off + len > p->header_max) {
        /* the header as a whole fits client_header_buffer_size + number x
         * size, as nginx's buffers: what lies past that is not parsed, so
         * a bad byte there is not found first in one read and missed when
         * a read ends before it */
        room = from_off < p->header_max ? p->header_max - from_off : 0;
    }
    err = execute_head(p, start, start + room, &pos);
    switch (err) {
    case HPE_OK:
        *consumed = room;
        if (room < len) {
            /* nginx: the request line is a too long URI, a header
             * that needs one more buffer is a too large request */
            p->status = p->fields ? RX_HTTP_REQUEST_HEADER_TOO_LARGE
                                  : RX_HTTP_REQUEST_URI_TOO_LARGE;
            p->reason = p->fields ? "client sent too large request"
                                  : "client sent too long URI";
            return RX_HTTP_PARSE_ERROR;
        }
        return RX_HTTP_PARSE_AGAIN;
    case HPE_PAUSED:
    case HPE_PAUSED_UPGRADE:
        *consumed = (size_t) (pos - start);
        /* the empty line that ends a chunked body's trailer was just
         * read: llhttp also ends it at a bare LF, where a stricter parser
         * in front would still be reading the trailer (the head's bare
         * LFs got their CR above) */
        if (!p->in_message && chunked && pos > start
            && rx_http_parse_byte_before(p, pos - 1) != '\r') {
            p->status = RX_HTTP_BAD_REQUEST;
            p->reason = "client sent invalid chunked body";
            return RX_HTTP_PARSE_ERROR;
        }
        rx_http_parse_remember_tail(p, start, pos);
        return p->in_message ? RX_HTTP_PARSE_HEADER_DONE
                             : RX_HTTP_PARSE_MESSAGE_DONE;
    case HPE_USER:
        *consumed = (size_t) (pos - start);
        return RX_HTTP_PARSE_ERROR;
    default:
        *consumed = (size_t) (pos - start);
        if (p->in_header) {
            rx_http_parse_request_line_end(p, (size_t) (pos - *p->base));
        }
        if (p->status == 0 && p->method_end && !p->url_done
            && (size_t) (pos - *p->base) > p->method_end + 1 + p->max_url) {
            /* a bad byte found past the URL limit: the limit decides, as
             * in nginx, whatever the reads' cuts (fuzz finding F5) */
            p->status = RX_HTTP_REQUEST_URI_TOO_LARGE;
            p->reason = "client sent too long URI";
        } else if (p->status == 0 && p->in_header && p->fields
                   && (size_t) (pos - *p->base) > p->line_start + p->large_size) {
            /* the same for a header line */
            p->status = RX_HTTP_REQUEST_HEADER_TOO_LARGE;
            p->reason = "client sent too long header line";
        }
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

/* A method by its name, as llhttp's request line knows it (another
 * framing's request, an HTTP/2 stream's :method, is held to the same
 * list). False for a name llhttp would refuse. */
bool
rx_http_parse_method(const char *name, size_t len, rx_uint_t *method,
    const char **method_name)
{
    static const struct { uint8_t id; const char *name; } all[] = {
#define RX_METHOD(id, NAME, string) { id, #string },
        HTTP_METHOD_MAP(RX_METHOD)
#undef RX_METHOD
    };
    size_t i, j;

    /* GET comes first: the usual case costs one compare */
    for (i = 1; i < rx_nelems(all) + 1; i++) {
        j = i % rx_nelems(all);
        if (strncmp(all[j].name, name, len) != 0 || all[j].name[len] != '\0') {
            continue;
        }
        *method = RX_HTTP_UNKNOWN;
        *method_name = all[j].name;
        for (i = 0; i < rx_nelems(methods); i++) {
            if (methods[i].llhttp == all[j].id) {
                *method = methods[i].method;
                break;
            }
        }
        return true;
    }
    return false;
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
