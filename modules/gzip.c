/*
 * gzip.c: the gzip filter (and the only zlib and libdeflate user). The
 * header filter decides whether a response is compressed (the gzip_*
 * directives, and gzip_ok.c for the request's side) and rewrites the
 * headers; the body filter deflates each chain as it arrives into at most
 * gzip_buffers output buffers and passes them on as they fill, so that
 * neither the body nor its compressed form is ever held whole. When built
 * with libdeflate, a body whose compressed form surely fits in
 * gzip_buffers is compressed in one call instead (in place when it arrives
 * whole, else gathered from its pieces). $gzip_ratio.
 */
#include <ctype.h>
#include <zlib.h>
#include "http.h"
#if (RX_HAVE_LIBDEFLATE)
#include <libdeflate.h>
#endif
#include "http_variables.h"
#include "gzip.h"
#include "regex.h"

/* One compressed response. Output buffers are ours until the writer has
 * sent them (pos == last again); input buffers belong to the producer,
 * which reuses them only once everything queued is sent and no filter
 * holds input (r->filter_buffered). */
typedef struct {
    z_stream              zs;
    rx_http_gzip_conf_t  *conf;
    int64_t               length;     /* Content-Length before us, or -1 */
    rx_chain_t           *in;         /* input links not yet taken */
    rx_chain_t          **in_tail;
    rx_chain_t           *free;       /* spare chain links */
    rx_buf_t             *in_buf;     /* being deflated (zs.next_in) */
    rx_buf_t            **bufs;       /* output buffers, up to bufs_num */
    rx_int_t              nbufs;
    rx_buf_t             *cur;        /* deflate writes here */
    uint64_t              zin, zout;  /* totals, set when the stream ends */
    bool                  zinit;      /* deflateEnd is owed */
    bool                  last;       /* last_buf seen */
    bool                  flush;      /* a flush was asked */
    bool                  done;       /* the stream ended */
    bool                  stream;     /* zlib's stream, not one call */
    rx_buf_t             *gathered;   /* pieces kept for one call */
} rx_http_gzip_ctx_t;

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

static void
zstream_end(void *data)
{
    rx_http_gzip_ctx_t *ctx = data;

    if (ctx->zinit) {
        deflateEnd(&ctx->zs);
        ctx->zinit = false;
    }
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

static rx_chain_t *
get_link(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx)
{
    rx_chain_t *cl = ctx->free;

    if (cl) {
        ctx->free = cl->next;
        cl->next = NULL;
        return cl;
    }
    return rx_alloc_chain_link(r->pool);
}

/* Takes the links of in (the buffers stay the producer's). */
static rx_int_t
queue_input(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx, rx_chain_t *in)
{
    rx_chain_t *cl;

    for (; in; in = in->next) {
        if (in->buf->in_file && !in->buf->memory) {
            /* r->filter_need_in_memory asks producers for memory */
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "gzip filter got a "
                                      "file buffer: its producer ignored "
                                      "filter_need_in_memory");
            return RX_ERROR;
        }
        cl = get_link(r, ctx);
        if (cl == NULL) {
            return RX_ERROR;
        }
        cl->buf = in->buf;
        *ctx->in_tail = cl;
        ctx->in_tail = &cl->next;
    }
    return RX_OK;
}

/* zlib's memory follows the body: a known small length gets a smaller
 * window and hash (nginx does the same), whatever gzip_window says. */
static rx_int_t
deflate_start(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx)
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);
    int                wbits = (int) ctx->conf->wbits;
    int                memlevel = (int) ctx->conf->memlevel;
    int                rc;

    if (cln == NULL) {
        return RX_ERROR;
    }
    if (ctx->length > 0) {
        while (ctx->length < (1 << (wbits - 1)) && wbits > 9) {
            wbits--;
            memlevel--;
        }
        memlevel = rx_max(memlevel, 1);
    }
    rc = deflateInit2(&ctx->zs, (int) ctx->conf->level, Z_DEFLATED,
                      wbits + 16, memlevel, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0,
                                  "deflateInit2() failed: %d", rc);
        return RX_ERROR;
    }
    ctx->zinit = true;
    cln->handler = zstream_end;
    cln->data = ctx;
    return RX_OK;
}

/* A free output buffer: one the writer has sent, else a new one while
 * fewer than gzip_buffers exist; NULL when all are in flight. */
static rx_buf_t *
get_buf(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx)
{
    rx_int_t  i, num = ctx->conf->bufs_num;
    rx_buf_t *b;

    for (i = 0; i < ctx->nbufs; i++) {
        b = ctx->bufs[i];
        if (b->pos == b->last) {
            b->pos = b->last = b->start;
            b->flush = b->last_buf = 0;
            return b;
        }
    }
    if (ctx->nbufs == num) {
        return NULL;
    }
    if (ctx->bufs == NULL) {
        ctx->bufs = rx_palloc(r->pool, (size_t) num * sizeof(rx_buf_t *));
        if (ctx->bufs == NULL) {
            return NULL;
        }
    }
    b = rx_create_temp_buf(r->pool, ctx->conf->bufs_size);
    if (b) {
        ctx->bufs[ctx->nbufs++] = b;
    }
    return b;
}

