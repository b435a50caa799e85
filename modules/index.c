/*
 * index.c: the index directive. For a URI ending in '/', the first listed
 * file that exists is served through an internal redirect; each candidate
 * is checked with statx on the worker's ring, one after the other (with
 * open_file_cache on, through the cache instead, as nginx does).
 */
#include <sys/stat.h>
#include "http.h"
#include "http_open_file.h"

typedef struct {
    rx_array_t  *names;            /* rx_str_t; NULL: inherit / default */
} rx_http_index_conf_t;

typedef struct {
    rx_str_t      dir;             /* root + uri, with room for a name */
    size_t        dir_len;
    rx_uint_t     next;            /* candidate being checked */
    bool          checking_dir;
    struct statx  st;
    rx_http_open_file_t of;        /* with open_file_cache */
} rx_http_index_ctx_t;

static const char *set_index(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t index_postconfiguration(rx_conf_t *cf);

static const rx_command_t index_commands[] = {
    { "index", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_1MORE, set_index, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t index_ctx = {
    NULL, index_postconfiguration, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_index_module = {
    "rx_http_index_module", 0, 0, RX_HTTP_MODULE, &index_ctx, index_commands,
    NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(rx_http_index_conf_t));
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_index_conf_t *p = prev, *c = conf;
    rx_str_t             *name;

    if (c->names) {
        return RX_CONF_OK;
    }
    if (p->names) {
        c->names = p->names;
        return RX_CONF_OK;
    }
    c->names = rx_array_create(cf->pool, 1, sizeof(rx_str_t));
    name = c->names ? rx_array_push(c->names) : NULL;
    if (name == NULL) {
        return RX_CONF_ERROR;
    }
    rx_str_set(name, "index.html");
    return RX_CONF_OK;
}

static const char *
set_index(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_index_conf_t *icf = conf;
    rx_str_t             *value = cf->args->elts, *name;
    rx_uint_t             i;

    if (icf->names == NULL) {
        icf->names = rx_array_create(cf->pool, 2, sizeof(rx_str_t));
        if (icf->names == NULL) {
            return RX_CONF_ERROR;
        }
    }
    for (i = 1; i < cf->args->nelts; i++) {
        if (value[i].len == 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "index \"%s\" in \"index\" "
                              "directive is invalid", value[i].data);
            return RX_CONF_ERROR;
        }
        if (value[i].data[0] == '/' && i != cf->args->nelts - 1) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "only the last index in "
                              "\"index\" directive should be absolute");
            return RX_CONF_ERROR;
        }
        if (strchr(value[i].data, '$')) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "variables in \"index\" are "
                              "not supported by ringx yet");
            return RX_CONF_ERROR;
        }
        name = rx_array_push(icf->names);
        if (name == NULL) {
            return RX_CONF_ERROR;
        }
        *name = value[i];
    }
    return RX_CONF_OK;
}

static void checked(rx_http_request_t *r, int err, const char *failed);

static void
index_opened(rx_http_request_t *r, rx_http_open_file_t *of)
{
    checked(r, of->err, of->failed);
}

static void
check(rx_http_request_t *r)
{
    rx_http_index_ctx_t  *ctx = r->ctx;
    rx_http_index_conf_t *icf = rx_http_get_module_loc_conf(r,
                                    rx_http_index_module);
    rx_str_t             *name = (rx_str_t *) icf->names->elts + ctx->next;
    rx_str_t              path;

    path.data = ctx->dir.data;
    path.len = ctx->dir_len;
    if (!ctx->checking_dir) {
        memcpy(ctx->dir.data + ctx->dir_len, name->data, name->len);
        path.len += name->len;
    }
    path.data[path.len] = '\0';
    if (rx_http_open_file_test(r, &path, &ctx->of, index_opened)) {
        return;
    }
    rx_ring_statx(AT_FDCWD, ctx->dir.data, AT_STATX_SYNC_AS_STAT, STATX_TYPE,
                  &ctx->st, rx_http_op_ud(r, RX_OP_STATX));
}

static rx_int_t
redirect_to(rx_http_request_t *r, const rx_str_t *name)
{
    rx_str_t uri;

    if (name->data[0] == '/') {
        uri = *name;
    } else {
        uri.len = r->uri.len + name->len;
        uri.data = rx_pnalloc(r->pool, uri.len + 1);
        if (uri.data == NULL) {
            return RX_ERROR;
        }
        memcpy(uri.data, r->uri.data, r->uri.len);
        memcpy(uri.data + r->uri.len, name->data, name->len);
        uri.data[uri.len] = '\0';
    }
    r->op_handler = NULL;
    r->ctx = NULL;
    return rx_http_internal_redirect(r, &uri, r->args.data ? &r->args : NULL);
}

static void
index_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    checked(r, cqe->res < 0 ? -cqe->res : 0, "statx()");
}

/* A candidate's test came back: err 0 (it is there) or an errno from the
 * call named failed. */
static void
checked(rx_http_request_t *r, int err, const char *failed)
{
    rx_http_index_ctx_t  *ctx = r->ctx;
    rx_http_index_conf_t *icf = rx_http_get_module_loc_conf(r,
                                    rx_http_index_module);
    rx_str_t             *names = icf->names->elts;

    if (ctx->checking_dir) {
        /* nothing to serve: is the directory there at all? */
        r->op_handler = NULL;
        if (err == ENOENT || err == ENOTDIR) {
            rx_http_request_log_error(r, RX_LOG_ERR, err, "\"%s\" is not found",
                                      ctx->dir.data);
            rx_http_finalize_request(r, RX_HTTP_NOT_FOUND);
            return;
        }
        rx_http_content_next(r);
        return;
    }
    if (err == 0 || names[ctx->next].data[0] == '/') {
        redirect_to(r, &names[ctx->next]);
        return;
    }
    if (err != ENOENT && err != ENOTDIR) {
        rx_http_request_log_error(r, RX_LOG_CRIT, err, "%s \"%s\" failed",
                                  failed, ctx->dir.data);
        rx_http_finalize_request(r, err == EACCES ? RX_HTTP_FORBIDDEN
                                                  : RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    if (++ctx->next == icf->names->nelts) {
        ctx->checking_dir = true;
    }
    check(r);
}

static rx_int_t
index_handler(rx_http_request_t *r)
{
    rx_http_index_conf_t *icf = rx_http_get_module_loc_conf(r,
                                    rx_http_index_module);
    rx_http_index_ctx_t  *ctx;
    rx_str_t             *names = icf->names->elts;
    size_t                longest = 0;
    rx_uint_t             i;

    if (r->uri.len == 0 || r->uri.data[r->uri.len - 1] != '/') {
        return RX_DECLINED;
    }
    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD | RX_HTTP_POST))) {
        return RX_DECLINED;
    }
    for (i = 0; i < icf->names->nelts; i++) {
        longest = rx_max(longest, names[i].len);
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL || rx_http_map_uri_to_path(r, &ctx->dir, longest + 1) != RX_OK) {
        return RX_ERROR;
    }
    ctx->dir_len = ctx->dir.len;
    r->ctx = ctx;
    r->op_handler = index_op;
    check(r);
    return RX_AGAIN;
}

static rx_int_t
index_postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_CONTENT_PHASE, index_handler);
}
