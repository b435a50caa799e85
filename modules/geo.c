/*
 * geo.c: the geo module: `geo [$address] $var { ... }` maps a client
 * address (IPv4 or IPv6) to a value by network, the most specific network
 * winning, or with `ranges` by IPv4 address ranges. Both are compiled at
 * load into sorted, disjoint intervals found by bisection. With `proxy`,
 * the address is taken from X-Forwarded-For as nginx does. This file has
 * the module, its lines and the lookups; geo_build.c builds the tables.
 */
#include <arpa/inet.h>
#include "http.h"
#include "http_variables.h"
#include "geo.h"

static const char *geo_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

static const rx_command_t geo_commands[] = {
    { "geo", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_TAKE12, geo_block,
      RX_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t geo_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_geo_module = {
    "rx_http_geo_module", 0, 0, RX_HTTP_MODULE, &geo_ctx, geo_commands,
    NULL, NULL, NULL, NULL
};

static const rx_str_t geo_empty = rx_string("");

/* ---- addresses ---- */

/* ::ffff:a.b.c.d is looked up as a.b.c.d, as in nginx. */
static void
unmap_v4(rx_geo_ip_t *ip)
{
    if (ip->family == AF_INET6 && (ip->addr >> 32) == 0xffff) {
        ip->family = AF_INET;
        ip->addr &= RX_GEO_V4_MAX;
    }
}

/* A bare IPv4 or IPv6 address; false when s is neither. */
static bool
parse_ip(const char *s, size_t len, rx_geo_ip_t *ip)
{
    char            buf[INET6_ADDRSTRLEN + 1];
    struct in_addr  a4;
    struct in6_addr a6;
    int             i;

    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, &a4) == 1) {
        ip->family = AF_INET;
        ip->addr = ntohl(a4.s_addr);
        return true;
    }
    if (inet_pton(AF_INET6, buf, &a6) != 1) {
        return false;
    }
    ip->family = AF_INET6;
    ip->addr = 0;
    for (i = 0; i < 16; i++) {
        ip->addr = ip->addr << 8 | a6.s6_addr[i];
    }
    return true;
}

/* An X-Forwarded-For item: an address, "a.b.c.d:port" or "[v6]:port". */
static bool
parse_forwarded(const char *s, size_t len, rx_geo_ip_t *ip)
{
    const char *p;

    if (len > 1 && s[0] == '[') {
        p = memchr(s, ']', len);
        return p && parse_ip(s + 1, (size_t) (p - s - 1), ip)
               && ip->family == AF_INET6;
    }
    if (parse_ip(s, len, ip)) {
        return true;
    }
    p = memchr(s, ':', len);
    return p && memchr(p + 1, ':', len - (size_t) (p + 1 - s)) == NULL
           && parse_ip(s, (size_t) (p - s), ip);
}

/*
 * "addr" or "addr/bits" into net (start, end, bits). Logs nginx's
 * `invalid network "x"`, and warns `low address bits of x are
 * meaningless` when the address has bits past the prefix (they are
 * cleared).
 */
static rx_int_t
parse_cidr(rx_conf_t *cf, const rx_str_t *text, rx_geo_net_t *net)
{
    const char    *slash = memchr(text->data, '/', text->len);
    size_t         alen = slash ? (size_t) (slash - text->data) : text->len;
    unsigned       width;
    rx_int_t       bits;
    rx_geo_ip_t    ip;
    rx_geo_addr_t  host;

    if (!parse_ip(text->data, alen, &ip)) {
        goto invalid;
    }
    width = ip.family == AF_INET ? 32 : 128;
    bits = slash ? rx_atoi(slash + 1, text->len - alen - 1) : (rx_int_t) width;
    if (bits < 0 || bits > (rx_int_t) width) {
        goto invalid;
    }
    /* the host part; a shift by the full width would be undefined */
    host = bits == (rx_int_t) width ? 0 : rx_geo_family_max(ip.family) >> bits;
    if (ip.addr & host) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "low address bits of %s are "
                          "meaningless", text->data);
        ip.addr &= ~host;
    }
    net->family = ip.family;
    net->bits = (unsigned) bits;
    net->start = ip.addr;
    net->end = ip.addr | host;
    return RX_OK;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid network \"%s\"",
                      text->data);
    return RX_ERROR;
}

