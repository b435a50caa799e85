/*
 * http_script.h: compiled complex values: directive arguments such as
 * "text $var ${var}text $1" parsed once at load into literal, variable and
 * capture parts, evaluated per request without parsing.
 */
#ifndef RX_HTTP_SCRIPT_H
#define RX_HTTP_SCRIPT_H

#include "http.h"
#include "http_variables.h"
#include "regex.h"
#include "http_captures.h"

typedef enum {
    RX_HTTP_CV_LITERAL = 0,   /* text */
    RX_HTTP_CV_VARIABLE,      /* $name, ${name}: index */
    RX_HTTP_CV_CAPTURE        /* $1..$9, ${1}..${9}: index is the number */
} rx_http_cv_part_type_t;

typedef struct {
    rx_http_cv_part_type_t  type;
    rx_uint_t               index;  /* variable index or capture number */
    rx_str_t                text;   /* the literal; for others the source */
} rx_http_cv_part_t;

typedef struct {
    rx_str_t            value;     /* the text as written (a copy in the
                                      config pool); the result itself when
                                      parts is NULL */
    rx_http_cv_part_t  *parts;     /* NULL: a constant */
    rx_uint_t           nparts;
    unsigned            captures;  /* bit n set when $n is used */
} rx_http_complex_value_t;

#define rx_http_complex_value_is_const(cv)  ((cv)->parts == NULL)

/*
 * Parses text into cv at load time. Variables are "$name" (letters, digits,
 * '_') or "${name}" (then text may follow at once: "${a}b"); "$1".."$9" are
 * the captures of the last regex match (so "$12" is capture 1 then "2").
 * Errors, logged with file:line: "invalid variable name" for '$' at the end
 * or before a character that cannot start a name ("$ ", "${}"), and
 * `the closing bracket in "x" variable is missing`. Unknown names fail
 * later, at the end of the http block (http_variables.h). No escape for a
 * literal '$' exists, as in nginx. Returns RX_OK or RX_ERROR.
 */
rx_int_t rx_http_compile_complex_value(rx_conf_t *cf, const rx_str_t *text,
    rx_http_complex_value_t *cv);

/*
 * Evaluates cv for r into out: a constant is returned as is; otherwise the
 * parts are measured, then copied into memory from r->pool. A variable that
 * is not found adds nothing. Non-cacheable variables are recomputed for
 * each evaluation. A capture reads r->captures / r->captures_data, where
 * r->ncaptures counts the pairs that rx_regex_exec set ($0 included):
 * $n is captures_data[captures[2n] .. captures[2n+1]), empty when n >=
 * ncaptures or the group did not take part. out may point into the
 * configuration or a variable's value: treat it as read-only.
 * Returns RX_OK, or RX_ERROR when memory runs out.
 */
rx_int_t rx_http_complex_value(rx_http_request_t *r,
    const rx_http_complex_value_t *cv, rx_str_t *out);

/*
 * Directive-table setter: the field (at cmd->offset) is an
 * rx_http_complex_value_t *, NULL or RX_CONF_UNSET_PTR until set; a second
 * occurrence is "is duplicate". Compiles the first argument.
 */
const char *rx_http_set_complex_value_slot(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);

/* At load: a regex whose captures a script uses ($1, $name: rewrite, if,
 * proxy_redirect, proxy_cookie_*), compiled, pcre2's message logged with
 * file:line on error, its named groups registered as variables (*names:
 * NULL when it has none). RX_OK or RX_ERROR. */
rx_int_t rx_http_regex_compile(rx_conf_t *cf, const rx_str_t *pattern,
    bool caseless, rx_regex_t **re, rx_http_capture_vars_t **names);

#endif /* RX_HTTP_SCRIPT_H */
