/*
 * geo.c: the geo module: `geo [$address] $var { ... }` maps a client
 * address (IPv4 or IPv6) to a value by network, the most specific network
 * winning, or with `ranges` by IPv4 address ranges. Both are compiled at
 * load into sorted, disjoint intervals found by bisection. With `proxy`,
 * the address is taken from X-Forwarded-For as nginx does.
 */
#include <arpa/inet.h>
#include "http.h"
#include "http_variables.h"

/* Addresses as numbers: IPv4 in the low 32 bits, IPv6 in all 128. */
__extension__ typedef unsigned __int128 geo_addr_t;

#define GEO_V4_MAX  ((geo_addr_t) 0xffffffffu)
#define GEO_V6_MAX  (~(geo_addr_t) 0)

typedef struct {
    int         family;              /* AF_INET or AF_INET6 */
    geo_addr_t  addr;
} geo_ip_t;

/* A network (with its prefix length) or a range, while parsing; also a
 * trusted proxy. */
typedef struct {
    int              family;
    unsigned         bits;
    geo_addr_t       start;
    geo_addr_t       end;
    const rx_str_t  *value;          /* NULL: deleted */
} geo_net_t;

/* From start up to the next piece's start, the value (NULL: default). */
typedef struct {
    geo_addr_t       start;
    const rx_str_t  *value;
} geo_piece_t;

typedef struct {
    geo_piece_t  *pieces;            /* pieces[0].start is 0 */
    rx_uint_t     n;
} geo_table_t;

/* One geo block, the data of its variable. */
typedef struct {
    geo_table_t      v4;
    geo_table_t      v6;             /* empty with `ranges` */
    const rx_str_t  *deflt;          /* for pieces without a value */
    geo_net_t       *proxies;
    rx_uint_t        nproxies;
    bool             proxy_recursive;
    bool             ranges;
    rx_int_t         index;          /* source variable; -1: the client */
} geo_t;

/* While the block is parsed; all of it in temp. */
typedef struct {
    geo_t           *geo;
    rx_pool_t       *temp;
    rx_array_t      *nets;           /* geo_net_t, networks in any order */
    rx_uint_t       *slots;          /* hash of nets: index + 1, 0 free */
    size_t           mask;
    rx_array_t      *ranges;         /* geo_net_t, sorted and disjoint */
    rx_array_t      *proxies;        /* geo_net_t */
    const rx_str_t **values;         /* hash of the distinct values */
    size_t           vmask;
    size_t           nvalues;
    bool             networks_seen;  /* `ranges` must come before */
} geo_conf_ctx_t;

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
unmap_v4(geo_ip_t *ip)
{
    if (ip->family == AF_INET6 && (ip->addr >> 32) == 0xffff) {
        ip->family = AF_INET;
        ip->addr &= GEO_V4_MAX;
    }
}

/* A bare IPv4 or IPv6 address; false when s is neither. */
static bool
parse_ip(const char *s, size_t len, geo_ip_t *ip)
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
parse_forwarded(const char *s, size_t len, geo_ip_t *ip)
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

static geo_addr_t
family_max(int family)
{
    return family == AF_INET ? GEO_V4_MAX : GEO_V6_MAX;
}

/*
 * "addr" or "addr/bits" into net (start, end, bits). Logs nginx's
 * `invalid network "x"`, and warns `low address bits of x are
 * meaningless` when the address has bits past the prefix (they are
 * cleared).
 */
