/*
 * http_request.c: a request's life up to its phases: created in its own
 * arena, filled by the parser callbacks, checked (version, Host, framing),
 * matched to a server; its log lines. Its body belongs to http_body.c.
 */
#include <ctype.h>
#include "http.h"
#include "http_parse.h"
#include "http_uri.h"
#include "http_server.h"
#include "clock.h"
#include "regex.h"
#include "http_captures.h"

/* r: the request the line is about (a subrequest names its URI, as in
 * nginx); NULL before a request. */
static void
log_verror(rx_http_connection_t *hc, rx_http_request_t *r, unsigned level,
    int err, const char *action, const char *fmt, va_list args)
{
    char               msg[RX_MAX_ERROR_STR], addr[128];
    size_t             n;

    n = (size_t) vsnprintf(msg, sizeof(msg), fmt, args);
    if (err && n < sizeof(msg)) {
        n += (size_t) snprintf(msg + n, sizeof(msg) - n, " (%d: %s)", err,
                               strerror(err));
    }
    if (action && n < sizeof(msg)) {
        n += (size_t) snprintf(msg + n, sizeof(msg) - n, " while %s", action);
    }
    rx_sock_ntop(r ? rx_http_remote_addr(r) : rx_conn_peer(hc->conn), addr,
                 sizeof(addr), false);
    if (r && r->request_line.len) {
        /* nginx's tail: host and referrer when the request named them */
        char   tail[RX_MAX_ERROR_STR / 2];
        size_t t = 0;

        tail[0] = '\0';
        if (r->subrequest) {
            t += (size_t) snprintf(tail + t, sizeof(tail) - t,
                                   ", subrequest: \"%.*s\"", (int) r->uri.len,
                                   r->uri.data);
        }
        if (r->log_upstream.len && t < sizeof(tail)) {
            t += (size_t) snprintf(tail + t, sizeof(tail) - t,
                                   ", upstream: \"%.*s\"",
                                   (int) r->log_upstream.len,
                                   r->log_upstream.data);
        }
        if (r->headers_in.host && t < sizeof(tail)) {
            t += (size_t) snprintf(tail + t, sizeof(tail) - t, ", host: \"%.*s\"",
                                   (int) r->headers_in.host->value.len,
                                   r->headers_in.host->value.data);
        }
        if (r->headers_in.referer && t < sizeof(tail)) {
            snprintf(tail + t, sizeof(tail) - t, ", referrer: \"%.*s\"",
                     (int) r->headers_in.referer->value.len,
                     r->headers_in.referer->value.data);
        }
        rx_log_error(level, &hc->conn->log, 0, "%s, client: %s, server: %s, "
            "request: \"%.*s\"%s", msg, addr,
            hc->server && hc->server->server_names.nelts
            ? ((rx_http_server_name_t *) hc->server->server_names.elts)->name.data
            : "", (int) r->request_line.len, r->request_line.data, tail);
    } else {
        /* before a request: nginx names the listening address */
        char local[128];

        rx_sock_ntop(&hc->conn->listening->addr, local, sizeof(local), true);
        rx_log_error(level, &hc->conn->log, 0, "%s, client: %s, server: %s",
                     msg, addr, local);
    }
}

const rx_sockaddr_t *
rx_http_remote_addr(rx_http_request_t *r)
{
    if (r->remote_addr) {
        return r->remote_addr;
    }
    return r->conn ? rx_conn_peer(r->conn) : NULL;
}

void
rx_http_log_error_action(rx_http_connection_t *hc, unsigned level, int err,
    const char *action, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    log_verror(hc, hc->r, level, err, action, fmt, args);
    va_end(args);
}

void
rx_http_request_log_error(rx_http_request_t *r, unsigned level, int err,
    const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    log_verror(r->hc, r, level, err, r->hc->action, fmt, args);
    va_end(args);
}

void
rx_http_request_log_error_action(rx_http_request_t *r, unsigned level,
    int err, const char *action, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    log_verror(r->hc, r, level, err, action, fmt, args);
    va_end(args);
}

void
rx_http_request_free(rx_http_request_t *r)
{
    rx_post_cancel(&r->body_resume);     /* the request is over */
    rx_post_cancel(&r->gone_done);
    r->freed = 1;
    if (r->holds == 0) {
        rx_pool_destroy(r->pool);
    }
}

static void
release_hold(void *data)
{
    rx_http_request_t *r = data;

    if (--r->holds == 0 && r->freed) {
        rx_pool_destroy(r->pool);
    }
}

