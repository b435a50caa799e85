/*
 * http_cache_conf.c: the cache's directives for every protocol of the
 * upstream engine (*_cache_path, *_cache, *_cache_key, *_cache_valid, the
 * ones ringx refuses by name), $upstream_cache_status, and the lookup a
 * request makes before it goes upstream (rx_http_cache_begin).
 */
#include "http.h"
#include "http_cache.h"
#include "http_upstream.h"
#include "http_variables.h"
#include "md5.h"
#include "clock.h"

/* The owner of the keys zones (rx_shm_zone_add's tag). */
static const char cache_zone_tag = 0;

const rx_conf_enum_t rx_http_cache_use_stale_masks[] = {
    { "error", RX_HTTP_UPSTREAM_FT_ERROR },
    { "timeout", RX_HTTP_UPSTREAM_FT_TIMEOUT },
    { "invalid_header", RX_HTTP_UPSTREAM_FT_INVALID_HEADER },
    { "updating", RX_HTTP_CACHE_STALE_UPDATING },
    { "http_500", RX_HTTP_UPSTREAM_FT_HTTP_500 },
    { "http_502", RX_HTTP_UPSTREAM_FT_HTTP_502 },
    { "http_503", RX_HTTP_UPSTREAM_FT_HTTP_503 },
    { "http_504", RX_HTTP_UPSTREAM_FT_HTTP_504 },
    { "http_403", RX_HTTP_UPSTREAM_FT_HTTP_403 },
    { "http_404", RX_HTTP_UPSTREAM_FT_HTTP_404 },
    { "http_429", RX_HTTP_UPSTREAM_FT_HTTP_429 },
    { "off", RX_HTTP_UPSTREAM_FT_OFF },
    { NULL, 0 }
};

const rx_conf_enum_t rx_http_cache_methods_masks[] = {
    { "GET", RX_HTTP_GET },
    { "HEAD", RX_HTTP_HEAD },
    { "POST", RX_HTTP_POST },
    { NULL, 0 }
};

/* What stale-if-error covers (nginx: errors and these statuses). */
#define STALE_IF_ERROR  (RX_HTTP_UPSTREAM_FT_ERROR                           \
    | RX_HTTP_UPSTREAM_FT_TIMEOUT | RX_HTTP_UPSTREAM_FT_INVALID_HEADER        \
    | RX_HTTP_UPSTREAM_FT_HTTP_500 | RX_HTTP_UPSTREAM_FT_HTTP_502             \
    | RX_HTTP_UPSTREAM_FT_HTTP_503 | RX_HTTP_UPSTREAM_FT_HTTP_504)

void
rx_http_cache_init_conf(rx_http_cache_conf_t *conf)
{
    conf->zone = RX_CONF_UNSET_PTR;
    conf->key = RX_CONF_UNSET_PTR;
    conf->valid = RX_CONF_UNSET_PTR;
    conf->lock = RX_CONF_UNSET;
    conf->bypass = RX_CONF_UNSET_PTR;
    conf->no_cache = RX_CONF_UNSET_PTR;
    conf->convert_head = RX_CONF_UNSET;
    conf->min_uses = RX_CONF_UNSET;
    conf->purge = RX_CONF_UNSET_PTR;
    conf->revalidate = RX_CONF_UNSET;
    conf->background_update = RX_CONF_UNSET;
}

static bool
arg_is(const rx_str_t *v, const char *name, size_t *skip)
{
    size_t n = strlen(name);

    *skip = n;
    return v->len >= n && memcmp(v->data, name, n) == 0;
}

/* levels=1:2 (one to three levels of one or two characters). */
static const char *
parse_levels(rx_conf_t *cf, const rx_str_t *v, rx_http_cache_t *cache)
{
    const char *p = v->data + 7, *end = v->data + v->len;
    rx_uint_t   i = 0;

    while (p < end) {
        if (i == 3 || (*p != '1' && *p != '2')) {
            goto invalid;
        }
        cache->levels[i++] = (rx_uint_t) (*p++ - '0');
        if (p < end && *p++ != ':') {
            goto invalid;
        }
        if (p == end && p[-1] == ':') {
            goto invalid;
        }
    }
    if (i == 0) {
        goto invalid;
    }
    return RX_CONF_OK;
invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid \"levels\" \"%.*s\"",
                      (int) v->len, v->data);
    return RX_CONF_ERROR;
}

