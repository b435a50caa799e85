/*
 * memcached.c: memcached_pass and the memcached_* directives: a response
 * body from memcached on the upstream engine. The request is
 * "get $memcached_key" (the key escaped as nginx does); "VALUE key flags
 * length" gives a 200 with that body (Content-Encoding: gzip when the
 * flags have memcached_gzip_flag), "END" a 404 that error_page may turn
 * into a fallback, as in nginx.
 */
#include "cgi_upstream.h"
#include "http_core.h"

typedef struct {
    rx_http_upstream_conf_t   upstream;
    rx_http_complex_value_t  *key;            /* "$memcached_key" */
    rx_int_t                  gzip_flag;
} rx_http_memcached_loc_conf_t;

/* One request's side of the exchange. */
typedef struct {
    rx_str_t                  key;            /* as sent (escaped) */
    int64_t                   rest;           /* body bytes to come */
    size_t                    trailer;        /* of "\r\nEND\r\n" seen */
} rx_http_memcached_ctx_t;

#define TRAILER      "\r\nEND\r\n"
#define TRAILER_LEN  (sizeof(TRAILER) - 1)

static const char *set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

#define ML(field)  offsetof(rx_http_memcached_loc_conf_t, field)
#define ANY        (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)
#define LOC        RX_HTTP_LOC_CONF_OFFSET
#define UP         ML(upstream)

static const rx_conf_enum_t next_upstream_masks[] = {
    { "error", RX_HTTP_UPSTREAM_FT_ERROR },
    { "timeout", RX_HTTP_UPSTREAM_FT_TIMEOUT },
    { "invalid_response", RX_HTTP_UPSTREAM_FT_INVALID_HEADER },
    { "not_found", RX_HTTP_UPSTREAM_FT_HTTP_404 },
    { "off", RX_HTTP_UPSTREAM_FT_OFF },
    { NULL, 0 }
};

/* nginx's memcached_* set: the engine's settings memcached has */
static const rx_command_t memcached_commands[] = {
    { "memcached_pass", RX_HTTP_LOC_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,
      set_pass, LOC, 0, NULL },
    { "memcached_gzip_flag", ANY | RX_CONF_TAKE1, rx_conf_set_num_slot, LOC,
      ML(gzip_flag), NULL },
    RX_HTTP_UPSTREAM_CMD("memcached_", "connect_timeout", RX_CONF_TAKE1,
        rx_conf_set_msec_slot, UP, connect_timeout, NULL),
    RX_HTTP_UPSTREAM_CMD("memcached_", "send_timeout", RX_CONF_TAKE1,
        rx_conf_set_msec_slot, UP, send_timeout, NULL),
    RX_HTTP_UPSTREAM_CMD("memcached_", "read_timeout", RX_CONF_TAKE1,
        rx_conf_set_msec_slot, UP, read_timeout, NULL),
    RX_HTTP_UPSTREAM_CMD("memcached_", "buffer_size", RX_CONF_TAKE1,
        rx_conf_set_size_slot, UP, buffer_size, NULL),
    RX_HTTP_UPSTREAM_CMD("memcached_", "next_upstream", RX_CONF_1MORE,
        rx_conf_set_bitmask_slot, UP, next_upstream, next_upstream_masks),
    RX_HTTP_UPSTREAM_CMD("memcached_", "next_upstream_tries", RX_CONF_TAKE1,
        rx_conf_set_num_slot, UP, next_upstream_tries, NULL),
    RX_HTTP_UPSTREAM_CMD("memcached_", "next_upstream_timeout", RX_CONF_TAKE1,
        rx_conf_set_msec_slot, UP, next_upstream_timeout, NULL),
    rx_null_command
};

static const rx_http_module_t memcached_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_loc_conf, merge_loc_conf
};

rx_module_t rx_http_memcached_module = {
    "rx_http_memcached_module", 0, 0, RX_HTTP_MODULE, &memcached_ctx,
    memcached_commands, NULL, NULL, NULL, NULL
};

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_memcached_loc_conf_t *mlcf = rx_pcalloc(cf->pool, sizeof(*mlcf));

    if (mlcf == NULL) {
        return NULL;
    }
    rx_http_upstream_init_conf(&mlcf->upstream);
    mlcf->upstream.module = "memcached";
    mlcf->gzip_flag = RX_CONF_UNSET;
    return mlcf;
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_memcached_loc_conf_t *prev = parent, *conf = child;
    const char                   *rv;

    /* nginx's fixed values: no request body or headers go, the value is
     * passed as it comes (no buffering to a file), and a 404 is always
     * intercepted (below) */
    conf->upstream.buffering = 0;
    conf->upstream.request_buffering = 1;
    conf->upstream.pass_request_headers = 0;
    conf->upstream.pass_request_body = 0;
    conf->upstream.max_temp_file_size = 0;
    conf->upstream.intercept_errors = 1;
    rv = rx_http_upstream_merge_conf(cf, &conf->upstream, &prev->upstream,
                                     NULL);
    if (rv != RX_CONF_OK) {
        return rv;
    }
    rx_conf_merge_value(conf->gzip_flag, prev->gzip_flag, 0);
    if (conf->key == NULL) {
        conf->key = prev->key;
    }
    return RX_CONF_OK;
}

