/*
 * sub_filter.c: nginx's sub module: a body filter that replaces strings in
 * responses of sub_filter_types (sub_filter, sub_filter_once,
 * sub_filter_types, sub_filter_last_modified). Matching ignores ASCII
 * case and streams: a match cut across buffers is found, by holding back
 * at most the longest string's length minus one byte between calls. Bytes
 * are copied into the filter's own output buffers, which are used again
 * once the writer has sent them, so the producer's buffers are free as
 * soon as the filter returns.
 */
#include "http.h"
#include "filter_types.h"
#include "http_script.h"

#define SUB_BUF_SIZE   16384       /* one output buffer */
#define SUB_MAX_PAIRS  255         /* nginx's limit */

#define sub_lower(c)  ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20 : (c))

typedef struct {
    rx_http_complex_value_t  match;    /* lower-cased when constant */
    rx_http_complex_value_t  value;
} sub_pair_t;

typedef struct {
    rx_array_t  *pairs;        /* sub_pair_t; NULL: none at this level */
    rx_int_t     once;         /* sub_filter_once */
    rx_int_t     last_modified;  /* sub_filter_last_modified */
    rx_filter_types_t  types;  /* sub_filter_types */
} sub_conf_t;

/* One string of a response: the match made from its pair, the
 * replacement evaluated at its first use. */
typedef struct {
    rx_str_t                        match;
    rx_str_t                        value;
    const rx_http_complex_value_t  *cv;
    bool                            evaluated;
    bool                            applied;   /* once: it was replaced */
} sub_match_t;

/* One response. held keeps the text that may begin a match until more
 * comes; output buffers are ours and free again when pos == last (the
 * writer sent them, or gzip took their bytes). */
typedef struct {
    sub_match_t   *m;
    rx_uint_t      n;
    rx_uint_t      applied;
    bool           once;
    bool           done;          /* once, all replaced: pass through */
    unsigned char  first[256];    /* some match starts with this byte */
    char          *held;          /* capacity: the longest match */
    size_t         held_len;
    rx_array_t     bufs;          /* rx_buf_t *: our output buffers */
    rx_buf_t      *cur;           /* being filled, not passed on yet */
    rx_chain_t    *free;          /* spare links */
    rx_chain_t    *out;
    rx_chain_t   **last_out;
} sub_ctx_t;

static const char *set_sub_filter(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static void init_filters(rx_http_filters_t *top);

#define SUB_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t sub_commands[] = {
    { "sub_filter", SUB_CONF | RX_CONF_TAKE2, set_sub_filter,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "sub_filter_types", SUB_CONF | RX_CONF_1MORE, rx_filter_types_set,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(sub_conf_t, types), NULL },
    { "sub_filter_once", SUB_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(sub_conf_t, once), NULL },
    { "sub_filter_last_modified", SUB_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(sub_conf_t, last_modified), NULL },
    rx_null_command
};

static const rx_http_module_t sub_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf, init_filters
};

rx_module_t rx_http_sub_filter_module = {
    "rx_http_sub_filter_module", 0, 0, RX_HTTP_MODULE, &sub_module_ctx,
    sub_commands, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

/* ---- configuration ------------------------------------------------------ */

static void *
create_conf(rx_conf_t *cf)
{
    sub_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->once = RX_CONF_UNSET;
    c->last_modified = RX_CONF_UNSET;
    rx_filter_types_init(&c->types);
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    sub_conf_t *p = parent, *c = child;

    if (c->pairs == NULL) {
        c->pairs = p->pairs;
    }
    rx_conf_merge_value(c->once, p->once, 1);
    rx_conf_merge_value(c->last_modified, p->last_modified, 0);
    return rx_filter_types_merge(cf, &p->types, &c->types) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* sub_filter string replacement: both may hold variables */
static const char *
set_sub_filter(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    sub_conf_t *scf = conf;
    rx_str_t   *value = cf->args->elts;
    sub_pair_t *pair;
    size_t      k;

    rx_unused(cmd);
    if (value[1].len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "empty search pattern");
        return RX_CONF_ERROR;
    }
    if (scf->pairs == NULL) {
        scf->pairs = rx_array_create(cf->pool, 2, sizeof(sub_pair_t));
        if (scf->pairs == NULL) {
            return RX_CONF_ERROR;
        }
    }
    if (scf->pairs->nelts == SUB_MAX_PAIRS) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                          "number of search patterns exceeds 255");
        return RX_CONF_ERROR;
    }
    pair = rx_array_push(scf->pairs);
    if (pair == NULL
        || rx_http_compile_complex_value(cf, &value[1], &pair->match) != RX_OK
        || rx_http_compile_complex_value(cf, &value[2], &pair->value) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (rx_http_complex_value_is_const(&pair->match)) {
        /* the compiled copy is ours: lower-case it once */
        for (k = 0; k < pair->match.value.len; k++) {
            pair->match.value.data[k] =
                (char) sub_lower((unsigned char) pair->match.value.data[k]);
        }
    }
    return RX_CONF_OK;
}

