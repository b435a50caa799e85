/*
 * http_v2_module.c: the http2 directives (http2, http2_max_concurrent_streams,
 * http2_chunk_size per location, http2_body_preread_size; the obsolete ones
 * with nginx's warnings, and http2_recv_buffer_size, which ringx has no use
 * for, with a warning of its own) and the $http2 variable.
 */
#include "http.h"
#include "http_config.h"
#include "http_variables.h"
#include "http_v2.h"

static rx_int_t add_variables(rx_conf_t *cf);
static void *create_srv_conf(rx_conf_t *cf);
static const char *merge_srv_conf(rx_conf_t *cf, void *prev, void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);
static const char *set_obsolete(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_chunk_size(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_unused(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/* nginx's limits: a window or frame run within 2^31-1, at least one
 * stream */
static const rx_conf_bounds_t streams_bounds = { 1, 0x7fffffff };
static const rx_conf_bounds_t chunk_bounds = { 1, 0x7fffffff };
static const rx_conf_bounds_t preread_bounds = { 0, 0x7fffffff };
static const rx_conf_bounds_t recv_buffer_bounds = { 17, 0x7fffffff };

/* the largest DATA frame a client must accept before it says otherwise
 * (SETTINGS_MAX_FRAME_SIZE's initial value): a bigger chunk is cut to it,
 * as nginx does */
#define CHUNK_MAX  16384

#define V2_SRV  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF)

static const rx_command_t v2_commands[] = {
    { "http2", V2_SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, offsetof(rx_http_v2_srv_conf_t, enable), NULL },
    { "http2_max_concurrent_streams", V2_SRV | RX_CONF_TAKE1,
      rx_conf_set_num_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_v2_srv_conf_t, max_concurrent_streams), &streams_bounds },
    { "http2_chunk_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, set_chunk_size, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_v2_loc_conf_t, chunk_size), &chunk_bounds },
    { "http2_body_preread_size", V2_SRV | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_SRV_CONF_OFFSET, offsetof(rx_http_v2_srv_conf_t, preread_size),
      &preread_bounds },
    /* nginx's read buffer per worker; ringx reads into the ring's */
    { "http2_recv_buffer_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      set_unused, 0, 0, &recv_buffer_bounds },
    /* obsolete since nginx 1.19.7: accepted with its warning, the
     * directive named in it applies */
    { "http2_idle_timeout", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0,
      "keepalive_timeout" },
    { "http2_recv_timeout", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0,
      "client_header_timeout" },
    { "http2_max_field_size", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0,
      "large_client_header_buffers" },
    { "http2_max_header_size", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0,
      "large_client_header_buffers" },
    { "http2_max_requests", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0,
      "keepalive_requests" },
    /* server push is gone (nginx 1.25.1), and so are these two (1.19.7):
     * "obsolete, ignored", nginx's words for such directives */
    { "http2_push", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, set_obsolete, 0, 0, NULL },
    { "http2_push_preload", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, set_obsolete, 0, 0, NULL },
    { "http2_max_concurrent_pushes", V2_SRV | RX_CONF_TAKE1, set_obsolete,
      0, 0, NULL },
    { "http2_pool_size", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0, NULL },
    { "http2_streams_index_size", V2_SRV | RX_CONF_TAKE1, set_obsolete, 0, 0,
      NULL },
    rx_null_command
};

static const rx_http_module_t v2_ctx = {
    add_variables, NULL, NULL, NULL,
    create_srv_conf, merge_srv_conf, create_loc_conf, merge_loc_conf, NULL
};

rx_module_t rx_http_v2_module = {
    "rx_http_v2_module", 0, 0, RX_HTTP_MODULE, &v2_ctx,
    v2_commands, NULL, NULL, NULL, NULL
};

/* post: the directive to use instead, or NULL: nothing replaces it */
static const char *
set_obsolete(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    (void) conf;
    if (cmd->post == NULL) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"%s\" directive is "
                          "obsolete, ignored", cmd->name);
        return RX_CONF_OK;
    }
    rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"%s\" directive is obsolete, "
                      "use the \"%s\" directive instead", cmd->name,
                      (const char *) cmd->post);
    return RX_CONF_OK;
}

/* A directive of nginx that ringx has no use for: its value is checked as
 * nginx checks it, then the admin is told it does nothing here, never
 * silently (http2_recv_buffer_size: nginx's per-worker read buffer; ringx
 * reads into the ring's buffers). */
static const char *
set_unused(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    const rx_conf_bounds_t *b = cmd->post;
    rx_str_t               *value = cf->args->elts;
    ssize_t                 n = rx_parse_size(&value[1]);

    (void) conf;
    if (n == RX_ERROR) {
        return "invalid value";
    }
    if (n < b->min) {
        return "value is too small";
    }
    rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"%s\" directive is not used "
                      "by ringx (HTTP/2 is read into the ring's buffers), "
                      "ignored", cmd->name);
    return RX_CONF_OK;
}

