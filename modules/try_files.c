/*
 * try_files.c: `try_files file ... uri | =code;` in the precontent phase.
 * Each candidate (a complex value, so $uri and friends work) is mapped to a
 * path through the location's root or alias and checked with statx on the
 * worker's ring, one after the other (with open_file_cache on, through
 * the cache instead, as nginx does); a name ending in '/' must be a
 * directory. The first that exists becomes the request's URI (without
 * a directory's '/', as in nginx) and the
 * request goes on to the content phase in the same location; if none does,
 * the last parameter decides: an internal redirect, a named location, or
 * a status.
 */
#include <sys/stat.h>
#include "http.h"
#include "http_script.h"
#include "http_open_file.h"

typedef struct {
    rx_http_complex_value_t  *values;     /* every parameter */
    bool                     *dirs;       /* written with a '/' at the end:
                                             a directory (the value has
                                             the name without it) */
    rx_uint_t                 n;
    rx_int_t                  code;       /* "=404" as the last: 404, else 0 */
} rx_http_try_files_conf_t;

typedef struct {
    rx_uint_t     next;
    rx_str_t      candidate;              /* the URI being tried */
    rx_str_t      path;
    struct statx  st;
    rx_http_open_file_t  of;              /* with open_file_cache */
} rx_http_try_files_ctx_t;

