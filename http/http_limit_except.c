/*
 * http_limit_except.c: nginx's `limit_except METHOD ... { }`. The block is
 * a nameless location under its own (merged from it like an `if` block);
 * a request whose method is not listed gets the block's confs instead of
 * the location's, so the allow/deny and auth_basic written there apply to
 * it. GET implies HEAD. Only directives marked RX_HTTP_LMT_CONF are
 * accepted inside.
 */
#include "http.h"

/* nginx's list: the methods limit_except accepts */
static const struct {
    const char *name;
    uint32_t    method;
} methods[] = {
    { "GET", RX_HTTP_GET }, { "HEAD", RX_HTTP_HEAD },
    { "POST", RX_HTTP_POST }, { "PUT", RX_HTTP_PUT },
    { "DELETE", RX_HTTP_DELETE }, { "MKCOL", RX_HTTP_MKCOL },
    { "COPY", RX_HTTP_COPY }, { "MOVE", RX_HTTP_MOVE },
    { "OPTIONS", RX_HTTP_OPTIONS }, { "PROPFIND", RX_HTTP_PROPFIND },
    { "PROPPATCH", RX_HTTP_PROPPATCH }, { "LOCK", RX_HTTP_LOCK },
    { "UNLOCK", RX_HTTP_UNLOCK }, { "PATCH", RX_HTTP_PATCH },
};

/* The mask of the methods the block applies to: all but those listed. */
static const char *
parse_methods(rx_conf_t *cf, uint32_t *mask)
{
    rx_str_t  *value = cf->args->elts;
    rx_uint_t  i, j;

    *mask = 0xffffffff;
    for (i = 1; i < cf->args->nelts; i++) {
        for (j = 0; j < rx_nelems(methods); j++) {
            if (strcasecmp(value[i].data, methods[j].name) == 0) {
                break;
            }
        }
        if (j == rx_nelems(methods)) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid method \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
        *mask &= ~methods[j].method;
    }
    if (!(*mask & RX_HTTP_GET)) {
        *mask &= ~(uint32_t) RX_HTTP_HEAD;
    }
    return RX_CONF_OK;
}

const char *
rx_http_core_limit_except(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *pclcf = conf;
    rx_http_conf_ctx_t      *ctx;
    rx_conf_t                saved;
    uint32_t                 mask;
    const char              *rv;

    (void) cmd;
    if (pclcf->limit_except) {
        return "is duplicate";
    }
    rv = parse_methods(cf, &mask);
    if (rv != RX_CONF_OK) {
        return rv;
    }
    ctx = rx_http_nameless_location(cf);
    if (ctx == NULL) {
        return RX_CONF_ERROR;
    }
    pclcf->limit_except = mask;
    pclcf->limit_except_loc_conf = ctx->loc_conf;

    saved = *cf;
    cf->ctx = ctx;
    cf->cmd_type = RX_HTTP_LMT_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    return rv;
}

void
rx_http_limit_except(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    if (r->method & clcf->limit_except) {
        r->loc_conf = clcf->limit_except_loc_conf;
    }
}