static rx_int_t
parse_cidr(rx_conf_t *cf, const rx_str_t *text, geo_net_t *net)
{
    const char *slash = memchr(text->data, '/', text->len);
    size_t      alen = slash ? (size_t) (slash - text->data) : text->len;
    unsigned    width;
    rx_int_t    bits;
    geo_ip_t    ip;
    geo_addr_t  host;

    if (!parse_ip(text->data, alen, &ip)) {
        goto invalid;
    }
    width = ip.family == AF_INET ? 32 : 128;
    bits = slash ? rx_atoi(slash + 1, text->len - alen - 1) : (rx_int_t) width;
    if (bits < 0 || bits > (rx_int_t) width) {
        goto invalid;
    }
    /* the host part; a shift by the full width would be undefined */
    host = bits == (rx_int_t) width ? 0 : family_max(ip.family) >> bits;
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
trusted(const geo_t *geo, const geo_ip_t *ip)
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
forwarded_addr(rx_http_request_t *r, const geo_t *geo, geo_ip_t *ip)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t       i = r->headers_in.headers.nelts;
    const char     *p;
    size_t          end, start;
    geo_ip_t        next;

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
source_addr(rx_http_request_t *r, const geo_t *geo, geo_ip_t *ip)
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
        sa = r->conn ? rx_conn_peer(r->conn) : NULL;
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
table_lookup(const geo_table_t *t, geo_addr_t addr)
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
    const geo_t    *geo = (const geo_t *) data;
    const rx_str_t *value;
    geo_ip_t        ip;

    if (source_addr(r, geo, &ip)) {
        forwarded_addr(r, geo, &ip);
    } else {
        ip.family = AF_INET;
        ip.addr = GEO_V4_MAX;
    }
    if (ip.family == AF_INET6 && geo->ranges) {
        ip.family = AF_INET;        /* ranges are IPv4 only */
        ip.addr = GEO_V4_MAX;
    }
    value = table_lookup(ip.family == AF_INET ? &geo->v4 : &geo->v6, ip.addr);
    if (value == NULL) {
        value = geo->deflt;
    }
    v->data = value->data;
    v->len = value->len;
    return RX_OK;
}

/* ---- configuration: values and networks ---- */

static size_t
str_hash(const rx_str_t *s)
{
    uint32_t h = 2166136261u;
    size_t   i;

    for (i = 0; i < s->len; i++) {
        h = (h ^ (unsigned char) s->data[i]) * 16777619u;
    }
    return h;
}

static const rx_str_t **
value_slot(const rx_str_t **values, size_t mask, const rx_str_t *text)
{
    size_t i;

    for (i = str_hash(text) & mask; values[i]; i = (i + 1) & mask) {
        if (values[i]->len == text->len
            && memcmp(values[i]->data, text->data, text->len) == 0) {
            break;
        }
    }
    return &values[i];
}

/* The value text, one copy per distinct text (geo databases repeat a few
 * hundred values over many networks). */
static const rx_str_t *
geo_value(rx_conf_t *cf, geo_conf_ctx_t *ctx, const rx_str_t *text)
{
    const rx_str_t **old = ctx->values, **slot;
    rx_str_t        *copy;
    size_t           i, size, oldsize = old ? ctx->vmask + 1 : 0;

    if ((ctx->nvalues + 1) * 2 > oldsize) {
        size = old ? 2 * oldsize : 64;
        ctx->values = rx_pcalloc(ctx->temp, size * sizeof(rx_str_t *));
        if (ctx->values == NULL) {
            return NULL;
        }
        ctx->vmask = size - 1;
        for (i = 0; i < oldsize; i++) {
            if (old[i]) {
                *value_slot(ctx->values, ctx->vmask, old[i]) = old[i];
            }
        }
    }
    slot = value_slot(ctx->values, ctx->vmask, text);
    if (*slot) {
        return *slot;
    }
    copy = rx_palloc(cf->pool, sizeof(rx_str_t));
    if (copy == NULL || (copy->data = rx_pstrdup(cf->pool, text)) == NULL) {
        return NULL;
    }
    copy->len = text->len;
    *slot = copy;
    ctx->nvalues++;
    return copy;
}

static size_t
net_hash(int family, unsigned bits, geo_addr_t start)
{
    uint64_t h = (uint64_t) start ^ (uint64_t) (start >> 64) * 0x9e3779b97f4a7c15ull;

    h ^= (uint64_t) bits << 56 ^ (uint64_t) family << 48;
    h *= 0xff51afd7ed558ccdull;
    return (size_t) (h ^ h >> 33);
}