static const char *set_try_files(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t try_files_postconfiguration(rx_conf_t *cf);

static const rx_command_t try_files_commands[] = {
    { "try_files", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_2MORE,
      set_try_files, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t try_files_ctx = {
    NULL, try_files_postconfiguration, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_try_files_module = {
    "rx_http_try_files_module", 0, 0, RX_HTTP_MODULE, &try_files_ctx,
    try_files_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(rx_http_try_files_conf_t));
}

/* try_files is not inherited from server to location in nginx either:
 * a location without it has none. */
static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    return RX_CONF_OK;
}

static const char *
set_try_files(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_try_files_conf_t *tcf = conf;
    rx_str_t                 *value = cf->args->elts;
    rx_str_t                  name;
    rx_uint_t                 i, n = cf->args->nelts - 1;

    if (tcf->values) {
        return "is duplicate";
    }
    tcf->values = rx_pcalloc(cf->pool, n * sizeof(rx_http_complex_value_t));
    tcf->dirs = rx_pcalloc(cf->pool, n * sizeof(bool));
    if (tcf->values == NULL || tcf->dirs == NULL) {
        return RX_CONF_ERROR;
    }
    for (i = 0; i < n; i++) {
        name = value[i + 1];
        /* nginx: "$uri/" tests "$uri" as a directory, and a directory
         * found becomes the URI without the '/' (the last parameter is
         * the fallback, taken as written) */
        if (i + 1 < n && name.len && name.data[name.len - 1] == '/') {
            tcf->dirs[i] = true;
            name.len -= name.len > 1;      /* "/" stays the root's URI */
        }
        if (rx_http_compile_complex_value(cf, &name, &tcf->values[i])
            != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    tcf->n = n;
    if (value[n].data[0] == '=') {
        tcf->code = rx_atoi(value[n].data + 1, value[n].len - 1);
        if (tcf->code < 100 || tcf->code > 999) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid code \"%s\"",
                              value[n].data);
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

/* Splits "uri?args" as a fallback URI is written. */
static rx_int_t
fallback(rx_http_request_t *r, rx_http_try_files_conf_t *tcf)
{
    rx_str_t uri, args;
    char    *q;

    if (tcf->code) {
        return tcf->code;
    }
    if (rx_http_complex_value(r, &tcf->values[tcf->n - 1], &uri) != RX_OK) {
        return RX_ERROR;
    }
    if (uri.len && uri.data[0] == '@') {
        return rx_http_named_location(r, &uri);
    }
    rx_str_null(&args);
    q = memchr(uri.data, '?', uri.len);
    if (q) {
        args.data = q + 1;
        args.len = (size_t) (uri.data + uri.len - q - 1);
        uri.len = (size_t) (q - uri.data);
    } else if (r->args.data) {
        args = r->args;
    }
    return rx_http_internal_redirect(r, &uri, args.data ? &args : NULL);
}

static void try_next(rx_http_request_t *r);

/* The candidate's test came back: err 0 (it is there) or an errno from
 * the call named failed. */
static void
checked(rx_http_request_t *r, int err, bool is_dir, const char *failed)
{
    rx_http_try_files_conf_t *tcf = rx_http_get_module_loc_conf(r,
                                        rx_http_try_files_module);
    rx_http_try_files_ctx_t  *ctx = r->ctx;
    bool                      want_dir = tcf->dirs[ctx->next];

    if (err && err != ENOENT && err != ENOTDIR && err != ENAMETOOLONG) {
        rx_http_request_log_error(r, RX_LOG_CRIT, err, "%s \"%s\" failed",
                                  failed, ctx->path.data);
    }
    if (err == 0 && want_dir == is_dir) {
        /* the found name is the URI the content handlers serve; for a
         * directory the name without its '/', as in nginx: "$uri/" for
         * "/dir" is "/dir", which the static handler answers with a 301
         * to "/dir/" (the index served under "/dir" would break relative
         * links); for "/dir/" it is "/dir/", the index */
        r->uri = ctx->candidate;
        r->op_handler = NULL;
        r->ctx = NULL;
        rx_http_phase_next(r);
        return;
    }
    ctx->next++;
    try_next(r);
}

static void
try_files_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    rx_http_try_files_ctx_t *ctx = r->ctx;

    checked(r, cqe->res < 0 ? -cqe->res : 0,
            cqe->res == 0 && S_ISDIR(ctx->st.stx_mode), "statx()");
}

static void
try_files_opened(rx_http_request_t *r, rx_http_open_file_t *of)
{
    checked(r, of->err, of->is_dir, of->failed);
}

static void
try_next(rx_http_request_t *r)
{
    rx_http_try_files_conf_t *tcf = rx_http_get_module_loc_conf(r,
                                        rx_http_try_files_module);
    rx_http_try_files_ctx_t  *ctx = r->ctx;
    rx_str_t                  saved = r->uri;
    rx_int_t                  rc;

    if (ctx->next + 1 >= tcf->n) {
        r->op_handler = NULL;
        r->ctx = NULL;
        rc = fallback(r, tcf);
        if (rc != RX_DONE && rc != RX_OK) {
            rx_http_finalize_request(r, rc);
        }
        return;
    }
    if (rx_http_complex_value(r, &tcf->values[ctx->next], &ctx->candidate)
        != RX_OK) {
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    /* root/alias + the candidate: the path the content handler would use */
    r->uri = ctx->candidate;
    rc = rx_http_map_uri_to_path(r, &ctx->path, 0);
    r->uri = saved;
    if (rc != RX_OK) {
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    if (rx_http_open_file_test(r, &ctx->path, &ctx->of, try_files_opened)) {
        return;
    }
    rx_ring_statx(AT_FDCWD, ctx->path.data, AT_STATX_SYNC_AS_STAT,
                  STATX_TYPE, &ctx->st, rx_http_op_ud(r, RX_OP_STATX));
}

static rx_int_t
try_files_handler(rx_http_request_t *r)
{
    rx_http_try_files_conf_t *tcf = rx_http_get_module_loc_conf(r,
                                        rx_http_try_files_module);
    rx_http_try_files_ctx_t  *ctx;

    if (tcf->values == NULL) {
        return RX_DECLINED;
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_ERROR;
    }
    r->ctx = ctx;
    r->op_handler = try_files_op;
    try_next(r);
    return RX_AGAIN;
}

static rx_int_t
try_files_postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_PRECONTENT_PHASE,
                                     try_files_handler);
}