static rx_int_t memcached_handler(void *data);

static const char *
set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_memcached_loc_conf_t *mlcf = conf;
    rx_str_t                      key = rx_string("$memcached_key");
    const char                   *rv;

    rv = rx_http_cgi_set_pass(cf, &mlcf->upstream, "memcached://",
                              memcached_handler);
    if (rv != RX_CONF_OK) {
        return rv;
    }
    /* as nginx: a config that never sets $memcached_key fails to load
     * with "unknown variable" */
    mlcf->key = rx_pcalloc(cf->pool, sizeof(rx_http_complex_value_t));
    if (mlcf->key == NULL
        || rx_http_compile_complex_value(cf, &key, mlcf->key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* nginx's memcached escaping: blanks, control bytes, '%' and DEL. */
static bool
needs_escape(unsigned char ch)
{
    return ch <= 0x20 || ch == '%' || ch == 0x7f;
}

static rx_int_t
create_request(rx_http_upstream_t *u)
{
    rx_http_request_t            *r = u->r;
    rx_http_memcached_loc_conf_t *mlcf = rx_http_get_module_loc_conf(r,
                                            rx_http_memcached_module);
    rx_http_memcached_ctx_t      *ctx = u->proto;
    static const char             hex[] = "0123456789ABCDEF";
    rx_str_t                      key;
    rx_chain_t                   *cl;
    rx_buf_t                     *b;
    size_t                        i, n = 0;
    char                         *p;

    if (rx_http_complex_value(r, mlcf->key, &key) != RX_OK) {
        return RX_ERROR;
    }
    if (key.len == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "the \"$memcached_key\" "
                                  "variable is not set");
        return RX_ERROR;
    }
    for (i = 0; i < key.len; i++) {
        n += needs_escape((unsigned char) key.data[i]) ? 3 : 1;
    }
    b = rx_create_temp_buf(r->pool, sizeof("get ") - 1 + n + 2);
    cl = b ? rx_alloc_chain_link(r->pool) : NULL;
    if (cl == NULL) {
        return RX_ERROR;
    }
    p = b->last;
    memcpy(p, "get ", 4);
    p += 4;
    ctx->key.data = p;
    ctx->key.len = n;
    for (i = 0; i < key.len; i++) {
        unsigned char ch = (unsigned char) key.data[i];

        if (needs_escape(ch)) {
            *p++ = '%';
            *p++ = hex[ch >> 4];
            *p++ = hex[ch & 0xf];
        } else {
            *p++ = (char) ch;
        }
    }
    *p++ = '\r';
    *p++ = '\n';
    b->last = p;
    cl->buf = b;
    cl->next = NULL;
    u->request_bufs = cl;
    return RX_OK;
}

static void
reinit_request(rx_http_upstream_t *u)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    rx_http_memcached_ctx_t       *ctx = u->proto;

    ctx->rest = 0;
    ctx->trailer = 0;
    h->headers.nelts = 0;
    h->status = 0;
    rx_str_null(&h->status_line);
    h->content_length_n = -1;
}

/* u->error with the response's words in it (the engine logs it). */
static rx_int_t
invalid(rx_http_upstream_t *u, const char *what, const char *p, size_t n)
{
    rx_http_memcached_ctx_t *ctx = u->proto;
    size_t                   cap = 96 + rx_min(n, 256) + ctx->key.len;
    char                    *e = rx_pnalloc(u->r->pool, cap);

    if (e != NULL) {
        if (what == NULL) {
            snprintf(e, cap, "memcached sent invalid key in response \"%.*s\" "
                     "for key \"%.*s\"", (int) rx_min(n, 256), p,
                     (int) ctx->key.len, ctx->key.data);
        } else {
            snprintf(e, cap, "memcached sent invalid %s: \"%.*s\"", what,
                     (int) rx_min(n, 256), p);
        }
    }
    u->error = e ? e : "memcached sent invalid response";
    return RX_HTTP_UPSTREAM_INVALID_HEADER;
}

