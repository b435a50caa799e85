/*
 * http_request_fields.c: a request whose header another framing hands
 * over as fields (an HTTP/2 stream's, HPACK-decoded), run as the same
 * request parsed from HTTP/1.1 text would be, without llhttp: the same
 * checks, limits (414, 494 counted as nginx's buffers hold the lines),
 * statuses and log lines, the same callbacks of http_request.c; its body,
 * if any, as bytes without framing (http_connection.c's body_raw).
 */
#include <strings.h>
#include "http.h"
#include "http_parse.h"
#include "http_request_fields.h"
#include "http_connection_int.h"

/* Where the header's lines would lie in nginx's buffers (as http_parse.c's
 * account_line: the first buffer while they fit, then large ones). */
typedef struct {
    size_t     first_size, first_used;
    size_t     large_size, large_used;
    rx_uint_t  large_num, large_count;
    size_t     pos;                     /* the bytes of text so far */
    size_t     max;                     /* the header's bytes at most */
} fields_room_t;

/* Places a line of n bytes. NULL, or why it does not fit (494). */
static const char *
place_line(fields_room_t *room, size_t n)
{
    room->pos += n;
    if (room->pos > room->max) {
        return "client sent too large request";
    }
    if (room->large_count == 0 && room->first_used + n <= room->first_size) {
        room->first_used += n;
        return NULL;
    }
    if (n > room->large_size) {
        return "client sent too long header line";
    }
    if (room->large_count == 0 || room->large_used + n > room->large_size) {
        if (++room->large_count > room->large_num) {
            return "client sent too large request";
        }
        room->large_used = 0;
    }
    room->large_used += n;
    return NULL;
}

/* What llhttp refuses in a value that HPACK carries: control bytes but
 * HTAB, and DEL. */
static bool
value_ok(const char *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char) v[i];

        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return false;
        }
    }
    return true;
}

/* A content-length llhttp takes: digits, within an off_t. */
static bool
content_length(const char *v, size_t n, int64_t *len)
{
    uint64_t x = 0;
    size_t   i;

    if (n == 0) {
        return false;
    }
    for (i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9' || x > (UINT64_MAX - 9) / 10) {
            return false;
        }
        x = x * 10 + (uint64_t) (v[i] - '0');
    }
    if (x > INT64_MAX) {
        return false;
    }
    *len = (int64_t) x;
    return true;
}

/* One field, as llhttp hands a header line to rx_http_on_header: its
 * length limits first, the value's leading blanks dropped. RX_OK or a
 * status (logged). */
static rx_int_t
field(rx_http_connection_t *hc, fields_room_t *room,
    const rx_http_field_t *f, rx_http_message_info_t *info)
{
    rx_http_request_t *r = hc->r;
    const char        *v = f->value, *why;
    size_t             vl = f->value_len;

    if (f->name_len > room->large_size
        || vl > room->large_size - f->name_len) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent too long "
                                  "header line");
        return RX_HTTP_REQUEST_HEADER_TOO_LARGE;
    }
    if (!value_ok(v, vl)) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                                  "header line");
        return RX_HTTP_BAD_REQUEST;
    }
    while (vl && (*v == ' ' || *v == '\t')) {
        v++;
        vl--;
    }
    /* the framing's way of saying that no length was given: the body
     * is read as a chunked one would be (client_max_body_size per piece) */
    if (f->name_len == 17 && memcmp(f->name, "transfer-encoding", 17) == 0
        && vl == 7 && strncasecmp(v, "chunked", 7) == 0) {
        info->chunked = true;
    }
    if (f->name_len == 14 && memcmp(f->name, "content-length", 14) == 0
        && (info->content_length != -1
            || !content_length(v, vl, &info->content_length))) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                                  "\"Content-Length\" header");
        return RX_HTTP_BAD_REQUEST;
    }
    /* "name: value\r\n" */
    if ((why = place_line(room, f->name_len + f->value_len + 4)) != NULL) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "%s", why);
        return RX_HTTP_REQUEST_HEADER_TOO_LARGE;
    }
    return rx_http_on_header(hc, f->name, f->name_len, v, vl);
}

