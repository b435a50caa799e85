/*
 * http_special.c: what a client gets when a request fails: the error_page
 * a location configured (internal redirect, named location or redirect),
 * or nginx's built-in page for the status.
 */
#include "http.h"
#include "http_script.h"

typedef struct {
    rx_uint_t   status;
    const char *text;
} rx_http_status_t;

static const rx_http_status_t statuses[] = {
    { 100, "Continue" }, { 101, "Switching Protocols" },
    { 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
    { 204, "No Content" }, { 206, "Partial Content" },
    { 300, "Multiple Choices" }, { 301, "Moved Permanently" },
    { 302, "Moved Temporarily" }, { 303, "See Other" },
    { 304, "Not Modified" }, { 307, "Temporary Redirect" },
    { 308, "Permanent Redirect" },
    { 400, "Bad Request" }, { 401, "Unauthorized" },
    { 402, "Payment Required" }, { 403, "Forbidden" }, { 404, "Not Found" },
    { 405, "Not Allowed" }, { 406, "Not Acceptable" },
    { 408, "Request Time-out" }, { 409, "Conflict" }, { 410, "Gone" },
    { 411, "Length Required" }, { 412, "Precondition Failed" },
    { 413, "Request Entity Too Large" }, { 414, "Request-URI Too Large" },
    { 415, "Unsupported Media Type" },
    { 416, "Requested Range Not Satisfiable" }, { 417, "Expectation Failed" },
    { 421, "Misdirected Request" }, { 429, "Too Many Requests" },
    { 500, "Internal Server Error" }, { 501, "Not Implemented" },
    { 502, "Bad Gateway" }, { 503, "Service Temporarily Unavailable" },
    { 504, "Gateway Time-out" }, { 505, "HTTP Version Not Supported" },
    { 507, "Insufficient Storage" },
};

const char *
rx_http_status_text(rx_uint_t status)
{
    size_t i;

    for (i = 0; i < rx_nelems(statuses); i++) {
        if (statuses[i].status == status) {
            return statuses[i].text;
        }
    }
    return NULL;
}

/* Statuses after which the connection cannot be trusted for another
 * request: the request may not have been read to its end. */
static bool
closes_connection(rx_uint_t status)
{
    switch (status) {
    case RX_HTTP_BAD_REQUEST:
    case RX_HTTP_REQUEST_TIME_OUT:
    case RX_HTTP_REQUEST_ENTITY_TOO_LARGE:
    case RX_HTTP_REQUEST_URI_TOO_LARGE:
    case RX_HTTP_REQUEST_HEADER_TOO_LARGE:
    case RX_HTTP_INTERNAL_SERVER_ERROR:
    case RX_HTTP_NOT_IMPLEMENTED:
    case RX_HTTP_VERSION_NOT_SUPPORTED:
    case RX_HTTPS_CERT_ERROR:
    case RX_HTTPS_NO_CERT:
    case RX_HTTP_TO_HTTPS:
        return true;
    }
    return false;
}

static rx_int_t
send_error_page(rx_http_request_t *r, const rx_http_err_page_t *err)
{
    rx_str_t   uri = err->uri, args;
    char      *q;
    char       first;

    if (err->value != NULL
        && rx_http_complex_value(r, err->value, &uri) != RX_OK) {
        return RX_ERROR;
    }
    first = uri.len ? uri.data[0] : '\0';
    if (err->overwrite > 0 && !(err->overwrite >= 301 && err->overwrite <= 308
                                && first != '/' && first != '@')) {
        r->err_status = (rx_uint_t) err->overwrite;
    } else if (err->overwrite == 0) {
        r->err_status = 0;     /* "=": whatever the target answers */
    }
    r->error_page = 1;

    if (first == '@') {
        /* the method goes on as it came, as in nginx: a named location is
         * where the request itself is handled again (proxied, say) */
        return rx_http_named_location(r, &uri);
    }
    if (first == '/') {
        rx_str_null(&args);
        q = memchr(uri.data, '?', uri.len);
        if (q) {
            args.data = q + 1;
            args.len = (size_t) (uri.data + uri.len - q - 1);
            uri.len = (size_t) (q - uri.data);
        }
        /* a page is fetched: as a GET, HEAD staying HEAD (nginx) */
        if (r->method != RX_HTTP_HEAD) {
            r->method = RX_HTTP_GET;
            rx_str_set(&r->method_name, "GET");
        }
        return rx_http_internal_redirect(r, &uri, args.data ? &args : NULL);
    }
    /* an absolute URL: redirect the client there */
    r->err_status = err->overwrite >= 301 && err->overwrite <= 308
                    ? (rx_uint_t) err->overwrite : RX_HTTP_MOVED_TEMPORARILY;
    r->headers_out.location = rx_http_add_header_out(r, "Location", &uri);
    if (r->headers_out.location == NULL) {
        return RX_ERROR;
    }
    return RX_DECLINED;       /* then the built-in page for the redirect */
}

static rx_int_t
builtin_page(rx_http_request_t *r, rx_uint_t status)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_uint_t   sent = status;
    const char *text, *page, *extra = NULL;
    char       *body;
    size_t      len;
    rx_str_t    type = rx_string("text/html");
    rx_chain_t *cl;

    /* nginx's internal codes go out as 400 with an explanation */
    switch (status) {
    case RX_HTTP_REQUEST_HEADER_TOO_LARGE:
        extra = "Request Header Or Cookie Too Large";
        break;
    case RX_HTTPS_CERT_ERROR:
        extra = "The SSL certificate error";
        break;
    case RX_HTTPS_NO_CERT:
        extra = "No required SSL certificate was sent";
        break;
    case RX_HTTP_TO_HTTPS:
        extra = "The plain HTTP request was sent to HTTPS port";
        break;
    }
    if (extra) {
        sent = RX_HTTP_BAD_REQUEST;
    }
    text = rx_http_status_text(sent);
    r->headers_out.status = sent;
    r->err_status = sent;          /* 494 goes out (and is logged) as 400 */
    rx_http_clear_content_length(r);
    r->headers_out.content_type.len = 0;
    r->headers_out.last_modified_time = -1;
    if (text == NULL) {
        /* no page for a code nginx has none for either: an empty body */
        r->headers_out.content_length_n = 0;
        return rx_http_send_header(r) == RX_ERROR ? RX_ERROR
               : rx_http_output_filter(r, NULL);
    }
    if (sent < 200 || sent == RX_HTTP_NO_CONTENT || sent == RX_HTTP_NOT_MODIFIED) {
        r->header_only = 1;
        return rx_http_send_header(r) == RX_ERROR ? RX_ERROR
               : rx_http_output_filter(r, NULL);
    }
    body = rx_pnalloc(r->pool, 512);
    if (body == NULL) {
        return RX_ERROR;
    }
    /* nginx's page for 302 says "Found" while its status line says
     * "Moved Temporarily", and 401's "Authorization Required"; the 494
     * page's title names the real problem */
    page = sent == RX_HTTP_MOVED_TEMPORARILY ? "Found"
           : sent == RX_HTTP_UNAUTHORIZED ? "Authorization Required" : text;
    len = (size_t) snprintf(body, 512,
        "<html>\r\n<head><title>%lu %s</title></head>\r\n<body>\r\n"
        "<center><h1>%lu %s</h1></center>\r\n%s%s%s"
        "<hr><center>%s</center>\r\n</body>\r\n</html>\r\n",
        (unsigned long) sent, extra ? extra : page,
        (unsigned long) sent, page,
        extra ? "<center>" : "", extra ? extra : "", extra ? "</center>\r\n" : "",
        clcf->server_tokens ? RINGX_VER : RINGX_NAME);
    r->headers_out.content_type = type;
    r->headers_out.content_length_n = (int64_t) len;
    if (rx_http_send_header(r) == RX_ERROR) {
        return RX_ERROR;
    }
    if (r->header_only) {
        return rx_http_output_filter(r, NULL);
    }
    cl = rx_chain_from_text(r->pool, body, len, true);
    return cl ? rx_http_output_filter(r, cl) : RX_ERROR;
}

