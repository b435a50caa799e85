/*
 * http_upstream_queue.c: the capacity interface of a group, as the
 * exchange asks it: a connection for a request now (a pooled one, or a new
 * one within max_conns and what learning allows), a place in the queue
 * when every server is full, and a connection given back (kept idle or
 * closed, and a waiting request told). The counts behind it are
 * http_upstream_shared.c's, the idle pool http_upstream_keepalive.c's,
 * the learned sizes http_upstream_learn.c's.
 *
 * A request that finds every server full waits in its worker's queue,
 * first in first out, at most `queue` of them in all, for at most
 * `timeout`; it goes on when a connection to the group closes or returns
 * to this worker's pool. Its place is taken in one step (a compare-and-
 * swap on every worker's count, http_upstream_shared.c) and kept while it
 * tries the connection it was offered: when another worker takes that
 * first, it goes back to the head, not the tail, is never refused for a
 * full queue, and its timeout still counts from its first admission
 * (Angie's queue also takes such a request back). A worker that has idle pooled connections to a
 * group whose queue is not empty elsewhere closes them, so that the
 * waiting request gets the slot: an idle connection never holds a PHP
 * child while a request waits for one.
 *
 * Cross-worker events are seen by a tick (2 ms while this worker has
 * requests waiting, 10 ms while it holds idle connections to such a group):
 * no syscall when nothing changes.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_metrics.h"
#include "clock.h"

#define TICK_WAITING  2
#define TICK_IDLE     10

static rx_timer_t    tick = { .node.index = RX_HEAP_NONE };

/* The waiter the queue is resuming (kick): it still holds its place in
 * the counts; queue_add puts it back at the head without asking for one. */
static rx_http_upstream_t *resuming;

static void tick_handler(rx_timer_t *t);

static void
tick_arm(void)
{
    const rx_array_t             *groups = rx_http_upstream_shared_groups();
    rx_http_upstream_srv_conf_t **g;
    rx_uint_t                     i;
    rx_msec_t                     period = 0;

    if (groups == NULL) {
        return;
    }
    g = groups->elts;
    for (i = 0; i < groups->nelts; i++) {
        if (g[i]->qhead) {
            period = TICK_WAITING;
            break;
        }
        if (g[i]->nidle) {
            period = TICK_IDLE;
        }
    }
    if (period == 0 || (rx_timer_is_set(&tick) && period == TICK_IDLE)) {
        return;
    }
    tick.handler = tick_handler;
    rx_timer_add(&tick, period);
}

static void
tick_handler(rx_timer_t *t)
{
    const rx_array_t             *groups = rx_http_upstream_shared_groups();
    rx_http_upstream_srv_conf_t **g = groups->elts;
    rx_uint_t                     i;

    for (i = 0; i < groups->nelts; i++) {
        rx_http_upstream_srv_conf_t *us = g[i];
        bool wanted = rx_http_upstream_wanted_elsewhere(us);

        if (us->qhead) {
            rx_http_upstream_queue_kick(us);
        }
        /* requests wait (or were refused) elsewhere: our idle
         * connections give way */
        if (us->qhead == NULL && wanted) {
            while (us->idle_head) {
                rx_conn_close(us->idle_head->c);
            }
        }
        /* e.g. a connection of another worker waits in the backlog of
         * a peer whose child an idle one of ours holds */
        rx_http_upstream_keepalive_give_back(us);
    }
    tick_arm();
}

/* A pooled connection went idle here: the tick watches for waiters. */
static void
queue_idle(rx_http_upstream_srv_conf_t *us)
{
    if (us->shared) {
        if (us->qhead) {
            rx_http_upstream_queue_kick(us);
        }
        tick_arm();
    }
}

/* u leaves the list (and its timer stops); its place in the counts is
 * given up by leave(). */
static void
unlink_waiter(rx_http_upstream_t *u)
{
    rx_http_upstream_srv_conf_t *us = u->us;

    if (u->qprev) u->qprev->qnext = u->qnext; else us->qhead = u->qnext;
    if (u->qnext) u->qnext->qprev = u->qprev; else us->qtail = u->qprev;
    u->qprev = u->qnext = NULL;
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_START);
    rx_timer_del(&u->queue_timer);
    u->queue_time += rx_current_msec - u->queue_start;
    rx_http_metrics_queue_left(us->metrics, rx_current_msec - u->queue_start);
}

/* A place in the group's queue is free again, for every worker. */
static void
leave(rx_http_upstream_srv_conf_t *us)
{
    us->nqueued--;
    (void) rx_http_upstream_shared_wait(us, -1);
}

/* A request leaves the queue without a connection (client gone). */
void
rx_http_upstream_queue_remove(rx_http_upstream_t *u)
{
    if (u->phase == RX_HTTP_UPSTREAM_QUEUED) {
        unlink_waiter(u);
        leave(u->us);
    }
}

