/*
 * http_captures.h: named captures of server_name and location regexes as
 * variables: "(?<name>...)" becomes $name, set when the regex matches.
 */
#ifndef RX_HTTP_CAPTURES_H
#define RX_HTTP_CAPTURES_H

typedef struct {
    rx_uint_t  capture;     /* group number */
    rx_uint_t  variable;    /* variable index */
} rx_http_capture_var_t;

typedef struct {
    rx_http_capture_var_t  *vars;
    rx_uint_t               n;
} rx_http_capture_vars_t;

/* At load: registers a variable per named group of re; *out is NULL when
 * the regex has none. */
rx_int_t rx_http_regex_capture_vars(rx_conf_t *cf, rx_regex_t *re,
    rx_http_capture_vars_t **out);

/* After a match: assigns the groups' text (from r->captures over
 * subject) to their variables. */
rx_int_t rx_http_set_capture_vars(rx_http_request_t *r,
    const rx_http_capture_vars_t *cv, const char *subject);

#endif /* RX_HTTP_CAPTURES_H */