/* The hash slot of the network (family, bits, start), or the free slot
 * where it goes. */
static rx_uint_t *
net_slot(geo_conf_ctx_t *ctx, const geo_net_t *net)
{
    geo_net_t *nets = ctx->nets->elts, *e;
    size_t     i = net_hash(net->family, net->bits, net->start) & ctx->mask;

    for ( ;; i = (i + 1) & ctx->mask) {
        if (ctx->slots[i] == 0) {
            return &ctx->slots[i];
        }
        e = &nets[ctx->slots[i] - 1];
        if (e->family == net->family && e->bits == net->bits
            && e->start == net->start) {
            return &ctx->slots[i];
        }
    }
}

static rx_int_t
nets_grow(geo_conf_ctx_t *ctx)
{
    rx_uint_t *old = ctx->slots;
    size_t     i, oldsize = old ? ctx->mask + 1 : 0;
    size_t     size = old ? 2 * oldsize : 256;
    geo_net_t *nets = ctx->nets->elts;

    ctx->slots = rx_pcalloc(ctx->temp, size * sizeof(rx_uint_t));
    if (ctx->slots == NULL) {
        return RX_ERROR;
    }
    ctx->mask = size - 1;
    for (i = 0; i < oldsize; i++) {
        if (old[i]) {
            *net_slot(ctx, &nets[old[i] - 1]) = old[i];
        }
    }
    return RX_OK;
}

/* Adds or replaces a network; replacing warns as nginx ("duplicate
 * network"), unless the old one was deleted. */
static rx_int_t
net_add(rx_conf_t *cf, geo_conf_ctx_t *ctx, geo_net_t *net,
    const rx_str_t *text)
{
    rx_uint_t *slot;
    geo_net_t *e;

    if ((ctx->nets->nelts + 1) * 2 > (ctx->slots ? ctx->mask + 1 : 0)
        && nets_grow(ctx) != RX_OK) {
        return RX_ERROR;
    }
    slot = net_slot(ctx, net);
    if (*slot) {
        e = (geo_net_t *) ctx->nets->elts + (*slot - 1);
        if (e->value) {
            rx_conf_log_error(RX_LOG_WARN, cf, 0, "duplicate network \"%s\", "
                "value: \"%s\", old value: \"%s\"", text->data,
                net->value->data, e->value->data);
        }
        e->value = net->value;
        return RX_OK;
    }
    e = rx_array_push(ctx->nets);
    if (e == NULL) {
        return RX_ERROR;
    }
    *e = *net;
    *slot = ctx->nets->nelts;
    return RX_OK;
}

static void
net_delete(rx_conf_t *cf, geo_conf_ctx_t *ctx, const geo_net_t *net,
    const rx_str_t *text)
{
    rx_uint_t *slot = ctx->slots ? net_slot(ctx, net) : NULL;
    geo_net_t *e = slot && *slot ? (geo_net_t *) ctx->nets->elts + (*slot - 1)
                                 : NULL;

    if (e == NULL || e->value == NULL) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "no network \"%s\" to delete",
                          text->data);
        return;
    }
    e->value = NULL;
}

/* A line of a geo block without `ranges`: "default value;",
 * "delete net;", "net value;". */
