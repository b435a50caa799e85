/*
 * http_upstream_queue.c: max_conns across workers and the upstream queue.
 *
 * A group with `max_conns` on a server or a `queue` gets a small shared
 * memory segment: per server, the connections open to it from every
 * worker (busy or idle in a keepalive pool); per group, the requests
 * waiting in every worker's queue. A new connection is opened only when it
 * keeps the count within max_conns (a compare-and-swap, so workers never
 * overshoot together). A request that finds every server full waits in its
 * worker's queue, first in first out, at most `queue` of them in all, for
 * at most `timeout`; it goes on when a connection to the group closes or
 * returns to this worker's pool. A worker that has idle pooled connections
 * to a group whose queue is not empty elsewhere closes them, so that the
 * waiting request gets the slot: an idle connection never holds a PHP
 * child while a request waits for one.
 *
 * Cross-worker events are seen by a tick (2 ms while this worker has
 * requests waiting, 10 ms while it holds idle connections to such a group):
 * no syscall when nothing changes.
 *
 * Each worker also keeps its own share of every count, in a row of the
 * segment chosen by its worker number. A worker that dies without giving
 * its connections back (a crash, SIGKILL) would leave them counted for
 * ever, and the group would answer 502 once the leak reaches max_conns;
 * the worker the master starts in its place (same number, same segment)
 * takes the dead one's share off the totals before it serves anything.
 */
#include <stdatomic.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "shm.h"
#include "clock.h"
#include "process.h"

#define TICK_WAITING  2
#define TICK_IDLE     10

/* conns[] holds n totals (one per peer), then RX_MAX_WORKERS rows of
 * 2n + 1: a worker's open connections per peer, its waiting requests, and
 * its connections per peer stuck in the peer's listen backlog
 * (http_upstream_learn.c); then n totals of those. */
struct rx_http_upstream_shared_s {
    _Atomic uint32_t  waiting;        /* queued requests, every worker */
    /* when a worker last found every server at max_conns without a queue
     * (monotonic ms): the others' idle connections give way */
    _Atomic int64_t   pressure;
    _Atomic uint32_t  conns[];        /* open connections, per peer */
};

static rx_uint_t     nworkers = 1;   /* worker_processes, at worker start */
static rx_array_t   *queued_groups;  /* rx_http_upstream_srv_conf_t * */
static rx_array_t   *shared_groups;  /* every group with a segment */
static rx_timer_t    tick;

static void tick_handler(rx_timer_t *t);

#define ROW(n)  (2 * (n) + 1)

/* Worker w's share of counter k (a peer's index, n: waiting, n + 1 + a
 * peer's index: stuck). */
static _Atomic uint32_t *
cell(const rx_http_upstream_srv_conf_t *us, rx_uint_t w, rx_uint_t k)
{
    rx_uint_t n = us->primary.n + us->backup.n;

    return &us->shared->conns[n + w * ROW(n) + k];
}

/* This worker's share of counter k. */
static _Atomic uint32_t *
mine(const rx_http_upstream_srv_conf_t *us, rx_uint_t k)
{
    return cell(us, rx_worker_index % RX_MAX_WORKERS, k);
}

static _Atomic uint32_t *
stuck_total(const rx_http_upstream_srv_conf_t *us, rx_uint_t i)
{
    rx_uint_t n = us->primary.n + us->backup.n;

    return &us->shared->conns[n + RX_MAX_WORKERS * ROW(n) + i];
}

static rx_int_t
remember(rx_conf_t *cf, rx_array_t **list, rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_srv_conf_t **slot;

    if (*list == NULL || (*list)->pool != cf->cycle->pool) {
        *list = rx_array_create(cf->cycle->pool, 4, sizeof(void *));
        if (*list == NULL) {
            return RX_ERROR;
        }
    }
    slot = rx_array_push(*list);
    if (slot == NULL) {
        return RX_ERROR;
    }
    *slot = us;
    return RX_OK;
}

static void
free_shm(void *data)
{
    rx_shm_free(data);
}

