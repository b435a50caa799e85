/*
 * mirror.c: mirror and mirror_request_body, nginx's
 * ngx_http_mirror_module: in the precontent phase, the main request
 * starts one background subrequest (http/http_background.c) per mirror
 * URI, with its method, arguments and (mirror_request_body on, the
 * default) its body, read whole first; their responses are dropped, the
 * main response goes on unchanged, and the request's end (access log,
 * the connection's next request) waits for them.
 */
#include "http.h"

typedef struct {
    rx_array_t  *mirror;         /* rx_str_t URIs; UNSET_PTR; NULL: off */
    rx_int_t     request_body;   /* mirror_request_body, a flag */
} rx_http_mirror_conf_t;

/* One main request's mirrors (r->mirror_ctx): the handler's answer once
 * they are started, RX_AGAIN while the body is being read. */
typedef struct {
    rx_int_t     status;
} rx_http_mirror_ctx_t;

static const char *set_mirror(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t mirror_init(rx_conf_t *cf);

static const rx_command_t mirror_commands[] = {
    { "mirror", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, set_mirror, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "mirror_request_body", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_mirror_conf_t, request_body),
      NULL },
    rx_null_command
};

static const rx_http_module_t mirror_module_ctx = {
    NULL, mirror_init, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_mirror_module = {
    "rx_http_mirror_module", 0, 0, RX_HTTP_MODULE, &mirror_module_ctx,
    mirror_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_mirror_conf_t *mcf = rx_pcalloc(cf->pool, sizeof(*mcf));

    if (mcf) {
        mcf->mirror = RX_CONF_UNSET_PTR;
        mcf->request_body = RX_CONF_UNSET;
    }
    return mcf;
}

/* As nginx: a level with mirror lines replaces its parent's, not adds. */
static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_mirror_conf_t *p = prev, *c = conf;

    rx_conf_merge_ptr(c->mirror, p->mirror, NULL);
    rx_conf_merge_value(c->request_body, p->request_body, 1);
    return RX_CONF_OK;
}

/* mirror uri | off: several URIs per level; "off" alone (nginx says "is
 * duplicate" for off with a URI at the same level). */
static const char *
set_mirror(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_mirror_conf_t *mcf = conf;
    rx_str_t              *value = cf->args->elts, *uri;

    if (rx_str_eq(&value[1], "off")) {
        if (mcf->mirror != RX_CONF_UNSET_PTR) {
            return "is duplicate";
        }
        mcf->mirror = NULL;
        return RX_CONF_OK;
    }
    if (mcf->mirror == NULL) {
        return "is duplicate";
    }
    if (value[1].len == 0 || value[1].data[0] != '/') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid URI \"%s\" in "
            "\"mirror\": it must start with \"/\"", value[1].data);
        return RX_CONF_ERROR;
    }
    if (mcf->mirror == RX_CONF_UNSET_PTR) {
        mcf->mirror = rx_array_create(cf->pool, 2, sizeof(rx_str_t));
        if (mcf->mirror == NULL) {
            return RX_CONF_ERROR;
        }
    }
    uri = rx_array_push(mcf->mirror);
    if (uri == NULL) {
        return RX_CONF_ERROR;
    }
    *uri = value[1];
    return RX_CONF_OK;
}

/* A background subrequest per URI, with the main request's method and
 * arguments (nginx). RX_DECLINED: the phases go on; or 500. */
static rx_int_t
start_mirrors(rx_http_request_t *r, rx_http_mirror_conf_t *mcf)
{
    rx_str_t          *uri = mcf->mirror->elts;
    rx_http_request_t *sr;
    rx_uint_t          i;

    for (i = 0; i < mcf->mirror->nelts; i++) {
        sr = rx_http_subrequest_background(r, &uri[i],
                 r->args.data ? &r->args : NULL, mcf->request_body != 0);
        if (sr == NULL) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        sr->method = r->method;
        sr->method_name = r->method_name;
    }
    return RX_DECLINED;
}

/* The whole body is in (kept: memory or temporary file): the mirrors
 * start and the main request goes on to its content phase. */
static void
body_read(rx_http_request_t *r)
{
    rx_http_mirror_conf_t *mcf = rx_http_get_module_loc_conf(r,
                                    rx_http_mirror_module);
    rx_http_mirror_ctx_t  *ctx = r->mirror_ctx;

    ctx->status = start_mirrors(r, mcf);
    if (ctx->status != RX_DECLINED) {
        rx_http_finalize_request(r, ctx->status);
        return;
    }
    rx_http_phase_next(r);     /* mirror is the last precontent handler */
}

static rx_int_t
mirror_handler(rx_http_request_t *r)
{
    rx_http_mirror_conf_t *mcf = rx_http_get_module_loc_conf(r,
                                    rx_http_mirror_module);
    rx_http_mirror_ctx_t  *ctx = r->mirror_ctx;
    rx_http_body_reader_t  reader = { body_read, NULL, true, false };
    rx_int_t               rc;

    if (r != r->main || mcf->mirror == NULL) {
        return RX_DECLINED;
    }
    if (ctx != NULL) {
        return ctx->status;   /* once per request, whatever redirects */
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_ERROR;
    }
    r->mirror_ctx = ctx;
    if (!mcf->request_body || r->body_read
        || (r->headers_in.content_length_n <= 0 && !r->headers_in.chunked)) {
        ctx->status = start_mirrors(r, mcf);
        return ctx->status;
    }
    ctx->status = RX_AGAIN;
    rc = rx_http_read_client_request_body(r, &reader);
    return rc == RX_OK ? RX_AGAIN : rc;
}

static rx_int_t
mirror_init(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_PRECONTENT_PHASE,
                                     mirror_handler);
}
