/*
 * auth_request.c: auth_request and auth_request_set, nginx's
 * ngx_http_auth_request_module: an access-phase handler that asks a
 * subrequest (http/http_subrequest.c) whether the request may go on. 2xx
 * allows; 401 (with the subrequest's WWW-Authenticate) and 403 refuse;
 * anything else, a failed subrequest included, is 500. auth_request_set
 * takes values from the subrequest's response (its $upstream_http_*)
 * into the request's variables once the subrequest has ended.
 */
#include "http.h"
#include "http_script.h"
#include "http_variables.h"

typedef struct {
    rx_uint_t                index;      /* of the variable set */
    rx_http_complex_value_t  value;      /* evaluated in the subrequest */
} rx_http_auth_request_var_t;

typedef struct {
    rx_str_t     uri;        /* data NULL: unset; len 0: off */
    rx_str_t     args;       /* what followed a '?' in the URI */
    rx_array_t  *vars;       /* rx_http_auth_request_var_t; UNSET_PTR, NULL */
} rx_http_auth_request_conf_t;

/* One request's question (r->auth_request_ctx). */
typedef struct {
    rx_http_request_t  *r;
    rx_http_request_t  *sr;
    rx_uint_t           status;   /* the subrequest's */
    bool                done;
} rx_http_auth_request_ctx_t;

static const char *set_auth_request(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_auth_request_set(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t auth_request_init(rx_conf_t *cf);

static const rx_command_t auth_request_commands[] = {
    { "auth_request", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, set_auth_request, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "auth_request_set", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE2, set_auth_request_set,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t auth_request_ctx = {
    NULL, auth_request_init, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_auth_request_module = {
    "rx_http_auth_request_module", 0, 0, RX_HTTP_MODULE, &auth_request_ctx,
    auth_request_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_auth_request_conf_t *arcf = rx_pcalloc(cf->pool, sizeof(*arcf));

    if (arcf) {
        arcf->vars = RX_CONF_UNSET_PTR;     /* uri: { 0, NULL } unset */
    }
    return arcf;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_auth_request_conf_t *p = prev, *c = conf;

    if (c->uri.data == NULL) {
        c->uri = p->uri;
        c->args = p->args;
    }
    if (c->uri.data == NULL) {
        rx_str_set(&c->uri, "");
    }
    /* as nginx: a level with auth_request_set lines replaces, not adds */
    rx_conf_merge_ptr(c->vars, p->vars, NULL);
    return RX_CONF_OK;
}

/* auth_request uri | off. A '?' splits off arguments (nginx would look
 * for a location named with the '?'). */
static const char *
set_auth_request(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_auth_request_conf_t *arcf = conf;
    rx_str_t                    *value = cf->args->elts;
    char                        *q;

    if (arcf->uri.data != NULL) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "off")) {
        rx_str_set(&arcf->uri, "");
        return RX_CONF_OK;
    }
    if (value[1].len == 0 || value[1].data[0] != '/') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid URI \"%s\" in "
            "\"auth_request\": it must start with \"/\"", value[1].data);
        return RX_CONF_ERROR;
    }
    arcf->uri = value[1];
    q = memchr(value[1].data, '?', value[1].len);
    if (q) {
        arcf->uri.len = (size_t) (q - value[1].data);
        arcf->args.data = q + 1;
        arcf->args.len = value[1].len - arcf->uri.len - 1;
    }
    return RX_CONF_OK;
}

/* Until the subrequest sets it, the variable is absent ("-" in logs). */
static rx_int_t
unset_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    v->not_found = 1;
    return RX_OK;
}