/* One parameter of *_cache_path after the path. */
static const char *
path_param(rx_conf_t *cf, const rx_str_t *v, rx_http_cache_t *cache,
    rx_str_t *zname, size_t *zsize)
{
    static const char *const no_process[] = {
        "manager_files=", "manager_sleep=", "manager_threshold=",
        "loader_files=", "loader_sleep=", "loader_threshold=", NULL
    };
    size_t     skip;
    rx_str_t   t;
    rx_int_t   n;
    rx_uint_t  i;

    if (arg_is(v, "levels=", &skip)) {
        return parse_levels(cf, v, cache);
    }
    if (arg_is(v, "keys_zone=", &skip)) {
        return rx_shm_zone_parse(cf, v, skip, zname, zsize) == RX_OK
               ? RX_CONF_OK : RX_CONF_ERROR;
    }
    if (arg_is(v, "inactive=", &skip)) {
        t.data = v->data + skip;
        t.len = v->len - skip;
        n = rx_parse_time(&t, true);
        if (n < 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid inactive value "
                              "\"%.*s\"", (int) v->len, v->data);
            return RX_CONF_ERROR;
        }
        cache->inactive = (time_t) n;
        return RX_CONF_OK;
    }
    if (arg_is(v, "use_temp_path=", &skip)) {
        /* the file is always written in the cache's own directory and
         * renamed (use_temp_path=off): either value gives the same result */
        if (strcmp(v->data + skip, "on") && strcmp(v->data + skip, "off")) {
            goto invalid;
        }
        return RX_CONF_OK;
    }
    for (i = 0; no_process[i]; i++) {
        if (arg_is(v, no_process[i], &skip)) {
            rx_conf_log_error(RX_LOG_NOTICE, cf, 0, "the \"%.*s\" parameter "
                "is ignored: ringx has no cache manager or loader process "
                "(the index is rebuilt by the master at start, entries leave "
                "as new ones come)", (int) (skip - 1), v->data);
            return RX_CONF_OK;
        }
    }
    if (arg_is(v, "max_size=", &skip)) {
        t.data = v->data + skip;
        t.len = v->len - skip;
        cache->max_size = rx_parse_offset(&t);
        if (cache->max_size <= 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid max_size value "
                              "\"%.*s\"", (int) v->len, v->data);
            return RX_CONF_ERROR;
        }
        return RX_CONF_OK;
    }
    if (arg_is(v, "min_free=", &skip)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the \"%.*s\" parameter is not "
            "supported by ringx yet (the cache is bounded by max_size=, its "
            "keys zone and inactive=)", (int) (skip - 1), v->data);
        return RX_CONF_ERROR;
    }
invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                      (int) v->len, v->data);
    return RX_CONF_ERROR;
}

