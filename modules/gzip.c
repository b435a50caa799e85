/*
 * gzip.c: the gzip filter module: the gzip_* directives, the header
 * filter that decides whether a response is compressed (gzip_ok.c for the
 * request's side) and rewrites its headers, the body filter that queues
 * the input and hands it to a compressor, and $gzip_ratio. The
 * compressors: zlib's stream in gzip_stream.c (each chain deflated as it
 * arrives into at most gzip_buffers output buffers, passed on as they
 * fill, so that neither the body nor its compressed form is ever held
 * whole), and, when built with libdeflate, one call for a body that
 * surely fits in gzip_buffers compressed, in gzip_whole.c.
 */
#include <ctype.h>
#include "http.h"
#include "http_variables.h"
#include "gzip_ctx.h"
#include "regex.h"

static const char *set_types(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_disable(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_buffers(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_pow2(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static void exit_process(rx_cycle_t *cycle);

static const rx_conf_bounds_t level_bounds = { 1, 9 };

static const rx_conf_enum_t http_versions[] = {
    { "1.0", RX_HTTP_VERSION_10 },
    { "1.1", RX_HTTP_VERSION_11 },
    { NULL, 0 }
};

static const rx_conf_enum_t proxied_values[] = {
    { "off", RX_GZIP_PROXIED_OFF },
    { "expired", RX_GZIP_PROXIED_EXPIRED },
    { "no-cache", RX_GZIP_PROXIED_NO_CACHE },
    { "no-store", RX_GZIP_PROXIED_NO_STORE },
    { "private", RX_GZIP_PROXIED_PRIVATE },
    { "no_last_modified", RX_GZIP_PROXIED_NO_LM },
    { "no_etag", RX_GZIP_PROXIED_NO_ETAG },
    { "auth", RX_GZIP_PROXIED_AUTH },
    { "any", RX_GZIP_PROXIED_ANY },
    { NULL, 0 }
};

/* gzip_window and gzip_hash: powers of two within these sizes */
typedef struct {
    int      min_log2;
    int      max_log2;
    int      bias;            /* stored value = log2(size) - bias */
} pow2_post_t;

static const pow2_post_t window_post = { 9, 15, 0 };   /* 512 .. 32k */
static const pow2_post_t hash_post = { 9, 17, 8 };     /* 512 .. 128k */

/* http, server, location */
#define RX_GZIP_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t gzip_commands[] = {
    { "gzip", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_HTTP_LIF_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_gzip_conf_t, enable), NULL },
    { "gzip_buffers", RX_GZIP_CONF | RX_CONF_TAKE2, set_buffers,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "gzip_comp_level", RX_GZIP_CONF | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, level),
      &level_bounds },
    { "gzip_disable", RX_GZIP_CONF | RX_CONF_1MORE, set_disable,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "gzip_http_version", RX_GZIP_CONF | RX_CONF_TAKE1, rx_conf_set_enum_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, http_version),
      http_versions },
    { "gzip_min_length", RX_GZIP_CONF | RX_CONF_TAKE1, rx_conf_set_off_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, min_length),
      NULL },
    { "gzip_proxied", RX_GZIP_CONF | RX_CONF_1MORE, rx_conf_set_bitmask_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, proxied),
      proxied_values },
    { "gzip_types", RX_GZIP_CONF | RX_CONF_1MORE, set_types,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "gzip_vary", RX_GZIP_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, vary), NULL },
    { "gzip_window", RX_GZIP_CONF | RX_CONF_TAKE1, set_pow2,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, wbits),
      &window_post },
    { "gzip_hash", RX_GZIP_CONF | RX_CONF_TAKE1, set_pow2,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_gzip_conf_t, memlevel),
      &hash_post },
    rx_null_command
};

static void init_filters(rx_http_filters_t *top);

static const rx_http_module_t gzip_ctx = {
    preconfiguration, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf,
    init_filters
};

