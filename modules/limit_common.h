/*
 * limit_common.h: what limit_req and limit_conn share of their
 * configuration: the levels of *_log_level and the $limit_*_status
 * variable (a name from a table, by a byte of the request).
 */
#ifndef RX_LIMIT_COMMON_H
#define RX_LIMIT_COMMON_H

#include "http.h"

/* info, notice, warn, error: the levels limit_*_log_level takes. */
extern const rx_conf_enum_t rx_limit_log_levels[];

/* A status variable: the request's byte at offset (0: not set, N: the
 * Nth of names). */
typedef struct {
    const rx_str_t  *names;
    rx_uint_t        nnames;
    size_t           offset;
} rx_limit_status_var_t;

rx_int_t rx_limit_add_status_variable(rx_conf_t *cf, const char *name,
    const rx_limit_status_var_t *var);

#endif /* RX_LIMIT_COMMON_H */
