/*
 * proxy_upstream.c: HTTP/1.x on the upstream engine, the proxy module's
 * protocol: the request sent upstream (nginx's URI rules, the headers set
 * and passed, the body as kept or streamed in chunks) and the response
 * read through http_response_parse.c; proxy_redirect and proxy_cookie_*
 * are proxy_rewrite.c's.
 */
#include "proxy.h"

/* URI escaping for the request line (nginx's "uri" class). */
static size_t
escape_uri(char *dst, const char *src, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t            n = 0, i;

    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char) src[i];
        if (ch <= 0x20 || ch >= 0x7f || ch == '#' || ch == '%' || ch == '?'
            || ch == '"' || ch == '<' || ch == '>' || ch == '\\' || ch == '^'
            || ch == '`' || ch == '{' || ch == '|' || ch == '}') {
            if (dst) {
                dst[n] = '%';
                dst[n + 1] = hex[ch >> 4];
                dst[n + 2] = hex[ch & 0xf];
            }
            n += 3;
        } else {
            if (dst) {
                dst[n] = (char) ch;
            }
            n++;
        }
    }
    return n;
}

/* The request target sent upstream, by nginx's rules. */
static rx_int_t
request_target(rx_http_request_t *r, rx_http_proxy_loc_conf_t *plcf,
    rx_http_proxy_ctx_t *ctx, rx_str_t *target)
{
    rx_str_t  tail;
    size_t    len;
    char     *p;

    if (!ctx->has_uri || plcf->upstream.url) {
        if (ctx->has_uri) {
            *target = ctx->uri;         /* proxy_pass with variables */
            return RX_OK;
        }
        if (!r->internal && r->unparsed_uri.len && r->unparsed_uri.data[0] == '/') {
            *target = r->unparsed_uri;  /* as the client sent it */
            return RX_OK;
        }
        tail = r->uri;
        ctx->uri.len = 0;
    } else {
        tail = r->uri;
        if (plcf->location.len <= tail.len) {
            tail.data += plcf->location.len;
            tail.len -= plcf->location.len;
        }
    }
    len = ctx->uri.len + escape_uri(NULL, tail.data, tail.len)
          + (r->args.len ? r->args.len + 1 : 0);
    p = rx_pnalloc(r->pool, len);
    if (p == NULL) {
        return RX_ERROR;
    }
    target->data = p;
    if (ctx->uri.len) {             /* none after an internal redirect */
        memcpy(p, ctx->uri.data, ctx->uri.len);
        p += ctx->uri.len;
    }
    p += escape_uri(p, tail.data, tail.len);
    if (r->args.len) {
        *p++ = '?';
        memcpy(p, r->args.data, r->args.len);
        p += r->args.len;
    }
    target->len = (size_t) (p - target->data);
    return RX_OK;
}

/* The client's field is one proxy_set_header sets (the length first:
 * this runs for every field of every request, twice). */
static bool
header_is_set(rx_http_proxy_loc_conf_t *plcf, const rx_table_elt_t *in)
{
    rx_http_proxy_header_t *h = plcf->headers->elts;
    rx_uint_t               i;

    for (i = 0; i < plcf->headers->nelts; i++) {
        if (h[i].lowcase.len == in->key.len
            && memcmp(h[i].lowcase.data, in->lowcase_key, in->key.len) == 0) {
            return true;
        }
    }
    return false;
}

/* The request's head: the request line, proxy_set_header's headers (their
 * values in values[], an empty one not sent), the client's other headers
 * (proxy_pass_request_headers), then proxy_set_body's body. */
static size_t
head_length(rx_http_request_t *r, rx_http_proxy_loc_conf_t *plcf,
    const rx_str_t *method, const rx_str_t *target, const rx_str_t *values)
{
    rx_http_proxy_header_t *h = plcf->headers->elts;
    rx_table_elt_t         *in = r->headers_in.headers.elts;
    size_t                  len;
    rx_uint_t               i;

    rx_str_t                inm, ims;

    len = method->len + 1 + target->len + sizeof(" HTTP/1.x\r\n") - 1 + 2;
    if (rx_http_cache_conditions(r, &inm, &ims)) {
        len += sizeof("If-None-Match: \r\n") + inm.len
               + sizeof("If-Modified-Since: \r\n") + ims.len;
    }
    for (i = 0; i < plcf->headers->nelts; i++) {
        if (values[i].len) {
            len += h[i].name.len + 2 + values[i].len + 2;
        }
    }
    if (plcf->upstream.pass_request_headers) {
        for (i = 0; i < r->headers_in.headers.nelts; i++) {
            if (in[i].lowcase_key && !header_is_set(plcf, &in[i])) {
                len += in[i].key.len + 2 + in[i].value.len + 2;
            }
        }
    }
    return len;
}