rx_module_t rx_http_gzip_module = {
    "rx_http_gzip_module", 0, 0, RX_HTTP_MODULE, &gzip_ctx,
    gzip_commands, NULL, NULL, exit_process, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

/* ---- configuration ------------------------------------------------------ */

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_gzip_conf_t *conf = rx_pcalloc(cf->pool, sizeof(*conf));

    if (conf == NULL) {
        return NULL;
    }
    conf->enable = RX_CONF_UNSET;
    conf->level = RX_CONF_UNSET;
    conf->vary = RX_CONF_UNSET;
    conf->min_length = RX_CONF_UNSET;
    conf->http_version = RX_CONF_UNSET_UINT;
    conf->proxied = 0;
    conf->bufs_num = RX_CONF_UNSET;
    conf->bufs_size = RX_CONF_UNSET_SIZE;
    conf->wbits = RX_CONF_UNSET;
    conf->memlevel = RX_CONF_UNSET;
    conf->types = RX_CONF_UNSET_PTR;
    conf->types_any = RX_CONF_UNSET;
    return conf;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    static rx_str_t      text_html = rx_string("text/html");
    rx_http_gzip_conf_t *p = parent, *c = child;
    long                 page = sysconf(_SC_PAGESIZE);

    rx_conf_merge_value(c->enable, p->enable, 0);
    rx_conf_merge_value(c->level, p->level, 1);
    rx_conf_merge_value(c->vary, p->vary, 0);
    rx_conf_merge_value(c->min_length, p->min_length, 20);
    rx_conf_merge_uint(c->http_version, p->http_version, RX_HTTP_VERSION_11);
    if (c->proxied == 0) {
        c->proxied = p->proxied ? p->proxied : RX_GZIP_PROXIED_OFF;
    }
    if (c->bufs_num == RX_CONF_UNSET) {
        /* nginx: 32 4k | 16 8k, one page each */
        c->bufs_num = p->bufs_num != RX_CONF_UNSET ? p->bufs_num
                      : page > 4096 ? 16 : 32;
        c->bufs_size = p->bufs_num != RX_CONF_UNSET ? p->bufs_size
                       : (size_t) (page > 4096 ? 8192 : 4096);
    }
    rx_conf_merge_value(c->wbits, p->wbits, MAX_WBITS);
    rx_conf_merge_value(c->memlevel, p->memlevel, MAX_MEM_LEVEL - 1);
    if (c->types == RX_CONF_UNSET_PTR) {
        c->types = p->types;
        c->types_any = p->types_any;
    }
    if (c->types == RX_CONF_UNSET_PTR) {
        /* the default list: text/html only */
        c->types = rx_array_create(cf->pool, 1, sizeof(rx_str_t));
        if (c->types == NULL || rx_array_push(c->types) == NULL) {
            return RX_CONF_ERROR;
        }
        ((rx_str_t *) c->types->elts)[0] = text_html;
    }
    rx_conf_merge_value(c->types_any, p->types_any, 0);
    if (!c->disable_set) {
        c->disable = p->disable;
        c->disable_msie6 = p->disable_msie6;
        c->disable_set = p->disable_set;
    }
    return RX_CONF_OK;
}

/* gzip_types mime-type ...: text/html is always in the list; "*" is any. */
static const char *
set_types(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    static rx_str_t      text_html = rx_string("text/html");
    rx_http_gzip_conf_t *gcf = conf;
    rx_str_t            *value = cf->args->elts, *t;
    rx_uint_t            i;
    size_t               k;

    if (gcf->types == RX_CONF_UNSET_PTR) {
        gcf->types = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
        if (gcf->types == NULL || (t = rx_array_push(gcf->types)) == NULL) {
            return RX_CONF_ERROR;
        }
        *t = text_html;
        gcf->types_any = 0;
    }
    for (i = 1; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "*")) {
            gcf->types_any = 1;
            continue;
        }
        t = rx_array_push(gcf->types);
        if (t == NULL) {
            return RX_CONF_ERROR;
        }
        t->len = value[i].len;
        t->data = rx_pnalloc(cf->pool, t->len + 1);
        if (t->data == NULL) {
            return RX_CONF_ERROR;
        }
        for (k = 0; k < t->len; k++) {
            t->data[k] = (char) tolower((unsigned char) value[i].data[k]);
        }
        t->data[t->len] = '\0';
    }
    return RX_CONF_OK;
}