/* Gives the first queued link back to the spare ones and notes its
 * buffer's flags; the buffer, or NULL when none is queued. */
static rx_buf_t *
take_input(rx_http_gzip_ctx_t *ctx)
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

/* Moves deflate to the next input buffer; false when none is queued. */
static bool
next_input(rx_http_gzip_ctx_t *ctx)
{
    rx_buf_t *b = take_input(ctx);

    if (b == NULL) {
        return false;
    }
    ctx->in_buf = b;
    ctx->zs.next_in = (Bytef *) b->pos;
    ctx->zs.avail_in = (uInt) (b->last - b->pos);
    return true;
}

/*
 * Deflates what is queued into free output buffers and links the full
 * ones (and the last one) to *out. Stops when the input is used up, or
 * when every output buffer is in flight (the input stays queued).
 */
static rx_int_t
deflate_chain(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx, rx_chain_t ***ll)
{
    rx_chain_t *cl;
    int         mode, rc;
    bool        emit;

    for (;;) {
        if (ctx->zs.avail_in == 0 && next_input(ctx)) {
            continue;
        }
        if (ctx->zs.avail_in == 0) {
            mode = ctx->last ? Z_FINISH : ctx->flush ? Z_SYNC_FLUSH : -1;
            if (mode == -1) {
                return RX_OK;                      /* wants more input */
            }
        } else {
            mode = Z_NO_FLUSH;
        }
        if (ctx->cur == NULL && (ctx->cur = get_buf(r, ctx)) == NULL) {
            return ctx->nbufs ? RX_AGAIN : RX_ERROR;
        }
        ctx->zs.next_out = (Bytef *) ctx->cur->last;
        ctx->zs.avail_out = (uInt) (ctx->cur->end - ctx->cur->last);
        rc = deflate(&ctx->zs, mode);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0,
                                      "deflate() failed: %d, %d", mode, rc);
            return RX_ERROR;
        }
        ctx->cur->last = (char *) ctx->zs.next_out;
        if (ctx->in_buf) {
            ctx->in_buf->pos = (char *) ctx->zs.next_in;
        }
        emit = ctx->zs.avail_out == 0;
        if (rc == Z_STREAM_END) {
            ctx->zin = ctx->zs.total_in;
            ctx->zout = ctx->zs.total_out;
            zstream_end(ctx);                     /* free zlib's memory now */
            ctx->done = true;
            ctx->cur->last_buf = 1;
            emit = true;
        } else if (mode == Z_SYNC_FLUSH && ctx->zs.avail_out > 0) {
            ctx->flush = false;                   /* all of it is out */
            ctx->cur->flush = 1;
            emit = ctx->cur->last > ctx->cur->pos;
        }
        if (emit) {
            cl = get_link(r, ctx);
            if (cl == NULL) {
                return RX_ERROR;
            }
            cl->buf = ctx->cur;
            **ll = cl;
            *ll = &cl->next;
            ctx->cur = NULL;
        }
        if (ctx->done) {
            return RX_OK;
        }
    }
}

#if (RX_HAVE_LIBDEFLATE)

/* One compressor per level, made in each worker on first use: a
 * compressor keeps no state from one call to the next. */
static struct libdeflate_compressor *whole_compressors[10];

static struct libdeflate_compressor *
compressor(rx_http_gzip_ctx_t *ctx)
{
    struct libdeflate_compressor **comp = &whole_compressors[ctx->conf->level];

    if (*comp == NULL) {
        *comp = libdeflate_alloc_compressor((int) ctx->conf->level);
    }
    return *comp;
}

/* Whether n bytes of input surely compress into gzip_buffers. */
static bool
fits(rx_http_gzip_ctx_t *ctx, struct libdeflate_compressor *comp, size_t n)
{
    return libdeflate_gzip_compress_bound(comp, n)
           <= (size_t) ctx->conf->bufs_num * ctx->conf->bufs_size;
}

/* Compresses len bytes at data, the whole body, into one output buffer. */
static rx_int_t
compress_whole(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    struct libdeflate_compressor *comp, const char *data, size_t len,
    rx_chain_t ***ll)
{
    size_t      bound = libdeflate_gzip_compress_bound(comp, len), n;
    rx_buf_t   *b = rx_create_temp_buf(r->pool, bound);
    rx_chain_t *cl = get_link(r, ctx);

    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    n = libdeflate_gzip_compress(comp, data, len, b->last, bound);
    if (n == 0) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "libdeflate_gzip_"
                                  "compress() failed for %zu bytes", len);
        return RX_ERROR;
    }
    b->last += n;
    b->last_buf = 1;
    ctx->zin = len;
    ctx->zout = n;
    ctx->done = true;
    cl->buf = b;
    **ll = cl;
    *ll = &cl->next;
    return RX_OK;
}

/* Appends len bytes to the gathered input, growing it (16 KiB, doubling,
 * or the known length at once); RX_DECLINED when the total would not
 * surely compress into gzip_buffers. */
