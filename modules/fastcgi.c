/*
 * fastcgi.c: the FastCGI module's configuration: fastcgi_pass and the
 * fastcgi_* directives (the engine's settings, params, split_path_info,
 * keep_conn, catch_stderr), the content handler that starts the upstream
 * exchange, and $fastcgi_script_name / $fastcgi_path_info. The protocol
 * itself is fastcgi_upstream.c; the record codec http_fastcgi_codec.c.
 */
#include <ctype.h>
#include "fastcgi.h"
#include "http_variables.h"
#include "cache_serve.h"

static const char *set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_split(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

#define FL(field)  offsetof(rx_http_fastcgi_loc_conf_t, field)

#define RX_FASTCGI_LOC_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)
#define LOC                  RX_HTTP_LOC_CONF_OFFSET

static const rx_command_t fastcgi_commands[] = {
    RX_HTTP_CGI_COMMANDS("fastcgi_", set_pass, rx_http_fastcgi_loc_conf_t),
    { "fastcgi_index", RX_FASTCGI_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      LOC, FL(index), NULL },
    { "fastcgi_split_path_info", RX_FASTCGI_LOC_CONF | RX_CONF_TAKE1, set_split,
      LOC, 0, NULL },
    { "fastcgi_keep_conn", RX_FASTCGI_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      LOC, FL(keep_conn), NULL },
    { "fastcgi_catch_stderr", RX_FASTCGI_LOC_CONF | RX_CONF_TAKE1,
      rx_conf_set_str_array_slot, LOC, FL(catch_stderr), NULL },
    RX_HTTP_CACHE_COMMANDS("fastcgi_",
        offsetof(rx_http_fastcgi_loc_conf_t, upstream),
        offsetof(rx_http_upstream_conf_t, cache)),
    rx_null_command
};

static const rx_http_module_t fastcgi_ctx = {
    preconfiguration, NULL, NULL, NULL, NULL, NULL, create_loc_conf,
    merge_loc_conf
};

rx_module_t rx_http_fastcgi_module = {
    "rx_http_fastcgi_module", 0, 0, RX_HTTP_MODULE, &fastcgi_ctx,
    fastcgi_commands, NULL, NULL, NULL, NULL
};

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_fastcgi_loc_conf_t *flcf = rx_pcalloc(cf->pool, sizeof(*flcf));

    if (flcf == NULL) {
        return NULL;
    }
    rx_http_cgi_init_conf(&flcf->upstream, &flcf->params, "fastcgi");
    flcf->split = RX_CONF_UNSET_PTR;
    flcf->keep_conn = RX_CONF_UNSET;
    flcf->catch_stderr = RX_CONF_UNSET_PTR;
    return flcf;
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_fastcgi_loc_conf_t *prev = parent, *conf = child;

    rx_conf_merge_str(conf->index, prev->index, "");
    rx_conf_merge_ptr(conf->split, prev->split, NULL);
    rx_conf_merge_value(conf->keep_conn, prev->keep_conn, 0);
    rx_conf_merge_ptr(conf->catch_stderr, prev->catch_stderr, NULL);
    return rx_http_cgi_merge_conf(cf, &conf->upstream, &prev->upstream,
                                  &conf->params, &prev->params);
}

/*
 * "host:port", "[v6]:port", "unix:/path", or an upstream name (no port).
 * Returns NULL or the error.
 */
static const char *
parse_address(const rx_str_t *url, rx_str_t *host, in_port_t *port,
    bool *no_port)
{
    *host = *url;
    *port = 0;
    *no_port = true;
    if (url->len > 5 && strncasecmp(url->data, "unix:", 5) == 0) {
        *no_port = false;
        return NULL;
    }
    if (url->len == 0 || memchr(url->data, '/', url->len)) {
        return "invalid host";
    }
    return rx_http_upstream_parse_host(url, host, port, no_port);
}

static rx_int_t fastcgi_handler(void *data);

static const char *
set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_fastcgi_loc_conf_t *flcf = conf;
    rx_http_core_loc_conf_t    *clcf = rx_http_conf_get_module_loc_conf(cf,
                                          rx_http_core_module);
    rx_http_core_main_conf_t   *cmcf = rx_http_conf_get_module_main_conf(cf,
                                          rx_http_core_module);
    rx_str_t                   *value = cf->args->elts, host;
    in_port_t                   port;
    bool                        no_port;
    const char                 *err;

    if (flcf->pass.len) {
        return "is duplicate";
    }
    flcf->pass = value[1];
    clcf->handler = fastcgi_handler;
    clcf->auto_redirect = clcf->name.len
                          && clcf->name.data[clcf->name.len - 1] == '/';
    cmcf->upstreams = true;
    if (memchr(value[1].data, '$', value[1].len)) {
        flcf->upstream.url = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
        if (flcf->upstream.url == NULL
            || rx_http_compile_complex_value(cf, &value[1], flcf->upstream.url)
               != RX_OK) {
            return RX_CONF_ERROR;
        }
        return RX_CONF_OK;
    }
    err = parse_address(&value[1], &host, &port, &no_port);
    if (err) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in upstream \"%s\"", err,
                          value[1].data);
        return RX_CONF_ERROR;
    }
    flcf->upstream.upstream = rx_http_upstream_add(cf, &host, port, no_port);
    if (flcf->upstream.upstream == NULL) {
        return RX_CONF_ERROR;
    }
    rx_http_upstream_set_per_process(flcf->upstream.upstream);
    return RX_CONF_OK;
}