/* gzip_disable regex ...: matched against User-Agent, caseless (nginx);
 * "msie6" is the fast special mask "MSIE [4-6]\." without "SV1". */
static const char *
set_disable(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_gzip_conf_t *gcf = conf;
    rx_str_t            *value = cf->args->elts;
    rx_regex_t         **re;
    rx_uint_t            i;
    char                 err[256];

    gcf->disable_set = true;
    for (i = 1; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "msie6")) {
            gcf->disable_msie6 = 1;
            continue;
        }
        if (gcf->disable == NULL) {
            gcf->disable = rx_array_create(cf->pool, 2, sizeof(rx_regex_t *));
            if (gcf->disable == NULL) {
                return RX_CONF_ERROR;
            }
        }
        re = rx_array_push(gcf->disable);
        if (re == NULL) {
            return RX_CONF_ERROR;
        }
        *re = rx_regex_compile(cf->pool, &value[i], true, err, sizeof(err));
        if (*re == NULL) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

/* gzip_buffers number size */
static const char *
set_buffers(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_gzip_conf_t *gcf = conf;
    rx_str_t            *value = cf->args->elts;
    rx_int_t             n;
    ssize_t              size;

    if (gcf->bufs_num != RX_CONF_UNSET) {
        return "is duplicate";
    }
    n = rx_atoi(value[1].data, value[1].len);
    size = rx_parse_size(&value[2]);
    if (n <= 0 || size <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s %s\" in "
                          "\"%s\" directive, it must be a number of buffers "
                          "and their size (e.g. 32 4k)", value[1].data,
                          value[2].data, value[0].data);
        return RX_CONF_ERROR;
    }
    gcf->bufs_num = n;
    gcf->bufs_size = (size_t) size;
    return RX_CONF_OK;
}

/* gzip_window / gzip_hash: a power-of-two size, stored as zlib wants it */
static const char *
set_pow2(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    const pow2_post_t *post = cmd->post;
    rx_int_t          *field = rx_conf_field(conf, cmd, rx_int_t);
    rx_str_t          *value = cf->args->elts;
    ssize_t            size;
    int                bits;

    if (*field != RX_CONF_UNSET) {
        return "is duplicate";
    }
    size = rx_parse_size(&value[1]);
    for (bits = post->min_log2; bits <= post->max_log2; bits++) {
        if (size == (ssize_t) 1 << bits) {
            *field = bits - post->bias;
            return RX_CONF_OK;
        }
    }
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in \"%s\" "
                      "directive, it must be a power of two from %d to %dk",
                      value[1].data, value[0].data, 1 << post->min_log2,
                      1 << (post->max_log2 - 10));
    return RX_CONF_ERROR;
}

/* ---- the response's side ------------------------------------------------ */

/* Is the response's type (without parameters) in gzip_types? */
static bool
type_ok(rx_http_request_t *r, rx_http_gzip_conf_t *conf)
{
    rx_str_t *ct = &r->headers_out.content_type, *t = conf->types->elts;
    size_t    len = 0;
    rx_uint_t i;

    if (conf->types_any) {
        return true;
    }
    while (len < ct->len && ct->data[len] != ';'
           && !RX_GZIP_OWS(ct->data[len])) {
        len++;
    }
    for (i = 0; len && i < conf->types->nelts; i++) {
        if (t[i].len == len && strncasecmp(t[i].data, ct->data, len) == 0) {
            return true;
        }
    }
    return false;
}

