/*
 * cgi_upstream.c: what uwsgi.c, scgi.c and memcached.c share (see
 * cgi_upstream.h): the location conf they and fastcgi.c set up and merge
 * alike, the *_param lines and their pairs, the *_pass address,
 * the body as kept, and the CGI-style response of uwsgi and SCGI, whose
 * header lines (Status:, Location:, ...) FastCGI's response shares.
 */
#include "cgi_upstream.h"
#include "http_core.h"
#include "http_fastcgi_codec.h"

void
rx_http_cgi_init_params(rx_http_cgi_params_t *p)
{
    p->params = RX_CONF_UNSET_PTR;
    p->params_http = NULL;
}

const char *
rx_http_cgi_set_param(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_cgi_params_t *ps = (rx_http_cgi_params_t *) ((char *) conf
                                                          + cmd->offset);
    rx_str_t             *value = cf->args->elts;
    rx_http_cgi_param_t  *p;

    if (ps->params == RX_CONF_UNSET_PTR) {
        ps->params = rx_array_create(cf->pool, 16, sizeof(*p));
        if (ps->params == NULL) {
            return RX_CONF_ERROR;
        }
    }
    if (cf->args->nelts == 4 && !rx_str_eq(&value[3], "if_not_empty")) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          value[3].data);
        return RX_CONF_ERROR;
    }
    p = rx_array_push(ps->params);
    if (p == NULL) {
        return RX_CONF_ERROR;
    }
    p->name = value[1];
    p->if_not_empty = cf->args->nelts == 4;
    return rx_http_compile_complex_value(cf, &value[2], &p->value) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* The names after "HTTP_" among a level's params. */
static rx_int_t
build_params_http(rx_conf_t *cf, rx_http_cgi_params_t *ps)
{
    rx_http_cgi_param_t *p;
    rx_uint_t            i;

    ps->params_http = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
    if (ps->params_http == NULL) {
        return RX_ERROR;
    }
    p = ps->params ? ps->params->elts : NULL;
    for (i = 0; p && i < ps->params->nelts; i++) {
        if (p[i].name.len > 5 && strncmp(p[i].name.data, "HTTP_", 5) == 0) {
            rx_str_t *s = rx_array_push(ps->params_http);

            if (s == NULL) {
                return RX_ERROR;
            }
            s->data = p[i].name.data + 5;
            s->len = p[i].name.len - 5;
        }
    }
    return RX_OK;
}

rx_int_t
rx_http_cgi_merge_params(rx_conf_t *cf, rx_http_cgi_params_t *conf,
    rx_http_cgi_params_t *prev)
{
    if (conf->params != RX_CONF_UNSET_PTR) {
        return build_params_http(cf, conf);
    }
    if (prev->params == RX_CONF_UNSET_PTR) {
        prev->params = NULL;
    }
    if (prev->params_http == NULL && build_params_http(cf, prev) != RX_OK) {
        return RX_ERROR;
    }
    conf->params = prev->params;
    conf->params_http = prev->params_http;
    return RX_OK;
}

const rx_conf_enum_t rx_http_cgi_next_upstream_masks[] = {
    { "error", RX_HTTP_UPSTREAM_FT_ERROR },
    { "timeout", RX_HTTP_UPSTREAM_FT_TIMEOUT },
    { "invalid_header", RX_HTTP_UPSTREAM_FT_INVALID_HEADER },
    { "http_500", RX_HTTP_UPSTREAM_FT_HTTP_500 },
    { "http_503", RX_HTTP_UPSTREAM_FT_HTTP_503 },
    { "http_403", RX_HTTP_UPSTREAM_FT_HTTP_403 },
    { "http_404", RX_HTTP_UPSTREAM_FT_HTTP_404 },
    { "http_429", RX_HTTP_UPSTREAM_FT_HTTP_429 },
    { "non_idempotent", RX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT },
    { "off", RX_HTTP_UPSTREAM_FT_OFF },
    { NULL, 0 }
};

/* nginx hides these response headers unless *_pass_header says so; ringx
 * also hides Date and Server, which it always sends itself. */
static const char *const default_hide[] = {
    "status", "x-accel-expires", "x-accel-redirect", "x-accel-limit-rate",
    "x-accel-buffering", "x-accel-charset", "date", "server", NULL
};