/* The request line and the fields into hc->r. RX_OK or a status
 * (logged); *text gets the bytes HTTP/1.1 text of them would have. */
static rx_int_t
header(rx_http_connection_t *hc, const rx_http_request_fields_t *f,
    size_t *text)
{
    rx_http_core_srv_conf_t *cscf = hc->server;
    rx_http_request_t       *r = hc->r;
    rx_http_message_info_t   info;
    fields_room_t            room;
    const char              *why;
    rx_uint_t                i;
    rx_int_t                 rc;

    memset(&info, 0, sizeof(info));
    memset(&room, 0, sizeof(room));
    room.first_size = cscf->client_header_buffer_size;
    room.large_size = cscf->large_client_header_buffers_size;
    room.large_num = (rx_uint_t) cscf->large_client_header_buffers_num;
    room.max = room.first_size + room.large_num * room.large_size;

    if (!rx_http_parse_method(f->method, f->method_len, &info.method,
                              &info.method_name)) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                                  "request: Invalid method encountered");
        return RX_HTTP_BAD_REQUEST;
    }
    if (f->target_len > room.large_size) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent too long URI");
        return RX_HTTP_REQUEST_URI_TOO_LARGE;
    }
    for (i = 0; i < f->target_len; i++) {
        unsigned char c = (unsigned char) f->target[i];

        if (c <= ' ' || c == 0x7f) {
            rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                "request: Invalid characters in url");
            return RX_HTTP_BAD_REQUEST;
        }
    }
    if ((rc = rx_http_on_url(hc, f->target, f->target_len)) != RX_OK) {
        return rc;
    }
    info.http_major = 1;
    info.http_minor = 1;
    info.content_length = -1;
    info.keep_alive = true;
    if (rx_http_request_set_line(r, &info) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    hc->action = "reading client request headers";
    /* "METHOD target HTTP/1.1\r\n" */
    if ((why = place_line(&room, strlen(info.method_name) + 1 + f->target_len
                                 + sizeof(" HTTP/1.1\r\n") - 1)) != NULL) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "%s", why);
        return RX_HTTP_REQUEST_HEADER_TOO_LARGE;
    }
    for (i = 0; i < f->nfields; i++) {
        if ((rc = field(hc, &room, &f->fields[i], &info)) != RX_OK) {
            return rc;
        }
    }
    room.pos += 2;                       /* the empty line */
    if (room.pos > room.max) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent too large "
                                  "request");
        return RX_HTTP_REQUEST_HEADER_TOO_LARGE;
    }
    *text = room.pos;
    return rx_http_request_header_complete(r, &info);
}

void
rx_http_request_from_fields(rx_http_connection_t *hc,
    const rx_http_request_fields_t *f)
{
    size_t   text = 0;
    rx_int_t rc;

    rx_conn_set_idle(hc->conn, false);
    hc->action = "reading client request line";
    hc->r = rx_http_create_request(hc);
    if (hc->r == NULL) {
        rx_http_conn_close(hc);
        return;
    }
    rc = header(hc, f, &text);
    /* $request_length: what the same request as HTTP/1.1 text counts */
    hc->r->request_length = (int64_t) text;
    if (rc != RX_OK) {
        rx_http_conn_header_failed(hc, rc);
        return;
    }
    if (f->body) {
        /* its bytes come as they are, through on_read, to
         * rx_http_conn_process_input, which hands them to the owner */
        hc->body_raw = 1;
        (void) rx_http_conn_header_done(hc);
        return;
    }
    hc->body_ended = 1;
    if (rx_http_conn_header_done(hc)) {
        rx_http_conn_message_done(hc);   /* no body: the message is in */
    }
}

void
rx_http_request_body_end(rx_http_connection_t *hc)
{
    if (hc->body_ended || !hc->body_raw) {
        return;
    }
    hc->body_ended = 1;
    rx_http_conn_process_input(hc);
}