/* *_cache_path path [levels=] keys_zone=name:size [inactive=] ... */
const char *
rx_http_cache_set_path(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t        *value = cf->args->elts, zname = { 0, NULL };
    rx_http_cache_t *cache;
    rx_shm_zone_t   *zone;
    size_t           zsize = 0;
    rx_uint_t        i;

    (void) conf;
    cache = rx_pcalloc(cf->pool, sizeof(*cache));
    if (cache == NULL) {
        return RX_CONF_ERROR;
    }
    cache->inactive = 600;
    cache->directive = cmd->name;
    cache->path = value[1];
    while (cache->path.len > 1
           && cache->path.data[cache->path.len - 1] == '/') {
        cache->path.len--;
    }
    if (rx_conf_full_name(cf->cycle, &cache->path, false) != RX_OK) {
        return RX_CONF_ERROR;
    }
    for (i = 2; i < cf->args->nelts; i++) {
        if (path_param(cf, &value[i], cache, &zname, &zsize) != RX_CONF_OK) {
            return RX_CONF_ERROR;
        }
    }
    if (zname.len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" must have \"keys_zone\" "
                          "parameter", cmd->name);
        return RX_CONF_ERROR;
    }
    zone = rx_shm_zone_add(cf, &zname, zsize, &cache_zone_tag);
    if (zone == NULL) {
        return RX_CONF_ERROR;
    }
    if (zone->data) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate zone \"%s\"",
                          zname.data);
        return RX_CONF_ERROR;
    }
    cache->zone = zone;
    zone->data = cache;
    zone->init = rx_http_cache_init_zone;
    if (rx_conf_add_path(cf, &cache->path, cmd->name) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* *_cache zone | off */
const char *
rx_http_cache_set_zone(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_cache_conf_t *cc = rx_conf_field(conf, cmd, rx_http_cache_conf_t);
    rx_str_t             *value = cf->args->elts;

    if (cc->zone != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    if (strcmp(value[1].data, "off") == 0) {
        cc->zone = NULL;
        return RX_CONF_OK;
    }
    if (memchr(value[1].data, '$', value[1].len)) {
        return "with variables is not supported by ringx yet";
    }
    cc->zone = rx_shm_zone_add(cf, &value[1], 0, &cache_zone_tag);
    return cc->zone ? RX_CONF_OK : RX_CONF_ERROR;
}

const char *
rx_http_cache_set_key(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_cache_conf_t *cc = rx_conf_field(conf, cmd, rx_http_cache_conf_t);
    rx_str_t             *value = cf->args->elts;

    if (cc->key != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    cc->key = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
    if (cc->key == NULL
        || rx_http_compile_complex_value(cf, &value[1], cc->key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* *_cache_valid [code ... | any] time: without codes, 200 301 302. */
const char *
rx_http_cache_set_valid(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    static const rx_uint_t  dflt[] = { 200, 301, 302 };
    rx_http_cache_conf_t   *cc = rx_conf_field(conf, cmd, rx_http_cache_conf_t);
    rx_str_t               *value = cf->args->elts;
    rx_http_cache_valid_t  *v;
    rx_uint_t               i, n = cf->args->nelts;
    rx_int_t                t, code;

    if (cc->valid == RX_CONF_UNSET_PTR) {
        cc->valid = rx_array_create(cf->pool, 4, sizeof(*v));
        if (cc->valid == NULL) {
            return RX_CONF_ERROR;
        }
    }
    t = rx_parse_time(&value[n - 1], true);
    if (t < 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid time value \"%s\"",
                          value[n - 1].data);
        return RX_CONF_ERROR;
    }
    if (n == 2) {
        for (i = 0; i < 3; i++) {
            if ((v = rx_array_push(cc->valid)) == NULL) return RX_CONF_ERROR;
            v->status = dflt[i];
            v->valid = (time_t) t;
        }
        return RX_CONF_OK;
    }
    for (i = 1; i < n - 1; i++) {
        if (strcmp(value[i].data, "any") == 0) {
            code = 0;
        } else {
            code = rx_atoi(value[i].data, value[i].len);
            if (code < 200 || code > 599) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid status \"%s\"",
                                  value[i].data);
                return RX_CONF_ERROR;
            }
        }
        if ((v = rx_array_push(cc->valid)) == NULL) return RX_CONF_ERROR;
        v->status = (rx_uint_t) code;
        v->valid = (time_t) t;
    }
    return RX_CONF_OK;
}

const char *
rx_http_cache_set_predicates(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_array_t              **list = rx_conf_field(conf, cmd, rx_array_t *);
    rx_str_t                 *value = cf->args->elts;
    rx_http_complex_value_t  *cv;
    rx_uint_t                 i;

    if (*list == RX_CONF_UNSET_PTR || *list == NULL) {
        *list = rx_array_create(cf->pool, 2, sizeof(*cv));
        if (*list == NULL) {
            return RX_CONF_ERROR;
        }
    }
    for (i = 1; i < cf->args->nelts; i++) {
        cv = rx_array_push(*list);
        if (cv == NULL
            || rx_http_compile_complex_value(cf, &value[i], cv) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

/* A cache directive ringx does not have yet: refused by name at -t. */
const char *
rx_http_cache_set_refused(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    (void) cf;
    (void) cmd;
    (void) conf;
    return "is not supported by ringx yet (docs/directives.md lists what "
           "the cache does)";
}

const char *
rx_http_cache_merge_conf(rx_conf_t *cf, rx_http_cache_conf_t *conf,
    const rx_http_cache_conf_t *prev, const char *module)
{
    static rx_str_t proxy_key = rx_string("$scheme$proxy_host$request_uri");

    rx_conf_merge_ptr(conf->zone, prev->zone, NULL);
    rx_conf_merge_ptr(conf->valid, prev->valid, NULL);
    rx_conf_merge_ptr(conf->key, prev->key, NULL);
    rx_conf_merge_value(conf->lock, prev->lock, 1);
    rx_conf_merge_ptr(conf->bypass, prev->bypass, NULL);
    rx_conf_merge_ptr(conf->no_cache, prev->no_cache, NULL);
    rx_conf_merge_ptr(conf->purge, prev->purge, NULL);
    rx_conf_merge_value(conf->revalidate, prev->revalidate, 0);
    rx_conf_merge_value(conf->background_update, prev->background_update, 0);
    if (conf->use_stale == 0) {
        conf->use_stale = prev->use_stale;
    }
    if (conf->use_stale & RX_HTTP_UPSTREAM_FT_OFF) {
        conf->use_stale = RX_HTTP_UPSTREAM_FT_OFF;
    }
    if (conf->methods == 0) {
        conf->methods = prev->methods;
    }
    conf->methods |= RX_HTTP_GET | RX_HTTP_HEAD;     /* always, as nginx */
    if (strcmp(module, "proxy") != 0) {
        /* the application is told the client's method (REQUEST_METHOD):
         * a HEAD cannot be made a GET behind its back (nginx has no
         * fastcgi_cache_convert_head either) */
        if (conf->convert_head == 1) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s_cache_convert_head "
                "on\" is not supported: the application sees the client's "
                "method", module);
            return RX_CONF_ERROR;
        }
        conf->convert_head = 0;
    }
    rx_conf_merge_value(conf->convert_head, prev->convert_head, 1);
    rx_conf_merge_value(conf->min_uses, prev->min_uses, 1);
    if (conf->min_uses < 1) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s_cache_min_uses\" must "
                          "be at least 1", module);
        return RX_CONF_ERROR;
    }
    if (conf->zone == NULL || conf->key != NULL) {
        return RX_CONF_OK;
    }
    if (strcmp(module, "proxy") != 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "no \"%s_cache_key\" for "
                          "\"%s_cache\"", module, module);
        return RX_CONF_ERROR;
    }
    conf->key = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
    if (conf->key == NULL
        || rx_http_compile_complex_value(cf, &proxy_key, conf->key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static rx_int_t
var_cache_status(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    static const char *const names[] = {
        NULL, "MISS", "BYPASS", "EXPIRED", "STALE", "UPDATING",
        "REVALIDATED", "HIT"
    };
    const char *s = r->cache_status < rx_nelems(names)
                    ? names[r->cache_status] : NULL;

    (void) data;
    if (s == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    v->data = (char *) s;
    v->len = strlen(s);
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;
    return RX_OK;
}

rx_int_t
rx_http_cache_add_variables(rx_conf_t *cf)
{
    rx_str_t            name = rx_string("upstream_cache_status");
    rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                 RX_HTTP_VAR_NOCACHEABLE);

    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = var_cache_status;
    return RX_OK;
}

/* The request's last word on the cache, counted when it ends. */
static void
count_cleanup(void *data)
{
    rx_http_request_t   *r = data;
    rx_http_cache_req_t *ctx = r->cache_ctx;

    if (ctx && r->cache_status) {
        /* a background update: the client had the stale copy */
        rx_http_cache_count(ctx->cache, ctx->background
                            ? RX_HTTP_CACHE_STALE : r->cache_status);
    }
}

/* The fetch a request claimed ends with the request, whatever became of
 * it: its waiters learn it failed, and the next of them fetches. */
static void
claim_cleanup(void *data)
{
    rx_http_cache_req_t *ctx = data;

    if (ctx->claimed) {
        ctx->claimed = false;
        rx_http_cache_release(ctx->cache, ctx->md5, ctx->seq, false);
    }
}

/* *_cache_revalidate: the fetch asks whether the stored response is still
 * good; the client's own conditions (and Range) are not sent, its
 * answer would not be the entry. */
static void
revalidate(rx_http_request_t *r, rx_http_cache_req_t *ctx)
{
    static const char *const hidden[] = {
        "if-none-match", "if-modified-since", "if-match",
        "if-unmodified-since", "range", "if-range", NULL
    };
    rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t       i, k;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        for (k = 0; h[i].lowcase_key && hidden[k]; k++) {
            if (strcmp(h[i].lowcase_key, hidden[k]) == 0) {
                h[i].lowcase_key = NULL;     /* not passed on */
            }
        }
    }
    ctx->revalidating = true;
}

bool
rx_http_cache_conditions(rx_http_request_t *r, rx_str_t *inm, rx_str_t *ims)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    char                *p;

    if (ctx == NULL || !ctx->revalidating) {
        return false;
    }
    inm->data = ctx->entry.etag;
    inm->len = strlen(ctx->entry.etag);
    ims->len = 0;
    ims->data = NULL;
    if (ctx->entry.last_modified > 0
        && (p = rx_pnalloc(r->pool, 64)) != NULL) {
        ims->len = rx_http_date(p, (time_t) ctx->entry.last_modified);
        ims->data = p;
    }
    return true;
}

/* While the entry is refreshed, its expired copy may be sent:
 * *_cache_use_stale updating, or the stored stale-while-revalidate. */
static bool
stale_while_updating(const rx_http_cache_req_t *ctx)
{
    return (ctx->conf->use_stale & RX_HTTP_CACHE_STALE_UPDATING)
           || (ctx->entry.swr > 0
               && rx_time_sec - ctx->entry.valid_until <= ctx->entry.swr);
}

/* The entry must come from the upstream: this request fetches it, or
 * waits for the request that does (RX_AGAIN). */
static rx_int_t
fetch(rx_http_request_t *r, rx_http_cache_req_t *ctx)
{
    rx_http_cache_entry_t e;
    rx_pool_cleanup_t    *cln;

    memset(&e, 0, sizeof(e));
    if (r->method == RX_HTTP_HEAD && ctx->conf->convert_head) {
        ctx->head_as_get = true;         /* fetched as a GET, and stored */
    } else if (r->method == RX_HTTP_HEAD) {
        /* HEAD stores nothing: it fetches for itself, or waits */
        if (ctx->entry.updating && r->cache_status == RX_HTTP_CACHE_EXPIRED
            && stale_while_updating(ctx)) {
            r->cache_status = RX_HTTP_CACHE_UPDATING;
            return RX_OK;
        }
        if (ctx->entry.updating && ctx->conf->lock
            && r->cache_status != RX_HTTP_CACHE_BYPASS) {
            ctx->seq = ctx->entry.seq;
            return RX_AGAIN;
        }
        return RX_OK;
    }
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        return RX_ERROR;
    }
    if (rx_http_cache_claim(ctx->cache, ctx->md5, &e, &r->conn->log)
        != RX_OK) {
        return RX_OK;            /* fetched without the cache's help */
    }
    ctx->seq = e.seq;
    ctx->uses = e.uses;
    if (!e.claimed && r->cache_status == RX_HTTP_CACHE_EXPIRED
        && stale_while_updating(ctx)) {
        /* another request refreshes it: the expired copy meanwhile */
        r->cache_status = RX_HTTP_CACHE_UPDATING;
        return RX_OK;
    }
    if (!e.claimed) {
        /* *_cache_lock off: nginx's default, every miss goes upstream
         * (only the first stores); a bypass never waits */
        return ctx->conf->lock && r->cache_status != RX_HTTP_CACHE_BYPASS
               ? RX_AGAIN : RX_OK;
    }
    ctx->claimed = true;
    cln->handler = claim_cleanup;
    cln->data = ctx;
    if (r->cache_status == RX_HTTP_CACHE_EXPIRED && ctx->conf->revalidate
        && (ctx->entry.etag[0] || ctx->entry.last_modified > 0)) {
        revalidate(r, ctx);
    }
    if (r->cache_status == RX_HTTP_CACHE_EXPIRED && ctx->conf->background_update
        && stale_while_updating(ctx) && !ctx->head_as_get
        && r->hc->framing == NULL && r->subrequest == NULL) {
        /* the expired copy now, the fetch after it (cache_serve.c); not
         * on an HTTP/2 stream, which ends with its response */
        ctx->background = true;
        r->cache_status = RX_HTTP_CACHE_STALE;
    }
    return RX_OK;
}

/* The key of r, and its MD5. */
static rx_int_t
key_of(rx_http_request_t *r, const rx_http_cache_conf_t *conf, rx_str_t *key,
    uint8_t md5[16])
{
    rx_md5_t ctx;

    if (rx_http_complex_value(r, conf->key, key) != RX_OK) {
        return RX_ERROR;
    }
    rx_md5_init(&ctx);
    rx_md5_update(&ctx, key->data, key->len);
    rx_md5_final(md5, &ctx);
    return RX_OK;
}

rx_int_t
rx_http_cache_purge(rx_http_request_t *r, const rx_http_cache_conf_t *conf)
{
    rx_http_cache_t *cache;
    rx_str_t         key;
    uint8_t          md5[16];

    if (conf->zone == NULL || conf->purge == NULL
        || !rx_http_cache_test_predicates(r, conf->purge)
        || (cache = rx_http_cache_of(conf->zone)) == NULL) {
        return RX_DECLINED;
    }
    if (key_of(r, conf, &key, md5) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (!rx_http_cache_remove(cache, md5)) {
        return RX_HTTP_NOT_FOUND;
    }
    rx_http_request_log_error(r, RX_LOG_INFO, 0, "cache entry \"%.*s\" "
                              "purged", (int) key.len, key.data);
    return RX_HTTP_NO_CONTENT;
}

rx_int_t
rx_http_cache_begin(rx_http_request_t *r, const rx_http_cache_conf_t *conf)
{
    rx_http_cache_req_t *ctx;
    rx_http_cache_t     *cache;

    if (conf->zone == NULL || !(r->method & conf->methods)
        || (cache = rx_http_cache_of(conf->zone)) == NULL) {
        return RX_DECLINED;
    }
    if (r->cache_ctx == NULL) {          /* once, not at each new look */
        rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);

        if (cln == NULL) {
            return RX_ERROR;
        }
        cln->handler = count_cleanup;
        cln->data = r;
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL || key_of(r, conf, &ctx->key, ctx->md5) != RX_OK) {
        return RX_ERROR;
    }
    ctx->cache = cache;
    ctx->conf = conf;
    ctx->fd = -1;
    ctx->file = rx_http_cache_file_name(r->pool, cache, ctx->md5);
    if (ctx->file == NULL) {
        return RX_ERROR;
    }
    if (rx_http_cache_lookup(cache, ctx->md5, &ctx->entry, &r->conn->log)
        != RX_OK) {
        return RX_DECLINED;      /* the zone is unusable: as if off */
    }
    r->cache_ctx = ctx;
    if (rx_http_cache_test_predicates(r, conf->bypass)) {
        /* a fresh response, which replaces the stored one */
        r->cache_status = RX_HTTP_CACHE_BYPASS;
        return fetch(r, ctx);
    }
    if (!ctx->entry.found) {
        r->cache_status = RX_HTTP_CACHE_MISS;
    } else if (ctx->entry.vary[0]
               && rx_http_cache_vary_hash(r, ctx->entry.vary)
                  != ctx->entry.vary_hash) {
        r->cache_status = RX_HTTP_CACHE_MISS;   /* another variant */
    } else if (ctx->entry.valid_until > rx_time_sec) {
        r->cache_status = RX_HTTP_CACHE_HIT;
        return RX_OK;
    } else {
        r->cache_status = RX_HTTP_CACHE_EXPIRED;
    }
    return fetch(r, ctx);
}

bool
rx_http_cache_stale_allowed(rx_http_request_t *r, rx_int_t rc, bool status)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_uint_t            ft;

    if (ctx == NULL || ctx->serve == NULL || !ctx->entry.found
        || r->cache_status != RX_HTTP_CACHE_EXPIRED || r->header_sent
        || r->client_gone) {
        return false;
    }
    ft = status ? 0
         : rc == RX_HTTP_GATEWAY_TIME_OUT ? RX_HTTP_UPSTREAM_FT_TIMEOUT
                                          | RX_HTTP_UPSTREAM_FT_HTTP_504
         : rc == RX_HTTP_BAD_GATEWAY ? RX_HTTP_UPSTREAM_FT_ERROR
                                       | RX_HTTP_UPSTREAM_FT_INVALID_HEADER
                                       | RX_HTTP_UPSTREAM_FT_HTTP_502
         : 0;
    ft = ft ? ft
         : rc == 502 ? RX_HTTP_UPSTREAM_FT_HTTP_502
         : rc == 504 ? RX_HTTP_UPSTREAM_FT_HTTP_504
         : rc == 500 ? RX_HTTP_UPSTREAM_FT_HTTP_500
         : rc == 503 ? RX_HTTP_UPSTREAM_FT_HTTP_503
         : rc == 403 ? RX_HTTP_UPSTREAM_FT_HTTP_403
         : rc == 404 ? RX_HTTP_UPSTREAM_FT_HTTP_404
         : rc == 429 ? RX_HTTP_UPSTREAM_FT_HTTP_429 : 0;
    if (ft == 0 || (ctx->conf->use_stale & RX_HTTP_UPSTREAM_FT_OFF)
        || (!(ctx->conf->use_stale & ft)
            && !((ft & STALE_IF_ERROR)
                 && ctx->entry.sie > 0
                 && rx_time_sec - ctx->entry.valid_until <= ctx->entry.sie))) {
        return false;
    }
    return true;
}