/* nginx: a chunk above a frame's initial largest size is cut to it. */
static const char *
set_chunk_size(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    const char *rv = rx_conf_set_size_slot(cf, cmd, conf);
    size_t     *sp = (size_t *) ((char *) conf + cmd->offset);

    if (rv == RX_CONF_OK && *sp > CHUNK_MAX) {
        *sp = CHUNK_MAX;
    }
    return rv;
}

static void *
create_srv_conf(rx_conf_t *cf)
{
    rx_http_v2_srv_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->enable = RX_CONF_UNSET;
        c->max_concurrent_streams = RX_CONF_UNSET_UINT;
        c->preread_size = RX_CONF_UNSET_SIZE;
    }
    return c;
}

static const char *
merge_srv_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_v2_srv_conf_t *p = prev, *c = conf;

    (void) cf;
    rx_conf_merge_value(c->enable, p->enable, 0);
    rx_conf_merge_uint(c->max_concurrent_streams, p->max_concurrent_streams, 128);
    rx_conf_merge_size(c->preread_size, p->preread_size, 64 * 1024);
    return RX_CONF_OK;
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_v2_loc_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->chunk_size = RX_CONF_UNSET_SIZE;
    }
    return c;
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_v2_loc_conf_t *p = prev, *c = conf;

    (void) cf;
    rx_conf_merge_size(c->chunk_size, p->chunk_size, 8 * 1024);
    return RX_CONF_OK;
}

bool
rx_http_v2_enabled(const rx_http_core_srv_conf_t *cscf)
{
    rx_http_v2_srv_conf_t *c = cscf->ctx->srv_conf[rx_http_v2_module.ctx_index];

    return c->enable == 1;
}

void
rx_http_v2_listen_enable(rx_conf_t *cf, rx_http_core_srv_conf_t *cscf)
{
    rx_http_v2_srv_conf_t *c = cscf->ctx->srv_conf[rx_http_v2_module.ctx_index];

    rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"listen ... http2\" directive "
                      "is deprecated, use the \"http2\" directive instead");
    if (c->enable == RX_CONF_UNSET) {
        c->enable = 1;
    }
}

/* $http2: "h2" over TLS, "h2c" over cleartext, "" for HTTP/1.x. */
static rx_int_t
http2_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    (void) data;
    if (r->http_version == RX_HTTP_VERSION_20) {
        v->data = rx_http_conn_is_tls(r->conn) ? "h2" : "h2c";
    } else {
        v->data = "";
    }
    v->len = strlen(v->data);
    v->valid = 1;
    return RX_OK;
}

static rx_int_t
add_variables(rx_conf_t *cf)
{
    rx_str_t            name = { 5, "http2" };
    rx_http_variable_t *v = rx_http_add_variable(cf, &name, 0);

    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = http2_variable;
    return RX_OK;
}
