/*
 * http_upstream_rr.c: the peers of an upstream and the default balancer,
 * smooth weighted round robin (each pick adds every peer's weight to its
 * current weight, takes the largest and subtracts the total from it: over
 * a cycle each peer is picked weight times, spread out, never in bursts).
 * A peer that failed max_fails times within fail_timeout is left out for
 * fail_timeout; when every primary peer is out, the backup peers serve;
 * when none is left the caller answers 502 "no live upstreams".
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"

static rx_int_t
build(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peers_t *peers, bool backup)
{
    rx_http_upstream_server_t *s = us->servers->elts;
    rx_uint_t                  i, j, n = 0, k = 0;

    for (i = 0; i < us->servers->nelts; i++) {
        if (s[i].backup == backup) {
            n += s[i].addrs->nelts;
        }
    }
    if (n == 0) {
        return RX_OK;
    }
    peers->peer = rx_pcalloc(cf->pool, n * sizeof(rx_http_upstream_peer_t));
    if (peers->peer == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < us->servers->nelts; i++) {
        rx_sockaddr_t *a = s[i].addrs->elts;

        if (s[i].backup != backup) {
            continue;
        }
        for (j = 0; j < s[i].addrs->nelts; j++, k++) {
            rx_http_upstream_peer_t *p = &peers->peer[k];
            char                     text[RX_SOCKADDR_STRLEN];
            size_t                   len;

            p->addr = a[j];
            if (s[i].resolve) {
                /* an empty slot; its name is written when it is filled */
                if (j == 0) {
                    s[i].peers_of = p;
                }
                p->absent = true;
                peers->absent++;
                p->name.data = rx_pnalloc(cf->pool, RX_SOCKADDR_STRLEN);
                if (p->name.data == NULL) {
                    return RX_ERROR;
                }
                p->name.len = 0;
            } else {
                len = rx_sock_ntop(&a[j], text, sizeof(text), true);
                p->name.data = rx_pstrdup_c(cf->pool, text, len);
                if (p->name.data == NULL) {
                    return RX_ERROR;
                }
                p->name.len = len;
            }
            p->weight = p->effective_weight = s[i].weight;
            p->max_fails = s[i].max_fails;
            p->fail_timeout = s[i].fail_timeout;
            p->max_conns = s[i].max_conns;
            p->down = s[i].down;
            peers->total_weight += s[i].weight;
        }
    }
    peers->n = n;
    return RX_OK;
}

rx_int_t
rx_http_upstream_init_peers(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us)
{
    if (build(cf, us, &us->primary, false) != RX_OK
        || build(cf, us, &us->backup, true) != RX_OK) {
        return RX_ERROR;
    }
    if (us->primary.n == 0) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "no servers in upstream \"%.*s\" "
                     "in %s:%lu", (int) us->host.len, us->host.data,
                     us->file.data, (unsigned long) us->line);
        return RX_ERROR;
    }
    return RX_OK;
}

static bool
available(const rx_http_upstream_srv_conf_t *us, const rx_http_upstream_peer_t *p,
    bool single)
{
    if (p->down || p->absent) {
        return false;
    }
    /* max_conns counts open connections, pooled ones included, in every
     * worker; an idle one of this worker can take the request */
    if (p->idle == 0 && !rx_http_upstream_has_room(us, p)) {
        return false;
    }
    if (single) {
        return true;     /* nginx: a lone server is never taken out */
    }
    if (p->max_fails && p->fails >= p->max_fails
        && rx_current_msec - p->checked <= p->fail_timeout) {
        return false;
    }
    return true;
}

