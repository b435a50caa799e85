/*
 * geo_build.c: the configuration-time side of the geo module (geo.h): one
 * copy per distinct value, networks kept in a hash until the block ends,
 * IPv4 ranges kept sorted and disjoint, and the compilation of both into
 * the sorted intervals that requests search.
 */
#include "http.h"
#include "geo.h"

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
const rx_str_t *
rx_geo_value(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, const rx_str_t *text)
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
net_hash(int family, unsigned bits, rx_geo_addr_t start)
{
    uint64_t h = (uint64_t) start
                 ^ (uint64_t) (start >> 64) * 0x9e3779b97f4a7c15ull;

    h ^= (uint64_t) bits << 56 ^ (uint64_t) family << 48;
    h *= 0xff51afd7ed558ccdull;
    return (size_t) (h ^ h >> 33);
}

/* The hash slot of the network (family, bits, start), or the free slot
 * where it goes. */
static rx_uint_t *
net_slot(rx_geo_conf_ctx_t *ctx, const rx_geo_net_t *net)
{
    rx_geo_net_t *nets = ctx->nets->elts, *e;
    size_t        i = net_hash(net->family, net->bits, net->start) & ctx->mask;

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
nets_grow(rx_geo_conf_ctx_t *ctx)
{
    rx_uint_t    *old = ctx->slots;
    size_t        i, oldsize = old ? ctx->mask + 1 : 0;
    size_t        size = old ? 2 * oldsize : 256;
    rx_geo_net_t *nets = ctx->nets->elts;

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
rx_int_t
rx_geo_net_add(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, rx_geo_net_t *net,
    const rx_str_t *text)
{
    rx_uint_t    *slot;
    rx_geo_net_t *e;

    if ((ctx->nets->nelts + 1) * 2 > (ctx->slots ? ctx->mask + 1 : 0)
        && nets_grow(ctx) != RX_OK) {
        return RX_ERROR;
    }
    slot = net_slot(ctx, net);
    if (*slot) {
        e = (rx_geo_net_t *) ctx->nets->elts + (*slot - 1);
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

void
rx_geo_net_delete(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    const rx_geo_net_t *net, const rx_str_t *text)
{
    rx_uint_t    *slot = ctx->slots ? net_slot(ctx, net) : NULL;
    rx_geo_net_t *e = NULL;

    if (slot && *slot) {
        e = (rx_geo_net_t *) ctx->nets->elts + (*slot - 1);
    }
    if (e == NULL || e->value == NULL) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "no network \"%s\" to delete",
                          text->data);
        return;
    }
    e->value = NULL;
}

/* ---- configuration: ranges ---- */

/* The first range whose end is at or past addr. */
static rx_uint_t
range_find(const rx_geo_net_t *r, rx_uint_t n, rx_geo_addr_t addr)
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
static rx_geo_net_t *
range_open(rx_array_t *a, rx_uint_t i, rx_uint_t k)
{
    rx_geo_net_t *r;

    if (rx_array_push_n(a, k) == NULL) {
        return NULL;
    }
    r = a->elts;
    memmove(&r[i + k], &r[i], (a->nelts - k - i) * sizeof(rx_geo_net_t));
    return &r[i];
}

static void
log_overlap(rx_conf_t *cf, const rx_str_t *text, const rx_geo_net_t *r)
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
rx_int_t
rx_geo_range_add(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, const rx_geo_net_t *net,
    const rx_str_t *text)
{
    rx_geo_net_t *r = ctx->ranges->elts, outer, *p;
    rx_uint_t     n = ctx->ranges->nelts, i = range_find(r, n, net->start);

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

void
rx_geo_range_delete(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    const rx_geo_net_t *net, const rx_str_t *text)
{
    rx_geo_net_t *r = ctx->ranges->elts;
    rx_uint_t     n = ctx->ranges->nelts, i = range_find(r, n, net->start);

    if (i == n || r[i].start != net->start || r[i].end != net->end) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "no address range \"%s\" to "
                          "delete", text->data);
        return;
    }
    memmove(&r[i], &r[i + 1], (n - i - 1) * sizeof(rx_geo_net_t));
    ctx->ranges->nelts--;
}

/* ---- compiling the lookup tables ---- */

/* Appends a piece unless the previous one has the same value. */
static rx_int_t
emit(rx_array_t *pieces, rx_geo_addr_t start, const rx_str_t *value)
{
    rx_geo_piece_t *p = pieces->elts;

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
    const rx_geo_net_t *a = one, *b = two;

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
sweep(const rx_geo_net_t *nets, rx_uint_t n, rx_geo_addr_t max,
    rx_array_t *pieces)
{
    const rx_geo_net_t *stack[130], *top;
    rx_uint_t           depth = 0, i;
    rx_geo_addr_t       cursor = 0;
    bool                done = false;

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
keep_pieces(rx_conf_t *cf, rx_array_t *pieces, rx_geo_table_t *t)
{
    t->n = pieces->nelts;
    t->pieces = rx_palloc(cf->pool, t->n * sizeof(rx_geo_piece_t));
    if (t->pieces == NULL) {
        return RX_ERROR;
    }
    memcpy(t->pieces, pieces->elts, t->n * sizeof(rx_geo_piece_t));
    return RX_OK;
}

static rx_int_t
build_family(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx, int family,
    rx_geo_table_t *t)
{
    rx_geo_net_t *all = ctx->nets->elts, *nets;
    rx_array_t   *pieces;
    rx_uint_t     i, n = 0;

    for (i = 0; i < ctx->nets->nelts; i++) {
        n += all[i].family == family && all[i].value;
    }
    nets = rx_palloc(ctx->temp, (n + 1) * sizeof(rx_geo_net_t));
    pieces = rx_array_create(ctx->temp, 2 * n + 1, sizeof(rx_geo_piece_t));
    if (nets == NULL || pieces == NULL) {
        return RX_ERROR;
    }
    for (i = 0, n = 0; i < ctx->nets->nelts; i++) {
        if (all[i].family == family && all[i].value) {
            nets[n++] = all[i];
        }
    }
    qsort(nets, n, sizeof(rx_geo_net_t), net_cmp);
    if (sweep(nets, n, rx_geo_family_max(family), pieces) != RX_OK) {
        return RX_ERROR;
    }
    return keep_pieces(cf, pieces, t);
}

static rx_int_t
build_ranges(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx)
{
    rx_geo_net_t  *r = ctx->ranges->elts;
    rx_array_t    *pieces = rx_array_create(ctx->temp, 64, sizeof(rx_geo_piece_t));
    rx_geo_addr_t  cursor = 0;
    rx_uint_t      i;

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
    if (cursor <= RX_GEO_V4_MAX && emit(pieces, cursor, NULL) != RX_OK) {
        return RX_ERROR;
    }
    return keep_pieces(cf, pieces, &ctx->geo->v4);
}

rx_int_t
rx_geo_build_tables(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx)
{
    rx_geo_t *geo = ctx->geo;

    if (geo->ranges) {
        if (build_ranges(cf, ctx) != RX_OK) {
            return RX_ERROR;
        }
    } else if (build_family(cf, ctx, AF_INET, &geo->v4) != RX_OK
               || build_family(cf, ctx, AF_INET6, &geo->v6) != RX_OK) {
        return RX_ERROR;
    }
    geo->nproxies = ctx->proxies->nelts;
    geo->proxies = rx_palloc(cf->pool,
                             (geo->nproxies + 1) * sizeof(rx_geo_net_t));
    if (geo->proxies == NULL) {
        return RX_ERROR;
    }
    memcpy(geo->proxies, ctx->proxies->elts,
           geo->nproxies * sizeof(rx_geo_net_t));
    return RX_OK;
}