/* ---- request time ---- */

static bool
trusted(const rx_geo_t *geo, const rx_geo_ip_t *ip)
{
    rx_uint_t i;

    for (i = 0; i < geo->nproxies; i++) {
        if (geo->proxies[i].family == ip->family
            && ip->addr >= geo->proxies[i].start
            && ip->addr <= geo->proxies[i].end) {
            return true;
        }
    }
    return false;
}

/*
 * nginx's X-Forwarded-For walk: when the address is a trusted proxy, the
 * last address of the header (of the last such header) replaces it; with
 * proxy_recursive, the walk goes on leftwards while the address found is
 * trusted too. An item that is not an address ends the walk.
 */
static void
forwarded_addr(rx_http_request_t *r, const rx_geo_t *geo, rx_geo_ip_t *ip)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t       i = r->headers_in.headers.nelts;
    const char     *p;
    size_t          end, start;
    rx_geo_ip_t     next;

    if (r->headers_in.x_forwarded_for == NULL || !trusted(geo, ip)) {
        return;
    }
    while (i--) {
        if (h[i].key.len != 15
            || strncasecmp(h[i].key.data, "X-Forwarded-For", 15) != 0) {
            continue;
        }
        p = h[i].value.data;
        for (end = h[i].value.len; end > 0; end = start) {
            while (end > 0 && (p[end - 1] == ' ' || p[end - 1] == ',')) {
                end--;
            }
            for (start = end; start > 0 && p[start - 1] != ' '
                              && p[start - 1] != ','; start--) {
                /* the item's first byte */
            }
            if (end == 0 || !parse_forwarded(p + start, end - start, &next)) {
                return;
            }
            unmap_v4(&next);
            *ip = next;
            if (!geo->proxy_recursive || !trusted(geo, ip)) {
                return;
            }
        }
    }
}

/* The address to look up: the client's or the source variable's; false
 * when there is none (nginx then uses 255.255.255.255). */
static bool
source_addr(rx_http_request_t *r, const rx_geo_t *geo, rx_geo_ip_t *ip)
{
    const rx_sockaddr_t      *sa;
    rx_http_variable_value_t *v;
    int                       i;

    if (geo->index >= 0) {
        v = rx_http_get_flushed_variable(r, (rx_uint_t) geo->index);
        if (v == NULL || v->not_found || !parse_ip(v->data, v->len, ip)) {
            return false;
        }
    } else {
        sa = rx_http_remote_addr(r);     /* realip's, if it found one */
        if (sa == NULL) {
            return false;
        }
        if (sa->u.sa.sa_family == AF_INET) {
            ip->family = AF_INET;
            ip->addr = ntohl(sa->u.sin.sin_addr.s_addr);
        } else if (sa->u.sa.sa_family == AF_INET6) {
            ip->family = AF_INET6;
            ip->addr = 0;
            for (i = 0; i < 16; i++) {
                ip->addr = ip->addr << 8 | sa->u.sin6.sin6_addr.s6_addr[i];
            }
        } else {
            return false;           /* a UNIX-domain socket */
        }
    }
    unmap_v4(ip);
    return true;
}

