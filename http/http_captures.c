/*
 * http_captures.c: named regex captures as variables (http_captures.h).
 */
#include "http.h"
#include "regex.h"
#include "http_variables.h"
#include "http_captures.h"

/* A named capture that no regex set for this request is absent. */
static rx_int_t
unset_capture(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    v->not_found = 1;
    return RX_OK;
}

rx_int_t
rx_http_regex_capture_vars(rx_conf_t *cf, rx_regex_t *re,
    rx_http_capture_vars_t **out)
{
    const rx_regex_name_t *names;
    rx_http_capture_vars_t *cv;
    rx_uint_t              n, i;

    *out = NULL;
    names = re ? rx_regex_names(re, &n) : NULL;
    if (names == NULL || n == 0) {
        return RX_OK;
    }
    cv = rx_palloc(cf->pool, sizeof(*cv));
    if (cv == NULL) {
        return RX_ERROR;
    }
    cv->vars = rx_palloc(cf->pool, n * sizeof(rx_http_capture_var_t));
    if (cv->vars == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < n; i++) {
        rx_http_variable_t *v = rx_http_add_variable(cf, &names[i].name,
                                                     RX_HTTP_VAR_CHANGEABLE);
        rx_int_t            index;

        if (v == NULL) {
            return RX_ERROR;
        }
        if (v->get == NULL) {
            v->get = unset_capture;
        }
        index = rx_http_get_variable_index(cf, &names[i].name);
        if (index == RX_ERROR) {
            return RX_ERROR;
        }
        cv->vars[i].capture = names[i].index;
        cv->vars[i].variable = (rx_uint_t) index;
    }
    cv->n = n;
    *out = cv;
    return RX_OK;
}

rx_int_t
rx_http_set_capture_vars(rx_http_request_t *r, const rx_http_capture_vars_t *cv,
    const char *subject)
{
    rx_uint_t i;

    for (i = 0; cv && i < cv->n; i++) {
        rx_uint_t g = cv->vars[i].capture;
        rx_str_t  value = rx_null_string;

        if ((rx_int_t) g < r->ncaptures && r->captures[2 * g] >= 0) {
            size_t len = (size_t) (r->captures[2 * g + 1] - r->captures[2 * g]);
            value.data = rx_pstrdup_c(r->pool, subject + r->captures[2 * g], len);
            if (value.data == NULL) {
                return RX_ERROR;
            }
            value.len = len;
        } else {
            value.data = (char *) "";
        }
        if (rx_http_set_indexed_variable(r, cv->vars[i].variable, &value)
            != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}
