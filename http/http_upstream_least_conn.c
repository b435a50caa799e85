/*
 * http_upstream_least_conn.c: the `least_conn` balancer. A request goes to
 * the server with the fewest active connections relative to its weight
 * (this worker's count, as nginx without a zone); servers tied for that
 * share take turns by smooth weighted round robin. When no primary server
 * can take the request, the backup servers are chosen the same way.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"

static const char *set_least_conn(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_http_upstream_peer_t *get_peer(rx_http_upstream_t *u);

static const rx_command_t least_conn_commands[] = {
    { "least_conn", RX_HTTP_UPS_CONF | RX_CONF_NOARGS, set_least_conn,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t least_conn_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_upstream_least_conn_module = {
    "rx_http_upstream_least_conn_module", 0, 0, RX_HTTP_MODULE,
    &least_conn_ctx, least_conn_commands, NULL, NULL, NULL, NULL
};

static const rx_http_upstream_balancer_t least_conn = {
    "least_conn", true, NULL, get_peer
};

static const char *
set_least_conn(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    return rx_http_upstream_set_balancer(cf, &least_conn, NULL);
}

static bool
usable(rx_http_upstream_t *u, rx_http_upstream_peer_t *p, rx_uint_t index)
{
    return !rx_http_upstream_tried(u, index)
           && rx_http_upstream_peer_available(u->us, p);
}

/* a->conns / a->weight against b's, without division: <0, 0, >0 */
static int
compare(const rx_http_upstream_peer_t *a, const rx_http_upstream_peer_t *b)
{
    uint64_t l = (uint64_t) a->conns * (uint64_t) b->weight;
    uint64_t r = (uint64_t) b->conns * (uint64_t) a->weight;

    return l < r ? -1 : l > r;
}

/* One set of peers (primary, or backup from index base): the least loaded
 * usable peer, or NULL. */
static rx_http_upstream_peer_t *
pick(rx_http_upstream_t *u, rx_http_upstream_peers_t *peers, rx_uint_t base)
{
    rx_http_upstream_peer_t *best = NULL, *p;
    rx_uint_t                i, first = 0;
    rx_int_t                 total = 0;
    bool                     tie = false;

    for (i = 0; i < peers->n; i++) {
        p = &peers->peer[i];
        if (!usable(u, p, base + i)) {
            continue;
        }
        if (best == NULL || compare(p, best) < 0) {
            best = p;
            first = i;
            tie = false;
        } else if (compare(p, best) == 0) {
            tie = true;
        }
    }
    if (best == NULL || !tie) {
        return best;
    }

    /* the tied peers (all at or after the first one) share by weight */
    best = NULL;
    for (i = first; i < peers->n; i++) {
        rx_http_upstream_peer_t *lead = &peers->peer[first];

        p = &peers->peer[i];
        if (!usable(u, p, base + i) || compare(p, lead) != 0) {
            continue;
        }
        p->current_weight += p->effective_weight;
        total += p->effective_weight;
        if (p->effective_weight < p->weight) {
            p->effective_weight++;
        }
        if (best == NULL || p->current_weight > best->current_weight) {
            best = p;
        }
    }
    best->current_weight -= total;
    return best;
}

static rx_http_upstream_peer_t *
get_peer(rx_http_upstream_t *u)
{
    rx_http_upstream_srv_conf_t *us = u->us;
    rx_http_upstream_peer_t     *p;

    p = pick(u, &us->primary, 0);
    if (p == NULL && us->backup.n) {
        p = pick(u, &us->backup, us->primary.n);
    }
    if (p == NULL) {
        return NULL;
    }
    rx_http_upstream_mark_tried(u, rx_http_upstream_peer_index(us, p));
    rx_http_upstream_take_peer(p);
    return p;
}
