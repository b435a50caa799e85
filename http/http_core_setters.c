/*
 * http_core_setters.c: the core HTTP directives with their own grammar:
 * large_client_header_buffers, keepalive_timeout, types { }, error_page,
 * error_log (http levels) and internal. Their table is in
 * http_core_module.c.
 */
#include <ctype.h>
#include "http.h"
#include "http_script.h"

const char *
rx_http_core_set_large_buffers(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_srv_conf_t *cscf = conf;
    rx_str_t                *value = cf->args->elts;
    rx_int_t                 num;
    ssize_t                  size;

    if (cscf->large_client_header_buffers_num != RX_CONF_UNSET) {
        return "is duplicate";
    }
    num = rx_atoi(value[1].data, value[1].len);
    if (num <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in \"%s\" "
            "directive, it must be a number of buffers", value[1].data,
            value[0].data);
        return RX_CONF_ERROR;
    }
    size = rx_parse_size(&value[2]);
    if (size <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in \"%s\" "
            "directive, it must be a size (e.g. 8k)", value[2].data,
            value[0].data);
        return RX_CONF_ERROR;
    }
    cscf->large_client_header_buffers_num = num;
    cscf->large_client_header_buffers_size = (size_t) size;
    return RX_CONF_OK;
}

const char *
rx_http_core_set_keepalive_timeout(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = conf;
    rx_str_t                *value = cf->args->elts;
    rx_int_t                 t;

    if (clcf->keepalive_timeout != RX_CONF_UNSET_MSEC) {
        return "is duplicate";
    }
    t = rx_parse_time(&value[1], false);
    if (t == -1) {
        return "invalid value";
    }
    clcf->keepalive_timeout = t;
    if (cf->args->nelts == 3) {
        t = rx_parse_time(&value[2], true);
        if (t == -1) {
            return "invalid value";
        }
        clcf->keepalive_header = t * 1000;
    }
    return RX_CONF_OK;
}

/* Inside types { }: every line is "mime/type ext ext ...;". */
static const char *
types_line(rx_conf_t *cf, void *dummy, void *conf)
{
    rx_array_t     *types = conf;
    rx_str_t       *value = cf->args->elts;
    rx_http_type_t *t, *seen;
    rx_uint_t       i, j;
    size_t          k;

    if (cf->args->nelts < 2) {
        return "invalid number of arguments in types block";
    }
    for (i = 1; i < cf->args->nelts; i++) {
        for (k = 0; k < value[i].len; k++) {
            value[i].data[k] = (char) tolower((unsigned char) value[i].data[k]);
        }
        seen = types->elts;
        for (j = 0; j < types->nelts; j++) {
            if (seen[j].exten.len == value[i].len
                && memcmp(seen[j].exten.data, value[i].data, value[i].len) == 0) {
                if (seen[j].name.len != value[0].len
                    || memcmp(seen[j].name.data, value[0].data, value[0].len)) {
                    rx_conf_log_error(RX_LOG_WARN, cf, 0, "duplicate extension "
                        "\"%s\", content type: \"%s\", previous content type: "
                        "\"%s\"", value[i].data, value[0].data, seen[j].name.data);
                }
                seen[j].name = value[0];
                goto next;
            }
        }
        t = rx_array_push(types);
        if (t == NULL) {
            return RX_CONF_ERROR;
        }
        t->name = value[0];
        t->exten = value[i];
    next:
        continue;
    }
    return RX_CONF_OK;
}

const char *
rx_http_core_types_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = conf;
    rx_conf_t                saved;
    const char              *rv;

    if (clcf->types == RX_CONF_UNSET_PTR || clcf->types == NULL) {
        clcf->types = rx_array_create(cf->pool, 64, sizeof(rx_http_type_t));
        if (clcf->types == NULL) {
            return RX_CONF_ERROR;
        }
    }
    saved = *cf;
    cf->handler = types_line;
    cf->handler_conf = clcf->types;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    return rv;
}

const char *
rx_http_core_set_error_page(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = conf;
    rx_str_t                *value = cf->args->elts, *uri;
    rx_http_err_page_t      *err;
    rx_http_complex_value_t *cv = NULL;
    rx_uint_t                i, n = cf->args->nelts - 1;
    rx_int_t                 overwrite = -1;

    if (clcf->error_pages == RX_CONF_UNSET_PTR || clcf->error_pages == NULL) {
        clcf->error_pages = rx_array_create(cf->pool, 4, sizeof(rx_http_err_page_t));
        if (clcf->error_pages == NULL) {
            return RX_CONF_ERROR;
        }
    }
    uri = &value[n];
    if (value[n - 1].data[0] == '=') {
        overwrite = value[n - 1].len == 1 ? 0
                    : rx_atoi(value[n - 1].data + 1, value[n - 1].len - 1);
        if (overwrite < 0 || (overwrite > 0 && (overwrite < 100 || overwrite > 599))) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\"",
                              value[n - 1].data);
            return RX_CONF_ERROR;
        }
        n--;
    }
    if (n < 2) {
        return "invalid number of arguments";
    }
    if (memchr(uri->data, '$', uri->len)) {
        /* "/err?u=$uri", "$scheme://host$uri": made per request, as in
         * nginx; one compiled value serves every code of the line */
        cv = rx_pcalloc(cf->pool, sizeof(*cv));
        if (cv == NULL || rx_http_compile_complex_value(cf, uri, cv) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    for (i = 1; i < n; i++) {
        rx_int_t code = rx_atoi(value[i].data, value[i].len);

        if (code < 300 || code > 599) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "value \"%s\" must be "
                              "between 300 and 599", value[i].data);
            return RX_CONF_ERROR;
        }
        if (code == 499) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "value \"%s\" must be "
                              "between 300 and 599 and not 499", value[i].data);
            return RX_CONF_ERROR;
        }
        err = rx_array_push(clcf->error_pages);
        if (err == NULL) {
            return RX_CONF_ERROR;
        }
        err->status = (rx_uint_t) code;
        err->overwrite = overwrite;
        err->uri = *uri;
        err->value = cv;
    }
    return RX_CONF_OK;
}

/* error_log inside http, server or location: requests matched there log
 * to these targets instead of the main error log (as in nginx). */
const char *
rx_http_core_set_error_log(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = conf;

    return rx_log_set_log(cf, &clcf->error_log);
}

const char *
rx_http_core_set_internal(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = conf;

    if (clcf->internal != RX_CONF_UNSET) {
        return "is duplicate";
    }
    clcf->internal = 1;
    return RX_CONF_OK;
}
