/*
 * access_log.h: what access_log.c and access_log_format.c share: a
 * log_format's escaping and compiled template, and the line made from it.
 */
#ifndef RX_ACCESS_LOG_H
#define RX_ACCESS_LOG_H

#include "http.h"
#include "http_script.h"

typedef enum {
    ESC_DEFAULT = 0,     /* '"', '\', < 0x20, >= 0x7f as \xXX; absent: "-" */
    ESC_JSON,            /* JSON string escapes; absent: nothing */
    ESC_NONE             /* raw; absent: nothing */
} log_escape_t;

typedef struct {
    rx_str_t                 name;
    log_escape_t             escape;
    rx_http_complex_value_t  cv;        /* literals and variables */
} log_fmt_t;

/* The bytes fmt's line takes for r (an upper bound), and the line written
 * at d; returns its end. */
size_t rx_http_log_line_len(rx_http_request_t *r, const log_fmt_t *fmt);
char *rx_http_log_render(rx_http_request_t *r, const log_fmt_t *fmt, char *d);

#endif /* RX_ACCESS_LOG_H */
