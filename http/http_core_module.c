/*
 * http_core_module.c: the server and location blocks and the core HTTP
 * directives (listen, server_name, root, alias), with their confs' create
 * and merge hooks.
 */
#include <ctype.h>
#include "http_core.h"

static const char *server_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *location_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_server_name(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_root(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_main_conf(rx_conf_t *cf);
static void *create_srv_conf(rx_conf_t *cf);
static const char *merge_srv_conf(rx_conf_t *cf, void *prev, void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

#define RX_HTTP_ANY_CONF (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t http_core_commands[] = {
    { "server", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_NOARGS,
      server_block, 0, 0, NULL },
    { "location", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_BLOCK
      | RX_CONF_TAKE12, location_block, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "listen", RX_HTTP_SRV_CONF | RX_CONF_1MORE,
      rx_http_core_listen, RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "server_name", RX_HTTP_SRV_CONF | RX_CONF_1MORE,
      set_server_name, RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "root", RX_HTTP_ANY_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      set_root, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "alias", RX_HTTP_LOC_CONF | RX_CONF_TAKE1,
      set_root, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    /* paths of nginx modules ringx leaves out: accepted so stock configs load */
    { "uwsgi_temp_path", RX_HTTP_ANY_CONF | RX_CONF_1MORE,
      rx_conf_set_ignored, 0, 0, "ringx has no uwsgi module" },
    { "scgi_temp_path", RX_HTTP_ANY_CONF | RX_CONF_1MORE,
      rx_conf_set_ignored, 0, 0, "ringx has no scgi module" },
    rx_null_command
};

static const rx_http_module_t http_core_ctx = {
    NULL, NULL, create_main_conf, NULL, create_srv_conf, merge_srv_conf,
    create_loc_conf, merge_loc_conf
};

rx_module_t rx_http_core_module = {
    "rx_http_core_module", 0, 0, RX_HTTP_MODULE, &http_core_ctx,
    http_core_commands, NULL, NULL, NULL, NULL
};

static void *
create_main_conf(rx_conf_t *cf)
{
    rx_http_core_main_conf_t *cmcf = rx_pcalloc(cf->pool, sizeof(*cmcf));

    if (cmcf == NULL
        || rx_array_init(&cmcf->servers, cf->pool, 4, sizeof(void *)) != RX_OK
        || rx_array_init(&cmcf->listens, cf->pool, 4,
                         sizeof(rx_http_listen_opt_t)) != RX_OK) {
        return NULL;
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
    return cscf;
}

static const char *
merge_srv_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_core_srv_conf_t *cscf = conf;
    rx_http_server_name_t   *sn;

    if (cscf->server_names.nelts == 0) {
        /* nginx's default: the empty name */
        sn = rx_array_push(&cscf->server_names);
        if (sn == NULL) {
            return RX_CONF_ERROR;
        }
        rx_str_set(&sn->name, "");
        sn->regex = false;
    }
    return RX_CONF_OK;
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(rx_http_core_loc_conf_t));
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_core_loc_conf_t *p = prev, *c = conf;

    if (c->root.data == NULL) {
        if (p->root.data) {
            c->root = p->root;
            c->alias = p->alias;
        } else {
            rx_str_set(&c->root, "html");
            if (rx_conf_full_name(cf->cycle, &c->root, false) != RX_OK) {
                return RX_CONF_ERROR;
            }
        }
    }
    return RX_CONF_OK;
}

static const char *
server_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_conf_ctx_t       *http = cf->ctx, *ctx;
    rx_http_core_main_conf_t *cmcf;
    rx_http_core_srv_conf_t  *cscf, **slot;
    rx_conf_t                 saved;
    const char               *rv;

    ctx = rx_pcalloc(cf->pool, sizeof(rx_http_conf_ctx_t));
    if (ctx == NULL) {
        return RX_CONF_ERROR;
    }
    ctx->main_conf = http->main_conf;
    if (rx_http_create_confs(cf, ctx, false, true) != RX_OK) {
        return RX_CONF_ERROR;
    }
    cscf = ctx->srv_conf[rx_http_core_module.ctx_index];
    cscf->ctx = ctx;
    cmcf = ctx->main_conf[rx_http_core_module.ctx_index];
    slot = rx_array_push(&cmcf->servers);
    if (slot == NULL) {
        return RX_CONF_ERROR;
    }
    *slot = cscf;

    saved = *cf;
    cf->ctx = ctx;
    cf->cmd_type = RX_HTTP_SRV_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        return rv;
    }

    if (!cscf->listen) {
        /* nginx's default: *:80 as root, *:8000 otherwise */
        rx_http_listen_opt_t *lo = rx_array_push(&cmcf->listens);
        rx_array_t            addrs;
        rx_str_t              any = rx_string("*");

        if (lo == NULL
            || rx_array_init(&addrs, cf->temp_pool, 1, sizeof(rx_sockaddr_t))
               != RX_OK
            || rx_parse_addr(cf->pool, &any, geteuid() == 0 ? 80 : 8000, true,
                             &addrs) != NULL) {
            return RX_CONF_ERROR;
        }
        memset(lo, 0, sizeof(*lo));
        lo->addr = *(rx_sockaddr_t *) addrs.elts;
        lo->server = cscf;
        lo->backlog = 511;
        lo->rcvbuf = lo->sndbuf = -1;
        lo->ipv6only = -1;
        lo->file = cscf->file;
        lo->line = cscf->line;
    }
    return RX_CONF_OK;
}