static const char *
cidr_line(rx_conf_t *cf, geo_conf_ctx_t *ctx, rx_str_t *value)
{
    bool      del = rx_str_eq(&value[0], "delete");
    rx_str_t *text = del ? &value[1] : &value[0];
    geo_net_t net;

    ctx->networks_seen = true;
    memset(&net, 0, sizeof(net));
    if (!del && (net.value = geo_value(cf, ctx, &value[1])) == NULL) {
        return RX_CONF_ERROR;
    }
    if (rx_str_eq(&value[0], "default")) {
        /* 0.0.0.0/0 and ::/0, as nginx */
        net.family = AF_INET;
        net.end = GEO_V4_MAX;
        if (net_add(cf, ctx, &net, &value[0]) != RX_OK) {
            return RX_CONF_ERROR;
        }
        net.family = AF_INET6;
        net.end = GEO_V6_MAX;
        return net_add(cf, ctx, &net, &value[0]) == RX_OK ? RX_CONF_OK
                                                          : RX_CONF_ERROR;
    }
    if (parse_cidr(cf, text, &net) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (del) {
        net_delete(cf, ctx, &net, text);
        return RX_CONF_OK;
    }
    return net_add(cf, ctx, &net, text) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

/* ---- configuration: ranges ---- */

/* The first range whose end is at or past addr. */
static rx_uint_t
range_find(const geo_net_t *r, rx_uint_t n, geo_addr_t addr)
{
    rx_uint_t lo = 0, hi = n, mid;

    if (n && r[n - 1].end < addr) {
        return n;                   /* the usual case: ascending input */
    }
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (r[mid].end < addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Makes room for k ranges at i; NULL when out of memory. */
static geo_net_t *
range_open(rx_array_t *a, rx_uint_t i, rx_uint_t k)
{
    geo_net_t *r;

    if (rx_array_push_n(a, k) == NULL) {
        return NULL;
    }
    r = a->elts;
    memmove(&r[i + k], &r[i], (a->nelts - k - i) * sizeof(geo_net_t));
    return &r[i];
}

static void
log_overlap(rx_conf_t *cf, const rx_str_t *text, const geo_net_t *r)
{
    uint32_t s = (uint32_t) r->start, e = (uint32_t) r->end;

    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "range \"%s\" overlaps "
        "\"%u.%u.%u.%u-%u.%u.%u.%u\"", text->data, s >> 24, s >> 16 & 0xff,
        s >> 8 & 0xff, s & 0xff, e >> 24, e >> 16 & 0xff, e >> 8 & 0xff,
        e & 0xff);
}

/*
 * Adds a range. As in nginx, a range must not overlap another unless it
 * lies inside it: the outer one is then split around it, and an identical
 * one is replaced with a warning.
 */
static rx_int_t
range_add(rx_conf_t *cf, geo_conf_ctx_t *ctx, const geo_net_t *net,
    const rx_str_t *text)
{
    geo_net_t *r = ctx->ranges->elts, outer, *p;
    rx_uint_t  n = ctx->ranges->nelts, i = range_find(r, n, net->start);

    if (i == n || r[i].start > net->end) {
        p = range_open(ctx->ranges, i, 1);
        if (p == NULL) {
            return RX_ERROR;
        }
        *p = *net;
        return RX_OK;
    }
    if (r[i].start > net->start || r[i].end < net->end) {
        log_overlap(cf, text, &r[i]);
        return RX_ERROR;
    }
    if (r[i].start == net->start && r[i].end == net->end) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "duplicate range \"%s\", value: "
            "\"%s\", old value: \"%s\"", text->data, net->value->data,
            r[i].value->data);
        r[i].value = net->value;
        return RX_OK;
    }
    outer = r[i];
    p = range_open(ctx->ranges, i, (outer.start < net->start)
                                   + (outer.end > net->end));
    if (p == NULL) {
        return RX_ERROR;
    }
    if (outer.start < net->start) {
        *p = outer;
        p++->end = net->start - 1;
    }
    *p = *net;
    if (outer.end > net->end) {
        p[1] = outer;
        p[1].start = net->end + 1;
    }
    return RX_OK;
}

static void
range_delete(rx_conf_t *cf, geo_conf_ctx_t *ctx, const geo_net_t *net,
    const rx_str_t *text)
{
    geo_net_t *r = ctx->ranges->elts;
    rx_uint_t  n = ctx->ranges->nelts, i = range_find(r, n, net->start);

    if (i == n || r[i].start != net->start || r[i].end != net->end) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "no address range \"%s\" to "
                          "delete", text->data);
        return;
    }
    memmove(&r[i], &r[i + 1], (n - i - 1) * sizeof(geo_net_t));
    ctx->ranges->nelts--;
}

