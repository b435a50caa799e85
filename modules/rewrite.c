/*
 * rewrite.c: the rewrite module's script: directives that run, in the
 * order written, in the server-rewrite phase (server level) and the
 * rewrite phase (location level). For now the script knows `return`; the
 * other steps (rewrite, set, if, break) extend the same step list.
 */
#include "http.h"
#include "http_script.h"

typedef enum {
    RX_REWRITE_RETURN = 1
} rx_http_rewrite_step_type_t;

typedef struct {
    rx_http_rewrite_step_type_t type;
    rx_uint_t                   status;
    rx_http_complex_value_t     text;       /* body, or URL for redirects */
    bool                        has_text;
} rx_http_rewrite_step_t;

typedef struct {
    rx_array_t  *steps;         /* rx_http_rewrite_step_t, in config order */
} rx_http_rewrite_conf_t;

static const char *set_return(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t postconfiguration(rx_conf_t *cf);

static const rx_command_t rewrite_commands[] = {
    { "return", RX_HTTP_SRV_CONF | RX_HTTP_SIF_CONF | RX_HTTP_LOC_CONF
      | RX_HTTP_LIF_CONF | RX_CONF_TAKE12, set_return,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t rewrite_ctx = {
    NULL, postconfiguration, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_rewrite_module = {
    "rx_http_rewrite_module", 0, 0, RX_HTTP_MODULE, &rewrite_ctx,
    rewrite_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(rx_http_rewrite_conf_t));
}

/* Steps are not inherited: a location runs only its own script (nginx). */
static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    return RX_CONF_OK;
}

static bool
is_redirect(rx_uint_t status)
{
    return status == 301 || status == 302 || status == 303 || status == 307
           || status == 308;
}

static const char *
set_return(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_rewrite_conf_t *rcf = conf;
    rx_str_t               *value = cf->args->elts;
    rx_http_rewrite_step_t *step;
    rx_int_t                status;

    if (rcf->steps == NULL) {
        rcf->steps = rx_array_create(cf->pool, 2, sizeof(rx_http_rewrite_step_t));
        if (rcf->steps == NULL) {
            return RX_CONF_ERROR;
        }
    }
    step = rx_array_push(rcf->steps);
    if (step == NULL) {
        return RX_CONF_ERROR;
    }
    memset(step, 0, sizeof(*step));
    step->type = RX_REWRITE_RETURN;

    status = rx_atoi(value[1].data, value[1].len);
    if (status == -1) {
        /* "return URL": a 302 to an absolute URL */
        if (cf->args->nelts == 2
            && (strncmp(value[1].data, "http://", 7) == 0
                || strncmp(value[1].data, "https://", 8) == 0
                || strncmp(value[1].data, "$scheme", 7) == 0)) {
            step->status = RX_HTTP_MOVED_TEMPORARILY;
            step->has_text = true;
            return rx_http_compile_complex_value(cf, &value[1], &step->text)
                   == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
        }
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid return code \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    if (status > 999) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid return code \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    step->status = (rx_uint_t) status;
    if (cf->args->nelts == 3) {
        step->has_text = true;
        return rx_http_compile_complex_value(cf, &value[2], &step->text)
               == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static rx_int_t
do_return(rx_http_request_t *r, const rx_http_rewrite_step_t *step)
{
    rx_str_t                 text;

    if (!r->body_read) {
        rx_int_t rc = rx_http_discard_request_body(r);
        if (rc != RX_OK) {
            return rc;
        }
    }
    if (!step->has_text) {
        if (step->status >= 300 || step->status == RX_HTTP_NO_CONTENT) {
            return (rx_int_t) step->status;
        }
        return rx_http_send_response(r, step->status, NULL, NULL);
    }
    if (rx_http_complex_value(r, &step->text, &text) != RX_OK) {
        return RX_ERROR;
    }
    if (is_redirect(step->status)) {
        r->headers_out.location = rx_http_add_header_out(r, "Location", &text);
        if (r->headers_out.location == NULL) {
            return RX_ERROR;
        }
        return (rx_int_t) step->status;
    }
    rx_http_set_content_type(r);       /* by extension, as nginx */
    return rx_http_send_response(r, step->status, NULL, &text);
}

static rx_int_t
run_script(rx_http_request_t *r, void **confs)
{
    rx_http_rewrite_conf_t *rcf = confs[rx_http_rewrite_module.ctx_index];
    rx_http_rewrite_step_t *step;
    rx_uint_t               i;
    rx_int_t                rc;

    if (rcf->steps == NULL) {
        return RX_DECLINED;
    }
    step = rcf->steps->elts;
    for (i = 0; i < rcf->steps->nelts; i++) {
        switch (step[i].type) {
        case RX_REWRITE_RETURN:
            rc = do_return(r, &step[i]);
            return rc == RX_OK ? RX_DONE : rc;
        }
    }
    return RX_DECLINED;
}

static rx_int_t
server_rewrite_handler(rx_http_request_t *r)
{
    rx_http_core_srv_conf_t *cscf = rx_http_get_module_srv_conf(r,
                                       rx_http_core_module);
    return run_script(r, cscf->ctx->loc_conf);
}

static rx_int_t
rewrite_handler(rx_http_request_t *r)
{
    return run_script(r, r->loc_conf);
}

static rx_int_t
postconfiguration(rx_conf_t *cf)
{
    if (rx_http_add_phase_handler(cf, RX_HTTP_SERVER_REWRITE_PHASE,
                                  server_rewrite_handler) != RX_OK
        || rx_http_add_phase_handler(cf, RX_HTTP_REWRITE_PHASE,
                                     rewrite_handler) != RX_OK) {
        return RX_ERROR;
    }
    return RX_OK;
}
