/*
 * http_v2_module.c: the http2 directives (http2, http2_max_concurrent_streams,
 * http2_chunk_size, http2_body_preread_size, http2_recv_buffer_size; the
 * obsolete ones with nginx's warning) and the $http2 variable.
 */
#include "http.h"
#include "http_config.h"
#include "http_variables.h"
#include "http_v2.h"

static rx_int_t add_variables(rx_conf_t *cf);
static void *create_main_conf(rx_conf_t *cf);
static const char *init_main_conf(rx_conf_t *cf, void *conf);
static void *create_srv_conf(rx_conf_t *cf);
static const char *merge_srv_conf(rx_conf_t *cf, void *prev, void *conf);
static const char *set_obsolete(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/* nginx's limits: a window or frame run within 2^31-1, at least one
 * stream */
static const rx_conf_bounds_t streams_bounds = { 1, 0x7fffffff };
static const rx_conf_bounds_t chunk_bounds = { 1, 0x7fffffff };
static const rx_conf_bounds_t preread_bounds = { 0, 0x7fffffff };
static const rx_conf_bounds_t recv_buffer_bounds = { 2 * 16384, 0x7fffffff };

#define V2_SRV  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF)

static const rx_command_t v2_commands[] = {
    { "http2", V2_SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, offsetof(rx_http_v2_srv_conf_t, enable), NULL },
    { "http2_max_concurrent_streams", V2_SRV | RX_CONF_TAKE1,
      rx_conf_set_num_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_v2_srv_conf_t, max_concurrent_streams), &streams_bounds },
    { "http2_chunk_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_size_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_v2_srv_conf_t, chunk_size), &chunk_bounds },
    { "http2_body_preread_size", V2_SRV | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_SRV_CONF_OFFSET, offsetof(rx_http_v2_srv_conf_t, preread_size),
      &preread_bounds },
    { "http2_recv_buffer_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_size_slot, RX_HTTP_MAIN_CONF_OFFSET,
      offsetof(rx_http_v2_main_conf_t, recv_buffer_size), &recv_buffer_bounds },
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
    rx_null_command
};

static const rx_http_module_t v2_ctx = {
    add_variables, NULL, create_main_conf, init_main_conf,
    create_srv_conf, merge_srv_conf, NULL, NULL
};

rx_module_t rx_http_v2_module = {
    "rx_http_v2_module", 0, 0, RX_HTTP_MODULE, &v2_ctx,
    v2_commands, NULL, NULL, NULL, NULL
};

static const char *
set_obsolete(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    (void) conf;
    rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"%s\" directive is obsolete, "
                      "use the \"%s\" directive instead", cmd->name,
                      (const char *) cmd->post);
    return RX_CONF_OK;
}

static void *
create_main_conf(rx_conf_t *cf)
{
    rx_http_v2_main_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->recv_buffer_size = RX_CONF_UNSET_SIZE;
    }
    return c;
}

static const char *
init_main_conf(rx_conf_t *cf, void *conf)
{
    rx_http_v2_main_conf_t *c = conf;

    (void) cf;
    if (c->recv_buffer_size == RX_CONF_UNSET_SIZE) {
        c->recv_buffer_size = 256 * 1024;
    }
    return RX_CONF_OK;
}

static void *
create_srv_conf(rx_conf_t *cf)
{
    rx_http_v2_srv_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->enable = RX_CONF_UNSET;
        c->max_concurrent_streams = RX_CONF_UNSET_UINT;
        c->chunk_size = RX_CONF_UNSET_SIZE;
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
    rx_conf_merge_size(c->chunk_size, p->chunk_size, 8 * 1024);
    rx_conf_merge_size(c->preread_size, p->preread_size, 64 * 1024);
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