void
rx_http_cgi_init_conf(rx_http_upstream_conf_t *u, rx_http_cgi_params_t *params,
    const char *module)
{
    rx_http_upstream_init_conf(u);
    u->module = module;
    rx_http_cgi_init_params(params);
}

const char *
rx_http_cgi_merge_conf(rx_conf_t *cf, rx_http_upstream_conf_t *u,
    rx_http_upstream_conf_t *prev_u, rx_http_cgi_params_t *params,
    rx_http_cgi_params_t *prev_params)
{
    const char *rv;

    rv = rx_http_upstream_merge_conf(cf, u, prev_u, default_hide);
    if (rv != RX_CONF_OK) {
        return rv;
    }
    /* nginx: a level with *_param lines of its own inherits none */
    return rx_http_cgi_merge_params(cf, params, prev_params) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* "HTTP_" and the header's name, upper case, '-' as '_'. */
static char *
http_name(rx_http_request_t *r, const rx_str_t *key)
{
    char   *p = rx_pnalloc(r->pool, 5 + key->len);
    size_t  k;

    if (p == NULL) {
        return NULL;
    }
    memcpy(p, "HTTP_", 5);
    for (k = 0; k < key->len; k++) {
        char ch = key->data[k];

        ch = (char) (ch >= 'a' && ch <= 'z' ? ch & ~0x20 : ch);
        p[5 + k] = ch == '-' ? '_' : ch;
    }
    return p;
}

static bool
given(const rx_http_cgi_params_t *ps, const char *name, size_t len)
{
    rx_str_t  *g = ps->params_http ? ps->params_http->elts : NULL;
    rx_uint_t  j;

    for (j = 0; g && j < ps->params_http->nelts; j++) {
        if (g[j].len == len && strncasecmp(g[j].data, name, len) == 0) {
            return true;
        }
    }
    return false;
}

/* The value of header i joined with the later ones of its name. */
static rx_int_t
joined_value(rx_http_request_t *r, rx_uint_t i, rx_str_t *out)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    const char     *key = h[i].lowcase_key;
    bool            cookie = strcmp(key, "cookie") == 0;
    size_t          vlen = h[i].value.len;
    rx_uint_t       j, n = r->headers_in.headers.nelts;
    char           *p;

    *out = h[i].value;
    for (j = i + 1; j < n; j++) {
        if (h[j].lowcase_key && strcmp(h[j].lowcase_key, key) == 0) {
            vlen += 2 + h[j].value.len;
        }
    }
    if (vlen == h[i].value.len) {
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, vlen);
    if (p == NULL) {
        return RX_ERROR;
    }
    out->data = p;
    out->len = vlen;
    memcpy(p, h[i].value.data, h[i].value.len);
    p += h[i].value.len;
    for (j = i + 1; j < n; j++) {
        if (h[j].lowcase_key && strcmp(h[j].lowcase_key, key) == 0) {
            *p++ = cookie ? ';' : ',';
            *p++ = ' ';
            memcpy(p, h[j].value.data, h[j].value.len);
            p += h[j].value.len;
        }
    }
    return RX_OK;
}

static rx_int_t
header_pairs(rx_http_request_t *r, const rx_http_cgi_params_t *ps,
    rx_array_t *out)
{
    rx_table_elt_t     *h = r->headers_in.headers.elts;
    rx_http_cgi_pair_t *pr;
    rx_uint_t           i, j;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        bool  seen = false;
        char *name;

        if (h[i].lowcase_key == NULL) {
            continue;
        }
        for (j = 0; j < i && !seen; j++) {
            seen = h[j].lowcase_key
                   && strcmp(h[j].lowcase_key, h[i].lowcase_key) == 0;
        }
        if (seen) {
            continue;            /* joined to the first of its name */
        }
        name = http_name(r, &h[i].key);
        if (name == NULL) {
            return RX_ERROR;
        }
        if (given(ps, name + 5, h[i].key.len)) {
            continue;
        }
        pr = rx_array_push(out);
        if (pr == NULL || joined_value(r, i, &pr->value) != RX_OK) {
            return RX_ERROR;
        }
        pr->name.data = name;
        pr->name.len = 5 + h[i].key.len;
    }
    return RX_OK;
}

