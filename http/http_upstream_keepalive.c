/*
 * http_upstream_keepalive.c: the idle connections of an upstream, per
 * worker, most recently used first, at most `keepalive` of them (the least
 * recently used one is closed to make room). An idle connection keeps its
 * recv armed, so that an upstream closing it (or sending anything) is
 * noticed at once and the connection dropped before a request picks it.
 * keepalive_requests, keepalive_time and keepalive_timeout bound a
 * connection's life as in nginx.
 *
 * The completions of one loop turn often finish some exchanges and start
 * others: a connection put back to a full pool goes in all the same, and a
 * request that finds no idle connection (in a group without max_conns,
 * round robin) connects at the end of the turn, not at once. At the end of
 * the turn (rx_post) the deferred requests take what the turn put back and
 * connect only for the rest: no close of one connection while another
 * opens for the same peer.
 *
 * Connections beyond `keepalive` (the least recently used) are not closed
 * at once, as nginx's are, but once they have been idle for SURPLUS_HOLD:
 * under a load whose requests in flight swing around `keepalive` (50
 * clients, keepalive 32), nginx closes a fifth of its connections as they
 * come back and opens as many again a moment later; here they are taken
 * again. The number of connections to a server never exceeds the requests
 * in flight to it a moment earlier (a request takes an idle connection
 * before it opens one), and a worker whose connections stand in the way of
 * another's (rx_http_upstream_give_back: a learned pool's share) closes
 * them at once as before.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"

/* How long a connection beyond `keepalive` stays idle before it closes. */
#define SURPLUS_HOLD  100

static void
unlink_idle(rx_http_upstream_srv_conf_t *us, rx_http_upstream_conn_t *uc)
{
    if (uc->prev) uc->prev->next = uc->next; else us->idle_head = uc->next;
    if (uc->next) uc->next->prev = uc->prev; else us->idle_tail = uc->prev;
    uc->prev = uc->next = NULL;
    us->nidle--;
    rx_conn_set_idle(uc->c, false);
    if (uc->peer->idle) {
        uc->peer->idle--;
    }
}

void
rx_http_upstream_keepalive_remove(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_srv_conf_t *us = uc->us;

    /* on the list: linked to a neighbour, or its only member */
    if (uc->prev || uc->next || us->idle_head == uc) {
        unlink_idle(us, uc);
    }
}

/* An idle connection to the peer the balancer chose. */
rx_http_upstream_conn_t *
rx_http_upstream_keepalive_get(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *peer)
{
    rx_http_upstream_conn_t *uc;

    for (uc = us->idle_head; uc; uc = uc->next) {
        if (uc->peer == peer && uc->c->state == RX_CONN_ACTIVE) {
            unlink_idle(us, uc);
            rx_timer_del(&uc->c->timer);
            rx_conn_set_idle(uc->c, false);
            return uc;
        }
    }
    return NULL;
}

static void
idle_timeout(rx_timer_t *t)
{
    rx_conn_t *c = t->data;

    rx_conn_close(c);         /* on_free takes it off the list */
}

/* A connection that was beyond `keepalive` has been idle for SURPLUS_HOLD:
 * it closes if the pool still holds more than `keepalive`, else it waits
 * out the rest of keepalive_timeout as any other. */
static void
surplus_timeout(rx_timer_t *t)
{
    rx_conn_t                   *c = t->data;
    rx_http_upstream_conn_t     *uc = c->data;
    rx_http_upstream_srv_conf_t *us = uc->us;
    rx_msec_t                    idle = rx_current_msec - uc->idle_at;

    if (us->nidle > us->keepalive || idle >= us->keepalive_timeout) {
        rx_conn_close(c);
        return;
    }
    c->timer.handler = idle_timeout;
    rx_timer_add(&c->timer, us->keepalive_timeout - idle);
}

/* The least recently used connections beyond `keepalive`: those idle for
 * SURPLUS_HOLD (or keepalive_timeout, if shorter) already close, the
 * others get a timer for when they will have been (one that has it keeps
 * its deadline; a closing one gets none, as in the loop above). */
static void
trim_surplus(rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_conn_t *uc;
    rx_uint_t                n;
    rx_msec_t                idle;
    rx_msec_t                hold = rx_min(SURPLUS_HOLD, us->keepalive_timeout);

    while (us->nidle > us->keepalive && (uc = us->idle_tail) != NULL
           && uc->c->state == RX_CONN_ACTIVE
           && rx_current_msec - uc->idle_at >= hold) {
        rx_conn_close(uc->c);      /* on_free takes it off the list */
    }
    n = us->nidle > us->keepalive ? us->nidle - us->keepalive : 0;
    for (uc = us->idle_tail; uc && n > 0; uc = uc->prev, n--) {
        if (uc->c->state == RX_CONN_ACTIVE
            && uc->c->timer.handler != surplus_timeout) {
            idle = rx_current_msec - uc->idle_at;
            uc->c->timer.handler = surplus_timeout;
            rx_timer_add(&uc->c->timer, idle < hold ? hold - idle : 0);
        }
    }
}