static const rx_str_t *
table_lookup(const rx_geo_table_t *t, rx_geo_addr_t addr)
{
    rx_uint_t lo = 0, hi = t->n, mid;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (t->pieces[mid].start <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo ? t->pieces[lo - 1].value : NULL;
}

static rx_int_t
geo_variable(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_geo_t *geo = (const rx_geo_t *) data;
    const rx_str_t *value;
    rx_geo_ip_t     ip;

    if (source_addr(r, geo, &ip)) {
        forwarded_addr(r, geo, &ip);
    } else {
        ip.family = AF_INET;
        ip.addr = RX_GEO_V4_MAX;
    }
    if (ip.family == AF_INET6 && geo->ranges) {
        ip.family = AF_INET;        /* ranges are IPv4 only */
        ip.addr = RX_GEO_V4_MAX;
    }
    value = table_lookup(ip.family == AF_INET ? &geo->v4 : &geo->v6, ip.addr);
    if (value == NULL) {
        value = geo->deflt;
    }
    v->data = value->data;
    v->len = value->len;
    return RX_OK;
}

/* ---- configuration: lines ---- */

/* A line of a geo block without `ranges`: "default value;",
 * "delete net;", "net value;". */
static const char *
cidr_line(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, rx_str_t *value)
{
    bool          del = rx_str_eq(&value[0], "delete");
    rx_str_t     *text = del ? &value[1] : &value[0];
    rx_geo_net_t  net;

    ctx->networks_seen = true;
    memset(&net, 0, sizeof(net));
    if (!del && (net.value = rx_geo_value(cf, ctx, &value[1])) == NULL) {
        return RX_CONF_ERROR;
    }
    if (rx_str_eq(&value[0], "default")) {
        /* 0.0.0.0/0 and ::/0, as nginx */
        net.family = AF_INET;
        net.end = RX_GEO_V4_MAX;
        if (rx_geo_net_add(cf, ctx, &net, &value[0]) != RX_OK) {
            return RX_CONF_ERROR;
        }
        net.family = AF_INET6;
        net.end = RX_GEO_V6_MAX;
        return rx_geo_net_add(cf, ctx, &net, &value[0]) == RX_OK ? RX_CONF_OK
                                                          : RX_CONF_ERROR;
    }
    if (parse_cidr(cf, text, &net) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (del) {
        rx_geo_net_delete(cf, ctx, &net, text);
        return RX_CONF_OK;
    }
    return rx_geo_net_add(cf, ctx, &net, text) == RX_OK ? RX_CONF_OK
                                                        : RX_CONF_ERROR;
}

/* A line of a geo block with `ranges`: "default value;",
 * "delete a.b.c.d-e.f.g.h;", "a.b.c.d-e.f.g.h value;". */
static const char *
range_line(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, rx_str_t *value)
{
    bool          del = rx_str_eq(&value[0], "delete");
    rx_str_t     *text = del ? &value[1] : &value[0];
    const char   *dash;
    rx_geo_ip_t   s, e;
    rx_geo_net_t  net;

    if (rx_str_eq(&value[0], "default")) {
        if (ctx->geo->deflt != &geo_empty) {
            rx_conf_log_error(RX_LOG_WARN, cf, 0, "duplicate default geo range "
                "value: \"%s\", old value: \"%s\"", value[1].data,
                ctx->geo->deflt->data);
        }
        ctx->geo->deflt = rx_geo_value(cf, ctx, &value[1]);
        return ctx->geo->deflt ? RX_CONF_OK : RX_CONF_ERROR;
    }
    dash = memchr(text->data, '-', text->len);
    if (dash == NULL
        || !parse_ip(text->data, (size_t) (dash - text->data), &s)
        || !parse_ip(dash + 1, text->len - (size_t) (dash + 1 - text->data), &e)
        || s.family != AF_INET || e.family != AF_INET || s.addr > e.addr) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid range \"%s\"",
                          text->data);
        return RX_CONF_ERROR;
    }
    memset(&net, 0, sizeof(net));
    net.family = AF_INET;
    net.start = s.addr;
    net.end = e.addr;
    if (del) {
        rx_geo_range_delete(cf, ctx, &net, text);
        return RX_CONF_OK;
    }
    net.value = rx_geo_value(cf, ctx, &value[1]);
    if (net.value == NULL) {
        return RX_CONF_ERROR;
    }
    return rx_geo_range_add(cf, ctx, &net, text) == RX_OK ? RX_CONF_OK
                                                          : RX_CONF_ERROR;
}

/* ---- configuration: the block ---- */

