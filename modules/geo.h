/*
 * geo.h: what modules/geo.c (the module, its lines, the lookups) and
 * modules/geo_build.c (building the tables at load) share. Private to the
 * geo module.
 */
#ifndef RX_GEO_H
#define RX_GEO_H

#include <sys/socket.h>

/* Addresses as numbers: IPv4 in the low 32 bits, IPv6 in all 128. */
__extension__ typedef unsigned __int128 rx_geo_addr_t;

#define RX_GEO_V4_MAX  ((rx_geo_addr_t) 0xffffffffu)
#define RX_GEO_V6_MAX  (~(rx_geo_addr_t) 0)

typedef struct {
    int            family;            /* AF_INET or AF_INET6 */
    rx_geo_addr_t  addr;
} rx_geo_ip_t;

/* A network (with its prefix length) or a range, while parsing; also a
 * trusted proxy. */
typedef struct {
    int             family;
    unsigned        bits;
    rx_geo_addr_t   start;
    rx_geo_addr_t   end;
    const rx_str_t *value;            /* NULL: deleted */
} rx_geo_net_t;

/* From start up to the next piece's start, the value (NULL: default). */
typedef struct {
    rx_geo_addr_t   start;
    const rx_str_t *value;
} rx_geo_piece_t;

typedef struct {
    rx_geo_piece_t *pieces;           /* pieces[0].start is 0 */
    rx_uint_t       n;
} rx_geo_table_t;

/* One geo block, the data of its variable. */
typedef struct {
    rx_geo_table_t  v4;
    rx_geo_table_t  v6;               /* empty with `ranges` */
    const rx_str_t *deflt;            /* for pieces without a value */
    rx_geo_net_t   *proxies;
    rx_uint_t       nproxies;
    bool            proxy_recursive;
    bool            ranges;
    rx_int_t        index;            /* source variable; -1: the client */
} rx_geo_t;

/* While the block is parsed; all of it in temp, freed at its end. */
typedef struct {
    rx_geo_t         *geo;
    rx_pool_t        *temp;
    rx_array_t       *nets;           /* rx_geo_net_t, in any order */
    rx_uint_t        *slots;          /* hash of nets: index + 1, 0 free */
    size_t            mask;
    rx_array_t       *ranges;         /* rx_geo_net_t, sorted, disjoint */
    rx_array_t       *proxies;        /* rx_geo_net_t */
    const rx_str_t  **values;         /* hash of the distinct values */
    size_t            vmask;
    size_t            nvalues;
    bool              networks_seen;  /* `ranges` must come before */
} rx_geo_conf_ctx_t;

static inline rx_geo_addr_t
rx_geo_family_max(int family)
{
    return family == AF_INET ? RX_GEO_V4_MAX : RX_GEO_V6_MAX;
}

/*
 * The value text, one copy in the configuration's pool per distinct text
 * (geo databases repeat a few hundred values over many networks); NULL
 * when out of memory.
 */
const rx_str_t *rx_geo_value(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    const rx_str_t *text);

/* A network (value set) replaces an equal one with nginx's warning
 * `duplicate network "text", value: ..., old value: ...` (not after a
 * delete); RX_OK or RX_ERROR (out of memory). */
rx_int_t rx_geo_net_add(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    rx_geo_net_t *net, const rx_str_t *text);

/* Removes the network, or warns `no network "text" to delete`. */
void rx_geo_net_delete(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    const rx_geo_net_t *net, const rx_str_t *text);

/* Adds an IPv4 range: inside an existing one it splits it, equal to one it
 * replaces it (`duplicate range` warning), any other overlap is logged
 * (`range "x" overlaps "y"`) and RX_ERROR. */
rx_int_t rx_geo_range_add(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    const rx_geo_net_t *net, const rx_str_t *text);

/* Removes the range, or warns `no address range "text" to delete`. */
void rx_geo_range_delete(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx,
    const rx_geo_net_t *net, const rx_str_t *text);

/* At the end of the block: the lookup tables and the proxies of
 * ctx->geo, in the configuration's pool. RX_OK or RX_ERROR. */
rx_int_t rx_geo_build_tables(rx_conf_t *cf, rx_geo_conf_ctx_t *ctx);

#endif /* RX_GEO_H */
