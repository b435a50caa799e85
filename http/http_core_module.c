/*
 * http_core_module.c: the server and location blocks and the core HTTP
 * directives (listen, server_name, root, alias), with their confs' create
 * and merge hooks.
 */
#include <ctype.h>
#include "http.h"
#include "http_temp_file.h"
#include "http_location.h"
#include "http_server.h"
#include "process.h"
#include "regex.h"
#include "http_captures.h"
#include "http_stats.h"
#include "http_script.h"
#include "resolver.h"

static const char *set_server_name(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_root(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_main_conf(rx_conf_t *cf);
static void *create_srv_conf(rx_conf_t *cf);
static const char *merge_srv_conf(rx_conf_t *cf, void *prev, void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

#define RX_HTTP_ANY_CONF (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)


static const rx_conf_bounds_t size_bounds = { 1, 0 };

static const rx_conf_enum_t keepalive_disable_values[] = {
    { "none", RX_HTTP_KEEPALIVE_DISABLE_NONE },
    { "msie6", RX_HTTP_KEEPALIVE_DISABLE_MSIE6 },
    { "safari", RX_HTTP_KEEPALIVE_DISABLE_SAFARI },
    { NULL, 0 }
};

static const rx_conf_enum_t lingering_values[] = {
    { "off", RX_HTTP_LINGERING_OFF }, { "on", RX_HTTP_LINGERING_ON },
    { "always", RX_HTTP_LINGERING_ALWAYS }, { NULL, 0 }
};

static const rx_conf_enum_t body_file_values[] = {
    { "off", RX_HTTP_BODY_FILE_OFF }, { "on", RX_HTTP_BODY_FILE_ON },
    { "clean", RX_HTTP_BODY_FILE_CLEAN }, { NULL, 0 }
};

static const rx_conf_enum_t server_tokens_values[] = {
    { "off", 0 }, { "on", 1 }, { "build", 2 }, { NULL, 0 }
};

static const rx_conf_enum_t ims_values[] = {
    { "off", RX_HTTP_IMS_OFF }, { "exact", RX_HTTP_IMS_EXACT },
    { "before", RX_HTTP_IMS_BEFORE }, { NULL, 0 }
};

static const rx_conf_enum_t satisfy_values[] = {
    { "all", RX_HTTP_SATISFY_ALL }, { "any", RX_HTTP_SATISFY_ANY },
    { NULL, 0 }
};

static const rx_command_t http_core_commands[] = {
    { "server", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_NOARGS,
      rx_http_core_server_block, 0, 0, NULL },
    { "location", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_BLOCK
      | RX_CONF_TAKE12, rx_http_core_location_block, RX_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    { "limit_except", RX_HTTP_LOC_CONF | RX_CONF_BLOCK | RX_CONF_1MORE,
      rx_http_core_limit_except, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "listen", RX_HTTP_SRV_CONF | RX_CONF_1MORE,
      rx_http_core_listen, RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "server_name", RX_HTTP_SRV_CONF | RX_CONF_1MORE,
      set_server_name, RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "root", RX_HTTP_ANY_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      set_root, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "alias", RX_HTTP_LOC_CONF | RX_CONF_TAKE1,
      set_root, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "client_header_buffer_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_TAKE1, rx_conf_set_size_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_core_srv_conf_t, client_header_buffer_size), &size_bounds },
    { "large_client_header_buffers", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_TAKE2, rx_http_core_set_large_buffers,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "client_header_timeout", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_TAKE1, rx_conf_set_msec_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_core_srv_conf_t, client_header_timeout), NULL },
    { "ignore_invalid_headers", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_FLAG, rx_conf_set_flag_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_core_srv_conf_t, ignore_invalid_headers), NULL },
    { "underscores_in_headers", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_FLAG, rx_conf_set_flag_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_core_srv_conf_t, underscores_in_headers), NULL },
    { "merge_slashes", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_core_srv_conf_t, merge_slashes), NULL },
    { "client_max_body_size", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_off_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, client_max_body_size), NULL },
    { "client_body_buffer_size", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_size_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, client_body_buffer_size), &size_bounds },
    { "client_body_temp_path", RX_HTTP_ANY_CONF | RX_CONF_TAKE1234,
      rx_http_set_temp_path_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, client_body_temp_path), NULL },
    { "client_body_timeout", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, client_body_timeout), NULL },
    { "send_timeout", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, send_timeout), NULL },
    { "keepalive_timeout", RX_HTTP_ANY_CONF | RX_CONF_TAKE12,
      rx_http_core_set_keepalive_timeout, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "keepalive_requests", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_num_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, keepalive_requests), NULL },
    { "keepalive_time", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, keepalive_time), NULL },
    { "keepalive_disable", RX_HTTP_ANY_CONF | RX_CONF_TAKE12,
      rx_conf_set_bitmask_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, keepalive_disable), keepalive_disable_values },
    { "client_body_in_file_only", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_enum_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, client_body_in_file_only),
      body_file_values },
    { "client_body_in_single_buffer", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, client_body_in_single_buffer), NULL },
    { "connection_pool_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_TAKE1, rx_conf_set_size_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, connection_pool_size), NULL },
    { "request_pool_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_CONF_TAKE1, rx_conf_set_size_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, request_pool_size), NULL },
    { "lingering_close", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_enum_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, lingering_close), lingering_values },
    { "lingering_time", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, lingering_time), NULL },
    { "lingering_timeout", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, lingering_timeout), NULL },
    { "resolver", RX_HTTP_ANY_CONF | RX_CONF_1MORE,
      rx_resolver_set_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, resolver), NULL },
    { "resolver_timeout", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, resolver_timeout), NULL },
    { "reset_timedout_connection", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, reset_timedout_connection), NULL },
    { "server_tokens", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_enum_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, server_tokens), server_tokens_values },
    { "default_type", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_str_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, default_type), NULL },
    { "types", RX_HTTP_ANY_CONF | RX_CONF_BLOCK | RX_CONF_NOARGS,
      rx_http_core_types_block, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "error_page", RX_HTTP_ANY_CONF | RX_HTTP_LIF_CONF | RX_CONF_2MORE,
      rx_http_core_set_error_page, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "recursive_error_pages", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, recursive_error_pages), NULL },
    { "chunked_transfer_encoding", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, chunked_transfer_encoding), NULL },
    { "absolute_redirect", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, absolute_redirect), NULL },
    { "server_name_in_redirect", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, server_name_in_redirect), NULL },
    { "port_in_redirect", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, port_in_redirect), NULL },
    { "log_not_found", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, log_not_found), NULL },
    { "error_log", RX_HTTP_ANY_CONF | RX_CONF_1MORE,
      rx_http_core_set_error_log, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "internal", RX_HTTP_LOC_CONF | RX_CONF_NOARGS,
      rx_http_core_set_internal, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "sendfile", RX_HTTP_ANY_CONF | RX_HTTP_LIF_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, sendfile), NULL },
    { "sendfile_max_chunk", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_size_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, sendfile_max_chunk), NULL },
    { "limit_rate", RX_HTTP_ANY_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      rx_http_set_complex_value_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, limit_rate), NULL },
    { "limit_rate_after", RX_HTTP_ANY_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      rx_http_set_complex_value_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, limit_rate_after), NULL },
    { "tcp_nopush", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, tcp_nopush), NULL },
    { "tcp_nodelay", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, tcp_nodelay), NULL },
    { "if_modified_since", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_enum_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, if_modified_since), ims_values },
    { "etag", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, etag), NULL },
    { "satisfy", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_enum_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_core_loc_conf_t, satisfy), satisfy_values },
    /* hash sizing: ringx sizes its tables itself */
    { "server_names_hash_max_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "server_names_hash_bucket_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "types_hash_max_size", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "types_hash_bucket_size", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "variables_hash_max_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    { "variables_hash_bucket_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx sizes its lookup tables itself" },
    /* file I/O tuning of nginx's blocking I/O model: ringx's reads are
     * asynchronous already (io_uring), in 128 KiB chunks */
    { "output_buffers", RX_HTTP_ANY_CONF | RX_CONF_TAKE2,
      rx_conf_set_ignored, 0, 0, "ringx reads files in 128k chunks" },
    { "aio", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx reads files through io_uring always" },
    { "aio_write", RX_HTTP_ANY_CONF | RX_CONF_FLAG,
      rx_conf_set_ignored, 0, 0, "ringx writes files through io_uring always" },
    { "directio", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx reads through the page cache" },
    { "directio_alignment", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx reads through the page cache" },
    { "read_ahead", RX_HTTP_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "the kernel's read-ahead applies" },
    rx_null_command
};

static const rx_http_module_t http_core_ctx = {
    NULL, NULL, create_main_conf, NULL, create_srv_conf, merge_srv_conf,
    create_loc_conf, merge_loc_conf
};

static rx_int_t http_init_process(rx_cycle_t *cycle);

rx_module_t rx_http_core_module = {
    "rx_http_core_module", 0, 0, RX_HTTP_MODULE, &http_core_ctx,
    http_core_commands, rx_http_stats_init, http_init_process, NULL, NULL
};


/* In each worker: HTTP takes the connections this worker accepts, with
 * the output filters of the cycle it runs. The info line says how many
 * phase handlers and filter modules a request meets (core/modules.c
 * leaves out the on-demand ones a configuration does not name). */
static rx_int_t
http_init_process(rx_cycle_t *cycle)
{
    rx_http_conf_ctx_t       *ctx = cycle->conf_ctx
                                    ? cycle->conf_ctx[rx_http_module.index]
                                    : NULL;
    rx_http_core_main_conf_t *cmcf;
    rx_uint_t                 filters, handlers = 0, i;

    rx_event_init_connection = rx_http_init_connection;
    rx_http_stat_worker_slot(rx_worker_index);
    filters = rx_http_init_filters(cycle);
    if (ctx != NULL) {
        cmcf = ctx->main_conf[rx_http_core_module.ctx_index];
        for (i = 0; i < RX_HTTP_PHASES; i++) {
            handlers += cmcf->phases[i].nelts;
        }
        rx_log_error(RX_LOG_INFO, cycle->log, 0, "http: %lu phase handlers, "
                     "%lu filter modules", (unsigned long) handlers,
                     (unsigned long) filters);
    }
    return RX_OK;
}

static void *
create_main_conf(rx_conf_t *cf)
{
    rx_http_core_main_conf_t *cmcf = rx_pcalloc(cf->pool, sizeof(*cmcf));

    rx_uint_t                 i;

    if (cmcf == NULL
        || rx_array_init(&cmcf->servers, cf->pool, 4, sizeof(void *)) != RX_OK
        || rx_array_init(&cmcf->listens, cf->pool, 4,
                         sizeof(rx_http_listen_opt_t)) != RX_OK) {
        return NULL;
    }
    for (i = 0; i < rx_nelems(cmcf->phases); i++) {
        if (rx_array_init(&cmcf->phases[i], cf->pool, 2, sizeof(void *)) != RX_OK) {
            return NULL;
        }
    }
    return cmcf;
}

static void *
create_srv_conf(rx_conf_t *cf)
{
    rx_http_core_srv_conf_t *cscf = rx_pcalloc(cf->pool, sizeof(*cscf));

    if (cscf == NULL
        || rx_array_init(&cscf->server_names, cf->pool, 2,
                         sizeof(rx_http_server_name_t)) != RX_OK) {
        return NULL;
    }
    if (cf->conf_file) {
        cscf->file = cf->conf_file->name;
        cscf->line = cf->conf_file->line;
    }
    cscf->client_header_buffer_size = RX_CONF_UNSET_SIZE;
    cscf->large_client_header_buffers_size = RX_CONF_UNSET_SIZE;
    cscf->large_client_header_buffers_num = RX_CONF_UNSET;
    cscf->client_header_timeout = RX_CONF_UNSET_MSEC;
    cscf->ignore_invalid_headers = RX_CONF_UNSET;
    cscf->underscores_in_headers = RX_CONF_UNSET;
    cscf->merge_slashes = RX_CONF_UNSET;
    return cscf;
}

static const char *
merge_srv_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_core_srv_conf_t *p = prev, *c = conf;
    rx_http_server_name_t   *sn;

    if (c->server_names.nelts == 0) {
        /* nginx's default: the empty name */
        sn = rx_array_push(&c->server_names);
        if (sn == NULL) {
            return RX_CONF_ERROR;
        }
        memset(sn, 0, sizeof(*sn));
        rx_str_set(&sn->name, "");
    }
    rx_conf_merge_size(c->client_header_buffer_size,
                       p->client_header_buffer_size, 1024);
    rx_conf_merge_size(c->large_client_header_buffers_size,
                       p->large_client_header_buffers_size, 8192);
    rx_conf_merge_value(c->large_client_header_buffers_num,
                        p->large_client_header_buffers_num, 4);
    rx_conf_merge_msec(c->client_header_timeout, p->client_header_timeout, 60000);
    rx_conf_merge_value(c->ignore_invalid_headers, p->ignore_invalid_headers, 1);
    rx_conf_merge_value(c->underscores_in_headers, p->underscores_in_headers, 0);
    rx_conf_merge_value(c->merge_slashes, p->merge_slashes, 1);
    if (c->large_client_header_buffers_size < c->client_header_buffer_size) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "the \"large_client_header_"
            "buffers\" size must be equal to or greater than \"client_header_"
            "buffer_size\" in %s:%lu", c->file.data, (unsigned long) c->line);
        return RX_CONF_ERROR;
    }
    if (rx_http_init_locations(cf, c,
            c->ctx->loc_conf[rx_http_core_module.ctx_index]) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_core_loc_conf_t *clcf = rx_pcalloc(cf->pool, sizeof(*clcf));

    if (clcf == NULL) {
        return NULL;
    }
    if (cf->conf_file) {
        clcf->file = cf->conf_file->name;
        clcf->line = cf->conf_file->line;
    }
    clcf->client_max_body_size = RX_CONF_UNSET;
    clcf->client_body_buffer_size = RX_CONF_UNSET_SIZE;
    clcf->client_body_timeout = RX_CONF_UNSET_MSEC;
    clcf->send_timeout = RX_CONF_UNSET_MSEC;
    clcf->keepalive_timeout = RX_CONF_UNSET_MSEC;
    clcf->keepalive_header = RX_CONF_UNSET_MSEC;
    clcf->keepalive_requests = RX_CONF_UNSET;
    clcf->keepalive_time = RX_CONF_UNSET_MSEC;
    clcf->keepalive_disable = 0;
    clcf->lingering_close = RX_CONF_UNSET_UINT;
    clcf->lingering_time = RX_CONF_UNSET_MSEC;
    clcf->lingering_timeout = RX_CONF_UNSET_MSEC;
    clcf->resolver_timeout = RX_CONF_UNSET_MSEC;
    clcf->reset_timedout_connection = RX_CONF_UNSET;
    clcf->server_tokens = RX_CONF_UNSET_UINT;
    clcf->types = RX_CONF_UNSET_PTR;
    clcf->error_pages = RX_CONF_UNSET_PTR;
    clcf->recursive_error_pages = RX_CONF_UNSET;
    clcf->chunked_transfer_encoding = RX_CONF_UNSET;
    clcf->absolute_redirect = RX_CONF_UNSET;
    clcf->server_name_in_redirect = RX_CONF_UNSET;
    clcf->port_in_redirect = RX_CONF_UNSET;
    clcf->log_not_found = RX_CONF_UNSET;
    clcf->internal = RX_CONF_UNSET;
    clcf->sendfile = RX_CONF_UNSET;
    clcf->sendfile_max_chunk = RX_CONF_UNSET_SIZE;
    clcf->limit_rate = RX_CONF_UNSET_PTR;
    clcf->client_body_in_file_only = RX_CONF_UNSET_UINT;
    clcf->client_body_in_single_buffer = RX_CONF_UNSET;
    clcf->connection_pool_size = RX_CONF_UNSET_SIZE;
    clcf->request_pool_size = RX_CONF_UNSET_SIZE;
    clcf->limit_rate_after = RX_CONF_UNSET_PTR;
    clcf->tcp_nopush = RX_CONF_UNSET;
    clcf->tcp_nodelay = RX_CONF_UNSET;
    clcf->if_modified_since = RX_CONF_UNSET_UINT;
    clcf->etag = RX_CONF_UNSET;
    clcf->satisfy = RX_CONF_UNSET_UINT;
    return clcf;
}

/* nginx's built-in types when no `types` block is given anywhere. */
static rx_array_t *
default_types(rx_conf_t *cf)
{
    static const struct { const char *name, *exten; } builtin[] = {
        { "text/html", "html" }, { "image/gif", "gif" }, { "image/jpeg", "jpg" }
    };
    rx_array_t     *types = rx_array_create(cf->pool, 3, sizeof(rx_http_type_t));
    rx_http_type_t *t;
    size_t          i;

    for (i = 0; types && i < rx_nelems(builtin); i++) {
        t = rx_array_push(types);
        if (t == NULL) {
            return NULL;
        }
        t->name.data = (char *) builtin[i].name;
        t->name.len = strlen(builtin[i].name);
        t->exten.data = (char *) builtin[i].exten;
        t->exten.len = strlen(builtin[i].exten);
    }
    return types;
}

/* root or alias, inherited together with its compiled form; else nginx's
 * default "html" under the prefix. */
static rx_int_t
merge_root(rx_conf_t *cf, rx_http_core_loc_conf_t *p,
    rx_http_core_loc_conf_t *c)
{
    if (c->root.data != NULL) {
        return RX_OK;
    }
    if (p->root.data) {
        c->root = p->root;
        c->alias = p->alias;
        c->root_cv = p->root_cv;
        return RX_OK;
    }
    rx_str_set(&c->root, "html");
    return rx_conf_full_name(cf->cycle, &c->root, false);
}

/* client_body_temp_path: the default is set on the parent, so that every
 * location that inherits it shares one path (and one directory). */
static rx_int_t
merge_body_temp_path(rx_conf_t *cf, rx_http_core_loc_conf_t *p,
    rx_http_core_loc_conf_t *c)
{
    if (c->client_body_temp_path.data != NULL) {
        return RX_OK;
    }
    if (p->client_body_temp_path.data == NULL) {
        /* nginx's default; made by the master only when something
         * proxies (http_block.c) */
        rx_str_set(&p->client_body_temp_path, "client_body_temp");
        if (rx_conf_full_name(cf->cycle, &p->client_body_temp_path, false)
            != RX_OK) {
            return RX_ERROR;
        }
    }
    c->client_body_temp_path = p->client_body_temp_path;
    return RX_OK;
}

/* The connection's timeouts, keepalive and lingering close, and the
 * resolver. */
static void
merge_connection(rx_http_core_loc_conf_t *p, rx_http_core_loc_conf_t *c)
{
    rx_conf_merge_msec(c->send_timeout, p->send_timeout, 60000);
    rx_conf_merge_msec(c->keepalive_timeout, p->keepalive_timeout, 75000);
    rx_conf_merge_msec(c->keepalive_header, p->keepalive_header, 0);
    rx_conf_merge_value(c->keepalive_requests, p->keepalive_requests, 1000);
    rx_conf_merge_msec(c->keepalive_time, p->keepalive_time, 3600000);
    if (c->keepalive_disable == 0) {
        c->keepalive_disable = p->keepalive_disable
                               ? p->keepalive_disable
                               : RX_HTTP_KEEPALIVE_DISABLE_MSIE6;
    }
    if (c->keepalive_disable & RX_HTTP_KEEPALIVE_DISABLE_NONE) {
        c->keepalive_disable = RX_HTTP_KEEPALIVE_DISABLE_NONE;
    }
    rx_conf_merge_uint(c->lingering_close, p->lingering_close,
                       RX_HTTP_LINGERING_ON);
    rx_conf_merge_msec(c->lingering_time, p->lingering_time, 30000);
    rx_conf_merge_msec(c->lingering_timeout, p->lingering_timeout, 5000);
    if (c->resolver == NULL) {
        c->resolver = p->resolver;
    }
    rx_conf_merge_msec(c->resolver_timeout, p->resolver_timeout, 30000);
    rx_conf_merge_value(c->reset_timedout_connection,
                        p->reset_timedout_connection, 0);
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_core_loc_conf_t *p = prev, *c = conf;

    if (merge_root(cf, p, c) != RX_OK) {
        return RX_CONF_ERROR;
    }
    rx_conf_merge_value(c->client_max_body_size, p->client_max_body_size,
                        1024 * 1024);
    rx_conf_merge_size(c->client_body_buffer_size, p->client_body_buffer_size,
                       16384);
    rx_conf_merge_msec(c->client_body_timeout, p->client_body_timeout, 60000);
    if (merge_body_temp_path(cf, p, c) != RX_OK) {
        return RX_CONF_ERROR;
    }
    merge_connection(p, c);
    rx_conf_merge_uint(c->server_tokens, p->server_tokens, 1);
    rx_conf_merge_str(c->default_type, p->default_type, "text/plain");
    if (c->types == RX_CONF_UNSET_PTR) {
        c->types = p->types != RX_CONF_UNSET_PTR ? p->types : default_types(cf);
        if (c->types == NULL) {
            return RX_CONF_ERROR;
        }
    }
    rx_conf_merge_ptr(c->error_pages, p->error_pages, NULL);
    rx_conf_merge_value(c->recursive_error_pages, p->recursive_error_pages, 0);
    rx_conf_merge_value(c->chunked_transfer_encoding,
                        p->chunked_transfer_encoding, 1);
    rx_conf_merge_value(c->absolute_redirect, p->absolute_redirect, 1);
    rx_conf_merge_value(c->server_name_in_redirect, p->server_name_in_redirect, 0);
    rx_conf_merge_value(c->port_in_redirect, p->port_in_redirect, 1);
    rx_conf_merge_value(c->log_not_found, p->log_not_found, 1);
    rx_conf_init_value(c->internal, 0);
    rx_conf_merge_value(c->sendfile, p->sendfile, 0);
    rx_conf_merge_size(c->sendfile_max_chunk, p->sendfile_max_chunk, 2 * 1024 * 1024);
    rx_conf_merge_ptr(c->limit_rate, p->limit_rate, NULL);
    rx_conf_merge_uint(c->client_body_in_file_only,
                       p->client_body_in_file_only, RX_HTTP_BODY_FILE_OFF);
    rx_conf_merge_value(c->client_body_in_single_buffer,
                        p->client_body_in_single_buffer, 0);
    rx_conf_merge_size(c->connection_pool_size, p->connection_pool_size,
                       64 * sizeof(void *));
    rx_conf_merge_size(c->request_pool_size, p->request_pool_size, 4096);
    rx_conf_merge_ptr(c->limit_rate_after, p->limit_rate_after, NULL);
    rx_conf_merge_value(c->tcp_nopush, p->tcp_nopush, 0);
    rx_conf_merge_value(c->tcp_nodelay, p->tcp_nodelay, 1);
    rx_conf_merge_uint(c->if_modified_since, p->if_modified_since,
                       RX_HTTP_IMS_EXACT);
    rx_conf_merge_value(c->etag, p->etag, 1);
    rx_conf_merge_uint(c->satisfy, p->satisfy, RX_HTTP_SATISFY_ALL);
    if (c->error_log == NULL) {
        c->error_log = p->error_log;      /* NULL at the top: the main log */
    }
    if (c->noname && c->handler == NULL) {
        /* an `if` block keeps its location's content handler (nginx's
         * proxy_pass does the same; its stub_status would not) */
        c->handler = p->handler;
    }
    return RX_CONF_OK;
}


static const char *
set_server_name(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_srv_conf_t *cscf = conf;
    rx_str_t                *value = cf->args->elts;
    rx_http_server_name_t   *sn;
    rx_uint_t                i;
    size_t                   k;

    for (i = 1; i < cf->args->nelts; i++) {
        sn = rx_array_push(&cscf->server_names);
        if (sn == NULL) {
            return RX_CONF_ERROR;
        }
        memset(sn, 0, sizeof(*sn));
        sn->name = value[i];
        sn->regex = value[i].len && value[i].data[0] == '~';
        if (!sn->regex) {
            for (k = 0; k < sn->name.len; k++) {
                sn->name.data[k] = (char) tolower((unsigned char) sn->name.data[k]);
            }
        }
        if (rx_http_server_name_init(cf, sn) != RX_OK
            || rx_http_regex_capture_vars(cf, sn->re,
                   (rx_http_capture_vars_t **) &sn->capture_vars) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

static const char *
set_root(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = conf;
    rx_str_t                *value = cf->args->elts;
    bool                     alias = strcmp(cmd->name, "alias") == 0;

    if (clcf->root.data) {
        if (clcf->alias != alias) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" directive is "
                "duplicate, \"%s\" directive was specified earlier",
                cmd->name, clcf->alias ? "alias" : "root");
            return RX_CONF_ERROR;
        }
        return "is duplicate";
    }
    if (alias && clcf->match == RX_LOC_NAMED) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"alias\" directive cannot be "
                          "used inside the named location");
        return RX_CONF_ERROR;
    }
    clcf->root = value[1];
    clcf->alias = alias;
    if (strchr(value[1].data, '$')) {
        /* evaluated per request; made absolute against the prefix then */
        clcf->root_cv = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
        if (clcf->root_cv == NULL
            || rx_http_compile_complex_value(cf, &value[1], clcf->root_cv)
               != RX_OK) {
            return RX_CONF_ERROR;
        }
        return RX_CONF_OK;
    }
    if (rx_conf_full_name(cf->cycle, &clcf->root, false) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