static const char *
add_proxy(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, const rx_str_t *text)
{
    rx_geo_net_t *p = rx_array_push(ctx->proxies);

    if (p == NULL) {
        return RX_CONF_ERROR;
    }
    memset(p, 0, sizeof(*p));
    return parse_cidr(cf, text, p) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

static const char *
geo_line(rx_conf_t *cf, void *dummy, void *conf)
{
    rx_geo_conf_ctx_t *ctx = conf;
    rx_str_t          *value = cf->args->elts;

    if (cf->args->nelts == 1 && rx_str_eq(&value[0], "ranges")) {
        if (ctx->networks_seen) {
            return "the \"ranges\" directive must be the first directive "
                   "inside \"geo\" block";
        }
        ctx->geo->ranges = true;
        return RX_CONF_OK;
    }
    if (cf->args->nelts == 1 && rx_str_eq(&value[0], "proxy_recursive")) {
        ctx->geo->proxy_recursive = true;
        return RX_CONF_OK;
    }
    if (cf->args->nelts != 2) {
        return "invalid number of the geo parameters";
    }
    if (rx_str_eq(&value[0], "include")) {
        return rx_conf_include(cf, NULL, conf);
    }
    if (rx_str_eq(&value[0], "proxy")) {
        return add_proxy(cf, ctx, &value[1]);
    }
    return ctx->geo->ranges ? range_line(cf, ctx, value)
                            : cidr_line(cf, ctx, value);
}

/* "$name" without its '$'; logs `invalid variable name` otherwise. */
static rx_int_t
variable_name(rx_conf_t *cf, const rx_str_t *arg, rx_str_t *name)
{
    if (arg->len < 2 || arg->data[0] != '$') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"%s\"",
                          arg->data);
        return RX_ERROR;
    }
    name->len = arg->len - 1;
    name->data = arg->data + 1;
    return RX_OK;
}

static const char *
geo_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t           *value = cf->args->elts, name;
    rx_http_variable_t *var;
    rx_geo_conf_ctx_t   ctx;
    rx_conf_t           saved;
    const char         *rv = RX_CONF_ERROR;

    memset(&ctx, 0, sizeof(ctx));
    ctx.geo = rx_pcalloc(cf->pool, sizeof(rx_geo_t));
    if (ctx.geo == NULL) {
        return RX_CONF_ERROR;
    }
    ctx.geo->index = -1;
    ctx.geo->deflt = &geo_empty;
    if (cf->args->nelts == 3) {
        if (variable_name(cf, &value[1], &name) != RX_OK) {
            return RX_CONF_ERROR;
        }
        ctx.geo->index = rx_http_get_variable_index(cf, &name);
        if (ctx.geo->index == RX_ERROR) {
            return RX_CONF_ERROR;
        }
    }
    if (variable_name(cf, &value[cf->args->nelts - 1], &name) != RX_OK) {
        return RX_CONF_ERROR;
    }
    var = rx_http_add_variable(cf, &name, RX_HTTP_VAR_CHANGEABLE);
    if (var == NULL) {
        return RX_CONF_ERROR;
    }

    ctx.temp = rx_pool_create(16384, cf->log);
    if (ctx.temp == NULL) {
        goto cleanup;
    }
    ctx.nets = rx_array_create(ctx.temp, 64, sizeof(rx_geo_net_t));
    ctx.ranges = rx_array_create(ctx.temp, 64, sizeof(rx_geo_net_t));
    ctx.proxies = rx_array_create(ctx.temp, 4, sizeof(rx_geo_net_t));
    if (ctx.nets == NULL || ctx.ranges == NULL || ctx.proxies == NULL) {
        goto cleanup;
    }
    saved = *cf;
    cf->handler = geo_line;
    cf->handler_conf = &ctx;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        goto cleanup;
    }
    rv = RX_CONF_ERROR;
    if (rx_geo_build_tables(cf, &ctx) != RX_OK) {
        goto cleanup;
    }
    var->get = geo_variable;
    var->set = NULL;
    var->data = (uintptr_t) ctx.geo;
    rv = RX_CONF_OK;

cleanup:
    if (ctx.temp) {
        rx_pool_destroy(ctx.temp);
    }
    return rv;
}