rx_array_t *
rx_http_cgi_pairs(rx_http_request_t *r, const rx_http_cgi_params_t *ps,
    bool headers)
{
    rx_http_cgi_param_t *prm = ps->params ? ps->params->elts : NULL;
    rx_uint_t            i, n = ps->params ? ps->params->nelts : 0;
    rx_http_cgi_pair_t  *pr;
    rx_array_t          *pairs;

    pairs = rx_array_create(r->pool, n + r->headers_in.headers.nelts + 1,
                            sizeof(rx_http_cgi_pair_t));
    if (pairs == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        rx_str_t value;

        if (rx_http_complex_value(r, &prm[i].value, &value) != RX_OK) {
            return NULL;
        }
        if (value.len == 0 && prm[i].if_not_empty) {
            continue;
        }
        pr = rx_array_push(pairs);
        if (pr == NULL) {
            return NULL;
        }
        pr->name = prm[i].name;
        pr->value = value;
    }
    if (headers && header_pairs(r, ps, pairs) != RX_OK) {
        return NULL;
    }
    return pairs;
}

/* "host:port", "[v6]:port", "unix:/path", or an upstream name (no port),
 * after the scheme if it is there. NULL or the error. */
static const char *
parse_address(const rx_str_t *url, const char *scheme, rx_str_t *host,
    in_port_t *port, bool *no_port)
{
    size_t slen = strlen(scheme);

    *host = *url;
    *port = 0;
    *no_port = true;
    if (host->len > slen && strncasecmp(host->data, scheme, slen) == 0) {
        host->data += slen;
        host->len -= slen;
    }
    if (host->len > 5 && strncasecmp(host->data, "unix:", 5) == 0) {
        *no_port = false;
        return NULL;
    }
    if (host->len == 0 || memchr(host->data, '/', host->len)) {
        return "invalid host";
    }
    return rx_http_upstream_parse_host(host, host, port, no_port);
}

const char *
rx_http_cgi_set_pass(rx_conf_t *cf, rx_http_upstream_conf_t *conf,
    const char *scheme, rx_int_t (*handler)(void *r))
{
    rx_http_core_loc_conf_t  *clcf = rx_http_conf_get_module_loc_conf(cf,
                                        rx_http_core_module);
    rx_http_core_main_conf_t *cmcf = rx_http_conf_get_module_main_conf(cf,
                                        rx_http_core_module);
    rx_str_t                 *value = cf->args->elts, host;
    in_port_t                 port;
    bool                      no_port;
    const char               *err;

    if (conf->upstream || conf->url) {
        return "is duplicate";
    }
    clcf->handler = handler;
    /* nginx's auto_redirect: "/app" for "location /app/" */
    clcf->auto_redirect = clcf->name.len
                          && clcf->name.data[clcf->name.len - 1] == '/';
    cmcf->upstreams = true;
    if (memchr(value[1].data, '$', value[1].len)) {
        conf->url = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
        if (conf->url == NULL
            || rx_http_compile_complex_value(cf, &value[1], conf->url)
               != RX_OK) {
            return RX_CONF_ERROR;
        }
        return RX_CONF_OK;
    }
    err = parse_address(&value[1], scheme, &host, &port, &no_port);
    if (err) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in upstream \"%s\"", err,
                          value[1].data);
        return RX_CONF_ERROR;
    }
    conf->upstream = rx_http_upstream_add(cf, &host, port, no_port);
    return conf->upstream ? RX_CONF_OK : RX_CONF_ERROR;
}

rx_int_t
rx_http_cgi_find_upstream(rx_http_upstream_t *u, const char *scheme)
{
    rx_http_request_t *r = u->r;
    rx_str_t           url, host;
    in_port_t          port;
    bool               no_port;
    const char        *err;

    if (u->conf->url == NULL) {
        return RX_OK;
    }
    if (rx_http_complex_value(r, u->conf->url, &url) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    err = parse_address(&url, scheme, &host, &port, &no_port);
    if (err) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "%s in upstream \"%.*s\"",
                                  err, (int) url.len, url.data);
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->us = rx_http_upstream_find(r, &host, port);
    if (u->us != NULL) {
        return RX_OK;
    }
    if (no_port) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "no port in upstream "
                                  "\"%.*s\"", (int) host.len, host.data);
        return RX_HTTP_BAD_GATEWAY;
    }
    /* an address, or a name for the location's resolver */
    return rx_http_upstream_resolve_host(u, &host, port);
}

