/*
 * rewrite.c: the rewrite module (nginx's ngx_http_rewrite_module): its
 * directives (rewrite, return, set, break, if, rewrite_log,
 * uninitialized_variable_warn), its confs and its two phase handlers. Each
 * directive appends a step to the script of its server or location
 * (rewrite.h); the script runs, in the order written, in the server-rewrite
 * phase (server level) and the rewrite phase (location level). The `if`
 * block lives in rewrite_if.c, the runtime in rewrite_run.c.
 */
#include "rewrite.h"
#include "http_variables.h"

static const char *set_rewrite(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_return(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_break(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_set(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t postconfiguration(rx_conf_t *cf);

/* where the script directives are allowed: nginx's contexts */
#define SCRIPT_CONF  (RX_HTTP_SRV_CONF | RX_HTTP_SIF_CONF | RX_HTTP_LOC_CONF \
                      | RX_HTTP_LIF_CONF)

static const rx_command_t rewrite_commands[] = {
    { "rewrite", SCRIPT_CONF | RX_CONF_TAKE23, set_rewrite,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "return", SCRIPT_CONF | RX_CONF_TAKE12, set_return,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "break", SCRIPT_CONF | RX_CONF_NOARGS, set_break,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "if", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_BLOCK
      | RX_CONF_1MORE, rx_http_rewrite_if, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "set", SCRIPT_CONF | RX_CONF_TAKE2, set_set,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "rewrite_log", RX_HTTP_MAIN_CONF | SCRIPT_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_rewrite_conf_t, log), NULL },
    { "uninitialized_variable_warn", RX_HTTP_MAIN_CONF | SCRIPT_CONF
      | RX_CONF_FLAG, rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_rewrite_conf_t, uninitialized_variable_warn), NULL },
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
    rx_http_rewrite_conf_t *rcf = rx_pcalloc(cf->pool, sizeof(*rcf));

    if (rcf) {
        rcf->log = RX_CONF_UNSET;
        rcf->uninitialized_variable_warn = RX_CONF_UNSET;
    }
    return rcf;
}

/* Steps are not inherited: a level runs only its own script (nginx). */
static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_rewrite_conf_t *p = prev, *c = conf;

    rx_conf_merge_value(c->log, p->log, 0);
    rx_conf_merge_value(c->uninitialized_variable_warn,
                        p->uninitialized_variable_warn, 1);
    return RX_CONF_OK;
}

rx_http_rewrite_step_t *
rx_http_rewrite_add_step(rx_conf_t *cf, rx_http_rewrite_conf_t *rcf)
{
    rx_http_rewrite_step_t *step;

    if (rcf->steps == NULL) {
        rcf->steps = rx_array_create(cf->pool, 4, sizeof(rx_http_rewrite_step_t));
        if (rcf->steps == NULL) {
            return NULL;
        }
    }
    step = rx_array_push(rcf->steps);
    if (step) {
        memset(step, 0, sizeof(*step));
    }
    return step;
}

static bool
is_absolute_url(const rx_str_t *s)
{
    return strncmp(s->data, "http://", 7) == 0
           || strncmp(s->data, "https://", 8) == 0
           || strncmp(s->data, "$scheme", 7) == 0;
}

/*
 * rewrite regex replacement [last|break|redirect|permanent]: nginx's
 * rules. A replacement starting with http://, https:// or $scheme is a 302
 * redirect whatever the flag (permanent makes it 301). A '?' at the end is
 * dropped and drops the request's arguments; otherwise they are appended
 * (after the replacement's own, if any). Outside redirects the first '?'
 * splits the new URI from its new arguments.
 */
