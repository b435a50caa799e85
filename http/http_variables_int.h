/*
 * http_variables_int.h: what the registry (http_variables.c) and the core
 * variables (http_core_variables.c, http_prefix_variables.c,
 * http_proxy_protocol_vars.c) share;
 * private to those files.
 */
#ifndef RX_HTTP_VARIABLES_INT_H
#define RX_HTTP_VARIABLES_INT_H

#include "http_variables.h"

/* A getter's value is data[0..len), not copied: data must outlive r. */
static inline void
rx_http_var_str(rx_http_variable_value_t *v, const char *data, size_t len)
{
    v->data = (char *) data;
    v->len = len;
}

/* The value is a copy of data[0..len) in r's pool: for buffers that change
 * under a cached value. Returns RX_OK, or RX_ERROR when out of memory. */
rx_int_t rx_http_var_copy(rx_http_request_t *r, rx_http_variable_value_t *v,
    const char *data, size_t len);

/* The value is formatted into max bytes of r's pool (the text is cut at
 * max - 1). Returns RX_OK, or RX_ERROR when out of memory. */
rx_int_t rx_http_var_printf(rx_http_request_t *r, rx_http_variable_value_t *v,
    size_t max, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The value is n in decimal, in r's pool (the getters of ports, lengths
 * and counts: without snprintf). Returns RX_OK, or RX_ERROR when out of
 * memory. */
rx_int_t rx_http_var_uint(rx_http_request_t *r, rx_http_variable_value_t *v,
    uint64_t n);

/* The value is ms as seconds with milliseconds ("1.005"), in r's pool. */
rx_int_t rx_http_var_msec(rx_http_request_t *r, rx_http_variable_value_t *v,
    uint64_t ms);

/* $hostname: the host's name, lower-cased, read when the configuration was
 * loaded (http_variables.c keeps it in its main conf). */
const rx_str_t *rx_http_var_hostname(rx_http_request_t *r);

/* rx_http_variables_module's init_process (http_core_variables.c): sets up
 * the per-worker state of $pid and $request_id. */
rx_int_t rx_http_var_init_process(rx_cycle_t *cycle);

/* http_proxy_protocol_vars.c: registers $proxy_protocol_* (called with
 * the core variables). */
rx_int_t rx_http_proxy_protocol_add_variables(rx_conf_t *cf);

/* http_limit_rate.c: registers $limit_rate (called with the core
 * variables). */
rx_int_t rx_http_limit_rate_add_variables(rx_conf_t *cf);

/* http_prefix_variables.c: the getters of $http_*, $sent_http_*,
 * $cookie_* and $arg_* (data: the variable's whole name, an rx_str_t). */
rx_int_t rx_http_var_http(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data);
rx_int_t rx_http_var_sent_http(rx_http_request_t *r,
    rx_http_variable_value_t *v, uintptr_t data);
rx_int_t rx_http_var_cookie(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data);
rx_int_t rx_http_var_arg(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data);

#endif /* RX_HTTP_VARIABLES_INT_H */