/* ---- the header filter -------------------------------------------------- */

/* The response's strings: constant ones from the configuration, the
 * others evaluated now and lower-cased (an empty one is skipped). */
static rx_int_t
make_matches(rx_http_request_t *r, sub_conf_t *conf, sub_ctx_t *ctx)
{
    sub_pair_t *pair = conf->pairs->elts;
    size_t      longest = 0, k;
    rx_uint_t   i;
    rx_str_t    s;

    ctx->m = rx_pcalloc(r->pool, conf->pairs->nelts * sizeof(sub_match_t));
    if (ctx->m == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < conf->pairs->nelts; i++) {
        if (rx_http_complex_value_is_const(&pair[i].match)) {
            s = pair[i].match.value;
        } else {
            if (rx_http_complex_value(r, &pair[i].match, &s) != RX_OK) {
                return RX_ERROR;
            }
            if (s.len == 0) {
                continue;
            }
            s.data = rx_pstrdup_c(r->pool, s.data, s.len);
            if (s.data == NULL) {
                return RX_ERROR;
            }
            for (k = 0; k < s.len; k++) {
                s.data[k] = (char) sub_lower((unsigned char) s.data[k]);
            }
        }
        ctx->m[ctx->n].match = s;
        ctx->m[ctx->n].cv = &pair[i].value;
        ctx->first[(unsigned char) s.data[0]] = 1;
        longest = rx_max(longest, s.len);
        ctx->n++;
    }
    if (ctx->n == 0) {
        return RX_DECLINED;
    }
    ctx->held = rx_pnalloc(r->pool, longest);
    return ctx->held ? RX_OK : RX_ERROR;
}

static rx_int_t
sub_header_filter(rx_http_request_t *r)
{
    sub_conf_t *conf = rx_http_get_module_loc_conf(r, rx_http_sub_filter_module);
    sub_ctx_t  *ctx;
    rx_int_t    rc;

    /* a 206's ranges would no longer describe the body: it goes as it is */
    if (conf->pairs == NULL || r != r->main
        || r->headers_out.content_length_n == 0
        || r->headers_out.status == RX_HTTP_PARTIAL_CONTENT
        || !rx_filter_types_match(r, &conf->types)) {
        return next_header(r);
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_ERROR;
    }
    rc = make_matches(r, conf, ctx);
    if (rc == RX_DECLINED) {
        return next_header(r);
    }
    if (rc != RX_OK
        || rx_array_init(&ctx->bufs, r->pool, 4, sizeof(rx_buf_t *)) != RX_OK
        || rx_filter_validators(r, conf->last_modified) != RX_OK) {
        return RX_ERROR;
    }
    ctx->once = conf->once;
    ctx->last_out = &ctx->out;
    rx_http_clear_content_length(r);
    /* producers keep the body in memory (static: no splice) */
    r->filter_need_in_memory = 1;
    r->sub_filter_ctx = ctx;
    return next_header(r);
}

/* ---- output ------------------------------------------------------------- */

static rx_int_t
link_buf(rx_http_request_t *r, sub_ctx_t *ctx, rx_buf_t *b)
{
    return rx_chain_append_buf(r->pool, &ctx->free, &ctx->last_out, b);
}