static char *
put_header(char *p, const rx_str_t *name, const rx_str_t *value)
{
    memcpy(p, name->data, name->len);
    p += name->len;
    *p++ = ':';
    *p++ = ' ';
    memcpy(p, value->data, value->len);
    p += value->len;
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

/* *_cache_revalidate: the entry's validators (the client's were hidden). */
static char *
put_conditions(char *p, rx_http_request_t *r)
{
    static const rx_str_t inm_name = rx_string("If-None-Match");
    static const rx_str_t ims_name = rx_string("If-Modified-Since");
    rx_str_t              inm, ims;

    if (!rx_http_cache_conditions(r, &inm, &ims)) {
        return p;
    }
    if (inm.len) {
        p = put_header(p, &inm_name, &inm);
    }
    if (ims.len) {
        p = put_header(p, &ims_name, &ims);
    }
    return p;
}

static char *
write_head(char *p, rx_http_request_t *r, rx_http_proxy_loc_conf_t *plcf,
    const rx_str_t *method, const rx_str_t *target, const rx_str_t *values)
{
    rx_http_proxy_header_t *h = plcf->headers->elts;
    rx_table_elt_t         *in = r->headers_in.headers.elts;
    rx_uint_t               i;

    memcpy(p, method->data, method->len);
    p += method->len;
    *p++ = ' ';
    memcpy(p, target->data, target->len);
    p += target->len;
    memcpy(p, plcf->http_version == RX_HTTP_VERSION_11 ? " HTTP/1.1\r\n"
                                                      : " HTTP/1.0\r\n",
           sizeof(" HTTP/1.x\r\n") - 1);
    p += sizeof(" HTTP/1.x\r\n") - 1;
    for (i = 0; i < plcf->headers->nelts; i++) {
        if (values[i].len) {
            p = put_header(p, &h[i].name, &values[i]);
        }
    }
    if (plcf->upstream.pass_request_headers) {
        for (i = 0; i < r->headers_in.headers.nelts; i++) {
            if (in[i].lowcase_key && !header_is_set(plcf, &in[i])) {
                p = put_header(p, &in[i].key, &in[i].value);
            }
        }
    }
    p = put_conditions(p, r);
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

/* The client's body after the head, as it was kept: its memory buffers,
 * then the rest of a large one in its temporary file. */
static rx_int_t
chain_body(rx_http_request_t *r, rx_chain_t **ll)
{
    rx_chain_t *body, *link;
    rx_buf_t   *b;

    for (body = r->request_body->bufs; body; body = body->next) {
        link = rx_alloc_chain_link(r->pool);
        if (link == NULL) {
            return RX_ERROR;
        }
        link->buf = body->buf;
        link->next = NULL;
        *ll = link;
        ll = &link->next;
    }
    if (r->request_body->file) {
        link = rx_alloc_chain_link(r->pool);
        b = rx_calloc_buf(r->pool);
        if (link == NULL || b == NULL) {
            return RX_ERROR;
        }
        b->in_file = 1;
        b->fd = r->request_body->file->fd;
        b->file_pos = 0;
        b->file_last = r->request_body->file->written;
        link->buf = b;
        link->next = NULL;
        *ll = link;
    }
    return RX_OK;
}

static rx_int_t
create_request(rx_http_upstream_t *u)
{
    rx_http_request_t        *r = u->r;
    rx_http_proxy_loc_conf_t *plcf = rx_http_get_module_loc_conf(r,
                                        rx_http_proxy_module);
    rx_http_proxy_ctx_t      *ctx = u->proto;
    rx_http_proxy_header_t   *h = plcf->headers->elts;
    rx_str_t                  method, target, *values;
    rx_chain_t               *cl;
    rx_buf_t                 *b;
    rx_uint_t                 i;

    method = r->method_name;
    if (rx_http_cache_head_as_get(r)) {
        rx_str_set(&method, "GET");      /* the cache stores the body */
    }
    if (plcf->method && rx_http_complex_value(r, plcf->method, &method) != RX_OK) {
        return RX_ERROR;
    }
    if (request_target(r, plcf, ctx, &target) != RX_OK) {
        return RX_ERROR;
    }
    u->uri = target;
    if (plcf->body) {
        /* before the headers: $proxy_internal_body_length is its length */
        if (rx_http_complex_value(r, plcf->body, &ctx->body) != RX_OK) {
            return RX_ERROR;
        }
        ctx->body_set = true;
    }
    values = rx_palloc(r->pool, plcf->headers->nelts * sizeof(rx_str_t));
    if (values == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < plcf->headers->nelts; i++) {
        if (rx_http_complex_value(r, &h[i].value, &values[i]) != RX_OK) {
            return RX_ERROR;
        }
    }
    b = rx_create_temp_buf(r->pool, head_length(r, plcf, &method, &target,
                                                values) + ctx->body.len);
    cl = b ? rx_alloc_chain_link(r->pool) : NULL;
    if (cl == NULL) {
        return RX_ERROR;
    }
    b->last = write_head(b->last, r, plcf, &method, &target, values);
    if (ctx->body.len) {                          /* proxy_set_body */
        memcpy(b->last, ctx->body.data, ctx->body.len);
        b->last += ctx->body.len;
    }
    cl->buf = b;
    cl->next = NULL;
    u->request_bufs = cl;
    if (plcf->upstream.pass_request_body && r->request_body && !ctx->body_set) {
        return chain_body(r, &cl->next);
    }
    return RX_OK;
}

static rx_int_t
on_body(void *data, const char *at, size_t len)
{
    return rx_http_upstream_body(data, at, len);
}

static void
reinit_request(rx_http_upstream_t *u)
{
    rx_http_proxy_ctx_t *ctx = u->proto;

    ctx->parser = NULL;        /* a new response, a new parser */
}

/* proxy_pass_trailers: a trailer field of the upstream's chunked body
 * goes to the client's trailer section (http_chunked_filter.c), but for
 * those that frame, route or authenticate a message (RFC 9110 6.5.1),
 * which are dropped. */
static rx_int_t
on_trailer(void *data, const rx_str_t *name, const rx_str_t *value)
{
    static const char *const never[] = {
        "content-length", "transfer-encoding", "trailer", "te", "host",
        "connection", "keep-alive", "upgrade", "content-type",
        "content-encoding", "content-range", "authorization", "set-cookie",
        "cache-control", "expect", "max-forwards", "range", NULL
    };
    rx_http_upstream_t *u = data;
    rx_http_request_t  *r = u->r;
    rx_table_elt_t     *t;
    rx_uint_t           i;

    for (i = 0; never[i]; i++) {
        if (name->len == strlen(never[i])
            && strncasecmp(name->data, never[i], name->len) == 0) {
            return RX_OK;
        }
    }
    if (r->headers_out.trailers == NULL) {
        r->headers_out.trailers = rx_array_create(r->pool, 4,
                                                  sizeof(rx_table_elt_t));
        if (r->headers_out.trailers == NULL) {
            return RX_ERROR;
        }
    }
    t = rx_array_push(r->headers_out.trailers);
    if (t == NULL) {
        return RX_ERROR;
    }
    t->key = *name;
    t->value = *value;
    t->lowcase_key = NULL;
    t->deleted = false;
    return RX_OK;
}

static rx_int_t
process_header(rx_http_upstream_t *u, const char *data, size_t len, size_t *used)
{
    rx_http_proxy_ctx_t      *ctx = u->proto;
    rx_http_proxy_loc_conf_t *plcf = rx_http_get_module_loc_conf(u->r,
                                        rx_http_proxy_module);
    rx_int_t                  rc;

    if (ctx->parser == NULL) {
        ctx->parser = rx_http_response_parser_create(u->r->pool, &u->headers_in,
                          u->r->method == RX_HTTP_HEAD
                          && !rx_http_cache_head_as_get(u->r), on_body, u);
        if (ctx->parser == NULL) {
            return RX_ERROR;
        }
        if (plcf->pass_trailers) {
            rx_http_response_parser_on_trailer(ctx->parser, on_trailer);
        }
    }
    rc = rx_http_response_parse(ctx->parser, data, len, used);
    if (rc == RX_AGAIN) {
        return rc;
    }
    /* the header is in. A chunked response may end with trailers: the
     * client's is chunked too, to carry them */
    if (rc != RX_ERROR && plcf->pass_trailers && u->headers_in.chunked
        && u->r == u->r->main) {
        u->r->expect_trailers = 1;
    }
    switch (rc) {
    case RX_OK:
        return rc;
    case RX_DONE:
        u->body_done = 1;
        u->keepalive = rx_http_response_parser_keepalive(ctx->parser);
        return RX_OK;
    default:
        u->error = rx_http_response_parser_error(ctx->parser);
        return RX_HTTP_UPSTREAM_INVALID_HEADER;
    }
}

static rx_int_t
input_filter(rx_http_upstream_t *u, const char *data, size_t len)
{
    rx_http_proxy_ctx_t *ctx = u->proto;
    size_t               used;

    switch (rx_http_response_parse(ctx->parser, data, len, &used)) {
    case RX_DONE:
        u->body_done = 1;
        u->keepalive = rx_http_response_parser_keepalive(ctx->parser);
        return RX_OK;
    case RX_ERROR:
        u->error = rx_http_response_parser_error(ctx->parser);
        return RX_ERROR;
    default:
        return RX_OK;
    }
}

static rx_int_t
on_eof(rx_http_upstream_t *u)
{
    rx_http_proxy_ctx_t *ctx = u->proto;

    return rx_http_response_parse_eof(ctx->parser) == RX_DONE ? RX_OK : RX_ERROR;
}

/* proxy_redirect and proxy_cookie_*: modules/proxy_rewrite.c */
static rx_int_t
rewrite_redirect(rx_http_upstream_t *u, rx_table_elt_t *h)
{
    rx_http_proxy_loc_conf_t *plcf = rx_http_get_module_loc_conf(u->r,
                                        rx_http_proxy_module);

    return rx_http_proxy_rewrite_redirect(u->r, &plcf->rewrite, h);
}

static rx_int_t
rewrite_cookie(rx_http_upstream_t *u, rx_table_elt_t *h)
{
    rx_http_proxy_loc_conf_t *plcf = rx_http_get_module_loc_conf(u->r,
                                        rx_http_proxy_module);

    return rx_http_proxy_rewrite_cookie(u->r, &plcf->rewrite, h);
}

/* A streamed request body on the wire: as is, or in HTTP/1.1 chunks. */
static rx_int_t
frame_body(rx_http_upstream_t *u, const char *data, size_t len, bool last)
{
    char head[24];

    if (u->r->headers_in.content_length_n >= 0) {
        return len ? rx_http_upstream_out_append(u, data, len) : RX_OK;
    }
    if (len) {
        int n = snprintf(head, sizeof(head), "%zx\r\n", len);
        if (rx_http_upstream_out_append(u, head, (size_t) n) != RX_OK
            || rx_http_upstream_out_append(u, data, len) != RX_OK
            || rx_http_upstream_out_append(u, "\r\n", 2) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (last) {
        return rx_http_upstream_out_append(u, "0\r\n\r\n", 5);
    }
    return RX_OK;
}

void
rx_http_proxy_set_protocol(rx_http_upstream_t *u,
    const rx_http_proxy_loc_conf_t *plcf)
{
    rx_http_request_t *r = u->r;

    u->create_request = create_request;
    u->reinit_request = reinit_request;
    u->process_header = process_header;
    u->input_filter = input_filter;
    u->on_eof = on_eof;
    if (rx_http_proxy_rewrites_redirects(&plcf->rewrite)) {
        u->rewrite_redirect = rewrite_redirect;
    }
    u->file_body = 1;              /* a large body may come from its file */
    /* proxy_request_buffering off: a body of known length goes as it
     * comes; one of unknown length needs HTTP/1.1 chunks */
    if (!plcf->upstream.request_buffering
        && (r->headers_in.content_length_n >= 0
            || plcf->http_version == RX_HTTP_VERSION_11)) {
        u->frame_body = frame_body;
    }
    if (rx_http_proxy_rewrites_cookies(&plcf->rewrite)) {
        u->rewrite_cookie = rewrite_cookie;
    }
}

/* The request's proxy state, when its upstream is the proxy's (NULL: no
 * upstream, or another protocol's). */
rx_http_proxy_ctx_t *
rx_http_proxy_ctx(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    return u && u->create_request == create_request ? u->proto : NULL;
}
