/*
 * http_header_filter.c: the last header filter: serialises the status
 * line and the headers into one buffer and queues it ahead of the body.
 */
#include "http.h"
#include "clock.h"


/* A relative Location becomes absolute (absolute_redirect on), with the
 * host the client used, or the server name (server_name_in_redirect). */
static rx_int_t
absolute_location(rx_http_request_t *r, rx_http_core_loc_conf_t *clcf,
    rx_str_t *loc)
{
    rx_http_core_srv_conf_t *cscf = rx_http_get_module_srv_conf(r,
                                       rx_http_core_module);
    const rx_str_t          *host;
    const rx_sockaddr_t     *local;
    char                     port[16] = "";
    in_port_t                p = 0;
    char                    *abs;
    size_t                   n;
    bool                     tls = rx_http_conn_is_tls(r->conn);
    const char              *scheme = tls ? "https://" : "http://";

    if (!clcf->absolute_redirect || loc->len == 0 || loc->data[0] != '/') {
        return RX_OK;
    }
    if (clcf->server_name_in_redirect || r->headers_in.server.len == 0) {
        host = &((rx_http_server_name_t *) cscf->server_names.elts)->name;
    } else {
        host = &r->headers_in.server;
    }
    local = rx_conn_local(r->conn);
    if (local->u.sa.sa_family == AF_INET) p = ntohs(local->u.sin.sin_port);
    if (local->u.sa.sa_family == AF_INET6) p = ntohs(local->u.sin6.sin6_port);
    if (clcf->port_in_redirect && p && p != (tls ? 443 : 80)) {
        snprintf(port, sizeof(port), ":%u", p);
    }
    n = strlen(scheme) + host->len + strlen(port) + loc->len;
    abs = rx_pnalloc(r->pool, n + 1);
    if (abs == NULL) {
        return RX_ERROR;
    }
    snprintf(abs, n + 1, "%s%.*s%s%.*s", scheme, (int) host->len, host->data,
             port, (int) loc->len, loc->data);
    loc->data = abs;
    loc->len = n;
    return RX_OK;
}

static void
put(char **p, const char *s, size_t n)
{
    memcpy(*p, s, n);
    *p += n;
}

#define PUT_LIT(p, lit)  put(p, lit, sizeof(lit) - 1)

/* 1xx, 204 and 304 have no body. An upstream's Content-Length and
 * Content-Type go out as they came, as nginx relays them (for a 304, the
 * length of what the client has), except a 204's or a 1xx's length, which
 * RFC 9110 8.6 forbids (nginx relays it); ringx's own answers carry none. */
static void
bodyless_status(rx_http_request_t *r, rx_uint_t status, bool relayed)
{
    rx_http_headers_out_t *ho = &r->headers_out;

    if (status != RX_HTTP_NO_CONTENT && status != RX_HTTP_NOT_MODIFIED
        && status >= 200) {
        return;
    }
    r->header_only = 1;
    if (relayed && status != RX_HTTP_NOT_MODIFIED) {
        ho->content_length_n = -1;
    }
    if (!relayed) {
        ho->content_length_n = -1;
        ho->content_type.len = 0;
        if (status != RX_HTTP_NOT_MODIFIED) {
            ho->last_modified_time = -1;
        }
    }
}

/* The status line into line[96], or an upstream's own ("418 I Am A
 * Teapot", as nginx; not when something changed the status since) into
 * the pool. Its length in *len; NULL when out of memory. */
static char *
status_line(rx_http_request_t *r, rx_uint_t status, bool relayed, char *line,
    size_t *len)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    const char            *text = rx_http_status_text(status);
    char                  *sl = line, *p;

    if (relayed && ho->status_line.len > 3) {
        sl = rx_pnalloc(r->pool, sizeof("HTTP/1.1 \r\n") + ho->status_line.len);
        if (sl == NULL) {
            return NULL;
        }
        p = sl;
        PUT_LIT(&p, "HTTP/1.1 ");
        put(&p, ho->status_line.data, ho->status_line.len);
    } else {
        /* "HTTP/1.1 " (9) + the status (3 digits, 20 at most) + " " +
         * the reason phrase (64 at most) + CRLF fits line[96] */
        size_t tl = text ? strnlen(text, 96 - 32) : 0;

        p = line;
        PUT_LIT(&p, "HTTP/1.1 ");
        p = rx_put_uint(p, status, 3);
        PUT_LIT(&p, " ");
        if (tl) {
            put(&p, text, tl);
        }
    }
    PUT_LIT(&p, "\r\n");
    *len = (size_t) (p - sl);
    return sl;
}

/* A header value with a CR or LF (a variable made of the client's
 * decoded URI: error_page, return, add_header with $uri and %0d%0a) would
 * end its line and start another: response splitting. nginx writes it as
 * it is; ringx drops the header and says so. */
static void
drop_split_headers(rx_http_request_t *r)
{
    rx_table_elt_t *h = r->headers_out.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (h[i].deleted || h[i].key.len == 0
            || (memchr(h[i].value.data, '\r', h[i].value.len) == NULL
                && memchr(h[i].value.data, '\n', h[i].value.len) == NULL)) {
            continue;
        }
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "response header \"%.*s\" "
            "has a CR or LF in its value: not sent (use $request_uri, which "
            "keeps them escaped, rather than $uri)", (int) h[i].key.len,
            h[i].key.data);
        h[i].deleted = 1;
        if (r->headers_out.location == &h[i]) {
            r->headers_out.location = NULL;
        }
    }
}

