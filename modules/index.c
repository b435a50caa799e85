/*
 * index.c: the index directive. For a URI ending in '/', the first listed
 * file that exists is served through an internal redirect; each candidate
 * is checked with statx on the worker's ring, one after the other (with
 * open_file_cache on, through the cache instead, as nginx does). A name
 * may hold variables ("index $lang.html"): it is made for each request.
 */
#include <sys/stat.h>
#include "http.h"
#include "http_open_file.h"
#include "http_script.h"

typedef struct {
    rx_array_t  *names;            /* rx_http_complex_value_t; NULL:
                                      inherit / default */
} rx_http_index_conf_t;

typedef struct {
    rx_str_t      dir;             /* root + uri, with room for a name */
    size_t        dir_len;
    rx_str_t     *names;           /* this request's candidates */
    rx_uint_t     nnames;
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
    rx_http_complex_value_t *name;
    static const rx_str_t    index_html = rx_string("index.html");

    if (c->names) {
        return RX_CONF_OK;
    }
    if (p->names) {
        c->names = p->names;
        return RX_CONF_OK;
    }
    c->names = rx_array_create(cf->pool, 1, sizeof(rx_http_complex_value_t));
    name = c->names ? rx_array_push(c->names) : NULL;
    if (name == NULL
        || rx_http_compile_complex_value(cf, &index_html, name) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static const char *
set_index(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_index_conf_t    *icf = conf;
    rx_str_t                *value = cf->args->elts;
    rx_http_complex_value_t *name;
    rx_uint_t                i;

    rx_unused(cmd);
    if (icf->names == NULL) {
        icf->names = rx_array_create(cf->pool, 2,
                                     sizeof(rx_http_complex_value_t));
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
        name = rx_array_push(icf->names);
        if (name == NULL
            || rx_http_compile_complex_value(cf, &value[i], name) != RX_OK) {
            return RX_CONF_ERROR;
        }
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
    rx_str_t             *name = &ctx->names[ctx->next];
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
    rx_str_t             *names = ctx->names;

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
    if (err == 0 || (names[ctx->next].len && names[ctx->next].data[0] == '/')) {
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
    if (++ctx->next == ctx->nnames) {
        ctx->checking_dir = true;
    }
    check(r);
}

/* A name made from variables that would leave the directory through a
 * ".." segment, or hold a NUL: logged, and no candidate. */
static bool
unsafe_name(rx_http_request_t *r, const rx_str_t *name)
{
    const char *p = name->data, *end = name->data + name->len;

    if (memchr(p, '\0', name->len) != NULL) {
        goto unsafe;
    }
    for (; p + 1 < end; p++) {
        if (p[0] == '.' && p[1] == '.' && (p == name->data || p[-1] == '/')
            && (p + 2 == end || p[2] == '/')) {
            goto unsafe;
        }
    }
    return false;

unsafe:
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "index \"%.*s\" is unsafe: "
                              "skipped", (int) rx_min(name->len, 256),
                              name->data);
    return true;
}

static rx_int_t
index_handler(rx_http_request_t *r)
{
    rx_http_index_conf_t *icf = rx_http_get_module_loc_conf(r,
                                    rx_http_index_module);
    rx_http_index_ctx_t     *ctx;
    rx_http_complex_value_t *cv = icf->names->elts;
    size_t                   longest = 0;
    rx_uint_t                i, n;

    if (r->uri.len == 0 || r->uri.data[r->uri.len - 1] != '/') {
        return RX_DECLINED;
    }
    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD | RX_HTTP_POST))) {
        return RX_DECLINED;
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_ERROR;
    }
    ctx->names = rx_palloc(r->pool, icf->names->nelts * sizeof(rx_str_t));
    if (ctx->names == NULL) {
        return RX_ERROR;
    }
    /* a name a variable left empty is no candidate (it would name the
     * directory itself) */
    for (i = 0, n = 0; i < icf->names->nelts; i++) {
        if (rx_http_complex_value(r, &cv[i], &ctx->names[n]) != RX_OK) {
            return RX_ERROR;
        }
        if (ctx->names[n].len
            && (rx_http_complex_value_is_const(&cv[i])
                || !unsafe_name(r, &ctx->names[n]))) {
            longest = rx_max(longest, ctx->names[n].len);
            n++;
        }
    }
    ctx->nnames = n;
    ctx->checking_dir = n == 0;
    if (rx_http_map_uri_to_path(r, &ctx->dir, longest + 1) != RX_OK) {
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