/* The answer is built here: the body is dropped; a broken one ends the
 * connection after the answer (nginx). */
static void
discard_body(rx_http_request_t *r)
{
    if (rx_http_discard_request_body(r) != RX_OK && !r->subrequest) {
        r->keepalive = 0;
        r->hc->close_after = 1;
    }
}

rx_int_t
rx_http_special_response_handler(rx_http_request_t *r, rx_int_t status)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_err_page_t      *err;
    rx_uint_t                i;
    rx_int_t                 rc;

    r->err_status = (rx_uint_t) status;
    /* a subrequest's error is its parent's business, not the connection's */
    if (closes_connection((rx_uint_t) status) && !r->subrequest) {
        r->keepalive = 0;
        r->hc->close_after = 1;
    }
    /* the body stays for an error_page that goes on to a handler (a
     * named location that proxies it); a page answered here drops it */
    if (clcf->error_pages && (!r->error_page || clcf->recursive_error_pages)
        && status != RX_HTTP_REQUEST_HEADER_TOO_LARGE) {
        err = clcf->error_pages->elts;
        for (i = 0; i < clcf->error_pages->nelts; i++) {
            if (err[i].status == (rx_uint_t) status) {
                rc = send_error_page(r, &err[i]);
                if (rc != RX_DECLINED) {
                    return rc == RX_ERROR ? RX_ERROR : RX_OK;
                }
                discard_body(r);
                return builtin_page(r, r->err_status);
            }
        }
    }
    discard_body(r);
    return builtin_page(r, (rx_uint_t) status);
}