rx_int_t
rx_http_request_hold_for(rx_http_request_t *r, rx_conn_t *c)
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(c->pool, 0);

    r = r->main;            /* a subrequest's memory is its main request's */
    if (cln == NULL) {
        return RX_ERROR;
    }
    cln->handler = release_hold;
    cln->data = r;
    r->holds++;
    return RX_OK;
}

rx_http_request_t *
rx_http_create_request(rx_http_connection_t *hc)
{
    rx_pool_t         *pool;
    rx_http_request_t *r;

    pool = rx_pool_create_spare(&hc->conn->log);
    if (pool == NULL) {
        return NULL;
    }
    r = rx_pcalloc(pool, sizeof(rx_http_request_t));
    if (r == NULL
        || rx_array_init(&r->headers_in.headers, pool, 16, sizeof(rx_table_elt_t))
           != RX_OK
        || rx_array_init(&r->headers_out.headers, pool, 8, sizeof(rx_table_elt_t))
           != RX_OK) {
        rx_pool_destroy(pool);
        return NULL;
    }
    r->pool = pool;
    r->main = r;
    r->hc = hc;
    r->conn = hc->conn;
    r->pipeline = hc->pipelined;
    hc->pipelined = 0;
    r->main_conf = hc->server->ctx->main_conf;
    r->srv_conf = hc->server->ctx->srv_conf;
    r->loc_conf = hc->server->ctx->loc_conf;
    r->headers_in.content_length_n = -1;
    r->headers_out.content_length_n = -1;
    r->headers_out.last_modified_time = -1;
    r->start_msec = rx_current_msec;
    r->start_usec = rx_time_usec;     /* the loop turn's time, as nginx's */
    r->start_sec = rx_time_sec;
    r->uri_changes = RX_HTTP_MAX_URI_CHANGES + 1;
    r->method = RX_HTTP_UNKNOWN;
    /* a stream's DATA frames are made from memory: no sendfile or splice
     * into a socket it does not have */
    r->filter_need_in_memory = hc->framing != NULL;
    hc->requests++;
    r->op_tag = ++hc->op_tags;
    return r;
}

/* Parser callbacks (see http_parse.h). data is the HTTP connection. */

rx_int_t
rx_http_on_url(void *data, const char *at, size_t len)
{
    rx_http_connection_t *hc = data;
    rx_http_request_t    *r = hc->r;
    rx_http_uri_t         u;
    rx_int_t              rc;
    char                 *target;

    /* the parsed parts point into the target: it must outlive the input
     * buffer, which grows (moves) and is reused while the request lives */
    target = rx_pstrdup_c(r->pool, at, len);
    if (target == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    at = target;
    rc = rx_http_parse_request_target(r->pool, at, len, &u,
                                      hc->default_server->merge_slashes);
    if (rc == RX_HTTP_TARGET_ASTERISK) {
        /* "OPTIONS *": nothing here can answer it */
        r->unparsed_uri = u.unparsed;
        rx_str_set(&r->uri, "*");
        return RX_OK;
    }
    if (rc != RX_OK) {
        r->unparsed_uri.data = rx_pstrdup_c(r->pool, at, len);
        r->unparsed_uri.len = len;
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                                  "request target");
        return rc;
    }
    r->unparsed_uri = u.request_uri;
    r->uri = u.path;
    r->args = u.args;
    r->exten = u.exten;
    r->schema = u.scheme;
    r->host = u.host;
    r->host_port = u.port;
    r->quoted_uri = u.quoted;
    return RX_OK;
}

/* The known headers that requests and modules look at directly. */
typedef struct {
    const char *name;
    size_t      offset;
    rx_int_t  (*handler)(rx_http_request_t *r, rx_table_elt_t *h);
} rx_http_header_t;

/* Two Host headers make the target ambiguous (RFC 9112 3.2). */
static rx_int_t
header_host(rx_http_request_t *r, rx_table_elt_t *h)
{
    rx_table_elt_t *prev = r->headers_in.host;

    if (prev) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent duplicate "
            "header line: \"%s: %s\", previous value: \"%s: %s\"",
            h->key.data, h->value.data, prev->key.data, prev->value.data);
        return RX_HTTP_BAD_REQUEST;
    }
    r->headers_in.host = h;
    return RX_OK;
}

