/*
 * http_upstream_hash.c: the balancers that map a request to a server by a
 * hash, `hash key [consistent]` and `ip_hash`.
 *
 *   hash key          the CRC-32 of the key (a complex value, evaluated per
 *                     request) picks a place in the servers' weights, as
 *                     Cache::Memcached and nginx do; a server that is out
 *                     or already tried by this request makes it rehash with
 *                     a counter mixed in
 *   hash key consistent  ketama: the first point of the ring at or after
 *                     the key's CRC (http_upstream_chash.c); a server that
 *                     is out or tried passes the key on along the ring
 *   ip_hash           the first three octets of an IPv4 client address (all
 *                     of an IPv6 one) make the key; rehashing as nginx
 *
 * After 20 servers rejected, with an empty key or a single server, the
 * request falls back to round robin, as nginx; ip_hash takes a client on a
 * unix socket as 0.0.0 (nginx's pseudo address). `down` servers keep
 * their place (the mapping of the other keys does not change); `backup`
 * servers are refused.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_upstream_chash.h"
#include "crc32.h"

#define HASH_TRIES  20

typedef struct {
    rx_http_complex_value_t    key;
    bool                       consistent;
    rx_http_upstream_chash_t   ring;
    rx_uint_t                 *first;   /* server line -> its first peer */
} hash_conf_t;