/* The end of the loop turn: the connects deferred until now (one deferred
 * again meanwhile, a failed try's next, waits for the next turn's end),
 * then the connections beyond keepalive are trimmed. */
static void
turn_end(rx_posted_t *p)
{
    rx_http_upstream_srv_conf_t *us = p->data;
    rx_http_upstream_t          *u;
    rx_uint_t                    n = us->ndeferred;

    while (n-- > 0 && (u = us->dhead) != NULL) {
        us->dhead = u->dnext;
        if (us->dhead == NULL) {
            us->dtail = NULL;
        }
        us->ndeferred--;
        u->dnext = NULL;
        u->deferred = 0;
        u->deferred_connect(u);
    }
    trim_surplus(us);
}

static void
post_turn_end(rx_http_upstream_srv_conf_t *us)
{
    us->turn.handler = turn_end;
    us->turn.data = us;
    rx_post(&us->turn);
}

bool
rx_http_upstream_keepalive_defer(rx_http_upstream_t *u,
    void (*connect)(rx_http_upstream_t *u))
{
    rx_http_upstream_srv_conf_t *us = u->us;

    /* max_conns and the balancers that count connections pick a peer
     * by what is open now: those connect at once */
    if (us->keepalive == 0 || us->shared || us->balancer || u->deferred) {
        return false;
    }
    u->deferred = 1;
    u->deferred_connect = connect;
    u->dnext = NULL;
    if (us->dtail) us->dtail->dnext = u; else us->dhead = u;
    us->dtail = u;
    us->ndeferred++;
    post_turn_end(us);
    return true;
}

void
rx_http_upstream_keepalive_undefer(rx_http_upstream_t *u)
{
    rx_http_upstream_srv_conf_t *us = u->us;
    rx_http_upstream_t          *prev = NULL, *i;

    if (!u->deferred) {
        return;
    }
    for (i = us->dhead; i && i != u; i = i->dnext) {
        prev = i;
    }
    if (i == NULL) {
        return;
    }
    if (prev) prev->dnext = u->dnext; else us->dhead = u->dnext;
    if (us->dtail == u) {
        us->dtail = prev;
    }
    us->ndeferred--;
    u->dnext = NULL;
    u->deferred = 0;
}

bool
rx_http_upstream_keepalive_put(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_srv_conf_t *us = uc->us;
    rx_conn_t                   *c = uc->c;

    uc->u = NULL;
    if (us->keepalive == 0 || rx_worker.quit || c->state != RX_CONN_ACTIVE
        || c->read_eof || uc->peer->absent
        || uc->requests >= us->keepalive_requests
        || rx_current_msec - uc->start > us->keepalive_time
        || rx_http_upstream_give_back(uc)) {
        rx_conn_close(c);
        return false;
    }
    uc->prev = NULL;
    uc->next = us->idle_head;
    if (us->idle_head) us->idle_head->prev = uc; else us->idle_tail = uc;
    us->idle_head = uc;
    us->nidle++;
    uc->peer->idle++;
    uc->idle_at = rx_current_msec;
    c->timer.handler = idle_timeout;
    rx_timer_add(&c->timer, us->keepalive_timeout);
    if (!c->want_read) {           /* a TLS transport may read already */
        c->transport->start_read(c);
    }
    /* on the worker's idle list too, as nginx marks cached connections
     * idle: a graceful stop closes it at once instead of waiting out
     * keepalive_timeout, and a full connection table may close it right
     * here (so it comes after everything that arms the connection) */
    rx_conn_set_idle(c, true);
    if (us->nidle > us->keepalive) {
        post_turn_end(us);
    }
    return true;
}

/* The idle connections that rx_http_upstream_give_back() says should go,
 * closed. Closing one kicks the queue, which may hand another to a request
 * at once: the search starts again from the head each time. */
void
rx_http_upstream_keepalive_give_back(rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_conn_t *uc;

    for ( ;; ) {
        for (uc = us->idle_head; uc && !rx_http_upstream_give_back(uc);
             uc = uc->next) { }
        if (uc == NULL) {
            return;
        }
        rx_conn_close(uc->c);
    }
}