static rx_int_t
header_connection(rx_http_request_t *r, rx_table_elt_t *h)
{
    const char *p = h->value.data, *end = p + h->value.len;

    if (r->headers_in.connection == NULL) {
        r->headers_in.connection = h;
    }
    /* a comma-separated list of tokens */
    while (p < end) {
        const char *tok;
        size_t      n;

        while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) p++;
        tok = p;
        while (p < end && *p != ',' && *p != ' ' && *p != '\t') p++;
        n = (size_t) (p - tok);
        if (n == 5 && strncasecmp(tok, "close", 5) == 0) {
            r->headers_in.connection_close = true;
        } else if (n == 10 && strncasecmp(tok, "keep-alive", 10) == 0) {
            r->headers_in.connection_keep_alive = true;
        }
    }
    return RX_OK;
}

static rx_int_t
header_user_agent(rx_http_request_t *r, rx_table_elt_t *h)
{
    const char *msie;

    if (r->headers_in.user_agent) {
        return RX_OK;
    }
    r->headers_in.user_agent = h;
    msie = strstr(h->value.data, "MSIE ");
    if (msie && msie + 7 < h->value.data + h->value.len) {
        r->headers_in.msie = true;
        /* MSIE 4-6, except 6.0 with SV1 (XP SP2), which handles it */
        if (msie[6] == '.' && msie[5] >= '4' && msie[5] <= '6'
            && strstr(msie, "SV1") == NULL) {
            r->headers_in.msie6 = true;
        }
    }
    if (!r->headers_in.msie && strstr(h->value.data, "Safari/")
        && strstr(h->value.data, "Mac OS X") && !strstr(h->value.data, "Chrome/")) {
        r->headers_in.safari = true;
    }
    return RX_OK;
}

#define HIN(f) offsetof(rx_http_headers_in_t, f)

static const rx_http_header_t headers_in_table[] = {
    { "host", 0, header_host },
    { "connection", 0, header_connection },
    { "user-agent", 0, header_user_agent },
    { "if-modified-since", HIN(if_modified_since), NULL },
    { "if-unmodified-since", HIN(if_unmodified_since), NULL },
    { "if-match", HIN(if_match), NULL },
    { "if-none-match", HIN(if_none_match), NULL },
    { "referer", HIN(referer), NULL },
    { "content-length", HIN(content_length), NULL },
    { "content-type", HIN(content_type), NULL },
    { "range", HIN(range), NULL },
    { "if-range", HIN(if_range), NULL },
    { "transfer-encoding", HIN(transfer_encoding), NULL },
    { "expect", HIN(expect), NULL },
    { "upgrade", HIN(upgrade), NULL },
    { "accept-encoding", HIN(accept_encoding), NULL },
    { "authorization", HIN(authorization), NULL },
    { "keep-alive", HIN(keep_alive), NULL },
    { "x-forwarded-for", HIN(x_forwarded_for), NULL },
    { "cookie", HIN(cookie), NULL },
};

