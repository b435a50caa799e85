/*
 * http_core_blocks.c: the `server { }` and `location { }` blocks: their
 * confs made and parsed, a location's match and name checked, nested
 * within the rules nginx has, and added to its parent.
 */
#include <ctype.h>
#include "http.h"
#include "http_location.h"
#include "http_server.h"
#include "regex.h"
#include "http_captures.h"

const char *
rx_http_core_server_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
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

/* The location's match from its modifier, given apart ("~ \.php$") or
 * glued to the name ("=/x", "~\.php$", "^~/static", "@named"); the name
 * without it, or NULL after an error (logged). */
static rx_str_t *
location_match(rx_conf_t *cf, rx_http_core_loc_conf_t *clcf)
{
    rx_str_t *value = cf->args->elts, *name = &value[1];

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
            return NULL;
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
    return name;
}

/* Nesting rules, as nginx documents them: not inside an exact or a named
 * location, a named one on the server level only, and a prefix inside a
 * prefix it extends. RX_OK, or RX_ERROR (logged). */
static rx_int_t
location_nesting(rx_conf_t *cf, const rx_http_core_loc_conf_t *clcf,
    const rx_http_core_loc_conf_t *pclcf, const rx_str_t *name)
{
    if (pclcf->match == RX_LOC_EXACT) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "location \"%s\" cannot be "
            "inside the exact location \"%s\"", name->data, pclcf->name.data);
        return RX_ERROR;
    }
    if (pclcf->match == RX_LOC_NAMED) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "location \"%s\" cannot be "
            "inside the named location \"%s\"", name->data, pclcf->name.data);
        return RX_ERROR;
    }
    if (clcf->match == RX_LOC_NAMED) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "named location \"%s\" can "
            "be on the server level only", name->data);
        return RX_ERROR;
    }
    if (clcf->match != RX_LOC_REGEX && clcf->match != RX_LOC_REGEX_CASELESS
        && pclcf->match != RX_LOC_REGEX && pclcf->match != RX_LOC_REGEX_CASELESS
        && (name->len < pclcf->name.len
            || memcmp(name->data, pclcf->name.data, pclcf->name.len) != 0)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "location \"%s\" is outside "
            "location \"%s\"", name->data, pclcf->name.data);
        return RX_ERROR;
    }
    return RX_OK;
}

/* Appends clcf to the locations of its parent (a location or the
 * server's). */
static rx_int_t
location_add(rx_conf_t *cf, rx_http_core_loc_conf_t *pclcf,
    rx_http_core_loc_conf_t *clcf)
{
    rx_http_core_loc_conf_t **slot;

    if (pclcf->locations == NULL) {
        pclcf->locations = rx_array_create(cf->pool, 4, sizeof(void *));
        if (pclcf->locations == NULL) {
            return RX_ERROR;
        }
    }
    slot = rx_array_push(pclcf->locations);
    if (slot == NULL) {
        return RX_ERROR;
    }
    *slot = clcf;
    return RX_OK;
}

const char *
rx_http_core_location_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_conf_ctx_t      *parent = cf->ctx, *ctx;
    rx_http_core_loc_conf_t *clcf, *pclcf;
    rx_str_t                *name;
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

    name = location_match(cf, clcf);
    if (name == NULL) {
        return RX_CONF_ERROR;
    }
    clcf->name = *name;
    if (rx_http_location_init_conf(cf, clcf) != RX_OK
        || rx_http_regex_capture_vars(cf, clcf->regex,
               (rx_http_capture_vars_t **) &clcf->capture_vars) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (pclcf->name.data && location_nesting(cf, clcf, pclcf, name) != RX_OK) {
        return RX_CONF_ERROR;
    }
    clcf->parent = pclcf->name.data ? pclcf : NULL;
    if (location_add(cf, pclcf, clcf) != RX_OK) {
        return RX_CONF_ERROR;
    }

    saved = *cf;
    cf->ctx = ctx;
    cf->cmd_type = RX_HTTP_LOC_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    return rv;
}
