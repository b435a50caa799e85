/*
 * charset.c: charset, source_charset, override_charset, charset_types: a
 * header filter that adds "; charset=NAME" to the Content-Type of
 * responses of the listed types (static files, return, error pages,
 * proxied responses), by nginx's rules; where the response's charset
 * (source_charset, or with override_charset the one a proxied response
 * names) differs, the body is recoded with the charset_map between the
 * two (charset_map.c, charset_recode.c), else nginx's error is logged.
 */
#include <ctype.h>
#include "charset.h"
#include "http_script.h"

#define RX_CHARSET_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

typedef struct {
    rx_http_complex_value_t  *charset;          /* NULL: off */
    rx_str_t                  source;           /* source_charset; len 0 unset */
    rx_int_t                  override;         /* override_charset */
    rx_array_t               *types;            /* lower-cased rx_str_t */
    rx_int_t                  types_any;        /* charset_types * */
} rx_http_charset_conf_t;

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

static const char *set_charset(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_types(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_main_conf(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_command_t charset_commands[] = {
    { "charset_map", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_TAKE2,
      rx_http_charset_map_block, RX_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "charset", RX_CHARSET_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      set_charset, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "source_charset", RX_CHARSET_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      rx_conf_set_str_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_charset_conf_t, source), NULL },
    { "override_charset", RX_CHARSET_CONF | RX_HTTP_LIF_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_charset_conf_t, override), NULL },
    { "charset_types", RX_CHARSET_CONF | RX_CONF_1MORE, set_types,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static void init_filters(rx_http_filters_t *top);

static const rx_http_module_t charset_ctx = {
    NULL, NULL, create_main_conf, NULL, NULL, NULL, create_conf, merge_conf,
    init_filters
};

rx_module_t rx_http_charset_module = {
    "rx_http_charset_module", 0, 0, RX_HTTP_MODULE, &charset_ctx,
    charset_commands, NULL, NULL, NULL, NULL
};

static const char *default_types[] = {
    "text/html", "text/xml", "text/plain", "text/vnd.wap.wml",
    "application/javascript", "application/rss+xml", NULL
};

static void *
create_main_conf(rx_conf_t *cf)
{
    rx_http_charset_main_conf_t *mcf = rx_pcalloc(cf->pool, sizeof(*mcf));

    if (mcf == NULL
        || rx_array_init(&mcf->maps, cf->pool, 2, sizeof(rx_charset_map_t))
           != RX_OK) {
        return NULL;
    }
    return mcf;
}

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_charset_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->charset = RX_CONF_UNSET_PTR;
        c->override = RX_CONF_UNSET;
        c->types = RX_CONF_UNSET_PTR;
        c->types_any = RX_CONF_UNSET;
    }
    return c;
}

static rx_int_t
push_type(rx_conf_t *cf, rx_array_t *types, const char *name, size_t len)
{
    rx_str_t *t = rx_array_push(types);
    size_t    k;

    if (t == NULL || (t->data = rx_pnalloc(cf->pool, len + 1)) == NULL) {
        return RX_ERROR;
    }
    for (k = 0; k < len; k++) {
        t->data[k] = (char) tolower((unsigned char) name[k]);
    }
    t->data[len] = '\0';
    t->len = len;
    return RX_OK;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_charset_conf_t *p = prev, *c = conf;
    const char            **d;

    rx_conf_merge_ptr(c->charset, p->charset, NULL);
    rx_conf_merge_str(c->source, p->source, "");
    rx_conf_merge_value(c->override, p->override, 0);
    if (c->types == RX_CONF_UNSET_PTR) {
        c->types = p->types;
        c->types_any = p->types_any;
    }
    if (c->types == RX_CONF_UNSET_PTR) {
        c->types = rx_array_create(cf->pool, 6, sizeof(rx_str_t));
        if (c->types == NULL) {
            return RX_CONF_ERROR;
        }
        for (d = default_types; *d; d++) {
            if (push_type(cf, c->types, *d, strlen(*d)) != RX_OK) {
                return RX_CONF_ERROR;
            }
        }
    }
    rx_conf_merge_value(c->types_any, p->types_any, 0);
    return RX_CONF_OK;
}

/* charset name | off; the name may hold variables */
static const char *
set_charset(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_charset_conf_t *c = conf;
    rx_str_t               *value = cf->args->elts;

    (void) cmd;
    if (c->charset != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "off")) {
        c->charset = NULL;
        return RX_CONF_OK;
    }
    c->charset = rx_pcalloc(cf->pool, sizeof(*c->charset));
    if (c->charset == NULL
        || rx_http_compile_complex_value(cf, &value[1], c->charset) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* charset_types mime-type ...: text/html is always in; "*" is any. */
static const char *
set_types(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_charset_conf_t *c = conf;
    rx_str_t               *value = cf->args->elts;
    rx_uint_t               i;

    (void) cmd;
    if (c->types != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    c->types = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
    if (c->types == NULL || push_type(cf, c->types, "text/html", 9) != RX_OK) {
        return RX_CONF_ERROR;
    }
    c->types_any = 0;
    for (i = 1; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "*")) {
            c->types_any = 1;
        } else if (push_type(cf, c->types, value[i].data, value[i].len)
                   != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

/* The media type's length in Content-Type (before parameters). */
static size_t
type_len(const rx_str_t *ct)
{
    size_t len = 0;

    while (len < ct->len && ct->data[len] != ';' && ct->data[len] != ' '
           && ct->data[len] != '\t') {
        len++;
    }
    return len;
}

static bool
type_ok(const rx_str_t *ct, rx_http_charset_conf_t *conf)
{
    rx_str_t *t = conf->types->elts;
    size_t    len = type_len(ct);
    rx_uint_t i;

    if (conf->types_any) {
        return true;
    }
    for (i = 0; len && i < conf->types->nelts; i++) {
        if (t[i].len == len && strncasecmp(t[i].data, ct->data, len) == 0) {
            return true;
        }
    }
    return false;
}

/* The charset a Content-Type value already names (a proxied response's
 * "text/html; charset=koi8-r"), or len 0. */
static rx_str_t
charset_param(const rx_str_t *ct)
{
    const char *p = ct->data + type_len(ct), *end = ct->data + ct->len;
    rx_str_t    cs = { 0, NULL };

    for (; p + 8 <= end; p++) {
        if (strncasecmp(p, "charset=", 8) == 0
            && p > ct->data
            && (p[-1] == ';' || p[-1] == ' ' || p[-1] == '\t')) {
            cs.data = (char *) p + 8;
            if (cs.data < end && *cs.data == '"') {
                cs.data++;
            }
            while (cs.data + cs.len < end && cs.data[cs.len] != ';'
                   && cs.data[cs.len] != '"' && cs.data[cs.len] != ' ') {
                cs.len++;
            }
            break;
        }
    }
    return cs;
}

static bool
same_charset(const rx_str_t *a, const rx_str_t *b)
{
    return a->len == b->len && strncasecmp(a->data, b->data, a->len) == 0;
}

/* The response is labelled dst: a charset parameter the type already
 * has goes, with the other parameters (nginx keeps only the type). */
static rx_int_t
set_content_type(rx_http_request_t *r, const rx_str_t *dst)
{
    rx_http_headers_out_t *ho = &r->headers_out;

    if (charset_param(&ho->content_type).len) {
        ho->content_type.len = type_len(&ho->content_type);
    }
    ho->charset = *dst;
    return RX_OK;
}

static void
no_accept_ranges(rx_http_request_t *r)
{
    rx_table_elt_t *h = r->headers_out.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (rx_str_caseeq(&h[i].key, "Accept-Ranges")) {
            h[i].deleted = true;
        }
    }
    r->headers_out.accept_ranges = NULL;
}

/* A recoded body is another representation: a strong ETag becomes weak
 * (as nginx's ngx_http_weak_etag), one it cannot read goes. */
static void
weak_etag(rx_http_request_t *r)
{
    rx_table_elt_t *etag = r->headers_out.etag;
    char           *p;

    if (etag == NULL || etag->deleted
        || (etag->value.len > 2 && etag->value.data[0] == 'W'
            && etag->value.data[1] == '/')) {
        return;
    }
    p = etag->value.len && etag->value.data[0] == '"'
        ? rx_pnalloc(r->pool, etag->value.len + 2) : NULL;
    if (p == NULL) {
        etag->deleted = true;
        r->headers_out.etag = NULL;
        return;
    }
    p[0] = 'W';
    p[1] = '/';
    memcpy(p + 2, etag->value.data, etag->value.len);
    etag->value.data = p;
    etag->value.len += 2;
}

/* The body goes from charset src to dst: with the charset_map between
 * them, the response is labelled dst and recoded; without one it keeps
 * its charset and nginx's error is logged. */
static rx_int_t
recode(rx_http_request_t *r, const rx_str_t *src, const rx_str_t *dst)
{
    rx_http_charset_main_conf_t *mcf = rx_http_get_module_main_conf(r,
                                           rx_http_charset_module);
    rx_http_headers_out_t       *ho = &r->headers_out;
    const rx_charset_map_t      *map;
    rx_charset_ctx_t            *ctx;
    bool                         reverse, utf8;

    map = rx_http_charset_find_map(mcf, src, dst, &reverse);
    if (map == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "no \"charset_map\" "
            "between the charsets \"%.*s\" and \"%.*s\"", (int) src->len,
            src->data, (int) dst->len, dst->data);
        return next_header(r);
    }
    utf8 = map->utf8;
    /* a subrequest's part, or a 206 whose ranges would no longer fit a
     * body of another length, goes as it is, labelled with its charset */
    if (r != r->main || (utf8 && ho->status == RX_HTTP_PARTIAL_CONTENT)) {
        if (ho->charset.len == 0 && charset_param(&ho->content_type).len == 0) {
            ho->charset = *src;
        }
        return next_header(r);
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL
        || rx_array_init(&ctx->bufs, r->pool, 2, sizeof(rx_buf_t *)) != RX_OK) {
        return RX_ERROR;
    }
    ctx->map = map;
    ctx->reverse = reverse;
    ctx->mode = !utf8 ? RX_CHARSET_BYTES
                : reverse ? RX_CHARSET_FROM_UTF8 : RX_CHARSET_TO_UTF8;
    ctx->last_out = &ctx->out;
    if (set_content_type(r, dst) != RX_OK) {
        return RX_ERROR;
    }
    if (utf8) {
        /* another length: no Content-Length, no ranges of the new body */
        rx_http_clear_content_length(r);
        no_accept_ranges(r);
    }
    weak_etag(r);
    r->filter_need_in_memory = 1;
    r->charset_ctx = ctx;
    return next_header(r);
}

static rx_int_t
charset_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    rx_charset_ctx_t *ctx = r->charset_ctx;

    if (ctx == NULL || r->header_only) {
        return next_body(r, in);
    }
    return rx_http_charset_recode(r, ctx, in, next_body);
}

static rx_int_t
charset_header_filter(rx_http_request_t *r)
{
    rx_http_charset_conf_t *conf = rx_http_get_module_loc_conf(r,
                                       rx_http_charset_module);
    rx_http_headers_out_t  *ho = &r->headers_out;
    rx_str_t                dst, src;

    if (conf->charset == NULL || ho->content_type.len == 0
        || !type_ok(&ho->content_type, conf)) {
        return next_header(r);
    }
    /* a charset the response already has stays, unless override_charset
     * makes it the source of a recoding */
    src = ho->charset.len ? ho->charset : charset_param(&ho->content_type);
    if (src.len && !conf->override) {
        return next_header(r);
    }
    /* nginx gives a 301 or 302 no charset: old browsers took it for the
     * next page's */
    if (ho->status == RX_HTTP_MOVED_PERMANENTLY
        || ho->status == RX_HTTP_MOVED_TEMPORARILY) {
        return next_header(r);
    }
    if (src.len == 0) {
        src = conf->source;
    }
    if (rx_http_complex_value(r, conf->charset, &dst) != RX_OK) {
        return RX_ERROR;
    }
    if (dst.len == 0 || rx_str_eq(&dst, "off")) {
        return next_header(r);
    }
    if (src.len && !same_charset(&src, &dst)) {
        return recode(r, &src, &dst);
    }
    if (ho->charset.len == 0 && charset_param(&ho->content_type).len == 0) {
        ho->charset = dst;
    }
    return next_header(r);
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = charset_header_filter;
    top->body = charset_body_filter;
}