/* At load: the shared counters of a group that needs them. */
rx_int_t
rx_http_upstream_init_shared(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us)
{
    rx_uint_t          i, n = us->primary.n + us->backup.n;
    bool               limited;
    rx_shm_t          *shm;
    rx_pool_cleanup_t *cln;

    limited = rx_http_upstream_learn_init(us) || us->queue_max > 0;

    for (i = 0; i < n; i++) {
        rx_http_upstream_peer_t *p = i < us->primary.n ? &us->primary.peer[i]
                                     : &us->backup.peer[i - us->primary.n];
        limited = limited || p->max_conns;
    }
    if (!limited) {
        return RX_OK;
    }
    tick.node.index = RX_HEAP_NONE;
    shm = rx_pcalloc(cf->pool, sizeof(*shm));
    cln = rx_pool_cleanup_add(cf->cycle->pool, 0);
    if (shm == NULL || cln == NULL
        || rx_shm_alloc(shm, sizeof(*us->shared) + (2 * n + RX_MAX_WORKERS
                        * ROW(n)) * sizeof(uint32_t), cf->log) != RX_OK) {
        return RX_ERROR;
    }
    cln->handler = free_shm;
    cln->data = shm;
    us->shared = shm->addr;
    for (i = 0; i < n; i++) {
        rx_http_upstream_peer_t *p = i < us->primary.n ? &us->primary.peer[i]
                                     : &us->backup.peer[i - us->primary.n];
        p->shared_index = i;
    }
    if (remember(cf, &shared_groups, us) != RX_OK
        || (us->queue_max && remember(cf, &queued_groups, us) != RX_OK)) {
        return RX_ERROR;
    }
    return RX_OK;
}

/* At worker start: what a dead worker with this number left counted
 * (connections it never closed, requests it never dequeued) comes off the
 * totals. A first start finds its row empty. */
rx_int_t
rx_http_upstream_shared_reclaim(rx_cycle_t *cycle)
{
    rx_core_conf_t               *ccf;
    rx_http_upstream_srv_conf_t **g;
    rx_uint_t                     i, k, n;
    uint32_t                      left, conns;

    if (shared_groups == NULL || shared_groups->pool != cycle->pool) {
        return RX_OK;
    }
    ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    nworkers = ccf->worker_processes > 0 ? (rx_uint_t) ccf->worker_processes : 1;
    g = shared_groups->elts;
    for (i = 0; i < shared_groups->nelts; i++) {
        n = g[i]->primary.n + g[i]->backup.n;
        conns = 0;
        for (k = 0; k < n; k++) {
            left = atomic_exchange(mine(g[i], k), 0);
            atomic_fetch_sub(&g[i]->shared->conns[k], left);
            conns += left;
            left = atomic_exchange(mine(g[i], n + 1 + k), 0);
            atomic_fetch_sub(stuck_total(g[i], k), left);
        }
        left = atomic_exchange(mine(g[i], n), 0);
        atomic_fetch_sub(&g[i]->shared->waiting, left);
        if (conns || left) {
            rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "upstream \"%.*s\": "
                         "%u connections and %u queued requests of a dead "
                         "worker no longer counted", (int) g[i]->host.len,
                         g[i]->host.data, (unsigned) conns, (unsigned) left);
        }
    }
    return RX_OK;
}

/* Connections open to p from every worker (this worker's when p has no
 * limit: then nobody asks). */
rx_uint_t
rx_http_upstream_peer_open(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p)
{
    if (us->shared == NULL) {
        return p->open;
    }
    return atomic_load_explicit(&us->shared->conns[p->shared_index],
                                memory_order_relaxed);
}

/* A new connection to p, if max_conns allows it. */
bool
rx_http_upstream_conn_take(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p)
{
    _Atomic uint32_t *c;
    uint32_t          now;

    p->open++;
    if (us->shared == NULL) {
        return true;
    }
    c = &us->shared->conns[p->shared_index];
    now = atomic_load_explicit(c, memory_order_relaxed);
    do {
        if (p->max_conns && now >= p->max_conns) {
            p->open--;
            return false;
        }
    } while (!atomic_compare_exchange_weak(c, &now, now + 1));
    atomic_fetch_add(mine(us, p->shared_index), 1);
    return true;
}

