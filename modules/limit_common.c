/*
 * limit_common.c: what limit_req and limit_conn share of their
 * configuration (limit_common.h).
 */
#include "http.h"
#include "http_variables.h"
#include "limit_common.h"

const rx_conf_enum_t rx_limit_log_levels[] = {
    { "info", RX_LOG_INFO },
    { "notice", RX_LOG_NOTICE },
    { "warn", RX_LOG_WARN },
    { "error", RX_LOG_ERR },
    { NULL, 0 }
};

static rx_int_t
status_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const rx_limit_status_var_t *var = (const rx_limit_status_var_t *) data;
    uint8_t                      n = *((uint8_t *) r + var->offset);

    if (n == 0 || n > var->nnames) {
        v->not_found = 1;
        return RX_OK;
    }
    v->len = var->names[n - 1].len;
    v->data = var->names[n - 1].data;
    return RX_OK;
}

rx_int_t
rx_limit_add_status_variable(rx_conf_t *cf, const char *name,
    const rx_limit_status_var_t *var)
{
    rx_str_t            s = { strlen(name), (char *) name };
    rx_http_variable_t *v = rx_http_add_variable(cf, &s,
                                                 RX_HTTP_VAR_NOCACHEABLE);

    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = status_variable;
    v->data = (uintptr_t) var;
    return RX_OK;
}
