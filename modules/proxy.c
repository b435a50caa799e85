/*
 * proxy.c: the proxy module: proxy_pass and its directives (nginx's header
 * defaults), the content handler that starts the upstream exchange, and
 * the $proxy_* variables. The protocol (the HTTP/1.x request and the
 * response) is proxy_upstream.c's; the exchange itself (peers,
 * connections, retries, buffers) is the upstream engine's; proxy_redirect
 * and proxy_cookie_* are proxy_rewrite.c's.
 */
#include <ctype.h>
#include "proxy.h"
#include "http_temp_file.h"
#include "http_variables.h"
#include "http_location.h"
#include "proxy_ssl.h"
#include "cache_serve.h"


static const char *set_proxy_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_header(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_http_version(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_redirect(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_method(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

#define UP(field)  offsetof(rx_http_proxy_loc_conf_t, upstream.field)
#define RW(field)  offsetof(rx_http_proxy_loc_conf_t, rewrite.field)

static const rx_conf_enum_t next_upstream_masks[] = {
    { "error", RX_HTTP_UPSTREAM_FT_ERROR },
    { "timeout", RX_HTTP_UPSTREAM_FT_TIMEOUT },
    { "invalid_header", RX_HTTP_UPSTREAM_FT_INVALID_HEADER },
    { "http_500", RX_HTTP_UPSTREAM_FT_HTTP_500 },
    { "http_502", RX_HTTP_UPSTREAM_FT_HTTP_502 },
    { "http_503", RX_HTTP_UPSTREAM_FT_HTTP_503 },
    { "http_504", RX_HTTP_UPSTREAM_FT_HTTP_504 },
    { "http_403", RX_HTTP_UPSTREAM_FT_HTTP_403 },
    { "http_404", RX_HTTP_UPSTREAM_FT_HTTP_404 },
    { "http_429", RX_HTTP_UPSTREAM_FT_HTTP_429 },
    { "non_idempotent", RX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT },
    { "off", RX_HTTP_UPSTREAM_FT_OFF },
    { NULL, 0 }
};

#define RX_PROXY_LOC_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t proxy_commands[] = {
    { "proxy_pass", RX_HTTP_LOC_CONF | RX_HTTP_LIF_CONF | RX_HTTP_LMT_CONF
      | RX_CONF_TAKE1,
      set_proxy_pass, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_set_header", RX_PROXY_LOC_CONF | RX_CONF_TAKE2, set_header,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_pass_trailers", RX_PROXY_LOC_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_proxy_loc_conf_t, pass_trailers), NULL },
    { "proxy_http_version", RX_PROXY_LOC_CONF | RX_CONF_TAKE1, set_http_version,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_method", RX_PROXY_LOC_CONF | RX_CONF_TAKE1, set_method,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_redirect", RX_PROXY_LOC_CONF | RX_CONF_TAKE12, set_redirect,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_cookie_domain", RX_PROXY_LOC_CONF | RX_CONF_TAKE12,
      rx_http_proxy_set_cookie_domain, RX_HTTP_LOC_CONF_OFFSET,
      RW(cookie_domains), NULL },
    { "proxy_cookie_path", RX_PROXY_LOC_CONF | RX_CONF_TAKE12,
      rx_http_proxy_set_cookie_path, RX_HTTP_LOC_CONF_OFFSET,
      RW(cookie_paths), NULL },
    { "proxy_cookie_flags", RX_PROXY_LOC_CONF | RX_CONF_TAKE1234,
      rx_http_proxy_set_cookie_flags, RX_HTTP_LOC_CONF_OFFSET,
      RW(cookie_flags), NULL },
    { "proxy_set_body", RX_PROXY_LOC_CONF | RX_CONF_TAKE1,
      rx_http_set_complex_value_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_proxy_loc_conf_t, body), NULL },
    /* hash sizing: ringx's header lists need none */
    { "proxy_headers_hash_max_size", RX_PROXY_LOC_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "proxy_headers_hash_bucket_size", RX_PROXY_LOC_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "proxy_ignore_client_abort", RX_PROXY_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, UP(ignore_client_abort), NULL },
    RX_HTTP_UPSTREAM_COMMANDS("proxy_",
        offsetof(rx_http_proxy_loc_conf_t, upstream), next_upstream_masks),
    RX_HTTP_CACHE_COMMANDS("proxy_", offsetof(rx_http_proxy_loc_conf_t, upstream),
        offsetof(rx_http_upstream_conf_t, cache)),
    rx_null_command
};

static const rx_http_module_t proxy_ctx = {
    preconfiguration, NULL, NULL, NULL, NULL, NULL, create_loc_conf,
    merge_loc_conf
};

rx_module_t rx_http_proxy_module = {
    "rx_http_proxy_module", 0, 0, RX_HTTP_MODULE, &proxy_ctx,
    proxy_commands, NULL, NULL, NULL, NULL
};

/* nginx hides these upstream headers unless proxy_pass_header says so. */
static const char *const default_hide[] = {
    "date", "server", "x-pad", "x-accel-expires", "x-accel-redirect",
    "x-accel-limit-rate", "x-accel-buffering", "x-accel-charset", NULL
};

/* nginx's default proxy_set_header list; an empty value drops the
 * client's header of that name. */
static const struct { const char *name, *value; } default_headers[] = {
    { "Host", "$proxy_host" },
    { "Connection", "close" },
    { "Content-Length", "$proxy_internal_body_length" },
    { "Transfer-Encoding", "$proxy_internal_chunked" },
    { "TE", "" },
    { "Keep-Alive", "" },
    { "Expect", "" },
    { "Upgrade", "" },
};

/* What proxy_redirect default needs of this level's proxy_pass. */
static rx_http_proxy_target_t
target_of(const rx_http_proxy_loc_conf_t *plcf)
{
    rx_http_proxy_target_t t = { plcf->url, plcf->location, plcf->has_uri,
                                 plcf->upstream.url != NULL };

    return t;
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_proxy_loc_conf_t *plcf = rx_pcalloc(cf->pool, sizeof(*plcf));

    if (plcf == NULL) {
        return NULL;
    }
    rx_http_upstream_init_conf(&plcf->upstream);
    plcf->upstream.module = "proxy";
    plcf->set_headers = RX_CONF_UNSET_PTR;
    plcf->http_version = RX_CONF_UNSET_UINT;
    plcf->pass_trailers = RX_CONF_UNSET;
    plcf->method = RX_CONF_UNSET_PTR;
    rx_http_proxy_rewrite_init_conf(&plcf->rewrite);
    plcf->body = RX_CONF_UNSET_PTR;
    return plcf;
}

static rx_int_t
add_header(rx_conf_t *cf, rx_array_t *list, const char *name, size_t nlen,
    const rx_str_t *value)
{
    rx_http_proxy_header_t *h = rx_array_push(list);
    size_t                  i;

    if (h == NULL) {
        return RX_ERROR;
    }
    h->name.data = (char *) name;
    h->name.len = nlen;
    h->lowcase.data = rx_pnalloc(cf->pool, nlen + 1);
    if (h->lowcase.data == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < nlen; i++) {
        h->lowcase.data[i] = (char) tolower((unsigned char) name[i]);
    }
    h->lowcase.data[nlen] = '\0';
    h->lowcase.len = nlen;
    return rx_http_compile_complex_value(cf, value, &h->value);
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_proxy_loc_conf_t *prev = parent, *conf = child;
    rx_http_proxy_header_t   *h;
    rx_http_proxy_target_t    target = target_of(conf);
    const char               *rv;
    rx_uint_t                 i, j;

    if (conf->url.len == 0 && prev->url.len) {
        /* a block inside (limit_except, if) proxies where its location
         * does: the Host, $proxy_host and the URI it sends are the same */
        conf->url = prev->url;
        conf->host_header = prev->host_header;
        conf->port_text = prev->port_text;
        conf->uri = prev->uri;
        conf->has_uri = prev->has_uri;
        conf->location = prev->location;
        conf->https = prev->https;
        conf->ssl_host = prev->ssl_host;
        if (conf->ssl == NULL) {
            conf->ssl = prev->ssl;
        }
    }
    rv = rx_http_upstream_merge_conf(cf, &conf->upstream, &prev->upstream,
                                     default_hide);
    if (rv != RX_CONF_OK) {
        return rv;
    }
    rx_conf_merge_value(conf->pass_trailers, prev->pass_trailers, 0);
    rx_conf_merge_uint(conf->http_version, prev->http_version,
                       RX_HTTP_VERSION_10);
    rx_conf_merge_ptr(conf->method, prev->method, NULL);
    rx_conf_merge_ptr(conf->body, prev->body, NULL);
    rv = rx_http_proxy_rewrite_merge(cf, &conf->rewrite, &prev->rewrite, &target);
    if (rv != RX_CONF_OK) {
        return rv;
    }
    rx_conf_merge_ptr(conf->set_headers, prev->set_headers, NULL);
    if (conf->set_headers == prev->set_headers && prev->headers) {
        conf->headers = prev->headers;
        return RX_CONF_OK;
    }
    conf->headers = rx_array_create(cf->pool, 12, sizeof(rx_http_proxy_header_t));
    if (conf->headers == NULL) {
        return RX_CONF_ERROR;
    }
    if (conf->set_headers) {
        h = conf->set_headers->elts;
        for (i = 0; i < conf->set_headers->nelts; i++) {
            rx_http_proxy_header_t *copy = rx_array_push(conf->headers);
            if (copy == NULL) {
                return RX_CONF_ERROR;
            }
            *copy = h[i];
        }
    }
    for (i = 0; i < rx_nelems(default_headers); i++) {
        rx_str_t value = { strlen(default_headers[i].value),
                           (char *) default_headers[i].value };
        bool     given = false;

        h = conf->headers->elts;
        for (j = 0; conf->set_headers && j < conf->set_headers->nelts; j++) {
            if (strcasecmp(h[j].lowcase.data, default_headers[i].name) == 0) {
                given = true;
            }
        }
        if (!given && add_header(cf, conf->headers, default_headers[i].name,
                                 strlen(default_headers[i].name), &value)
                      != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

/* "http[s]://host[:port][/uri]", "http[s]://unix:/path[:/uri]" or an
 * upstream name; fills host, port, the URI part and whether it is https.
 * Returns NULL or an error. */
static const char *
parse_url(const rx_str_t *url, rx_str_t *host, in_port_t *port, bool *no_port,
    rx_str_t *uri, bool *has_uri, bool *https)
{
    const char *p, *last = url->data + url->len, *slash, *colon, *err;
    rx_str_t    authority;
    in_port_t   default_port = 80;

    *https = false;
    if (url->len > 7 && strncasecmp(url->data, "http://", 7) == 0) {
        p = url->data + 7;
    } else if (url->len > 8 && strncasecmp(url->data, "https://", 8) == 0) {
#if (RX_HAVE_OPENSSL)
        p = url->data + 8;
        *https = true;
        default_port = 443;
#else
        return "https protocol requires SSL support";
#endif
    } else {
        return "invalid URL prefix";
    }
    *has_uri = false;
    *no_port = true;
    *port = default_port;
    rx_str_null(uri);
    if (last - p > 5 && strncasecmp(p, "unix:", 5) == 0) {
        /* unix:/path, optionally followed by ":/uri" */
        colon = memchr(p + 5, ':', (size_t) (last - p - 5));
        host->data = (char *) p;
        host->len = (size_t) ((colon ? colon : last) - p);
        if (colon) {
            uri->data = (char *) colon + 1;
            uri->len = (size_t) (last - colon - 1);
            *has_uri = true;
        }
        *no_port = false;
        *port = 0;
        return host->len > 5 ? NULL : "no path in the unix domain socket";
    }
    slash = memchr(p, '/', (size_t) (last - p));
    if (slash) {
        uri->data = (char *) slash;
        uri->len = (size_t) (last - slash);
        *has_uri = true;
    }
    authority.data = (char *) p;
    authority.len = (size_t) ((slash ? slash : last) - p);
    err = rx_http_upstream_parse_host(&authority, host, port, no_port);
    if (*no_port) {
        *port = default_port;
    }
    return err;
}

static rx_int_t proxy_handler(void *data);

/* $proxy_host (the host, with the port unless it is the default) and
 * $proxy_port of a literal proxy_pass. */
static const char *
set_host_port(rx_conf_t *cf, rx_http_proxy_loc_conf_t *plcf,
    const rx_str_t *host, in_port_t port, bool no_port, bool https)
{
    char *p = rx_pnalloc(cf->pool, host->len + 7);

    if (p == NULL) {
        return RX_CONF_ERROR;
    }
    if (host->len > 5 && strncmp(host->data, "unix:", 5) == 0) {
        rx_str_set(&plcf->host_header, "localhost");
        rx_str_null(&plcf->port_text);
        return RX_CONF_OK;
    }
    plcf->host_header.data = p;
    plcf->host_header.len = (size_t) sprintf(p, "%.*s", (int) host->len,
                                             host->data);
    if (!no_port && port != (https ? 443 : 80)) {
        plcf->host_header.len += (size_t) sprintf(p + host->len, ":%u",
                                                  (unsigned) port);
    }
    plcf->port_text.data = rx_pnalloc(cf->pool, 6);
    if (plcf->port_text.data == NULL) {
        return RX_CONF_ERROR;
    }
    plcf->port_text.len = (size_t) sprintf(plcf->port_text.data, "%u",
                                           (unsigned) port);
    return RX_CONF_OK;
}

/* proxy_pass with variables: compiled, parsed per request. */
static const char *
set_proxy_pass_variables(rx_conf_t *cf, rx_http_proxy_loc_conf_t *plcf,
    rx_str_t *url)
{
#if (RX_HAVE_OPENSSL)
    /* it may turn out https at run time */
    plcf->ssl = rx_http_proxy_ssl_needed(cf);
    if (plcf->ssl == NULL) {
        return RX_CONF_ERROR;
    }
#endif
    plcf->upstream.url = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
    if (plcf->upstream.url == NULL
        || rx_http_compile_complex_value(cf, url, plcf->upstream.url)
           != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static const char *
set_proxy_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_loc_conf_t *plcf = conf;
    rx_http_core_loc_conf_t  *clcf = rx_http_conf_get_module_loc_conf(cf,
                                        rx_http_core_module);
    rx_http_core_main_conf_t *cmcf = rx_http_conf_get_module_main_conf(cf,
                                        rx_http_core_module);
    rx_str_t                 *value = cf->args->elts, host, uri;
    in_port_t                 port;
    bool                      no_port, has_uri, https;
    const char               *err;

    if (plcf->url.len) {
        return "is duplicate";
    }
    plcf->url = value[1];
    clcf->handler = proxy_handler;
    clcf->auto_redirect = clcf->name.len
                          && clcf->name.data[clcf->name.len - 1] == '/';
    cmcf->upstreams = true;
    if (memchr(value[1].data, '$', value[1].len)) {
        return set_proxy_pass_variables(cf, plcf, &value[1]);
    }
    err = parse_url(&value[1], &host, &port, &no_port, &uri, &has_uri, &https);
    if (err) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in \"%s\"", err, value[1].data);
        return RX_CONF_ERROR;
    }
#if (RX_HAVE_OPENSSL)
    if (https) {
        plcf->ssl = rx_http_proxy_ssl_needed(cf);
        if (plcf->ssl == NULL) {
            return RX_CONF_ERROR;
        }
        plcf->https = true;
        plcf->ssl_host = host;
    }
#endif
    if (has_uri && (clcf->match == RX_LOC_REGEX || clcf->match == RX_LOC_REGEX_CASELESS
                    || clcf->match == RX_LOC_NAMED
                    || (cf->cmd_type & (RX_HTTP_LIF_CONF | RX_HTTP_LMT_CONF)))) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"proxy_pass\" cannot have URI "
            "part in location given by regular expression, or inside named "
            "location, or inside \"if\" statement, or inside \"limit_except\" "
            "block");
        return RX_CONF_ERROR;
    }
    plcf->upstream.upstream = rx_http_upstream_add(cf, &host, port, no_port);
    if (plcf->upstream.upstream == NULL) {
        return RX_CONF_ERROR;
    }
    plcf->has_uri = has_uri;
    plcf->uri = uri;
    plcf->location = clcf->name;
    return set_host_port(cf, plcf, &host, port, no_port, https);
}

static const char *
set_header(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_loc_conf_t *plcf = conf;
    rx_str_t                 *value = cf->args->elts;

    if (plcf->set_headers == RX_CONF_UNSET_PTR) {
        plcf->set_headers = rx_array_create(cf->pool, 4,
                                            sizeof(rx_http_proxy_header_t));
        if (plcf->set_headers == NULL) {
            return RX_CONF_ERROR;
        }
    }
    return add_header(cf, plcf->set_headers, value[1].data, value[1].len,
                      &value[2]) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

static const char *
set_http_version(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_loc_conf_t *plcf = conf;
    rx_str_t                 *value = cf->args->elts;

    if (plcf->http_version != RX_CONF_UNSET_UINT) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "1.0")) {
        plcf->http_version = RX_HTTP_VERSION_10;
    } else if (rx_str_eq(&value[1], "1.1")) {
        plcf->http_version = RX_HTTP_VERSION_11;
    } else {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in "
                          "\"proxy_http_version\" directive", value[1].data);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static const char *
set_method(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_loc_conf_t *plcf = conf;
    rx_str_t                 *value = cf->args->elts;

    if (plcf->method != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    plcf->method = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
    if (plcf->method == NULL
        || rx_http_compile_complex_value(cf, &value[1], plcf->method) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* proxy_hide_header / proxy_pass_header: a list of names, lower-cased. */
static const char *
set_redirect(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_loc_conf_t *plcf = conf;
    rx_http_proxy_target_t    target = target_of(plcf);

    return rx_http_proxy_set_redirect(cf, &plcf->rewrite, &target);
}

/* The exchange with the upstream (a miss, or no cache). */
static rx_int_t
proxy_start(rx_http_request_t *r)
{
    rx_http_proxy_loc_conf_t *plcf = rx_http_get_module_loc_conf(r,
                                        rx_http_proxy_module);
    rx_http_upstream_t       *u;
    rx_http_proxy_ctx_t      *ctx;

    u = rx_http_upstream_create(r, &plcf->upstream);
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (u == NULL || ctx == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->proto = ctx;
    ctx->host_header = plcf->host_header;
    ctx->port_text = plcf->port_text;
    ctx->uri = plcf->uri;
    ctx->has_uri = plcf->has_uri;
    if (plcf->https) {
        u->ssl = plcf->ssl;
        u->ssl_host = plcf->ssl_host;
        rx_str_set(&u->schema, "https://");
    }
    if (plcf->upstream.url) {
        rx_str_t url, host, uri;
        in_port_t port;
        bool no_port, has_uri, https;
        const char *err;

        if (rx_http_complex_value(r, plcf->upstream.url, &url) != RX_OK) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        err = parse_url(&url, &host, &port, &no_port, &uri, &has_uri, &https);
        if (err) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "%s in upstream \"%.*s\"",
                                      err, (int) url.len, url.data);
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        u->us = rx_http_upstream_find(r, &host, no_port ? 0 : port);
        if (u->us == NULL) {
            /* an address, or a name for the location's resolver */
            rx_int_t rc = rx_http_upstream_resolve_host(u, &host, port);

            if (rc != RX_OK) {
                return rc;
            }
        }
        ctx->host_header = host;
        ctx->uri = uri;
        ctx->has_uri = has_uri;
        if (https) {
            u->ssl = plcf->ssl;
            u->ssl_host = host;
            rx_str_set(&u->schema, "https://");
        }
    }
    rx_http_proxy_set_protocol(u, plcf);
    return rx_http_upstream_start(u);
}

static rx_int_t
proxy_handler(void *data)
{
    rx_http_request_t        *r = data;
    rx_http_proxy_loc_conf_t *plcf = rx_http_get_module_loc_conf(r,
                                        rx_http_proxy_module);

    return rx_http_cache_handler(r, &plcf->upstream.cache, proxy_start);
}

/* Variables. */

static rx_int_t
var_proxy_host(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_http_proxy_ctx_t      *ctx = rx_http_proxy_ctx(r);
    rx_http_proxy_loc_conf_t *plcf;
    rx_str_t                 *s, url, host, uri;
    in_port_t                 port;
    bool                      no_port, has_uri, https;

    if (ctx == NULL) {
        /* before the exchange (proxy_cache_key): what it will use */
        plcf = rx_http_get_module_loc_conf(r, rx_http_proxy_module);
        if (plcf->upstream.url && !data
            && rx_http_complex_value(r, plcf->upstream.url, &url) == RX_OK
            && parse_url(&url, &host, &port, &no_port, &uri, &has_uri,
                         &https) == NULL) {
            v->data = host.data;
            v->len = host.len;
            return RX_OK;
        }
        if (plcf->upstream.url || plcf->host_header.len == 0) {
            v->not_found = 1;
            return RX_OK;
        }
        s = data ? &plcf->port_text : &plcf->host_header;
        v->data = s->data;
        v->len = s->len;
        return RX_OK;
    }
    s = data ? &ctx->port_text : &ctx->host_header;
    v->data = s->data;
    v->len = s->len;
    return RX_OK;
}

static rx_int_t
var_add_x_forwarded_for(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    char             addr[RX_SOCKADDR_STRLEN];
    size_t           alen = rx_sock_ntop(rx_http_remote_addr(r), addr,
                                         sizeof(addr), false);
    rx_table_elt_t  *xff = r->headers_in.x_forwarded_for;
    char            *p;

    if (xff == NULL) {
        v->data = rx_pstrdup_c(r->pool, addr, alen);
        v->len = alen;
        return v->data ? RX_OK : RX_ERROR;
    }
    p = rx_pnalloc(r->pool, xff->value.len + 2 + alen);
    if (p == NULL) {
        return RX_ERROR;
    }
    memcpy(p, xff->value.data, xff->value.len);
    memcpy(p + xff->value.len, ", ", 2);
    memcpy(p + xff->value.len + 2, addr, alen);
    v->data = p;
    v->len = xff->value.len + 2 + alen;
    return RX_OK;
}

static rx_int_t
var_internal_body_length(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_proxy_ctx_t *ctx = rx_http_proxy_ctx(r);
    char                *p;

    if (ctx && ctx->body_set) {
        p = rx_pnalloc(r->pool, 24);
        if (p == NULL) {
            return RX_ERROR;
        }
        v->len = (size_t) sprintf(p, "%zu", ctx->body.len);
        v->data = p;
        return RX_OK;
    }
    rx_http_upstream_t *u = r->upstream;
    int64_t             len;

    if (r->request_body == NULL || (r->headers_in.content_length_n <= 0
                                    && !r->headers_in.chunked)) {
        v->not_found = 1;
        return RX_OK;
    }
    if (u && u->streaming) {
        /* streamed: the client's length, or none (chunked) */
        if (r->headers_in.content_length_n < 0) {
            v->not_found = 1;
            return RX_OK;
        }
        len = r->headers_in.content_length_n;
    } else {
        len = r->request_body->received;
    }
    p = rx_pnalloc(r->pool, 24);
    if (p == NULL) {
        return RX_ERROR;
    }
    v->len = (size_t) sprintf(p, "%" PRId64, len);
    v->data = p;
    return RX_OK;
}

static rx_int_t
var_internal_chunked(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_upstream_t *u = r->upstream;

    if (u && u->streaming && r->headers_in.content_length_n < 0) {
        v->data = "chunked";
        v->len = 7;
    } else {
        v->not_found = 1;
    }
    return RX_OK;
}

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    static const struct {
        const char               *name;
        rx_http_get_variable_pt   get;
        uintptr_t                 data;
    } vars[] = {
        { "proxy_host", var_proxy_host, 0 },
        { "proxy_port", var_proxy_host, 1 },
        { "proxy_add_x_forwarded_for", var_add_x_forwarded_for, 0 },
        { "proxy_internal_body_length", var_internal_body_length, 0 },
        { "proxy_internal_chunked", var_internal_chunked, 0 },
    };
    size_t i;

    for (i = 0; i < rx_nelems(vars); i++) {
        rx_str_t            name = { strlen(vars[i].name), (char *) vars[i].name };
        rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                     RX_HTTP_VAR_NOCACHEABLE);
        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = vars[i].get;
        v->data = vars[i].data;
    }
    return RX_OK;
}