int64_t
rx_http_cgi_body_length(rx_http_request_t *r, bool pass_body)
{
    rx_http_request_body_t *rb = r->request_body;
    int64_t                 n;

    if (!pass_body || rb == NULL) {
        return 0;
    }
    if (r->headers_in.content_length_n >= 0) {
        return r->headers_in.content_length_n;
    }
    n = (int64_t) rx_chain_size(rb->bufs);
    if (rb->file) {
        n += (int64_t) rb->file->written;
    }
    return n;
}

rx_int_t
rx_http_cgi_start(rx_http_request_t *r, rx_http_upstream_conf_t *conf,
    const char *scheme, rx_int_t (*create_request)(rx_http_upstream_t *u))
{
    rx_http_upstream_t *u;
    rx_http_cgi_ctx_t  *ctx;
    rx_int_t            rc;

    u = rx_http_upstream_create(r, conf);
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (u == NULL || ctx == NULL || rx_http_cgi_set_response(u, ctx) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->schema.data = (char *) scheme;
    u->schema.len = strlen(scheme);
    rx_str_set(&u->uri, "");
    rc = rx_http_cgi_find_upstream(u, scheme);
    if (rc != RX_OK) {
        return rc;
    }
    u->create_request = create_request;
    u->file_body = 1;              /* a large body is sent from its file */
    if (!conf->request_buffering && r->headers_in.content_length_n >= 0) {
        u->frame_body = rx_http_cgi_frame_body;
    }
    return rx_http_upstream_start(u);
}

rx_int_t
rx_http_cgi_chain_body(rx_http_request_t *r, rx_chain_t **ll)
{
    rx_chain_t *body, *link;
    rx_buf_t   *b;

    for (body = r->request_body->bufs; body; body = body->next) {
        link = rx_alloc_chain_link(r->pool);
        if (link == NULL) {
            return RX_ERROR;
        }
        link->buf = body->buf;
        link->next = NULL;
        *ll = link;
        ll = &link->next;
    }
    if (r->request_body->file && r->request_body->file->written > 0) {
        link = rx_alloc_chain_link(r->pool);
        b = rx_calloc_buf(r->pool);
        if (link == NULL || b == NULL) {
            return RX_ERROR;
        }
        b->in_file = 1;
        b->fd = r->request_body->file->fd;
        b->file_pos = 0;
        b->file_last = (int64_t) r->request_body->file->written;
        link->buf = b;
        link->next = NULL;
        *ll = link;
    }
    return RX_OK;
}

rx_int_t
rx_http_cgi_frame_body(rx_http_upstream_t *u, const char *data, size_t len,
    bool last)
{
    (void) last;
    return len ? rx_http_upstream_out_append(u, data, len) : RX_OK;
}

static void
response_reinit(rx_http_upstream_t *u)
{
    rx_http_cgi_ctx_t             *ctx = u->proto;
    rx_http_upstream_headers_in_t *h = &u->headers_in;

    ctx->parsed = 0;
    ctx->first_line = ctx->has_status = false;
    ctx->length_left = -1;
    h->headers.nelts = 0;
    h->status = 0;
    rx_str_null(&h->status_line);
    h->content_length_n = -1;
    h->chunked = h->connection_close = false;
    h->location = h->x_accel_redirect = h->x_accel_buffering = NULL;
}

/* "HTTP/1.1 200 OK" as the first line (uWSGI sends one), or none (a CGI
 * header). RX_OK (looked at), RX_AGAIN, or INVALID_HEADER. */
static rx_int_t
status_line(rx_http_upstream_t *u, rx_http_cgi_ctx_t *ctx, const char *buf,
    size_t len)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    const char                    *lf, *end;
    rx_int_t                       status;

    if (memcmp(buf, "HTTP/", rx_min(len, 5)) != 0) {
        ctx->first_line = true;        /* a CGI header */
        return RX_OK;
    }
    lf = len > 5 ? memchr(buf, '\n', len) : NULL;
    if (lf == NULL) {
        return RX_AGAIN;
    }
    end = lf > buf && lf[-1] == '\r' ? lf - 1 : lf;
    if (end - buf < 12 || buf[5] < '0' || buf[5] > '9' || buf[6] != '.'
        || buf[7] < '0' || buf[7] > '9' || buf[8] != ' '
        || (status = rx_atoi(buf + 9, 3)) < 100 || status > 999
        || (end - buf > 12 && buf[12] != ' ')) {
        u->error = "upstream sent invalid status line";
        return RX_HTTP_UPSTREAM_INVALID_HEADER;
    }
    h->status = (rx_uint_t) status;
    h->status_line.data = (char *) buf + 9;
    h->status_line.len = (size_t) (end - buf - 9);
    ctx->has_status = true;
    ctx->first_line = true;
    ctx->parsed = (size_t) (lf + 1 - buf);
    return RX_OK;
}