bool
rx_http_cache_stale(rx_http_request_t *r, rx_int_t rc)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_int_t             n;

    if (ctx && ctx->refreshed && rc == RX_HTTP_NOT_MODIFIED) {
        /* REVALIDATED: the stored response, still good (for a background
         * update: only its file's new expiry, nothing is sent) */
        r->op_handler = NULL;
        n = ctx->serve(r);
        if (n != RX_AGAIN && n != RX_OK) {
            rx_http_finalize_request(r, n);
        }
        return true;
    }
    if (r->client_gone) {
        /* a background update (or a fetch its client left) ends: the
         * entry is left as it was; nobody to answer */
        rx_http_gone_end(r);
        return true;
    }
    if (!rx_http_cache_stale_allowed(r, rc, false)) {
        return false;
    }
    rx_http_cache_store_abort(r);
    if (ctx->claimed) {
        ctx->claimed = false;
        rx_http_cache_release(ctx->cache, ctx->md5, ctx->seq, false);
    }
    r->cache_status = RX_HTTP_CACHE_STALE;
    r->op_handler = NULL;
    n = ctx->serve(r);
    if (n != RX_AGAIN && n != RX_OK) {
        rx_http_finalize_request(r, n);
    }
    return true;
}

bool
rx_http_cache_head_as_get(rx_http_request_t *r)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;

    return ctx && ctx->head_as_get && r->method == RX_HTTP_HEAD;
}