/* ---- the header filter -------------------------------------------------- */

/* A strong ETag becomes weak: the compressed bytes differ (nginx 1.7.3). */
static rx_int_t
weaken_etag(rx_http_request_t *r)
{
    rx_table_elt_t *etag = r->headers_out.etag;
    char           *p;

    if (etag == NULL || etag->deleted
        || (etag->value.len > 2 && etag->value.data[0] == 'W'
            && etag->value.data[1] == '/')) {
        return RX_OK;
    }
    if (etag->value.len == 0 || etag->value.data[0] != '"') {
        etag->deleted = true;           /* not a valid entity tag */
        r->headers_out.etag = NULL;
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, etag->value.len + 2);
    if (p == NULL) {
        return RX_ERROR;
    }
    p[0] = 'W';
    p[1] = '/';
    memcpy(p + 2, etag->value.data, etag->value.len);
    etag->value.data = p;
    etag->value.len += 2;
    return RX_OK;
}


static rx_int_t
gzip_header_filter(rx_http_request_t *r)
{
    static rx_str_t      gzip = rx_string("gzip");
    static rx_str_t      ae = rx_string("Accept-Encoding");
    rx_http_gzip_conf_t *conf = rx_http_get_module_loc_conf(r,
                                    rx_http_gzip_module);
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_http_gzip_ctx_t  *ctx;
    rx_table_elt_t      *h;
    rx_uint_t            status = ho->status ? ho->status : RX_HTTP_OK;

    if (!conf->enable
        || (status != RX_HTTP_OK && status != RX_HTTP_FORBIDDEN
            && status != RX_HTTP_NOT_FOUND)
        || (ho->content_encoding && !ho->content_encoding->deleted
            && ho->content_encoding->value.len)
        || ((h = rx_http_gzip_find_header(&ho->headers, "Content-Encoding"))
            && h->value.len)
        || (ho->content_length_n != -1
            && ho->content_length_n < conf->min_length)
        || !type_ok(r, conf)) {
        return next_header(r);
    }
    /* gzip_static may have said it already */
    h = rx_http_gzip_find_header(&ho->headers, "Vary");
    if (conf->vary && (h == NULL || !rx_str_caseeq(&h->value, "Accept-Encoding"))
        && rx_http_add_header_out(r, "Vary", &ae) == NULL) {
        return RX_ERROR;
    }
    if (!rx_http_gzip_ok(r, conf)) {
        return next_header(r);
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_ERROR;
    }
    ctx->conf = conf;
    ctx->length = ho->content_length_n;
    ctx->in_tail = &ctx->in;
    ho->content_encoding = rx_http_add_header_out(r, "Content-Encoding", &gzip);
    if (ho->content_encoding == NULL || weaken_etag(r) != RX_OK) {
        return RX_ERROR;
    }
    /* the length is unknown now: chunked for HTTP/1.1, else the close */
    rx_http_clear_content_length(r);
    /* byte ranges of the compressed form mean nothing to the client */
    r->allow_ranges = 0;
    h = rx_http_gzip_find_header(&ho->headers, "Accept-Ranges");
    if (h) {
        h->deleted = true;
    }
    /* producers keep the body in memory (static: no splice) */
    r->filter_need_in_memory = 1;
    r->gzip_ctx = ctx;
    return next_header(r);
}

/* ---- the body filter ---------------------------------------------------- */

rx_chain_t *
rx_http_gzip_get_link(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx)
{
    return rx_chain_get_free_link(r->pool, &ctx->free);
}

/* Takes the links of in (the buffers stay the producer's). */
static rx_int_t
queue_input(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx, rx_chain_t *in)
{
    rx_int_t rc = rx_chain_take_links(r->pool, &ctx->free, in, &ctx->in_tail);

    if (rc == RX_DECLINED) {
        /* r->filter_need_in_memory asks producers for memory */
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "gzip filter got a file "
                                  "buffer: its producer ignored "
                                  "filter_need_in_memory");
        return RX_ERROR;
    }
    return rc;
}