static rx_int_t
gather(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    struct libdeflate_compressor *comp, const char *data, size_t len)
{
    rx_buf_t *g = ctx->gathered, *bigger;
    size_t    used = g ? (size_t) (g->last - g->pos) : 0, need = used + len;
    size_t    size;

    if (!fits(ctx, comp, need)) {
        return RX_DECLINED;
    }
    if (g == NULL || (size_t) (g->end - g->last) < len) {
        size = g ? (size_t) (g->end - g->start) * 2 : 16384;
        if (ctx->length > 0 && (size_t) ctx->length > size) {
            size = (size_t) ctx->length;
        }
        size = rx_max(size, need);
        bigger = rx_create_temp_buf(r->pool, size);
        if (bigger == NULL) {
            return RX_ERROR;
        }
        if (used) {
            memcpy(bigger->last, g->pos, used);
            bigger->last += used;
        }
        if (g) {
            (void) rx_pfree(r->pool, g->start);   /* a large block: back */
        }
        ctx->gathered = g = bigger;
    }
    memcpy(g->last, data, len);
    g->last += len;
    return RX_OK;
}

/*
 * Bodies up to what gzip_buffers can surely hold compressed go through
 * libdeflate in one call: ~60 % of zlib's time at levels 1 and 6, and a
 * few % smaller (docs/performance.md). A body queued whole in one buffer
 * (a static file up to the read size, a short response read at once) is
 * compressed where it lies; one that comes in pieces (an upstream's
 * buffers) is copied aside until its end. RX_OK: compressed, done;
 * RX_AGAIN: all input taken, more to come; RX_DECLINED: zlib's stream from
 * here on, the gathered bytes first (too long for gzip_buffers, a flush
 * asked, or no compressor).
 */
static rx_int_t
deflate_whole(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx, rx_chain_t ***ll)
{
    struct libdeflate_compressor *comp = compressor(ctx);
    rx_chain_t *cl;
    rx_buf_t   *b, *data = NULL;
    bool        last = false, pieces = false;
    rx_int_t    rc;

    if (comp == NULL
        || (ctx->length > 0 && !fits(ctx, comp, (size_t) ctx->length))) {
        goto stream;
    }
    for (cl = ctx->in; cl; cl = cl->next) {
        last |= cl->buf->last_buf;
        if (cl->buf->last > cl->buf->pos) {
            pieces |= data != NULL;
            data = cl->buf;
        }
    }
    if (last && !pieces && ctx->gathered == NULL) {
        /* whole in one buffer: no copy */
        if (data && !fits(ctx, comp, (size_t) (data->last - data->pos))) {
            goto stream;
        }
        rc = compress_whole(r, ctx, comp, data ? data->pos : "",
                            data ? (size_t) (data->last - data->pos) : 0, ll);
        if (data) {
            data->pos = data->last;
        }
        while (take_input(ctx)) {             /* every link back */
        }
        return rc;
    }
    while (ctx->in) {
        b = ctx->in->buf;
        if (b->flush && !b->last_buf) {
            goto stream;                      /* it wants bytes out now */
        }
        if (b->last > b->pos) {
            rc = gather(r, ctx, comp, b->pos, (size_t) (b->last - b->pos));
            if (rc == RX_DECLINED) {
                goto stream;
            }
            if (rc != RX_OK) {
                return RX_ERROR;
            }
            b->pos = b->last;
        }
        (void) take_input(ctx);               /* the link back */
    }
    if (!ctx->last) {
        return RX_AGAIN;
    }
    b = ctx->gathered;
    rc = compress_whole(r, ctx, comp, b ? b->pos : "",
                        b ? (size_t) (b->last - b->pos) : 0, ll);
    if (b) {
        ctx->gathered = NULL;
        (void) rx_pfree(r->pool, b->start);
    }
    return rc;

stream:
    ctx->stream = true;
    if (ctx->gathered) {
        /* the gathered bytes go first */
        cl = get_link(r, ctx);
        if (cl == NULL) {
            return RX_ERROR;
        }
        cl->buf = ctx->gathered;
        cl->next = ctx->in;
        ctx->in = cl;
        if (cl->next == NULL) {
            ctx->in_tail = &cl->next;
        }
    }
    return RX_DECLINED;
}

#endif

static void
exit_process(rx_cycle_t *cycle)
{
#if (RX_HAVE_LIBDEFLATE)
    size_t i;

    for (i = 0; i < rx_nelems(whole_compressors); i++) {
        if (whole_compressors[i]) {
            libdeflate_free_compressor(whole_compressors[i]);
            whole_compressors[i] = NULL;
        }
    }
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
    if (!ctx->stream && (rc = deflate_whole(r, ctx, &ll)) != RX_DECLINED) {
        if (rc == RX_ERROR) {
            return RX_ERROR;
        }
        r->filter_buffered = 0;               /* nothing of theirs kept */
        goto pass;
    }
#endif
    if (!ctx->zinit && deflate_start(r, ctx) != RX_OK) {
        return RX_ERROR;
    }
    rc = deflate_chain(r, ctx, &ll);
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