/* A line of a geo block with `ranges`: "default value;",
 * "delete a.b.c.d-e.f.g.h;", "a.b.c.d-e.f.g.h value;". */
static const char *
range_line(rx_conf_t *cf, geo_conf_ctx_t *ctx, rx_str_t *value)
{
    bool        del = rx_str_eq(&value[0], "delete");
    rx_str_t   *text = del ? &value[1] : &value[0];
    const char *dash;
    geo_ip_t    s, e;
    geo_net_t   net;

    if (rx_str_eq(&value[0], "default")) {
        if (ctx->geo->deflt != &geo_empty) {
            rx_conf_log_error(RX_LOG_WARN, cf, 0, "duplicate default geo range "
                "value: \"%s\", old value: \"%s\"", value[1].data,
                ctx->geo->deflt->data);
        }
        ctx->geo->deflt = geo_value(cf, ctx, &value[1]);
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
        range_delete(cf, ctx, &net, text);
        return RX_CONF_OK;
    }
    net.value = geo_value(cf, ctx, &value[1]);
    if (net.value == NULL) {
        return RX_CONF_ERROR;
    }
    return range_add(cf, ctx, &net, text) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

/* ---- configuration: the block ---- */

static const char *
add_proxy(rx_conf_t *cf, geo_conf_ctx_t *ctx, const rx_str_t *text)
{
    geo_net_t *p = rx_array_push(ctx->proxies);

    if (p == NULL) {
        return RX_CONF_ERROR;
    }
    memset(p, 0, sizeof(*p));
    return parse_cidr(cf, text, p) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

static const char *
geo_line(rx_conf_t *cf, void *dummy, void *conf)
{
    geo_conf_ctx_t *ctx = conf;
    rx_str_t       *value = cf->args->elts;

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

/* ---- compiling the lookup tables ---- */

/* Appends a piece unless the previous one has the same value. */
static rx_int_t
emit(rx_array_t *pieces, geo_addr_t start, const rx_str_t *value)
{
    geo_piece_t *p = pieces->elts;

    if (pieces->nelts && p[pieces->nelts - 1].value == value) {
        return RX_OK;
    }
    p = rx_array_push(pieces);
    if (p == NULL) {
        return RX_ERROR;
    }
    p->start = start;
    p->value = value;
    return RX_OK;
}

/* By start, then the larger network (shorter prefix) first. */
static int
net_cmp(const void *one, const void *two)
{
    const geo_net_t *a = one, *b = two;

    if (a->start != b->start) {
        return a->start < b->start ? -1 : 1;
    }
    return (a->bits > b->bits) - (a->bits < b->bits);
}

/*
 * Networks either nest or are disjoint. Sorted by net_cmp, a stack of the
 * networks open at the cursor gives at each point the innermost one, so
 * the pieces carry the most specific network's value, as nginx's radix
 * tree answers. max is the family's last address.
 */
static rx_int_t
sweep(const geo_net_t *nets, rx_uint_t n, geo_addr_t max, rx_array_t *pieces)
{
    const geo_net_t *stack[130], *top;
    rx_uint_t        depth = 0, i;
    geo_addr_t       cursor = 0;
    bool             done = false;

    for (i = 0; i <= n; i++) {
        while (depth && (i == n || stack[depth - 1]->end < nets[i].start)) {
            top = stack[--depth];
            if (done || cursor > top->end) {
                continue;
            }
            if (emit(pieces, cursor, top->value) != RX_OK) {
                return RX_ERROR;
            }
            if (top->end == max) {
                done = true;
            } else {
                cursor = top->end + 1;
            }
        }
        if (i == n) {
            break;
        }
        if (cursor < nets[i].start
            && emit(pieces, cursor, depth ? stack[depth - 1]->value : NULL)
               != RX_OK) {
            return RX_ERROR;
        }
        cursor = nets[i].start;
        stack[depth++] = &nets[i];
    }
    return done ? RX_OK : emit(pieces, cursor, NULL);
}

/* Moves the pieces from temp into the configuration's pool. */
static rx_int_t
keep_pieces(rx_conf_t *cf, rx_array_t *pieces, geo_table_t *t)
{
    t->n = pieces->nelts;
    t->pieces = rx_palloc(cf->pool, t->n * sizeof(geo_piece_t));
    if (t->pieces == NULL) {
        return RX_ERROR;
    }
    memcpy(t->pieces, pieces->elts, t->n * sizeof(geo_piece_t));
    return RX_OK;
}

static rx_int_t
build_family(rx_conf_t *cf, geo_conf_ctx_t *ctx, int family, geo_table_t *t)
{
    geo_net_t   *all = ctx->nets->elts, *nets;
    rx_array_t  *pieces;
    rx_uint_t    i, n = 0;

    nets = rx_palloc(ctx->temp, (ctx->nets->nelts + 1) * sizeof(geo_net_t));
    pieces = rx_array_create(ctx->temp, 64, sizeof(geo_piece_t));
    if (nets == NULL || pieces == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < ctx->nets->nelts; i++) {
        if (all[i].family == family && all[i].value) {
            nets[n++] = all[i];
        }
    }
    qsort(nets, n, sizeof(geo_net_t), net_cmp);
    if (sweep(nets, n, family_max(family), pieces) != RX_OK) {
        return RX_ERROR;
    }
    return keep_pieces(cf, pieces, t);
}

static rx_int_t
build_ranges(rx_conf_t *cf, geo_conf_ctx_t *ctx)
{
    geo_net_t  *r = ctx->ranges->elts;
    rx_array_t *pieces = rx_array_create(ctx->temp, 64, sizeof(geo_piece_t));
    geo_addr_t  cursor = 0;
    rx_uint_t   i;

    if (pieces == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < ctx->ranges->nelts; i++) {
        if ((cursor < r[i].start && emit(pieces, cursor, NULL) != RX_OK)
            || emit(pieces, r[i].start, r[i].value) != RX_OK) {
            return RX_ERROR;
        }
        cursor = r[i].end + 1;
    }
    if (cursor <= GEO_V4_MAX && emit(pieces, cursor, NULL) != RX_OK) {
        return RX_ERROR;
    }
    return keep_pieces(cf, pieces, &ctx->geo->v4);
}

static rx_int_t
build_tables(rx_conf_t *cf, geo_conf_ctx_t *ctx)
{
    geo_t *geo = ctx->geo;

    if (geo->ranges) {
        if (build_ranges(cf, ctx) != RX_OK) {
            return RX_ERROR;
        }
    } else if (build_family(cf, ctx, AF_INET, &geo->v4) != RX_OK
               || build_family(cf, ctx, AF_INET6, &geo->v6) != RX_OK) {
        return RX_ERROR;
    }
    geo->nproxies = ctx->proxies->nelts;
    geo->proxies = rx_palloc(cf->pool, (geo->nproxies + 1) * sizeof(geo_net_t));
    if (geo->proxies == NULL) {
        return RX_ERROR;
    }
    memcpy(geo->proxies, ctx->proxies->elts, geo->nproxies * sizeof(geo_net_t));
    return RX_OK;
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
    geo_conf_ctx_t      ctx;
    rx_conf_t           saved;
    const char         *rv = RX_CONF_ERROR;

    memset(&ctx, 0, sizeof(ctx));
    ctx.geo = rx_pcalloc(cf->pool, sizeof(geo_t));
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
    if (ctx.temp == NULL
        || (ctx.nets = rx_array_create(ctx.temp, 64, sizeof(geo_net_t))) == NULL
        || (ctx.ranges = rx_array_create(ctx.temp, 64, sizeof(geo_net_t))) == NULL
        || (ctx.proxies = rx_array_create(ctx.temp, 4, sizeof(geo_net_t)))
           == NULL) {
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
    if (build_tables(cf, &ctx) != RX_OK) {
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