static const char *
location_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_conf_ctx_t      *parent = cf->ctx, *ctx;
    rx_http_core_loc_conf_t *clcf, *pclcf, **slot;
    rx_str_t                *value = cf->args->elts, *name;
    rx_conf_t                saved;
    const char              *rv;

    ctx = rx_pcalloc(cf->pool, sizeof(rx_http_conf_ctx_t));
    if (ctx == NULL) {
        return RX_CONF_ERROR;
    }
    ctx->main_conf = parent->main_conf;
    ctx->srv_conf = parent->srv_conf;
    if (rx_http_create_confs(cf, ctx, false, false) != RX_OK) {
        return RX_CONF_ERROR;
    }
    clcf = ctx->loc_conf[rx_http_core_module.ctx_index];
    clcf->loc_conf = ctx->loc_conf;
    pclcf = parent->loc_conf[rx_http_core_module.ctx_index];

    name = &value[1];
    if (cf->args->nelts == 3) {
        static const struct { const char *mod; rx_http_loc_match_t match; } mods[] = {
            { "=", RX_LOC_EXACT }, { "^~", RX_LOC_NOREGEX },
            { "~", RX_LOC_REGEX }, { "~*", RX_LOC_REGEX_CASELESS }
        };
        rx_uint_t i;

        for (i = 0; i < rx_nelems(mods); i++) {
            if (rx_str_eq(&value[1], mods[i].mod)) break;
        }
        if (i == rx_nelems(mods)) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                "invalid location modifier \"%s\", it must be \"=\", \"^~\", "
                "\"~\" or \"~*\"", value[1].data);
            return RX_CONF_ERROR;
        }
        clcf->match = mods[i].match;
        name = &value[2];
    } else if (value[1].data[0] == '@') {
        clcf->match = RX_LOC_NAMED;
    } else if (value[1].data[0] == '=' ) {
        clcf->match = RX_LOC_EXACT;          /* "location =/x" */
        name->data++;
        name->len--;
    } else if (value[1].len > 1 && value[1].data[0] == '~') {
        clcf->match = value[1].data[1] == '*' ? RX_LOC_REGEX_CASELESS : RX_LOC_REGEX;
        name->data += clcf->match == RX_LOC_REGEX ? 1 : 2;
        name->len -= clcf->match == RX_LOC_REGEX ? 1 : 2;
    } else if (value[1].len > 2 && value[1].data[0] == '^' && value[1].data[1] == '~') {
        clcf->match = RX_LOC_NOREGEX;
        name->data += 2;
        name->len -= 2;
    }
    clcf->name = *name;

    if (pclcf->name.data) {
        /* nesting rules, as nginx documents them */
        if (pclcf->match == RX_LOC_EXACT) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "location \"%s\" cannot be "
                "inside the exact location \"%s\"", name->data, pclcf->name.data);
            return RX_CONF_ERROR;
        }
        if (pclcf->match == RX_LOC_NAMED) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "location \"%s\" cannot be "
                "inside the named location \"%s\"", name->data, pclcf->name.data);
            return RX_CONF_ERROR;
        }
        if (clcf->match == RX_LOC_NAMED) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "named location \"%s\" can "
                "be on the server level only", name->data);
            return RX_CONF_ERROR;
        }
        if (clcf->match != RX_LOC_REGEX && clcf->match != RX_LOC_REGEX_CASELESS
            && pclcf->match != RX_LOC_REGEX && pclcf->match != RX_LOC_REGEX_CASELESS
            && (name->len < pclcf->name.len
                || memcmp(name->data, pclcf->name.data, pclcf->name.len) != 0)) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "location \"%s\" is outside "
                "location \"%s\"", name->data, pclcf->name.data);
            return RX_CONF_ERROR;
        }
    }
    clcf->parent = pclcf->name.data ? pclcf : NULL;
    if (pclcf->locations == NULL) {
        pclcf->locations = rx_array_create(cf->pool, 4, sizeof(void *));
        if (pclcf->locations == NULL) {
            return RX_CONF_ERROR;
        }
    }
    slot = rx_array_push(pclcf->locations);
    if (slot == NULL) {
        return RX_CONF_ERROR;
    }
    *slot = clcf;

    saved = *cf;
    cf->ctx = ctx;
    cf->cmd_type = RX_HTTP_LOC_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    return rv;
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
        if (value[i].len && value[i].data[0] == '*' && (value[i].len == 1
            || value[i].data[1] != '.')) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid server name or "
                              "wildcard \"%s\"", value[i].data);
            return RX_CONF_ERROR;
        }
        sn = rx_array_push(&cscf->server_names);
        if (sn == NULL) {
            return RX_CONF_ERROR;
        }
        sn->name = value[i];
        sn->regex = value[i].len && value[i].data[0] == '~';
        if (!sn->regex) {
            for (k = 0; k < sn->name.len; k++) {
                sn->name.data[k] = (char) tolower((unsigned char) sn->name.data[k]);
            }
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
    if (strchr(value[1].data, '$') == NULL
        && rx_conf_full_name(cf->cycle, &clcf->root, false) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