/* "VALUE key flags length": the flags and length after the key. */
static rx_int_t
value_line(rx_http_upstream_t *u, rx_http_memcached_ctx_t *ctx,
    const char *p, const char *end)
{
    rx_http_memcached_loc_conf_t *mlcf = rx_http_get_module_loc_conf(u->r,
                                            rx_http_memcached_module);
    const char                   *sp;
    uint64_t                      flags = 0;
    int64_t                       len = 0;

    if ((size_t) (end - p) <= ctx->key.len || memcmp(p, ctx->key.data,
            ctx->key.len) != 0 || p[ctx->key.len] != ' ') {
        return invalid(u, NULL, p, (size_t) (end - p));
    }
    p += ctx->key.len + 1;
    for (sp = p; sp < end && *sp >= '0' && *sp <= '9'
         && flags <= UINT32_MAX; sp++) {
        flags = flags * 10 + (uint64_t) (*sp - '0');
    }
    if (sp == p || sp == end || *sp != ' ' || flags > UINT32_MAX) {
        return invalid(u, "flags in response", p, (size_t) (end - p));
    }
    for (p = ++sp; sp < end && *sp >= '0' && *sp <= '9'
         && len <= INT64_MAX / 10 - 1; sp++) {
        len = len * 10 + (*sp - '0');
    }
    if (sp == p || (sp < end && *sp != ' ')) {
        return invalid(u, "length in response", p, (size_t) (end - p));
    }
    u->headers_in.status = RX_HTTP_OK;
    u->headers_in.content_length_n = len;
    ctx->rest = len;
    if (mlcf->gzip_flag && (flags & (uint64_t) mlcf->gzip_flag)) {
        rx_table_elt_t *e = rx_http_upstream_header_push(&u->headers_in);

        if (e == NULL) {
            return RX_ERROR;
        }
        rx_str_set(&e->key, "Content-Encoding");
        rx_str_set(&e->value, "gzip");
        e->lowcase_key = "content-encoding";
        e->deleted = false;
    }
    return RX_OK;
}

/* The first line: VALUE, or END (a miss: 404). */
static rx_int_t
process_header(rx_http_upstream_t *u, const char *data, size_t len,
    size_t *used)
{
    rx_http_memcached_ctx_t *ctx = u->proto;
    const char              *buf = u->header_buf, *lf, *end;
    size_t                   before = (size_t) (data - buf);

    lf = memchr(data, '\n', len);
    if (lf == NULL) {
        *used = len;
        return RX_AGAIN;
    }
    end = lf > buf && lf[-1] == '\r' ? lf - 1 : lf;
    *used = (size_t) (lf + 1 - buf) - before;
    if (end - buf > 6 && memcmp(buf, "VALUE ", 6) == 0) {
        return value_line(u, ctx, buf + 6, end);
    }
    if (end - buf == 3 && memcmp(buf, "END", 3) == 0) {
        rx_http_request_log_error(u->r, RX_LOG_INFO, 0, "key: \"%.*s\" was "
                                  "not found by memcached", (int) ctx->key.len,
                                  ctx->key.data);
        u->headers_in.status = RX_HTTP_NOT_FOUND;
        u->headers_in.content_length_n = 0;
        u->body_done = 1;
        u->keepalive = (size_t) (lf + 1 - data) == len;
        return RX_OK;
    }
    return invalid(u, "response", buf, (size_t) (end - buf));
}

/* The value's bytes, then "\r\nEND\r\n" checked byte by byte. */
static rx_int_t
input_filter(rx_http_upstream_t *u, const char *data, size_t len)
{
    rx_http_memcached_ctx_t *ctx = u->proto;
    size_t                   n;

    if (ctx->rest > 0) {
        n = (size_t) rx_min((int64_t) len, ctx->rest);
        ctx->rest -= (int64_t) n;
        if (rx_http_upstream_body(u, data, n) != RX_OK) {
            return RX_ERROR;
        }
        data += n;
        len -= n;
    }
    while (len && ctx->trailer < TRAILER_LEN) {
        if (*data != TRAILER[ctx->trailer]) {
            u->error = "memcached sent invalid trailer";
            return RX_ERROR;
        }
        ctx->trailer++;
        data++;
        len--;
    }
    if (ctx->trailer == TRAILER_LEN) {
        u->body_done = 1;
        u->keepalive = len == 0;
    }
    return RX_OK;
}

static rx_int_t
on_eof(rx_http_upstream_t *u)
{
    return RX_ERROR;           /* before "END": the value may be cut */
}

static rx_int_t
memcached_handler(void *data)
{
    rx_http_request_t            *r = data;
    rx_http_memcached_loc_conf_t *mlcf = rx_http_get_module_loc_conf(r,
                                            rx_http_memcached_module);
    rx_http_upstream_t           *u;
    rx_http_memcached_ctx_t      *ctx;
    rx_int_t                      rc;

    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD))) {
        return RX_HTTP_NOT_ALLOWED;
    }
    u = rx_http_upstream_create(r, &mlcf->upstream);
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (u == NULL || ctx == NULL
        || rx_array_init(&u->headers_in.headers, r->pool, 4,
                         sizeof(rx_table_elt_t)) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->proto = ctx;
    rx_str_set(&u->schema, "memcached://");
    rx_str_set(&u->uri, "");
    rc = rx_http_cgi_find_upstream(u, "memcached://");
    if (rc != RX_OK) {
        return rc;
    }
    rx_http_set_content_type(r);
    u->create_request = create_request;
    u->reinit_request = reinit_request;
    u->process_header = process_header;
    u->input_filter = input_filter;
    u->on_eof = on_eof;
    u->intercept_404 = 1;
    reinit_request(u);
    return rx_http_upstream_start(u);
}