static rx_http_upstream_peer_t *
pick(const rx_http_upstream_srv_conf_t *us, rx_http_upstream_peers_t *peers,
    uint64_t *tried, rx_uint_t base, bool single)
{
    rx_http_upstream_peer_t *best = NULL;
    rx_int_t                 total = 0;
    rx_uint_t                i;

    for (i = 0; i < peers->n; i++) {
        rx_http_upstream_peer_t *p = &peers->peer[i];
        rx_uint_t                bit = base + i;

        if ((tried[bit / 64] >> (bit % 64)) & 1) {
            continue;
        }
        if (!available(us, p, single)) {
            continue;
        }
        p->current_weight += p->effective_weight;
        total += p->effective_weight;
        /* a peer that failed recovers its weight step by step */
        if (p->effective_weight < p->weight) {
            p->effective_weight++;
        }
        if (best == NULL || p->current_weight > best->current_weight) {
            best = p;
        }
    }
    if (best == NULL) {
        return NULL;
    }
    best->current_weight -= total;
    i = base + (rx_uint_t) (best - peers->peer);
    tried[i / 64] |= (uint64_t) 1 << (i % 64);
    return best;
}

/* One server (one address now, for a resolved one) */
static bool
single_peer(const rx_http_upstream_srv_conf_t *us)
{
    return us->primary.n - us->primary.absent == 1
           && us->backup.n - us->backup.absent == 0;
}

rx_uint_t
rx_http_upstream_peer_index(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p)
{
    if (p >= us->primary.peer && p < us->primary.peer + us->primary.n) {
        return (rx_uint_t) (p - us->primary.peer);
    }
    return us->primary.n + (rx_uint_t) (p - us->backup.peer);
}

bool
rx_http_upstream_tried(const rx_http_upstream_t *u, rx_uint_t index)
{
    return (u->tried[index / 64] >> (index % 64)) & 1;
}

void
rx_http_upstream_mark_tried(rx_http_upstream_t *u, rx_uint_t index)
{
    u->tried[index / 64] |= (uint64_t) 1 << (index % 64);
}

void
rx_http_upstream_mark_untried(rx_http_upstream_t *u,
    const rx_http_upstream_peer_t *p)
{
    rx_uint_t index = rx_http_upstream_peer_index(u->us, p);

    u->tried[index / 64] &= ~((uint64_t) 1 << (index % 64));
}

bool
rx_http_upstream_peer_available(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p)
{
    return available(us, p, single_peer(us));
}

void
rx_http_upstream_take_peer(rx_http_upstream_peer_t *p)
{
    p->conns++;
    p->accessed = rx_current_msec;
    if (rx_current_msec - p->checked > p->fail_timeout) {
        p->checked = rx_current_msec;
    }
}

rx_uint_t
rx_http_upstream_npresent(const rx_http_upstream_srv_conf_t *us)
{
    return us->primary.n - us->primary.absent + us->backup.n
           - us->backup.absent;
}

/* tried: one bit per peer (primary then backup), set for those this
 * request already used; a request never tries a peer twice. */
rx_http_upstream_peer_t *
rx_http_upstream_get_peer(rx_http_upstream_srv_conf_t *us, uint64_t *tried)
{
    bool                     single = single_peer(us);
    rx_http_upstream_peer_t *p = pick(us, &us->primary, tried, 0, single);

    if (p == NULL && us->backup.n) {
        p = pick(us, &us->backup, tried, us->primary.n, false);
    }
    if (p != NULL) {
        rx_http_upstream_take_peer(p);
    }
    return p;
}

void
rx_http_upstream_free_peer(rx_http_upstream_peer_t *peer, bool failed)
{
    if (peer->conns) {
        peer->conns--;
    }
    if (failed) {
        peer->fails++;
        peer->checked = rx_current_msec;
        if (peer->max_fails) {
            peer->effective_weight -= peer->weight / (rx_int_t) peer->max_fails;
            if (peer->effective_weight < 0) {
                peer->effective_weight = 0;
            }
        }
        return;
    }
    /* success after fail_timeout: the peer is back in full */
    if (peer->accessed < peer->checked) {
        return;
    }
    peer->fails = 0;
}