rx_buf_t *
rx_http_gzip_take_input(rx_http_gzip_ctx_t *ctx)
{
    rx_chain_t *cl = ctx->in;
    rx_buf_t   *b;

    if (cl == NULL) {
        return NULL;
    }
    ctx->in = cl->next;
    if (ctx->in == NULL) {
        ctx->in_tail = &ctx->in;
    }
    cl->next = ctx->free;
    ctx->free = cl;
    b = cl->buf;
    ctx->last |= b->last_buf;
    ctx->flush |= b->flush;
    return b;
}

static void
exit_process(rx_cycle_t *cycle)
{
#if (RX_HAVE_LIBDEFLATE)
    rx_http_gzip_whole_free();
#endif
    rx_unused(cycle);
}

static rx_int_t
gzip_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    rx_http_gzip_ctx_t *ctx = r->gzip_ctx;
    rx_chain_t         *out = NULL, **ll = &out, *cl;
    rx_int_t            rc;

    if (ctx == NULL || ctx->done || r->header_only) {
        return next_body(r, in);
    }
    if (queue_input(r, ctx, in) != RX_OK) {
        return RX_ERROR;
    }
    if (ctx->in == NULL && ctx->zs.avail_in == 0 && !ctx->last && !ctx->flush) {
        return next_body(r, NULL);        /* nothing to deflate */
    }
#if (RX_HAVE_LIBDEFLATE)
    if (!ctx->stream && (rc = rx_http_gzip_whole(r, ctx, &ll)) != RX_DECLINED) {
        if (rc == RX_ERROR) {
            return RX_ERROR;
        }
        r->filter_buffered = 0;               /* nothing of theirs kept */
        goto pass;
    }
#endif
    rc = rx_http_gzip_deflate(r, ctx, &ll);
    if (rc == RX_ERROR) {
        return RX_ERROR;
    }
    /* input left over waits for buffers: the writer calls back (on_sent)
     * before the producer may reuse its buffers */
    r->filter_buffered = rc == RX_AGAIN;
#if (RX_HAVE_LIBDEFLATE)
pass:
#endif
    /* even with nothing to pass (deflate keeps its input for now), the
     * writer must run: the header may be waiting in r->out, and its send
     * is what brings the producer back for more */
    rc = next_body(r, out);
    while (out) {                         /* downstream keeps its own links */
        cl = out->next;
        out->next = ctx->free;
        ctx->free = out;
        out = cl;
    }
    return rc;
}

/* ---- $gzip_ratio -------------------------------------------------------- */

static rx_int_t
gzip_ratio_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_gzip_ctx_t *ctx = r->gzip_ctx;
    uint64_t            whole, frac;

    if (ctx == NULL || ctx->zout == 0) {
        v->not_found = 1;
        return RX_OK;
    }
    /* two decimals, rounded half up, as nginx prints it */
    whole = ctx->zin / ctx->zout;
    frac = ctx->zin * 100 / ctx->zout % 100;
    if (ctx->zin * 1000 / ctx->zout % 10 > 4) {
        if (++frac > 99) {
            whole++;
            frac = 0;
        }
    }
    v->data = rx_pnalloc(r->pool, 32);
    if (v->data == NULL) {
        return RX_ERROR;
    }
    v->len = (size_t) snprintf(v->data, 32, "%" PRIu64 ".%02" PRIu64,
                               whole, frac);
    return RX_OK;
}

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    static rx_str_t     name = rx_string("gzip_ratio");
    rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                 RX_HTTP_VAR_NOCACHEABLE);

    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = gzip_ratio_variable;
    return RX_OK;
}

/* Takes the tops of both chains and passes on to what was there. */
static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = gzip_header_filter;
    top->body = gzip_body_filter;
}