static rx_buf_t *
get_buf(rx_http_request_t *r, sub_ctx_t *ctx)
{
    return rx_buf_get_spent(r->pool, &ctx->bufs, SUB_BUF_SIZE);
}

/* Copies len bytes to the output. */
static rx_int_t
emit(rx_http_request_t *r, sub_ctx_t *ctx, const char *data, size_t len)
{
    size_t n;

    while (len) {
        if (ctx->cur && ctx->cur->last == ctx->cur->end) {
            if (link_buf(r, ctx, ctx->cur) != RX_OK) {
                return RX_ERROR;
            }
            ctx->cur = NULL;
        }
        if (ctx->cur == NULL && (ctx->cur = get_buf(r, ctx)) == NULL) {
            return RX_ERROR;
        }
        n = rx_min(len, (size_t) (ctx->cur->end - ctx->cur->last));
        memcpy(ctx->cur->last, data, n);
        ctx->cur->last += n;
        data += n;
        len -= n;
    }
    return RX_OK;
}

/* ---- matching ----------------------------------------------------------- */

/* The text being scanned: what was held, then the new bytes. */
typedef struct {
    const char  *held;
    size_t       hlen;
    const char  *data;
    size_t       n;          /* hlen + the new bytes */
} sub_text_t;

static unsigned char
text_at(const sub_text_t *t, size_t i)
{
    return (unsigned char) (i < t->hlen ? t->held[i] : t->data[i - t->hlen]);
}

static rx_int_t
emit_text(rx_http_request_t *r, sub_ctx_t *ctx, const sub_text_t *t,
    size_t from, size_t to)
{
    size_t a;

    if (from < t->hlen) {
        a = rx_min(to, t->hlen);
        if (emit(r, ctx, t->held + from, a - from) != RX_OK) {
            return RX_ERROR;
        }
        from = a;
    }
    if (from < to) {
        return emit(r, ctx, t->data + (from - t->hlen), to - from);
    }
    return RX_OK;
}

#define SUB_NONE     -1
#define SUB_PARTIAL  -2

/* Which string matches at i: the first listed one that matches whole;
 * SUB_PARTIAL when one listed before it could still match with more
 * bytes (unless final: then the text ends here); SUB_NONE. */
static rx_int_t
match_at(sub_ctx_t *ctx, const sub_text_t *t, size_t i, bool final)
{
    rx_uint_t    k;
    size_t       j;
    sub_match_t *m;

    for (k = 0; k < ctx->n; k++) {
        m = &ctx->m[k];
        if (m->applied) {
            continue;
        }
        for (j = 0; j < m->match.len && i + j < t->n; j++) {
            if (sub_lower(text_at(t, i + j))
                != (unsigned char) m->match.data[j]) {
                break;
            }
        }
        if (j == m->match.len) {
            return (rx_int_t) k;
        }
        if (i + j == t->n && !final) {
            return SUB_PARTIAL;
        }
    }
    return SUB_NONE;
}

/* The replacement of match k, evaluated at its first use. */
static rx_int_t
replace(rx_http_request_t *r, sub_ctx_t *ctx, rx_uint_t k)
{
    sub_match_t *m = &ctx->m[k];

    if (!m->evaluated) {
        if (rx_http_complex_value(r, m->cv, &m->value) != RX_OK) {
            return RX_ERROR;
        }
        m->evaluated = true;
    }
    if (ctx->once) {
        m->applied = true;
        ctx->done = ++ctx->applied == ctx->n;
    }
    return emit(r, ctx, m->value.data, m->value.len);
}

/*
 * Scans held + data: literal bytes and replacements go to the output;
 * a tail that may begin a match is held for the next call (never when
 * final: the last buffer or a flush). After the last replacement of
 * "once" the rest is copied as it is.
 */