static const char *set_hash(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_ip_hash(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t init_chash(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us);
static rx_http_upstream_peer_t *get_hash_peer(rx_http_upstream_t *u);
static rx_http_upstream_peer_t *get_chash_peer(rx_http_upstream_t *u);
static rx_http_upstream_peer_t *get_ip_hash_peer(rx_http_upstream_t *u);

static const rx_command_t hash_commands[] = {
    { "hash", RX_HTTP_UPS_CONF | RX_CONF_TAKE12, set_hash,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "ip_hash", RX_HTTP_UPS_CONF | RX_CONF_NOARGS, set_ip_hash,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t hash_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_upstream_hash_module = {
    "rx_http_upstream_hash_module", 0, 0, RX_HTTP_MODULE, &hash_ctx,
    hash_commands, NULL, NULL, NULL, NULL
};

static const rx_http_upstream_balancer_t hash_balancer = {
    "hash", false, NULL, get_hash_peer
};
static const rx_http_upstream_balancer_t chash_balancer = {
    "hash consistent", false, init_chash, get_chash_peer
};
static const rx_http_upstream_balancer_t ip_hash_balancer = {
    "ip_hash", false, NULL, get_ip_hash_peer
};

static const char *
set_hash(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t    *value = cf->args->elts;
    hash_conf_t *hc = rx_pcalloc(cf->pool, sizeof(*hc));

    if (hc == NULL) {
        return RX_CONF_ERROR;
    }
    if (rx_http_compile_complex_value(cf, &value[1], &hc->key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (cf->args->nelts == 3) {
        if (!rx_str_eq(&value[2], "consistent")) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[2].data);
            return RX_CONF_ERROR;
        }
        hc->consistent = true;
    }
    return rx_http_upstream_set_balancer(cf, hc->consistent ? &chash_balancer
                                                            : &hash_balancer,
                                         hc);
}

static const char *
set_ip_hash(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    return rx_http_upstream_set_balancer(cf, &ip_hash_balancer, NULL);
}

/* ---- shared ---- */

static bool
usable(rx_http_upstream_t *u, rx_uint_t index)
{
    return !rx_http_upstream_tried(u, index)
           && rx_http_upstream_peer_available(u->us, &u->us->primary.peer[index]);
}

static rx_http_upstream_peer_t *
take(rx_http_upstream_t *u, rx_uint_t index)
{
    rx_http_upstream_peer_t *p = &u->us->primary.peer[index];

    rx_http_upstream_mark_tried(u, index);
    rx_http_upstream_take_peer(p);
    return p;
}

/* The primary peer at w in [0, total_weight): each peer owns weight
 * consecutive values, in the order of the server lines. */
static rx_uint_t
peer_at(const rx_http_upstream_peers_t *peers, rx_uint_t w)
{
    rx_uint_t i;

    for (i = 0; w >= (rx_uint_t) peers->peer[i].weight; i++) {
        w -= (rx_uint_t) peers->peer[i].weight;
    }
    return i;
}

/* The key, or an empty one when it cannot be evaluated (memory). */
static rx_str_t
eval_key(rx_http_upstream_t *u)
{
    hash_conf_t *hc = u->us->balancer_conf;
    rx_str_t     key = rx_null_string;

    if (rx_http_complex_value(u->r, &hc->key, &key) != RX_OK) {
        key.len = 0;
    }
    return key;
}

/* ---- hash key ---- */

/*
 * Each attempt adds ((crc32([attempt] key) >> 16) & 0x7fff) to a running
 * hash, attempt written in decimal and left out the first time (the
 * Cache::Memcached scheme nginx follows), and picks the peer at the hash
 * modulo the total weight. A tried peer is rejected like a failed one, so
 * a retry starts over and walks the same sequence past it.
 */
static rx_http_upstream_peer_t *
get_hash_peer(rx_http_upstream_t *u)
{
    rx_http_upstream_peers_t *peers = &u->us->primary;
    rx_str_t                  key;
    rx_uint_t                 attempt, hash = 0, i;
    char                      num[24];

    if (peers->n == 1) {
        goto rr;
    }
    key = eval_key(u);
    if (key.len == 0) {
        goto rr;
    }
    for (attempt = 0; attempt < HASH_TRIES; attempt++) {
        uint32_t crc = 0;

        if (attempt > 0) {
            crc = rx_crc32(crc, num, (size_t) snprintf(num, sizeof(num), "%lu",
                                                       (unsigned long) attempt));
        }
        crc = rx_crc32(crc, key.data, key.len);
        hash += (crc >> 16) & 0x7fff;
        i = peer_at(peers, hash % (rx_uint_t) peers->total_weight);
        if (usable(u, i)) {
            return take(u, i);
        }
    }

rr:
    return rx_http_upstream_get_peer(u->us, u->tried);
}

/* ---- hash key consistent ---- */

static rx_int_t
init_chash(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us)
{
    hash_conf_t               *hc = us->balancer_conf;
    rx_http_upstream_server_t *s = us->servers->elts;
    rx_uint_t                  i, n = us->servers->nelts;

    /* no backup servers here, so the peers follow the server lines */
    hc->first = rx_palloc(cf->pool, (n + 1) * sizeof(rx_uint_t));
    if (hc->first == NULL) {
        return RX_ERROR;
    }
    hc->first[0] = 0;
    for (i = 0; i < n; i++) {
        hc->first[i + 1] = hc->first[i] + s[i].addrs->nelts;
    }
    return rx_http_upstream_chash_init(cf->pool, &hc->ring, s, n);
}

/* A usable address of server line s (smooth weighted round robin among a
 * hostname's addresses, as the group's balancer would), or -1. */
static rx_int_t
server_peer(rx_http_upstream_t *u, const hash_conf_t *hc, rx_uint_t s)
{
    rx_http_upstream_peer_t *peer = u->us->primary.peer, *best = NULL;
    rx_int_t                 total = 0;
    rx_uint_t                i;

    for (i = hc->first[s]; i < hc->first[s + 1]; i++) {
        if (!usable(u, i)) {
            continue;
        }
        peer[i].current_weight += peer[i].effective_weight;
        total += peer[i].effective_weight;
        if (best == NULL || peer[i].current_weight > best->current_weight) {
            best = &peer[i];
        }
    }
    if (best == NULL) {
        return -1;
    }
    best->current_weight -= total;
    return best - peer;
}

/*
 * From the key's point on, around the ring: the first server that has a
 * usable address. Runs of points of a server already rejected are skipped
 * without counting; after 20 rejected servers, round robin.
 */
static rx_http_upstream_peer_t *
get_chash_peer(rx_http_upstream_t *u)
{
    hash_conf_t *hc = u->us->balancer_conf;
    rx_str_t     key;
    rx_uint_t    pt, step, rejected = 0, last = (rx_uint_t) -1;
    rx_int_t     i;

    if (u->us->primary.n == 1) {
        goto rr;
    }
    key = eval_key(u);
    if (key.len == 0) {
        goto rr;
    }
    pt = rx_http_upstream_chash_find(&hc->ring, rx_crc32(0, key.data, key.len));
    for (step = 0; step < hc->ring.n && rejected < HASH_TRIES; step++) {
        rx_uint_t s = hc->ring.point[(pt + step) % hc->ring.n].server;

        if (s == last) {
            continue;
        }
        i = server_peer(u, hc, s);
        if (i >= 0) {
            return take(u, (rx_uint_t) i);
        }
        last = s;
        rejected++;
    }

rr:
    return rx_http_upstream_get_peer(u->us, u->tried);
}

/* ---- ip_hash ---- */

/*
 * nginx's function: from 89, hash = (hash * 113 + byte) % 6271 over the
 * address bytes, once more for each attempt; the peer at hash modulo the
 * total weight.
 */
static rx_http_upstream_peer_t *
get_ip_hash_peer(rx_http_upstream_t *u)
{
    rx_http_upstream_peers_t *peers = &u->us->primary;
    const rx_sockaddr_t      *sa = rx_http_remote_addr(u->r);
    static const unsigned char pseudo[3];
    const unsigned char      *addr;
    rx_uint_t                 len, attempt, hash = 89, j, i;

    if (peers->n == 1 || sa == NULL) {
        goto rr;
    }
    switch (sa->u.sa.sa_family) {
    case AF_INET:
        addr = (const unsigned char *) &sa->u.sin.sin_addr;
        len = 3;
        break;
    case AF_INET6:
        addr = sa->u.sin6.sin6_addr.s6_addr;
        len = 16;
        break;
    default:
        /* unix socket clients: all as 0.0.0, as nginx */
        addr = pseudo;
        len = 3;
        break;
    }
    for (attempt = 0; attempt < HASH_TRIES; attempt++) {
        for (j = 0; j < len; j++) {
            hash = (hash * 113 + addr[j]) % 6271;
        }
        i = peer_at(peers, hash % (rx_uint_t) peers->total_weight);
        if (usable(u, i)) {
            return take(u, i);
        }
    }

rr:
    return rx_http_upstream_get_peer(u->us, u->tried);
}