void
rx_http_upstream_conn_put(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p)
{
    if (p->open) {
        p->open--;
    }
    if (us->shared) {
        atomic_fetch_sub(&us->shared->conns[p->shared_index], 1);
        atomic_fetch_sub(mine(us, p->shared_index), 1);
    }
    if (us->qhead) {
        rx_http_upstream_queue_kick(us);
    }
}

/* While requests wait in other workers, this worker may hold p's
 * max_conns shared evenly among the workers with requests waiting (itself
 * counted), rounded up: a worker whose own queue never empties would
 * otherwise keep every connection, handing each finished one to its next
 * request, and the others' requests would wait for their timeout. */
static bool
over_share(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p, rx_uint_t extra)
{
    rx_uint_t n = us->primary.n + us->backup.n, w, me, wanting = 1;
    uint32_t  waiting;

    if (us->shared == NULL || us->queue_max == 0 || p->max_conns == 0) {
        return false;
    }
    waiting = atomic_load_explicit(&us->shared->waiting, memory_order_relaxed);
    if (waiting <= us->nqueued) {
        return false;             /* nobody else waits */
    }
    me = rx_worker_index % RX_MAX_WORKERS;
    for (w = 0; w < nworkers && w < RX_MAX_WORKERS; w++) {
        if (w != me && atomic_load_explicit(cell(us, w, n),
                                            memory_order_relaxed) > 0) {
            wanting++;
        }
    }
    return p->open + extra > (p->max_conns + wanting - 1) / wanting;
}

bool
rx_http_upstream_has_room(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p)
{
    if (p->max_conns) {
        return rx_http_upstream_peer_open(us, p) < p->max_conns
               && !over_share(us, p, 1);
    }
    return !rx_http_upstream_learn_full(p);
}

bool
rx_http_upstream_give_back(const rx_http_upstream_conn_t *uc)
{
    return rx_http_upstream_learn_give_way(uc)
           || over_share(uc->us, uc->peer, 0);
}

/* A connection of this worker to p waits in p's listen backlog (+1), or no
 * longer does (-1): every worker sees it (http_upstream_learn.c). */
void
rx_http_upstream_shared_stuck(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p, int delta)
{
    rx_uint_t n = us->primary.n + us->backup.n;

    if (us->shared == NULL) {
        return;
    }
    atomic_fetch_add(stuck_total(us, p->shared_index), (uint32_t) delta);
    atomic_fetch_add(mine(us, n + 1 + p->shared_index), (uint32_t) delta);
}

/* Connections of other workers to p wait in its listen backlog. */
bool
rx_http_upstream_stuck_elsewhere(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p)
{
    return us->shared
           && atomic_load_explicit(stuck_total(us, p->shared_index),
                                   memory_order_relaxed) > p->stuck;
}

/* Every server that is not down or failed is at max_conns (or at what it
 * was learned to take): waiting helps. */
bool
rx_http_upstream_full(rx_http_upstream_srv_conf_t *us)
{
    rx_uint_t i, n = us->primary.n + us->backup.n;
    bool      full = false;

    for (i = 0; i < n; i++) {
        rx_http_upstream_peer_t *p = i < us->primary.n ? &us->primary.peer[i]
                                     : &us->backup.peer[i - us->primary.n];
        if (p->down || p->absent) {
            continue;
        }
        if (p->idle || rx_http_upstream_has_room(us, p)) {
            return false;        /* it could take the request now */
        }
        full = true;
    }
    return full;
}