static rx_int_t
scan(rx_http_request_t *r, sub_ctx_t *ctx, const char *data, size_t len,
    bool final)
{
    sub_text_t t = { ctx->held, ctx->held_len, data, ctx->held_len + len };
    size_t     i = 0, lit = 0, keep;
    rx_int_t   k = SUB_NONE;

    while (i < t.n && !ctx->done) {
        if (!ctx->first[sub_lower(text_at(&t, i))]) {
            i++;
            continue;
        }
        k = match_at(ctx, &t, i, final);
        if (k == SUB_PARTIAL) {
            break;
        }
        if (k == SUB_NONE) {
            i++;
            continue;
        }
        if (emit_text(r, ctx, &t, lit, i) != RX_OK
            || replace(r, ctx, (rx_uint_t) k) != RX_OK) {
            return RX_ERROR;
        }
        i += ctx->m[k].match.len;
        lit = i;
    }
    keep = k == SUB_PARTIAL ? i : t.n;
    if (emit_text(r, ctx, &t, lit, keep) != RX_OK) {
        return RX_ERROR;
    }
    /* the tail to hold is shorter than the longest match (data may be
     * NULL: an empty last buffer) */
    if (keep < t.hlen) {
        memmove(ctx->held, ctx->held + keep, t.hlen - keep);
        ctx->held_len = t.hlen - keep;
        if (len) {
            memcpy(ctx->held + ctx->held_len, data, len);
        }
        ctx->held_len += len;
    } else {
        ctx->held_len = t.n - keep;
        if (ctx->held_len) {
            memcpy(ctx->held, data + (keep - t.hlen), ctx->held_len);
        }
    }
    return RX_OK;
}

/* The last buffer or a flush: on the output's last bytes, or alone. */
static rx_int_t
mark_end(rx_http_request_t *r, sub_ctx_t *ctx, const rx_buf_t *in)
{
    rx_buf_t *b = ctx->cur;

    if (b == NULL || b->last == b->pos) {
        b = rx_calloc_buf(r->pool);
        if (b == NULL) {
            return RX_ERROR;
        }
        b->sync = 1;
        b->fd = -1;
    } else {
        ctx->cur = NULL;
    }
    b->last_buf = in->last_buf;
    b->flush = in->flush;
    return link_buf(r, ctx, b);
}

static rx_int_t
sub_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    sub_ctx_t  *ctx = r->sub_filter_ctx;
    rx_chain_t *cl;
    rx_buf_t   *b;
    rx_int_t    rc;

    if (ctx == NULL || r->header_only
        || (ctx->done && (ctx->cur == NULL || ctx->cur->last == ctx->cur->pos))) {
        return next_body(r, in);
    }
    for (; in; in = in->next) {
        b = in->buf;
        if (b->in_file && !b->memory) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "sub filter got a "
                                      "file buffer: its producer ignored "
                                      "filter_need_in_memory");
            return RX_ERROR;
        }
        if (ctx->done) {
            /* nothing more to replace: the producer's buffers as they are,
             * after what was already made */
            if (ctx->cur && ctx->cur->last > ctx->cur->pos) {
                if (link_buf(r, ctx, ctx->cur) != RX_OK) {
                    return RX_ERROR;
                }
                ctx->cur = NULL;
            }
            if (link_buf(r, ctx, b) != RX_OK) {
                return RX_ERROR;
            }
            continue;
        }
        if (scan(r, ctx, b->pos, (size_t) (b->last - b->pos),
                 b->last_buf || b->flush) != RX_OK) {
            return RX_ERROR;
        }
        b->pos = b->last;                     /* all of it is copied */
        if ((b->last_buf || b->flush) && mark_end(r, ctx, b) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (ctx->cur && ctx->cur->last > ctx->cur->pos) {
        if (link_buf(r, ctx, ctx->cur) != RX_OK) {
            return RX_ERROR;
        }
        ctx->cur = NULL;
    }
    /* even with nothing to pass, the writer runs: the header may wait in
     * r->out for the first body bytes */
    cl = ctx->out;
    ctx->out = NULL;
    ctx->last_out = &ctx->out;
    rc = next_body(r, cl);
    while (cl) {                              /* downstream keeps its own */
        rx_chain_t *next = cl->next;

        cl->next = ctx->free;
        ctx->free = cl;
        cl = next;
    }
    return rc;
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = sub_header_filter;
    top->body = sub_body_filter;
}
