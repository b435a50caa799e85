/*
 * scgi.c: scgi_pass and the scgi_* directives: SCGI on the upstream
 * engine. The request is a netstring ("LEN:" then NUL-terminated names
 * and values, CONTENT_LENGTH first, then scgi_param's lines and the
 * client's headers as HTTP_*, then ","), the body after it as is. The
 * response (a CGI header, or a status line and headers, then the body to
 * the close) is read by cgi_upstream.c.
 */
#include "cgi_upstream.h"
#include "http_core.h"

typedef struct {
    rx_http_upstream_conf_t   upstream;
    rx_http_cgi_params_t      params;
} rx_http_scgi_loc_conf_t;

static const char *set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_command_t scgi_commands[] = {
    RX_HTTP_CGI_COMMANDS("scgi_", set_pass, rx_http_scgi_loc_conf_t),
    rx_null_command
};

static const rx_http_module_t scgi_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_loc_conf, merge_loc_conf
};

rx_module_t rx_http_scgi_module = {
    "rx_http_scgi_module", 0, 0, RX_HTTP_MODULE, &scgi_ctx,
    scgi_commands, NULL, NULL, NULL, NULL
};

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_scgi_loc_conf_t *slcf = rx_pcalloc(cf->pool, sizeof(*slcf));

    if (slcf == NULL) {
        return NULL;
    }
    rx_http_cgi_init_conf(&slcf->upstream, &slcf->params, "scgi");
    return slcf;
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_scgi_loc_conf_t *prev = parent, *conf = child;

    return rx_http_cgi_merge_conf(cf, &conf->upstream, &prev->upstream,
                                  &conf->params, &prev->params);
}

static rx_int_t scgi_handler(void *data);

static const char *
set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_scgi_loc_conf_t *slcf = conf;

    return rx_http_cgi_set_pass(cf, &slcf->upstream, "scgi://",
                                scgi_handler);
}

/* The netstring: "LEN:", CONTENT_LENGTH first, the pairs as NUL-ended
 * names and values, ","; then the body as it was kept. */
static rx_int_t
create_request(rx_http_upstream_t *u)
{
    rx_http_request_t       *r = u->r;
    rx_http_scgi_loc_conf_t *slcf = rx_http_get_module_loc_conf(r,
                                       rx_http_scgi_module);
    rx_array_t              *pairs;
    rx_http_cgi_pair_t      *pr;
    rx_chain_t              *cl;
    rx_buf_t                *b;
    rx_uint_t                i;
    char                     clen[24], head[24];
    int                      clen_n, head_n;
    size_t                   len;
    char                    *p;

    pairs = rx_http_cgi_pairs(r, &slcf->params,
                              slcf->upstream.pass_request_headers);
    if (pairs == NULL) {
        return RX_ERROR;
    }
    clen_n = snprintf(clen, sizeof(clen), "%" PRId64, rx_http_cgi_body_length(
                          r, slcf->upstream.pass_request_body));
    len = sizeof("CONTENT_LENGTH") + (size_t) clen_n + 1;
    pr = pairs->elts;
    for (i = 0; i < pairs->nelts; i++) {
        len += pr[i].name.len + 1 + pr[i].value.len + 1;
    }
    head_n = snprintf(head, sizeof(head), "%zu:", len);
    b = rx_create_temp_buf(r->pool, (size_t) head_n + len + 1);
    cl = b ? rx_alloc_chain_link(r->pool) : NULL;
    if (cl == NULL) {
        return RX_ERROR;
    }
    p = b->last;
    memcpy(p, head, (size_t) head_n);
    p += head_n;
    memcpy(p, "CONTENT_LENGTH", sizeof("CONTENT_LENGTH"));
    p += sizeof("CONTENT_LENGTH");
    memcpy(p, clen, (size_t) clen_n + 1);
    p += clen_n + 1;
    for (i = 0; i < pairs->nelts; i++) {
        memcpy(p, pr[i].name.data, pr[i].name.len);
        p += pr[i].name.len;
        *p++ = '\0';
        memcpy(p, pr[i].value.data, pr[i].value.len);
        p += pr[i].value.len;
        *p++ = '\0';
    }
    *p++ = ',';
    b->last = p;
    cl->buf = b;
    cl->next = NULL;
    u->request_bufs = cl;
    if (slcf->upstream.pass_request_body && r->request_body && !u->streaming) {
        return rx_http_cgi_chain_body(r, &cl->next);
    }
    return RX_OK;
}

static rx_int_t
scgi_handler(void *data)
{
    rx_http_request_t       *r = data;
    rx_http_scgi_loc_conf_t *slcf = rx_http_get_module_loc_conf(r,
                                        rx_http_scgi_module);

    return rx_http_cgi_start(r, &slcf->upstream, "scgi://", create_request);
}
