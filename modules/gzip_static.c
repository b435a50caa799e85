/*
 * gzip_static.c: the gzip_static directive. A content handler that runs
 * before static: for a file URI, when the client accepts gzip (the gzip
 * module's checks: Accept-Encoding, gzip_disable, gzip_http_version,
 * gzip_proxied), it serves "FILE.gz" instead, with Content-Encoding: gzip
 * and the .gz file's own validators and byte ranges. `always` serves it
 * to every client. Without a .gz beside the file it passes the request on.
 */
#include "http.h"
#include "gzip.h"
#include "static.h"

enum { GZIP_STATIC_OFF = 0, GZIP_STATIC_ON, GZIP_STATIC_ALWAYS };

typedef struct {
    rx_uint_t  enable;
} rx_http_gzip_static_conf_t;

typedef struct {
    rx_str_t             path;       /* FILE.gz */
    rx_http_open_file_t  of;
    bool                 ok;         /* the client takes gzip */
} rx_http_gzip_static_ctx_t;

static rx_int_t gzip_static_postconfiguration(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_conf_enum_t gzip_static_modes[] = {
    { "off", GZIP_STATIC_OFF },
    { "on", GZIP_STATIC_ON },
    { "always", GZIP_STATIC_ALWAYS },
    { NULL, 0 }
};

static const rx_command_t gzip_static_commands[] = {
    { "gzip_static", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_enum_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_gzip_static_conf_t, enable), gzip_static_modes },
    rx_null_command
};

static const rx_http_module_t gzip_static_ctx = {
    NULL, gzip_static_postconfiguration, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_gzip_static_module = {
    "rx_http_gzip_static_module", 0, 0, RX_HTTP_MODULE, &gzip_static_ctx,
    gzip_static_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_gzip_static_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->enable = RX_CONF_UNSET_UINT;
    }
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_gzip_static_conf_t *p = prev, *c = conf;

    (void) cf;
    rx_conf_merge_uint(c->enable, p->enable, GZIP_STATIC_OFF);
    return RX_CONF_OK;
}

/* The .gz is open (or not): serve it, or hand over to the next handler
 * (RX_DECLINED). */
static rx_int_t
on_open(rx_http_request_t *r, rx_http_gzip_static_ctx_t *ctx)
{
    static rx_str_t             gzip = rx_string("gzip");
    static rx_str_t             ae = rx_string("Accept-Encoding");
    rx_http_gzip_static_conf_t *conf = rx_http_get_module_loc_conf(r,
                                           rx_http_gzip_static_module);
    rx_http_gzip_conf_t        *gzcf = rx_http_get_module_loc_conf(r,
                                           rx_http_gzip_module);
    rx_http_open_file_t        *of = &ctx->of;

    switch (of->err) {
    case 0:
        break;
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
        return RX_DECLINED;
    default:
        rx_http_request_log_error(r, of->err == EACCES || of->err == ELOOP
                                     || of->err == EMLINK
                                     ? RX_LOG_ERR : RX_LOG_CRIT,
                                  of->err, "%s \"%s\" failed", of->failed,
                                  ctx->path.data);
        return RX_DECLINED;
    }
    if (conf->enable == GZIP_STATIC_ON) {
        /* the answer depends on Accept-Encoding whichever form goes out */
        if (gzcf->vary && rx_http_add_header_out(r, "Vary", &ae) == NULL) {
            return RX_ERROR;
        }
        if (!ctx->ok) {
            return RX_DECLINED;
        }
    }
    if (of->is_dir) {
        return RX_DECLINED;
    }
    if (!of->is_file) {
        rx_http_request_log_error(r, RX_LOG_CRIT, 0, "\"%s\" is not a regular "
                                  "file", ctx->path.data);
        return RX_HTTP_NOT_FOUND;
    }
    r->headers_out.content_encoding = rx_http_add_header_out(r,
                                          "Content-Encoding", &gzip);
    if (r->headers_out.content_encoding == NULL) {
        return RX_ERROR;
    }
    return rx_http_static_serve(r, &ctx->path, of);
}

static void
gzip_static_opened(rx_http_request_t *r, rx_http_open_file_t *of)
{
    rx_int_t rc;

    (void) of;
    rc = on_open(r, r->ctx);
    if (rc == RX_DECLINED) {
        rx_http_content_next(r);
    } else if (rc != RX_AGAIN && rc != RX_OK) {
        rx_http_finalize_request(r, rc);
    }
}

static rx_int_t
gzip_static_handler(rx_http_request_t *r)
{
    rx_http_gzip_static_conf_t *conf = rx_http_get_module_loc_conf(r,
                                           rx_http_gzip_static_module);
    rx_http_gzip_conf_t        *gzcf = rx_http_get_module_loc_conf(r,
                                           rx_http_gzip_module);
    rx_http_gzip_static_ctx_t  *ctx;
    rx_int_t                    rc;
    bool                        ok;

    if (conf->enable == GZIP_STATIC_OFF
        || !(r->method & (RX_HTTP_GET | RX_HTTP_HEAD))
        || r->uri.len == 0 || r->uri.data[r->uri.len - 1] == '/') {
        return RX_DECLINED;
    }
    ok = conf->enable == GZIP_STATIC_ALWAYS || rx_http_gzip_ok(r, gzcf);
    if (!ok && !gzcf->vary) {
        return RX_DECLINED;       /* nothing to say about the .gz */
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL
        || rx_http_map_uri_to_path(r, &ctx->path, sizeof(".gz")) != RX_OK) {
        return RX_ERROR;
    }
    memcpy(ctx->path.data + ctx->path.len, ".gz", sizeof(".gz"));
    ctx->path.len += sizeof(".gz") - 1;
    ctx->ok = ok;
    r->ctx = ctx;
    rc = rx_http_open_file(r, &ctx->path, &ctx->of, gzip_static_opened);
    if (rc != RX_OK) {
        return rc;
    }
    rc = on_open(r, ctx);
    if (rc == RX_DECLINED) {
        r->ctx = NULL;
    }
    return rc;
}

static rx_int_t
gzip_static_postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_CONTENT_PHASE,
                                     gzip_static_handler);
}
