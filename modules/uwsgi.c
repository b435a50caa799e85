/*
 * uwsgi.c: uwsgi_pass and the uwsgi_* directives: the uwsgi protocol on the
 * upstream engine. The request is one packet (modifier1, the size of the
 * vars in 16 bits little-endian, modifier2, then each var as a 16-bit
 * length and bytes: uwsgi_param's lines and the client's headers as
 * HTTP_*), the body after it as is. The response (a status line and
 * headers, or a CGI header, then the body to the close) is read by
 * cgi_upstream.c.
 */
#include "cgi_upstream.h"
#include "http_core.h"

typedef struct {
    rx_http_upstream_conf_t   upstream;
    rx_http_cgi_params_t      params;
    rx_int_t                  modifier1;
    rx_int_t                  modifier2;
} rx_http_uwsgi_loc_conf_t;

static const char *set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

#define UL(field)  offsetof(rx_http_uwsgi_loc_conf_t, field)
#define ANY        (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)
#define LOC        RX_HTTP_LOC_CONF_OFFSET

static const rx_conf_bounds_t modifier_bounds = { 0, 255 };

static const rx_command_t uwsgi_commands[] = {
    RX_HTTP_CGI_COMMANDS("uwsgi_", set_pass, rx_http_uwsgi_loc_conf_t),
    { "uwsgi_modifier1", ANY | RX_CONF_TAKE1, rx_conf_set_num_slot, LOC,
      UL(modifier1), &modifier_bounds },
    { "uwsgi_modifier2", ANY | RX_CONF_TAKE1, rx_conf_set_num_slot, LOC,
      UL(modifier2), &modifier_bounds },
    rx_null_command
};

static const rx_http_module_t uwsgi_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_loc_conf, merge_loc_conf
};

rx_module_t rx_http_uwsgi_module = {
    "rx_http_uwsgi_module", 0, 0, RX_HTTP_MODULE, &uwsgi_ctx,
    uwsgi_commands, NULL, NULL, NULL, NULL
};

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_uwsgi_loc_conf_t *ulcf = rx_pcalloc(cf->pool, sizeof(*ulcf));

    if (ulcf == NULL) {
        return NULL;
    }
    rx_http_cgi_init_conf(&ulcf->upstream, &ulcf->params, "uwsgi");
    ulcf->modifier1 = RX_CONF_UNSET;
    ulcf->modifier2 = RX_CONF_UNSET;
    return ulcf;
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_uwsgi_loc_conf_t *prev = parent, *conf = child;

    rx_conf_merge_value(conf->modifier1, prev->modifier1, 0);
    rx_conf_merge_value(conf->modifier2, prev->modifier2, 0);
    return rx_http_cgi_merge_conf(cf, &conf->upstream, &prev->upstream,
                                  &conf->params, &prev->params);
}

static rx_int_t uwsgi_handler(void *data);

static const char *
set_pass(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_uwsgi_loc_conf_t *ulcf = conf;
    rx_str_t                 *value = cf->args->elts;

    if (value[1].len > 9 && strncasecmp(value[1].data, "suwsgi://", 9) == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "suwsgi:// in \"uwsgi_pass\" "
                          "is not supported: ringx has no uwsgi_ssl_*");
        return RX_CONF_ERROR;
    }
    return rx_http_cgi_set_pass(cf, &ulcf->upstream, "uwsgi://",
                                uwsgi_handler);
}

static char *
put16(char *p, size_t n)
{
    *p++ = (char) (n & 0xff);
    *p++ = (char) ((n >> 8) & 0xff);
    return p;
}

/* The packet: its header and the vars; then the body as it was kept. */
static rx_int_t
create_request(rx_http_upstream_t *u)
{
    rx_http_request_t        *r = u->r;
    rx_http_uwsgi_loc_conf_t *ulcf = rx_http_get_module_loc_conf(r,
                                        rx_http_uwsgi_module);
    rx_array_t               *pairs;
    rx_http_cgi_pair_t       *pr;
    rx_chain_t               *cl;
    rx_buf_t                 *b;
    rx_uint_t                 i;
    size_t                    len = 0;
    char                     *p;

    pairs = rx_http_cgi_pairs(r, &ulcf->params,
                              ulcf->upstream.pass_request_headers);
    if (pairs == NULL) {
        return RX_ERROR;
    }
    pr = pairs->elts;
    for (i = 0; i < pairs->nelts; i++) {
        if (pr[i].name.len > 0xffff || pr[i].value.len > 0xffff) {
            len = SIZE_MAX;
            break;
        }
        len += 2 + pr[i].name.len + 2 + pr[i].value.len;
    }
    if (len > 0xffff) {
        /* the packet's size field has 16 bits: nginx's words */
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "uwsgi request is too "
                                  "long: %zu", len);
        return RX_ERROR;
    }
    b = rx_create_temp_buf(r->pool, 4 + len);
    cl = b ? rx_alloc_chain_link(r->pool) : NULL;
    if (cl == NULL) {
        return RX_ERROR;
    }
    p = b->last;
    *p++ = (char) ulcf->modifier1;
    p = put16(p, len);
    *p++ = (char) ulcf->modifier2;
    for (i = 0; i < pairs->nelts; i++) {
        p = put16(p, pr[i].name.len);
        memcpy(p, pr[i].name.data, pr[i].name.len);
        p = put16(p + pr[i].name.len, pr[i].value.len);
        memcpy(p, pr[i].value.data, pr[i].value.len);
        p += pr[i].value.len;
    }
    b->last = p;
    cl->buf = b;
    cl->next = NULL;
    u->request_bufs = cl;
    if (ulcf->upstream.pass_request_body && r->request_body && !u->streaming) {
        return rx_http_cgi_chain_body(r, &cl->next);
    }
    return RX_OK;
}

static rx_int_t
uwsgi_handler(void *data)
{
    rx_http_request_t        *r = data;
    rx_http_uwsgi_loc_conf_t *ulcf = rx_http_get_module_loc_conf(r,
                                        rx_http_uwsgi_module);

    return rx_http_cgi_start(r, &ulcf->upstream, "uwsgi://", create_request);
}