/* ---- a CGI-style header line (uwsgi, SCGI and FastCGI) ---- */

/* Compares the length first: most names are none of those asked for. */
#define key_is(e, lit)                                                      \
    ((e)->key.len == sizeof(lit) - 1                                        \
     && memcmp((e)->lowcase_key, lit, sizeof(lit) - 1) == 0)

static rx_int_t
content_length(rx_http_upstream_t *u, const rx_str_t *value)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    int64_t                        n = 0;
    size_t                         i;

    for (i = 0; i < value->len && n <= INT64_MAX / 10 - 1; i++) {
        if (value->data[i] < '0' || value->data[i] > '9') {
            break;
        }
        n = n * 10 + (value->data[i] - '0');
    }
    if (value->len == 0 || i < value->len || h->content_length_n >= 0) {
        u->error = h->content_length_n >= 0
                   ? "upstream sent duplicate header line \"Content-Length\""
                   : "upstream sent invalid \"Content-Length\" header";
        return RX_HTTP_UPSTREAM_INVALID_HEADER;
    }
    h->content_length_n = n;
    return RX_OK;
}

/* Status: "NNN[ reason]". As nginx, the script's status line is kept even
 * bare ("204"): the header filter then leaves the response as the script
 * made it. */
static rx_int_t
cgi_status(rx_http_upstream_t *u, const rx_str_t *value, bool *has_status)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    rx_int_t status = value->len >= 3 ? rx_atoi(value->data, 3) : -1;

    if (status < 100 || status > 999
        || (value->len > 3 && value->data[3] != ' ')) {
        u->error = "upstream sent invalid status";
        return RX_HTTP_UPSTREAM_INVALID_HEADER;
    }
    h->status = (rx_uint_t) status;
    h->status_line = *value;
    *has_status = true;
    return RX_OK;
}

rx_int_t
rx_http_cgi_add_header(rx_http_upstream_t *u, const rx_str_t *name,
    const rx_str_t *value, unsigned flags, bool *has_status)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    rx_table_elt_t                *e = rx_http_upstream_header_push(h);
    size_t                         i;

    if (e == NULL
        || (e->lowcase_key = rx_pnalloc(u->r->pool, name->len + 1)) == NULL) {
        return RX_ERROR;
    }
    e->key = *name;
    e->value = *value;
    e->deleted = false;
    for (i = 0; i < name->len; i++) {
        char ch = name->data[i];     /* a token: ASCII only */

        e->lowcase_key[i] = (char) (ch >= 'A' && ch <= 'Z' ? ch | 0x20 : ch);
    }
    e->lowcase_key[i] = '\0';
    if (key_is(e, "status")) {
        if (*has_status && (flags & RX_HTTP_CGI_STATUS_ONCE)) {
            return RX_OK;
        }
        return cgi_status(u, value, has_status);
    } else if (key_is(e, "location")) {
        h->location = e;
    } else if (key_is(e, "x-accel-redirect")) {
        h->x_accel_redirect = e;
    } else if (key_is(e, "x-accel-buffering")) {
        h->x_accel_buffering = e;
    } else if (key_is(e, "content-length")) {
        return content_length(u, value);
    } else if (key_is(e, "transfer-encoding")
               && (flags & RX_HTTP_CGI_NO_TRANSFER_ENCODING)) {
        /* the body runs to the close: chunks would reach the client as
         * data */
        u->error = "upstream sent \"Transfer-Encoding\" header, which the "
                   "protocol does not frame";
        return RX_HTTP_UPSTREAM_INVALID_HEADER;
    }
    return RX_OK;
}