/* What the header takes after its status line (an upper bound). */
static size_t
header_size(rx_http_request_t *r, rx_http_core_loc_conf_t *clcf,
    const char *lm, bool keepalive)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_table_elt_t        *h = ho->headers.elts;
    size_t                 len, i;

    len = sizeof("Server: " RINGX_VER "\r\n") - 1;
    len += sizeof("Date: \r\n") - 1 + strlen(rx_http_time);
    if (ho->content_type.len) {
        len += sizeof("Content-Type: ; charset=\r\n") - 1
               + ho->content_type.len + ho->charset.len;
    }
    if (ho->content_length_n >= 0) {
        len += sizeof("Content-Length: \r\n") - 1 + 20;
    }
    if (ho->last_modified_time != -1) {
        len += sizeof("Last-Modified: \r\n") - 1 + strlen(lm);
    }
    if (r->chunked) {
        len += sizeof("Transfer-Encoding: chunked\r\n") - 1;
    }
    len += sizeof("Connection: keep-alive\r\n") - 1;
    if (keepalive && clcf->keepalive_header) {
        len += sizeof("Keep-Alive: timeout=\r\n") - 1 + 20;
    }
    for (i = 0; i < ho->headers.nelts; i++) {
        if (!h[i].deleted && h[i].key.len) {
            len += h[i].key.len + 2 + h[i].value.len + 2;
        }
    }
    return len + 2;
}

/* The headers the server writes itself, in nginx's order. */
static void
put_own_headers(rx_http_request_t *r, rx_http_core_loc_conf_t *clcf,
    char **p, const char *lm, bool keepalive)
{
    rx_http_headers_out_t *ho = &r->headers_out;

    /* nginx: an upstream's Server passed by *_pass_header goes instead (it
     * is in ho->headers) */
    if (!(ho->server && !ho->server->deleted)) {
        if (clcf->server_tokens) {
            PUT_LIT(p, "Server: " RINGX_VER "\r\n");
        } else {
            PUT_LIT(p, "Server: " RINGX_NAME "\r\n");
        }
    }
    PUT_LIT(p, "Date: ");
    put(p, rx_http_time, strlen(rx_http_time));
    PUT_LIT(p, "\r\n");
    if (ho->content_type.len) {
        PUT_LIT(p, "Content-Type: ");
        put(p, ho->content_type.data, ho->content_type.len);
        if (ho->charset.len) {
            PUT_LIT(p, "; charset=");
            put(p, ho->charset.data, ho->charset.len);
        }
        PUT_LIT(p, "\r\n");
    }
    if (ho->content_length_n >= 0) {
        PUT_LIT(p, "Content-Length: ");
        *p = rx_put_uint(*p, (uint64_t) ho->content_length_n, 1);
        PUT_LIT(p, "\r\n");
    }
    if (ho->last_modified_time != -1) {
        PUT_LIT(p, "Last-Modified: ");
        put(p, lm, strlen(lm));
        PUT_LIT(p, "\r\n");
    }
    if (r->chunked) {
        PUT_LIT(p, "Transfer-Encoding: chunked\r\n");
    }
    if (r->upgrade) {
        PUT_LIT(p, "Connection: upgrade\r\n");
    } else if (keepalive) {
        PUT_LIT(p, "Connection: keep-alive\r\n");
        if (clcf->keepalive_header) {
            PUT_LIT(p, "Keep-Alive: timeout=");
            *p = rx_put_uint(*p, (uint64_t) (clcf->keepalive_header / 1000), 1);
            PUT_LIT(p, "\r\n");
        }
    } else {
        PUT_LIT(p, "Connection: close\r\n");
    }
}

rx_int_t
rx_http_header_filter(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_headers_out_t   *ho = &r->headers_out;
    rx_table_elt_t          *h = ho->headers.elts;
    rx_uint_t                status = ho->status ? ho->status : RX_HTTP_OK;
    char                     lm[64], line[96], *sl, *p;
    size_t                   ll, i;
    rx_buf_t                *b;
    rx_chain_t              *cl;
    bool                     keepalive, relayed;

    if (ho->location && absolute_location(r, clcf, &ho->location->value) != RX_OK) {
        return RX_ERROR;
    }
    /* an upstream's response keeps its status line */
    relayed = ho->status_line.len >= 3
              && rx_atoi(ho->status_line.data, 3) == (rx_int_t) status;
    bodyless_status(r, status, relayed);
    drop_split_headers(r);
    if (r->hc->framing) {
        r->keepalive = 0;
        return r->hc->framing->send_header(r);   /* an HTTP/2 stream's */
    }
    keepalive = r->keepalive && !r->hc->close_after && !rx_worker.quit;
    r->keepalive = keepalive;
    sl = status_line(r, status, relayed, line, &ll);
    if (sl == NULL) {
        return RX_ERROR;
    }
    if (ho->last_modified_time != -1) {
        rx_http_date(lm, ho->last_modified_time);
    }
    b = rx_create_temp_buf(r->pool, ll + header_size(r, clcf, lm, keepalive));
    cl = rx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    p = b->last;
    put(&p, sl, ll);
    put_own_headers(r, clcf, &p, lm, keepalive);
    for (i = 0; i < ho->headers.nelts; i++) {
        if (h[i].deleted || h[i].key.len == 0) {
            continue;
        }
        put(&p, h[i].key.data, h[i].key.len);
        PUT_LIT(&p, ": ");
        put(&p, h[i].value.data, h[i].value.len);
        PUT_LIT(&p, "\r\n");
    }
    PUT_LIT(&p, "\r\n");
    b->last = p;
    r->header_size = (int64_t) (p - b->pos);
    cl->buf = b;
    return rx_http_write_queue(r, cl);
}
