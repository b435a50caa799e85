/*
 * http_block.c: the http { } block: creates the three levels of confs for
 * every HTTP module, parses the block, merges server and location levels,
 * and turns listen lines into the cycle's listening sockets.
 */
#include "http.h"
#include "http_server.h"

static const char *http_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

static const rx_command_t http_commands[] = {
    { "http", RX_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_NOARGS,
      http_block, 0, 0, NULL },
    rx_null_command
};

static const rx_core_module_t http_ctx = { "http", NULL, NULL };

rx_module_t rx_http_module = {
    "rx_http_module", 0, 0, RX_CORE_MODULE, &http_ctx, http_commands,
    NULL, NULL, NULL, NULL
};

static const rx_http_module_t *
http_module_ctx(rx_uint_t i)
{
    return rx_modules[i]->type == RX_HTTP_MODULE ? rx_modules[i]->ctx : NULL;
}

/* Creates every HTTP module's conf at the levels asked for. */
rx_int_t
rx_http_create_confs(rx_conf_t *cf, rx_http_conf_ctx_t *ctx, bool main,
    bool srv)
{
    rx_uint_t n = rx_modules_count(RX_HTTP_MODULE), i;

    if (main) {
        ctx->main_conf = rx_pcalloc(cf->pool, n * sizeof(void *));
    }
    if (srv) {
        ctx->srv_conf = rx_pcalloc(cf->pool, n * sizeof(void *));
    }
    ctx->loc_conf = rx_pcalloc(cf->pool, n * sizeof(void *));
    if (ctx->main_conf == NULL || ctx->srv_conf == NULL || ctx->loc_conf == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < rx_modules_n; i++) {
        const rx_http_module_t *m = http_module_ctx(i);
        rx_uint_t               ci;

        if (m == NULL) {
            continue;
        }
        ci = rx_modules[i]->ctx_index;
        if (main && m->create_main_conf
            && (ctx->main_conf[ci] = m->create_main_conf(cf)) == NULL) {
            return RX_ERROR;
        }
        if (srv && m->create_srv_conf
            && (ctx->srv_conf[ci] = m->create_srv_conf(cf)) == NULL) {
            return RX_ERROR;
        }
        if (m->create_loc_conf
            && (ctx->loc_conf[ci] = m->create_loc_conf(cf)) == NULL) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* Merges a location tree: each location's confs from its parent's. */
static const char *
merge_locations(rx_conf_t *cf, rx_array_t *locations, void **parent_loc,
    const rx_http_module_t *m, rx_uint_t ci)
{
    rx_http_core_loc_conf_t **clcf;
    rx_uint_t                 i;
    const char               *rv;

    if (locations == NULL) {
        return RX_CONF_OK;
    }
    clcf = locations->elts;
    for (i = 0; i < locations->nelts; i++) {
        rv = m->merge_loc_conf(cf, parent_loc[ci], clcf[i]->loc_conf[ci]);
        if (rv != RX_CONF_OK) {
            return rv;
        }
        rv = merge_locations(cf, clcf[i]->locations, clcf[i]->loc_conf, m, ci);
        if (rv != RX_CONF_OK) {
            return rv;
        }
    }
    return RX_CONF_OK;
}

static const char *
merge_servers(rx_conf_t *cf, rx_http_core_main_conf_t *cmcf,
    rx_http_conf_ctx_t *http)
{
    rx_http_core_srv_conf_t **servers = cmcf->servers.elts;
    rx_uint_t                 i, s;
    const char               *rv;

    for (i = 0; i < rx_modules_n; i++) {
        const rx_http_module_t *m = http_module_ctx(i);
        rx_uint_t               ci;

        if (m == NULL) {
            continue;
        }
        ci = rx_modules[i]->ctx_index;
        if (m->init_main_conf
            && (rv = m->init_main_conf(cf, http->main_conf[ci])) != RX_CONF_OK) {
            return rv;
        }
        for (s = 0; s < cmcf->servers.nelts; s++) {
            rx_http_conf_ctx_t      *sctx = servers[s]->ctx;
            rx_http_core_loc_conf_t *clcf;

            if (m->merge_srv_conf
                && (rv = m->merge_srv_conf(cf, http->srv_conf[ci],
                                           sctx->srv_conf[ci])) != RX_CONF_OK) {
                return rv;
            }
            if (m->merge_loc_conf == NULL) {
                continue;
            }
            rv = m->merge_loc_conf(cf, http->loc_conf[ci], sctx->loc_conf[ci]);
            if (rv != RX_CONF_OK) {
                return rv;
            }
            clcf = sctx->loc_conf[rx_http_core_module.ctx_index];
            rv = merge_locations(cf, clcf->locations, sctx->loc_conf, m, ci);
            if (rv != RX_CONF_OK) {
                return rv;
            }
        }
    }
    return RX_CONF_OK;
}

static const char *
http_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_conf_ctx_t       *ctx;
    rx_http_core_main_conf_t *cmcf;
    rx_conf_t                 saved;
    const char               *rv;
    rx_uint_t                 i;

    if (*(void **) conf) {
        return "is duplicate";
    }
    ctx = rx_pcalloc(cf->pool, sizeof(rx_http_conf_ctx_t));
    if (ctx == NULL || rx_http_create_confs(cf, ctx, true, true) != RX_OK) {
        return RX_CONF_ERROR;
    }
    *(void **) conf = ctx;

    saved = *cf;
    cf->ctx = ctx;
    for (i = 0; i < rx_modules_n; i++) {
        const rx_http_module_t *m = http_module_ctx(i);
        if (m && m->preconfiguration && m->preconfiguration(cf) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    cf->module_type = RX_HTTP_MODULE;
    cf->cmd_type = RX_HTTP_MAIN_CONF;
    rv = rx_conf_parse(cf, NULL);
    if (rv != RX_CONF_OK) {
        goto done;
    }

    cmcf = ctx->main_conf[rx_http_core_module.ctx_index];
    rv = merge_servers(cf, cmcf, ctx);
    if (rv != RX_CONF_OK) {
        if (rv != RX_CONF_ERROR) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "%s", rv);
            rv = RX_CONF_ERROR;
        }
        goto done;
    }
    for (i = 0; i < rx_modules_n; i++) {
        const rx_http_module_t *m = http_module_ctx(i);
        /* an on-demand module this configuration does not name registers
         * no phase handler (core/modules.c) */
        if (m && m->postconfiguration && rx_module_active(cf->cycle, rx_modules[i])
            && m->postconfiguration(cf) != RX_OK) {
            rv = RX_CONF_ERROR;
            goto done;
        }
    }
    if (rx_http_add_listening(cf, cmcf) != RX_OK
        || rx_http_init_server_names(cf) != RX_OK) {
        rv = RX_CONF_ERROR;
        goto done;
    }
    if (cmcf->upstreams) {
        rx_http_core_loc_conf_t *clcf =
            ctx->loc_conf[rx_http_core_module.ctx_index];

        cf->cycle->upstream_fds_per_conn = 1;
        /* request bodies beyond client_body_buffer_size spill there */
        if (clcf->client_body_temp_path.data
            && rx_conf_add_path(cf, &clcf->client_body_temp_path,
                                "client_body_temp_path") != RX_OK) {
            rv = RX_CONF_ERROR;
            goto done;
        }
    }

done:
    *cf = saved;
    return rv;
}

/* The confs of a block inside a location (`if`, `limit_except`): a
 * nameless location under the current one, which the location lookup
 * skips and the merge walks; it keeps the parent's name and kind, so that
 * an inherited alias maps the URI as it does in the parent. NULL when out
 * of memory. */
rx_http_conf_ctx_t *
rx_http_nameless_location(rx_conf_t *cf)
{
    rx_http_conf_ctx_t      *pctx = cf->ctx, *ctx;
    rx_http_core_loc_conf_t *clcf, *pclcf, **slot;

    ctx = rx_pcalloc(cf->pool, sizeof(rx_http_conf_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }
    ctx->main_conf = pctx->main_conf;
    ctx->srv_conf = pctx->srv_conf;
    if (rx_http_create_confs(cf, ctx, false, false) != RX_OK) {
        return NULL;
    }
    pclcf = pctx->loc_conf[rx_http_core_module.ctx_index];
    clcf = ctx->loc_conf[rx_http_core_module.ctx_index];
    clcf->loc_conf = ctx->loc_conf;
    clcf->name = pclcf->name;
    clcf->match = pclcf->match;
    clcf->noname = true;
    clcf->parent = pclcf->name.data ? pclcf : NULL;
    if (pclcf->locations == NULL) {
        pclcf->locations = rx_array_create(cf->pool, 4, sizeof(void *));
        if (pclcf->locations == NULL) {
            return NULL;
        }
    }
    slot = rx_array_push(pclcf->locations);
    if (slot == NULL) {
        return NULL;
    }
    *slot = clcf;
    return ctx;
}