rx_int_t
rx_http_on_header(void *data, const char *k, size_t kl, const char *v, size_t vl)
{
    rx_http_connection_t    *hc = data;
    rx_http_request_t       *r = hc->r;
    rx_http_core_srv_conf_t *cscf = hc->default_server;
    rx_table_elt_t          *h;
    size_t                   i;

    /* llhttp lets whitespace between the name and the colon through;
     * RFC 9112 5.1 says reject (it is a smuggling vector) */
    if (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t')) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
            "header line: \"%.*s:\"", (int) kl, k);
        return RX_HTTP_BAD_REQUEST;
    }
    /* llhttp admits only token characters in names; '_' is one of them,
     * and nginx drops such headers unless told otherwise */
    if (!cscf->underscores_in_headers && memchr(k, '_', kl)) {
        if (cscf->ignore_invalid_headers) {
            rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                "header line: \"%.*s: %.*s\"", (int) kl, k, (int) vl, v);
            return RX_OK;
        }
    }
    /* trailing whitespace is not part of a value (RFC 9110 5.5) */
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) {
        vl--;
    }
    h = rx_array_push(&r->headers_in.headers);
    if (h == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    /* the name, the value and the lower-cased name, each NUL-terminated,
     * in one allocation from the request's pool */
    h->key.data = rx_pnalloc(r->pool, 2 * (kl + 1) + vl + 1);
    if (h->key.data == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    memcpy(h->key.data, k, kl);
    h->key.data[kl] = '\0';
    h->key.len = kl;
    h->lowcase_key = h->key.data + kl + 1;
    h->value.data = h->lowcase_key + kl + 1;
    memcpy(h->value.data, v, vl);
    h->value.data[vl] = '\0';
    h->value.len = vl;
    h->deleted = false;
    rx_strlow_ascii(h->lowcase_key, k, kl);
    h->lowcase_key[kl] = '\0';

    for (i = 0; i < rx_nelems(headers_in_table); i++) {
        const rx_http_header_t *t = &headers_in_table[i];

        /* the first byte tells most names apart before a strcmp */
        if (t->name[0] != h->lowcase_key[0]
            || strcmp(h->lowcase_key, t->name) != 0) {
            continue;
        }
        if (t->handler) {
            return t->handler(r, h);
        }
        {
            rx_table_elt_t **slot = (rx_table_elt_t **)
                                    ((char *) &r->headers_in + t->offset);
            if (*slot == NULL) {
                *slot = h;
            }
        }
        return RX_OK;
    }
    return RX_OK;
}

rx_int_t
rx_http_request_set_line(rx_http_request_t *r,
    const rx_http_message_info_t *info)
{
    size_t ml = strlen(info->method_name), n;
    char  *p;

    r->method = info->method;
    r->method_name.data = (char *) info->method_name;
    r->method_name.len = ml;
    r->http_version = info->http_major * 1000 + info->http_minor;
    if (r->hc->framing) {
        /* an HTTP/2 stream's request (as fields, or as HTTP/1.1 text):
         * $request and $server_protocol say what the client spoke */
        r->http_version = RX_HTTP_VERSION_20;
        r->http_protocol.data = "HTTP/2.0";
        r->http_protocol.len = 8;
        goto line;
    }
    r->http_protocol.data = rx_pnalloc(r->pool, sizeof("HTTP/255.255"));
    if (r->http_protocol.data == NULL) {
        return RX_ERROR;
    }
    if (info->http_major < 10 && info->http_minor < 10) {
        /* the usual case, without printf (per request, it counts) */
        p = r->http_protocol.data;
        memcpy(p, "HTTP/", 5);
        p[5] = (char) ('0' + info->http_major);
        p[6] = '.';
        p[7] = (char) ('0' + info->http_minor);
        p[8] = '\0';
        r->http_protocol.len = 8;
    } else {
        r->http_protocol.len = (size_t) sprintf(r->http_protocol.data, "HTTP/%u.%u",
                                                info->http_major, info->http_minor);
    }
line:
    n = ml + 1 + r->unparsed_uri.len + 1 + r->http_protocol.len;
    p = rx_pnalloc(r->pool, n + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    r->request_line.data = p;
    r->request_line.len = n;
    memcpy(p, info->method_name, ml);
    p += ml;
    *p++ = ' ';
    if (r->unparsed_uri.len) {
        memcpy(p, r->unparsed_uri.data, r->unparsed_uri.len);
        p += r->unparsed_uri.len;
    }
    *p++ = ' ';
    memcpy(p, r->http_protocol.data, r->http_protocol.len + 1);
    return RX_OK;
}

/* Chooses the virtual server by Host and re-points the request's confs. */
static void
select_server(rx_http_request_t *r)
{
    rx_http_connection_t    *hc = r->hc;
    rx_http_core_srv_conf_t *cscf;
    rx_str_t                 host = r->headers_in.server;
    rx_regex_t              *matched = NULL;

    cscf = rx_http_find_server(hc->names, &host, r->captures,
                               RX_HTTP_MAX_CAPTURES, &r->ncaptures, &matched);
    if (cscf == NULL) {
        cscf = hc->default_server;
    }
    if (r->ncaptures > 0) {
        r->captures_data = r->headers_in.server.data;
    }
    if (matched) {
        rx_http_server_name_t *sn = cscf->server_names.elts;
        rx_uint_t              i;

        for (i = 0; i < cscf->server_names.nelts; i++) {
            if (sn[i].re == matched) {
                rx_http_set_capture_vars(r, sn[i].capture_vars,
                                         r->headers_in.server.data);
            }
        }
    }
    hc->server = cscf;
    r->srv_conf = cscf->ctx->srv_conf;
    r->loc_conf = cscf->ctx->loc_conf;
    rx_http_set_request_log(r);
}

rx_int_t
rx_http_on_request_line(void *data)
{
    rx_http_connection_t   *hc = data;
    rx_http_message_info_t  info;

    rx_http_parser_info(hc->parser, &info);
    if (rx_http_request_set_line(hc->r, &info) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    hc->action = "reading client request headers";
    return RX_OK;
}

/* Framing and version: what the request's body and protocol may be. */
static rx_int_t
check_framing(rx_http_request_t *r, const rx_http_message_info_t *info)
{
    rx_table_elt_t *te = r->headers_in.transfer_encoding;

    if (te && r->http_version < RX_HTTP_VERSION_11) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent HTTP/1.0 "
                                  "request with \"Transfer-Encoding\" header");
        return RX_HTTP_BAD_REQUEST;
    }
    if (te && !(te->value.len == 7
                && strncasecmp(te->value.data, "chunked", 7) == 0)) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent unknown "
            "\"Transfer-Encoding\": \"%s\"", te->value.data);
        return RX_HTTP_NOT_IMPLEMENTED;
    }
    if (info->http_major != 1) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent unsupported "
                                  "HTTP version");
        return info->http_major > 1 ? RX_HTTP_VERSION_NOT_SUPPORTED
                                    : RX_HTTP_BAD_REQUEST;
    }
    return r->uri.data == NULL ? RX_HTTP_BAD_REQUEST : RX_OK;
}