static void
tick_arm(void)
{
    rx_http_upstream_srv_conf_t **g;
    rx_uint_t                     i;
    rx_msec_t                     period = 0;

    if (shared_groups == NULL) {
        return;
    }
    g = shared_groups->elts;
    for (i = 0; i < shared_groups->nelts; i++) {
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
    rx_http_upstream_srv_conf_t **g = shared_groups->elts;
    rx_uint_t                     i;

    for (i = 0; i < shared_groups->nelts; i++) {
        rx_http_upstream_srv_conf_t *us = g[i];
        uint32_t waiting = atomic_load_explicit(&us->shared->waiting,
                                                memory_order_relaxed);
        int64_t  pressure = atomic_load_explicit(&us->shared->pressure,
                                                 memory_order_relaxed);

        if (us->qhead) {
            rx_http_upstream_queue_kick(us);
        }
        /* requests wait (or were refused) elsewhere: our idle
         * connections give way */
        if (us->qhead == NULL
            && (waiting > us->nqueued
                || (pressure && rx_current_msec - pressure < 1000))) {
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
void
rx_http_upstream_queue_idle(rx_http_upstream_srv_conf_t *us)
{
    if (us->shared) {
        if (us->qhead) {
            rx_http_upstream_queue_kick(us);
        }
        tick_arm();
    }
}

static void
unlink_waiter(rx_http_upstream_t *u)
{
    rx_http_upstream_srv_conf_t *us = u->us;

    if (u->qprev) u->qprev->qnext = u->qnext; else us->qhead = u->qnext;
    if (u->qnext) u->qnext->qprev = u->qprev; else us->qtail = u->qprev;
    u->qprev = u->qnext = NULL;
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_START);
    us->nqueued--;
    atomic_fetch_sub(&us->shared->waiting, 1);
    atomic_fetch_sub(mine(us, rx_http_upstream_npeers(us)), 1);
    rx_timer_del(&u->queue_timer);
    u->queue_time += rx_current_msec - u->queue_start;
}

/* A request leaves the queue without a connection (client gone). */
void
rx_http_upstream_queue_remove(rx_http_upstream_t *u)
{
    if (u->phase == RX_HTTP_UPSTREAM_QUEUED) {
        unlink_waiter(u);
    }
}

static void
waited_too_long(rx_timer_t *t)
{
    rx_http_upstream_t *u = t->data;

    unlink_waiter(u);
    rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "no connection to upstream "
        "\"%.*s\" became free within %" PRId64 ".%03d s in its queue",
        (int) u->us->host.len, u->us->host.data, (int64_t) (u->queue_time / 1000),
        (int) (u->queue_time % 1000));
    u->queue_failed(u, RX_HTTP_SERVICE_UNAVAILABLE);
}

rx_int_t
rx_http_upstream_queue_add(rx_http_upstream_t *u, bool at_head,
    void (*resume)(rx_http_upstream_t *u),
    void (*failed)(rx_http_upstream_t *u, rx_int_t status))
{
    rx_http_upstream_srv_conf_t *us = u->us;
    uint32_t                     waiting;

    waiting = atomic_load_explicit(&us->shared->waiting, memory_order_relaxed);
    if (!at_head && waiting >= us->queue_max) {
        rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "the queue of upstream "
            "\"%.*s\" is full (%u requests waiting)", (int) us->host.len,
            us->host.data, (unsigned) waiting);
        return RX_DECLINED;
    }
    atomic_fetch_add(&us->shared->waiting, 1);
    atomic_fetch_add(mine(us, rx_http_upstream_npeers(us)), 1);
    us->nqueued++;
    u->queue_resume = resume;
    u->queue_failed = failed;
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
    {
        rx_msec_t left = us->queue_timeout - u->queue_time;

        u->queue_timer.handler = waited_too_long;
        u->queue_timer.data = u;
        rx_timer_add(&u->queue_timer, left > 0 ? left : 1);
    }
    tick_arm();
    return RX_OK;
}

/* A connection may have become free: the first waiters try again, in
 * order, until one has to wait again. */
void
rx_http_upstream_queue_kick(rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_t *u;

    while ((u = us->qhead) != NULL && !rx_http_upstream_full(us)) {
        unlink_waiter(u);
        memset(u->tried, 0, ((rx_http_upstream_npeers(us) + 63) / 64)
                            * sizeof(uint64_t));
        u->queue_resume(u);
        if (u->phase == RX_HTTP_UPSTREAM_QUEUED) {
            break;               /* another worker took the slot first */
        }
    }
}

/* Every server is at max_conns and the group has no queue: the request
 * gets 502, and the other workers' idle connections are told to go, so
 * that the next one finds a slot (without a queue nobody waits for it). */
void
rx_http_upstream_note_pressure(rx_http_upstream_srv_conf_t *us)
{
    if (us->shared) {
        atomic_store_explicit(&us->shared->pressure, rx_current_msec,
                              memory_order_relaxed);
    }
}