/* ---- the response of uwsgi and SCGI ---- */

/* The empty line came: the status as CGI gives it, the body's length. */
static void
header_complete(rx_http_upstream_t *u, rx_http_cgi_ctx_t *ctx)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;

    if (!ctx->has_status) {
        h->status = h->location ? RX_HTTP_MOVED_TEMPORARILY : RX_HTTP_OK;
    }
    if (u->r->method == RX_HTTP_HEAD || h->status == RX_HTTP_NO_CONTENT
        || h->status == RX_HTTP_NOT_MODIFIED || h->status < 200) {
        ctx->length_left = 0;
    } else {
        ctx->length_left = h->content_length_n;
    }
}

static rx_int_t response_body(rx_http_upstream_t *u, const char *data,
    size_t len);

static rx_int_t
response_header(rx_http_upstream_t *u, const char *data, size_t len,
    size_t *used)
{
    rx_http_cgi_ctx_t *ctx = u->proto;
    const char        *buf = u->header_buf;
    size_t             before = (size_t) (data - buf), total = before + len;
    rx_str_t           name, value;
    rx_int_t           rc;

    if (!ctx->first_line) {
        rc = status_line(u, ctx, buf, total);
        if (rc != RX_OK) {
            *used = len;
            return rc;
        }
    }
    for ( ;; ) {
        rc = rx_fcgi_parse_header_line(buf, total, &ctx->parsed, &name, &value);
        if (rc == RX_OK) {
            /* uWSGI's status line comes first and stays */
            rc = rx_http_cgi_add_header(u, &name, &value,
                                        RX_HTTP_CGI_STATUS_ONCE
                                        | RX_HTTP_CGI_NO_TRANSFER_ENCODING,
                                        &ctx->has_status);
            if (rc != RX_OK) {
                return rc;
            }
            continue;
        }
        if (rc == RX_AGAIN) {
            *used = len;
            return RX_AGAIN;
        }
        if (rc == RX_ERROR) {
            u->error = "upstream sent invalid header";
            return RX_HTTP_UPSTREAM_INVALID_HEADER;
        }
        header_complete(u, ctx);
        *used = ctx->parsed - before;
        if (ctx->length_left == 0) {
            /* nothing follows: what does is dropped by response_body */
            u->body_done = 1;
        }
        return RX_OK;
    }
}

/* Body bytes: up to the close, or as many as Content-Length says (what
 * goes beyond is dropped, logged once, as nginx). */
static rx_int_t
response_body(rx_http_upstream_t *u, const char *data, size_t len)
{
    rx_http_cgi_ctx_t *ctx = u->proto;

    if (ctx->length_left >= 0 && (int64_t) len >= ctx->length_left) {
        if ((int64_t) len > ctx->length_left) {
            rx_http_request_log_error_action(u->r, RX_LOG_WARN, 0, u->action,
                "upstream sent more data than specified in "
                "\"Content-Length\" header");
        }
        len = (size_t) ctx->length_left;
        ctx->length_left = 0;
        u->body_done = 1;
    } else if (ctx->length_left > 0) {
        ctx->length_left -= (int64_t) len;
    }
    return len ? rx_http_upstream_body(u, data, len) : RX_OK;
}

/* The close ends a body of unknown length; it cuts one of known length. */
static rx_int_t
response_eof(rx_http_upstream_t *u)
{
    rx_http_cgi_ctx_t *ctx = u->proto;

    return ctx->length_left > 0 ? RX_ERROR : RX_OK;
}

rx_int_t
rx_http_cgi_set_response(rx_http_upstream_t *u, rx_http_cgi_ctx_t *ctx)
{
    if (rx_array_init(&u->headers_in.headers, u->r->pool, 16,
                      sizeof(rx_table_elt_t)) != RX_OK) {
        return RX_ERROR;
    }
    u->proto = ctx;
    response_reinit(u);
    u->reinit_request = response_reinit;
    u->process_header = response_header;
    u->input_filter = response_body;
    u->on_eof = response_eof;
    return RX_OK;
}