/* Host: the absolute-form wins, then the header (RFC 9112 3.2.2). */
static rx_int_t
find_host(rx_http_request_t *r)
{
    if (r->host.len) {
        r->headers_in.server = r->host;
    } else if (r->headers_in.host) {
        r->headers_in.server = r->headers_in.host->value;
        /* the value is the request's own (a copy in its pool): it is
         * copied again only to lower its case */
        if (!rx_http_validate_host(&r->headers_in.server, r->pool, false)) {
            rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                                      "host header");
            return RX_HTTP_BAD_REQUEST;
        }
    } else if (r->http_version >= RX_HTTP_VERSION_11) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent HTTP/1.1 "
                                  "request without \"Host\" header");
        return RX_HTTP_BAD_REQUEST;
    }
    return RX_OK;
}

/* CONNECT and TRACE are refused; an Expect other than 100-continue is
 * 417. */
static rx_int_t
check_method_and_expect(rx_http_request_t *r)
{
    rx_table_elt_t *e = r->headers_in.expect;

    if (r->method & (RX_HTTP_CONNECT | RX_HTTP_TRACE)) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent %s method",
                                  r->method == RX_HTTP_CONNECT ? "CONNECT"
                                                               : "TRACE");
        return RX_HTTP_NOT_ALLOWED;
    }
    if (e && r->http_version >= RX_HTTP_VERSION_11
        && !(e->value.len == 12
             && strncasecmp(e->value.data, "100-continue", 12) == 0)) {
        return RX_HTTP_EXPECTATION_FAILED;
    }
    return RX_OK;
}

/* Whether the connection may serve another request after this one. */
static bool
keepalive_of(rx_http_request_t *r, const rx_http_message_info_t *info)
{
    rx_http_connection_t    *hc = r->hc;
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    if (!info->keep_alive || clcf->keepalive_timeout == 0
        || hc->requests >= (rx_uint_t) clcf->keepalive_requests
        || rx_current_msec - hc->conn->start_msec >= clcf->keepalive_time) {
        return false;
    }
    /* nginx: old MSIE loses keep-alive once it sends a POST */
    if (r->headers_in.msie6 && r->method == RX_HTTP_POST
        && (clcf->keepalive_disable & RX_HTTP_KEEPALIVE_DISABLE_MSIE6)) {
        return false;
    }
    return !(r->headers_in.safari
             && (clcf->keepalive_disable & RX_HTTP_KEEPALIVE_DISABLE_SAFARI));
}

rx_int_t
rx_http_on_headers_complete(void *data)
{
    rx_http_connection_t   *hc = data;
    rx_http_request_t      *r = hc->r;
    rx_http_message_info_t  info;

    rx_http_parser_info(hc->parser, &info);
    if (r->request_line.len == 0 && rx_http_request_set_line(r, &info) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    return rx_http_request_header_complete(r, &info);
}

rx_int_t
rx_http_request_header_complete(rx_http_request_t *r,
    const rx_http_message_info_t *info)
{
    rx_int_t rc;

    r->header_size = r->request_length;
    if ((rc = check_framing(r, info)) != RX_OK) {
        return rc;
    }
    r->headers_in.content_length_n = info->content_length;
    r->headers_in.chunked = info->chunked;
    r->header_only = r->method == RX_HTTP_HEAD;
    if ((rc = find_host(r)) != RX_OK) {
        return rc;
    }
    select_server(r);
    if (rx_http_tls_hooks.check_request
        && (rc = rx_http_tls_hooks.check_request(r)) != RX_OK) {
        return rc;
    }
    if ((rc = check_method_and_expect(r)) != RX_OK) {
        return rc;
    }
    r->keepalive = keepalive_of(r, info);
    return RX_OK;
}

rx_int_t
rx_http_on_message_complete(void *data)
{
    return RX_OK;
}