static const char *
set_rewrite(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_rewrite_conf_t  *rcf = conf;
    rx_str_t                *value = cf->args->elts, repl, args;
    rx_http_rewrite_step_t  *step;
    rx_http_rewrite_regex_t *rw;
    char                    *q;

    if (value[2].len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "empty replacement");
        return RX_CONF_ERROR;
    }
    step = rx_http_rewrite_add_step(cf, rcf);
    if (step == NULL) {
        return RX_CONF_ERROR;
    }
    step->type = RX_REWRITE_REWRITE;
    rw = &step->u.rewrite;
    if (rx_http_regex_compile(cf, &value[1], false, &rw->re, &rw->names)
        != RX_OK) {
        return RX_CONF_ERROR;
    }

    repl = value[2];
    rw->add_args = repl.data[repl.len - 1] != '?';
    if (!rw->add_args) {
        repl.len--;
    }
    if (is_absolute_url(&repl)) {
        rw->flag = RX_REWRITE_FLAG_REDIRECT;
        rw->status = RX_HTTP_MOVED_TEMPORARILY;
    }
    if (cf->args->nelts == 4) {
        if (rx_str_eq(&value[3], "last")) {
            rw->flag = rw->flag ? rw->flag : RX_REWRITE_FLAG_LAST;
        } else if (rx_str_eq(&value[3], "break")) {
            rw->flag = rw->flag ? rw->flag : RX_REWRITE_FLAG_BREAK;
        } else if (rx_str_eq(&value[3], "redirect")) {
            rw->flag = RX_REWRITE_FLAG_REDIRECT;
            rw->status = RX_HTTP_MOVED_TEMPORARILY;
        } else if (rx_str_eq(&value[3], "permanent")) {
            rw->flag = RX_REWRITE_FLAG_REDIRECT;
            rw->status = RX_HTTP_MOVED_PERMANENTLY;
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[3].data);
            return RX_CONF_ERROR;
        }
    }

    q = memchr(repl.data, '?', repl.len);
    rw->has_args = q != NULL;
    if (q && rw->flag != RX_REWRITE_FLAG_REDIRECT) {
        /* nginx's compile_args: the new URI, then the new arguments */
        args.data = q + 1;
        args.len = (size_t) (repl.data + repl.len - args.data);
        repl.len = (size_t) (q - repl.data);
        if (rx_http_compile_complex_value(cf, &args, &rw->args) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    return rx_http_compile_complex_value(cf, &repl, &rw->uri) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

static const char *
set_return(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_rewrite_conf_t   *rcf = conf;
    rx_str_t                 *value = cf->args->elts;
    rx_http_rewrite_step_t   *step;
    rx_http_rewrite_return_t *ret;
    rx_int_t                  status;

    step = rx_http_rewrite_add_step(cf, rcf);
    if (step == NULL) {
        return RX_CONF_ERROR;
    }
    step->type = RX_REWRITE_RETURN;
    ret = &step->u.ret;

    status = rx_atoi(value[1].data, value[1].len);
    if (status == -1) {
        /* "return URL": a 302 to an absolute URL */
        if (cf->args->nelts == 2 && is_absolute_url(&value[1])) {
            ret->status = RX_HTTP_MOVED_TEMPORARILY;
            ret->has_text = true;
            return rx_http_compile_complex_value(cf, &value[1], &ret->text)
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
    ret->status = (rx_uint_t) status;
    if (cf->args->nelts == 3) {
        ret->has_text = true;
        return rx_http_compile_complex_value(cf, &value[2], &ret->text)
               == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static const char *
set_break(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_rewrite_step_t *step = rx_http_rewrite_add_step(cf, conf);

    if (step == NULL) {
        return RX_CONF_ERROR;
    }
    step->type = RX_REWRITE_BREAK;
    return RX_CONF_OK;
}

/*
 * The getter of a variable that only `set` gives values to: read before
 * any `set` ran, it is empty, with nginx's warning unless
 * uninitialized_variable_warn is off. The value is cached like a set one,
 * so the warning comes once per variable and request. data: the name.
 */
static rx_int_t
uninitialized_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_rewrite_conf_t *rcf = rx_http_get_module_loc_conf(r,
                                     rx_http_rewrite_module);
    const rx_str_t         *name = (const rx_str_t *) data;

    if (rcf->uninitialized_variable_warn) {
        rx_http_request_log_error(r, RX_LOG_WARN, 0, "using uninitialized "
                                  "\"%.*s\" variable", (int) name->len,
                                  name->data);
    }
    v->len = 0;
    v->data = (char *) "";
    return RX_OK;
}

/* set $name value: a new name becomes a changeable variable. */
static const char *
set_set(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t               *value = cf->args->elts, name;
    rx_http_rewrite_step_t *step;
    rx_http_variable_t     *v;
    rx_int_t                index;

    if (value[1].data[0] != '$') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    name.data = value[1].data + 1;
    name.len = value[1].len - 1;
    v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_CHANGEABLE
                                        | RX_HTTP_VAR_WEAK);
    if (v == NULL) {
        return RX_CONF_ERROR;
    }
    index = rx_http_get_variable_index(cf, &name);
    if (index == RX_ERROR) {
        return RX_CONF_ERROR;
    }
    if (v->get == NULL) {
        v->get = uninitialized_variable;
        v->data = (uintptr_t) &v->name;
    }
    step = rx_http_rewrite_add_step(cf, conf);
    if (step == NULL) {
        return RX_CONF_ERROR;
    }
    step->type = RX_REWRITE_SET;
    step->u.set.index = (rx_uint_t) index;
    return rx_http_compile_complex_value(cf, &value[2], &step->u.set.value)
           == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

static void **
server_loc_confs(rx_http_request_t *r)
{
    rx_http_core_srv_conf_t *cscf = rx_http_get_module_srv_conf(r,
                                       rx_http_core_module);
    return cscf->ctx->loc_conf;
}

static rx_int_t
run(rx_http_request_t *r, void **confs)
{
    rx_http_rewrite_conf_t *rcf = confs[rx_http_rewrite_module.ctx_index];

    if (rcf->steps == NULL) {
        return RX_DECLINED;
    }
    return rx_http_rewrite_run(r, rcf);
}

static rx_int_t
server_rewrite_handler(rx_http_request_t *r)
{
    return run(r, server_loc_confs(r));
}

static rx_int_t
rewrite_handler(rx_http_request_t *r)
{
    /* no location matched: the server's script already ran (nginx) */
    if (r->loc_conf == server_loc_confs(r)) {
        return RX_DECLINED;
    }
    return run(r, r->loc_conf);
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