/* auth_request_set $variable value */
static const char *
set_auth_request_set(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_auth_request_conf_t *arcf = conf;
    rx_str_t                    *value = cf->args->elts, name;
    rx_http_auth_request_var_t  *av;
    rx_http_variable_t          *v;
    rx_int_t                     index;

    if (value[1].len < 2 || value[1].data[0] != '$') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    if (arcf->vars == RX_CONF_UNSET_PTR) {
        arcf->vars = rx_array_create(cf->pool, 1, sizeof(*av));
        if (arcf->vars == NULL) {
            return RX_CONF_ERROR;
        }
    }
    av = rx_array_push(arcf->vars);
    if (av == NULL) {
        return RX_CONF_ERROR;
    }
    name.data = value[1].data + 1;
    name.len = value[1].len - 1;
    v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_CHANGEABLE);
    if (v == NULL) {
        return RX_CONF_ERROR;
    }
    if (v->get == NULL) {
        v->get = unset_variable;
    }
    index = rx_http_get_variable_index(cf, &name);
    if (index == RX_ERROR) {
        return RX_CONF_ERROR;
    }
    av->index = (rx_uint_t) index;
    return rx_http_compile_complex_value(cf, &value[2], &av->value) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* The subrequest has ended: the access phase goes on at our handler. */
static void
auth_done(rx_http_request_t *sr, void *data)
{
    rx_http_auth_request_ctx_t *ctx = data;

    ctx->done = true;
    ctx->status = sr->headers_out.status;
    rx_http_access_resume(ctx->r);
}

/* auth_request_set: each value from the subrequest's point of view (its
 * $upstream_http_*), into the request's variables, where they stay
 * through internal redirects. */
static rx_int_t
set_variables(rx_http_request_t *r, rx_http_auth_request_conf_t *arcf,
    rx_http_auth_request_ctx_t *ctx)
{
    rx_http_auth_request_var_t *av;
    rx_str_t                    val;
    rx_uint_t                   i;

    if (arcf->vars == NULL) {
        return RX_OK;
    }
    av = arcf->vars->elts;
    for (i = 0; i < arcf->vars->nelts; i++) {
        if (rx_http_complex_value(ctx->sr, &av[i].value, &val) != RX_OK
            || rx_http_set_indexed_variable(r, av[i].index, &val) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* 401: the subrequest's challenges go to the client with it. */
static rx_int_t
copy_challenges(rx_http_request_t *r, rx_http_request_t *sr)
{
    rx_table_elt_t *h = sr->headers_out.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < sr->headers_out.headers.nelts; i++) {
        if (!h[i].deleted && rx_str_caseeq(&h[i].key, "WWW-Authenticate")
            && rx_http_add_header_out(r, "WWW-Authenticate", &h[i].value)
               == NULL) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* The verdict, once the subrequest has ended. */
static rx_int_t
answer(rx_http_request_t *r, rx_http_auth_request_conf_t *arcf,
    rx_http_auth_request_ctx_t *ctx)
{
    if (set_variables(r, arcf, ctx) != RX_OK) {
        return RX_ERROR;
    }
    if (ctx->status == RX_HTTP_FORBIDDEN) {
        return RX_HTTP_FORBIDDEN;
    }
    if (ctx->status == RX_HTTP_UNAUTHORIZED) {
        return copy_challenges(r, ctx->sr) == RX_OK ? RX_HTTP_UNAUTHORIZED
                                                     : RX_ERROR;
    }
    if (ctx->status >= 200 && ctx->status < 300) {
        return RX_OK;
    }
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "auth request unexpected "
                              "status: %lu", (unsigned long) ctx->status);
    return RX_HTTP_INTERNAL_SERVER_ERROR;
}

static rx_int_t
auth_request_handler(rx_http_request_t *r)
{
    rx_http_auth_request_conf_t *arcf = rx_http_get_module_loc_conf(r,
                                           rx_http_auth_request_module);
    rx_http_auth_request_ctx_t  *ctx = r->auth_request_ctx;

    if (arcf->uri.len == 0) {
        return RX_DECLINED;
    }
    if (ctx != NULL) {
        return ctx->done ? answer(r, arcf, ctx) : RX_AGAIN;
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_ERROR;
    }
    ctx->r = r;
    ctx->sr = rx_http_subrequest(r, &arcf->uri,
                                 arcf->args.data ? &arcf->args : NULL,
                                 auth_done, ctx);
    if (ctx->sr == NULL) {
        return RX_ERROR;
    }
    r->auth_request_ctx = ctx;
    return RX_AGAIN;
}

static rx_int_t
auth_request_init(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_ACCESS_PHASE,
                                     auth_request_handler);
}