static const char *
set_split(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_fastcgi_loc_conf_t *flcf = conf;
    rx_str_t                   *value = cf->args->elts;
    char                        err[RX_MAX_ERROR_STR];

    if (flcf->split != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    flcf->split = rx_regex_compile(cf->pool, &value[1], false, err, sizeof(err));
    if (flcf->split == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
        return RX_CONF_ERROR;
    }
    if (rx_regex_captures(flcf->split) != 2) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "pattern \"%s\" must have 2 "
                          "captures", value[1].data);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* The exchange with the application (a miss, or no cache). */
static rx_int_t
fastcgi_start(rx_http_request_t *r)
{
    rx_http_fastcgi_loc_conf_t *flcf = rx_http_get_module_loc_conf(r,
                                          rx_http_fastcgi_module);
    rx_http_upstream_t         *u;
    rx_http_fastcgi_ctx_t      *ctx;

    u = rx_http_upstream_create(r, &flcf->upstream);
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (u == NULL || ctx == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->proto = ctx;
    rx_str_set(&u->schema, "fastcgi://");
    rx_str_set(&u->uri, "");    /* the log's upstream: has no URI part */
    u->header_copied = 1;
    if (flcf->upstream.url) {
        rx_str_t    url, host;
        in_port_t   port;
        bool        no_port;
        const char *err;

        if (rx_http_complex_value(r, flcf->upstream.url, &url) != RX_OK) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        err = parse_address(&url, &host, &port, &no_port);
        if (err) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "%s in upstream \"%.*s\"",
                                      err, (int) url.len, url.data);
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        u->us = rx_http_upstream_find(r, &host, port);
        if (u->us == NULL) {
            rx_int_t rc;

            if (no_port) {
                /* no default port for FastCGI: nginx's words */
                rx_http_request_log_error(r, RX_LOG_ERR, 0, "no port in "
                                          "upstream \"%.*s\"", (int) host.len,
                                          host.data);
                return RX_HTTP_BAD_GATEWAY;
            }
            /* an address, or a name for the location's resolver */
            rc = rx_http_upstream_resolve_host(u, &host, port);
            if (rc != RX_OK) {
                return rc;
            }
        }
    }
    u->create_request = rx_http_fastcgi_create_request;
    u->reinit_request = rx_http_fastcgi_reinit_request;
    u->process_header = rx_http_fastcgi_process_header;
    u->input_filter = rx_http_fastcgi_input_filter;
    u->on_eof = rx_http_fastcgi_on_eof;
    u->file_body = 1;              /* a large body is sent from its file */
    /* fastcgi_request_buffering off: a body of known length goes to the
     * application as it comes (a chunked one is read whole, as nginx) */
    if (!flcf->upstream.request_buffering
        && r->headers_in.content_length_n >= 0) {
        u->frame_body = rx_http_fastcgi_frame_body;
    }
    return rx_http_upstream_start(u);
}

static rx_int_t
fastcgi_handler(void *data)
{
    rx_http_request_t          *r = data;
    rx_http_fastcgi_loc_conf_t *flcf = rx_http_get_module_loc_conf(r,
                                          rx_http_fastcgi_module);

    return rx_http_cache_handler(r, &flcf->upstream.cache, fastcgi_start);
}

/* $fastcgi_script_name and $fastcgi_path_info: the URI split by the
 * location's fastcgi_split_path_info (no match: all of it is the script),
 * fastcgi_index appended to a script name that ends in '/'. */
rx_int_t
rx_http_fastcgi_split(rx_http_request_t *r, rx_str_t *script_name,
    rx_str_t *path_info)
{
    rx_http_fastcgi_loc_conf_t *flcf = rx_http_get_module_loc_conf(r,
                                          rx_http_fastcgi_module);
    int                         caps[6];
    rx_int_t                    rc;
    char                       *p;

    *script_name = r->uri;
    rx_str_null(path_info);
    if (flcf->split) {
        rc = rx_regex_exec(flcf->split, r->uri.data, r->uri.len, caps, 3);
        if (rc == RX_ERROR) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "regex \"%s\" failed "
                "on \"%.*s\"", rx_regex_pattern(flcf->split)->data,
                (int) r->uri.len, r->uri.data);
            return RX_ERROR;
        }
        if (rc != RX_DECLINED) {
            rx_str_null(script_name);
            if (rc >= 2 && caps[2] >= 0) {
                script_name->data = r->uri.data + caps[2];
                script_name->len = (size_t) (caps[3] - caps[2]);
            }
            if (rc >= 3 && caps[4] >= 0) {
                path_info->data = r->uri.data + caps[4];
                path_info->len = (size_t) (caps[5] - caps[4]);
            }
        }
    }
    if (flcf->index.len && script_name->len
        && script_name->data[script_name->len - 1] == '/') {
        p = rx_pnalloc(r->pool, script_name->len + flcf->index.len);
        if (p == NULL) {
            return RX_ERROR;
        }
        memcpy(p, script_name->data, script_name->len);
        memcpy(p + script_name->len, flcf->index.data, flcf->index.len);
        script_name->data = p;
        script_name->len += flcf->index.len;
    }
    return RX_OK;
}

static rx_int_t
var_split(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_str_t script_name, path_info, *s;

    if (rx_http_fastcgi_split(r, &script_name, &path_info) != RX_OK) {
        return RX_ERROR;
    }
    s = data ? &path_info : &script_name;
    v->data = s->len ? s->data : "";
    v->len = s->len;
    return RX_OK;
}

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    static const struct {
        const char *name;
        uintptr_t   data;
    } vars[] = {
        { "fastcgi_script_name", 0 },
        { "fastcgi_path_info", 1 },
    };
    size_t i;

    for (i = 0; i < rx_nelems(vars); i++) {
        rx_str_t            name = { strlen(vars[i].name), (char *) vars[i].name };
        rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                     RX_HTTP_VAR_NOCACHEABLE);
        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = var_split;
        v->data = vars[i].data;
    }
    return RX_OK;
}