static void
waited_too_long(rx_timer_t *t)
{
    rx_http_upstream_t *u = t->data;

    unlink_waiter(u);
    leave(u->us);
    rx_http_metrics_queue_timeout(u->us->metrics);
    rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "no connection to upstream "
        "\"%.*s\" became free within %" PRId64 ".%03d s in its queue",
        (int) u->us->host.len, u->us->host.data, (int64_t) (u->queue_time / 1000),
        (int) (u->queue_time % 1000));
    u->queue_failed(u, RX_HTTP_SERVICE_UNAVAILABLE);
}

/* u joins the list: at the tail, or at the head when it had its place
 * already (resumed, and the connection went to another worker); its timer
 * runs for what is left of the timeout. */
static void
link_waiter(rx_http_upstream_t *u, bool at_head)
{
    rx_http_upstream_srv_conf_t *us = u->us;
    rx_msec_t                    left = us->queue_timeout - u->queue_time;

    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_QUEUED);
    u->queue_start = rx_current_msec;
    if (at_head) {
        u->qprev = NULL;
        u->qnext = us->qhead;
        if (us->qhead) us->qhead->qprev = u; else us->qtail = u;
        us->qhead = u;
    } else {
        u->qnext = NULL;
        u->qprev = us->qtail;
        if (us->qtail) us->qtail->qnext = u; else us->qhead = u;
        us->qtail = u;
    }
    u->queue_timer.handler = waited_too_long;
    u->queue_timer.data = u;
    rx_timer_add(&u->queue_timer, left > 0 ? left : 1);
}

/* Whether u goes to the head is whether it holds a place: only the waiter
 * being resumed does, whichever way it found no connection. */
rx_int_t
rx_http_upstream_queue_add(rx_http_upstream_t *u,
    void (*resume)(rx_http_upstream_t *u),
    void (*failed)(rx_http_upstream_t *u, rx_int_t status))
{
    rx_http_upstream_srv_conf_t *us = u->us;
    uint32_t                     waiting;

    if (u == resuming) {
        resuming = NULL;         /* kept: it stays counted */
        link_waiter(u, true);
        tick_arm();
        return RX_OK;
    }
    waiting = rx_http_upstream_shared_waiting(us);
    if (!rx_http_upstream_shared_enter(us, &waiting)) {
        rx_http_metrics_queue_overflow(us->metrics);
        rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "the queue of upstream "
            "\"%.*s\" is full (%u requests waiting)", (int) us->host.len,
            us->host.data, (unsigned) waiting);
        return RX_DECLINED;
    }
    us->nqueued++;
    u->queue_resume = resume;
    u->queue_failed = failed;
    link_waiter(u, false);
    tick_arm();
    return RX_OK;
}

/* A connection may have become free: the first waiters try again, in
 * order, until one has to wait again. A waiter keeps its place while it
 * tries (resuming): it gives it up only once it no longer waits (a
 * connection, or an answer); u is not read after resume, which may have
 * ended the request. */
void
rx_http_upstream_queue_kick(rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_t *u, *outer = resuming;

    while ((u = us->qhead) != NULL && !rx_http_upstream_full(us)) {
        unlink_waiter(u);
        memset(u->tried, 0, ((rx_http_upstream_npeers(us) + 63) / 64)
                            * sizeof(uint64_t));
        resuming = u;
        u->queue_resume(u);
        if (resuming == u) {
            leave(us);           /* it went on, or was answered */
        } else if (us->qhead == u) {
            break;               /* another worker took the slot first */
        }
    }
    resuming = outer;
}

/* A new connection to the peer, if max_conns allows it: counted (and
 * watched while the peer's size is learned). */
bool
rx_http_upstream_conn_open(rx_http_upstream_conn_t *uc)
{
    if (!rx_http_upstream_conn_take(uc->us, uc->peer)) {
        return false;
    }
    uc->counted = true;
    rx_http_upstream_learn_opened(uc);
    return true;
}

/* The request is done with the connection: it stays in the idle pool when
 * the pool takes it, else it closes. */
void
rx_http_upstream_conn_release(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_srv_conf_t *us = uc->us;

    /* uc is the connection's memory: gone if it closed */
    if (rx_http_upstream_keepalive_put(uc)) {
        queue_idle(us);
    }
}

/* The connection closed (idle: it was in the pool): it no longer counts,
 * and a waiting request may have its slot. */
void
rx_http_upstream_conn_closed(rx_http_upstream_conn_t *uc, bool idle)
{
    if (idle) {
        rx_http_upstream_keepalive_remove(uc);
    }
    rx_http_upstream_learn_closed(uc);
    if (uc->counted) {
        uc->counted = false;
        rx_http_upstream_conn_put(uc->us, uc->peer);
        if (uc->us->qhead) {
            rx_http_upstream_queue_kick(uc->us);
        }
    }
}
