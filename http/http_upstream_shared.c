/*
 * http_upstream_shared.c: the arithmetic of a group's capacity. A group
 * with `max_conns` on a server, a `queue`, or a pool whose size is learned
 * gets a small shared memory segment: per server, the connections open to
 * it from every worker (busy or idle in a keepalive pool); per group, the
 * requests waiting in every worker's queue. A new connection is opened
 * only when it keeps the count within max_conns (a compare-and-swap, so
 * workers never overshoot together).
 *
 * Each worker also keeps its own share of every count, in a row of the
 * segment chosen by its worker number. A worker that dies without giving
 * its connections back (a crash, SIGKILL) would leave them counted for
 * ever, and the group would answer 502 once the leak reaches max_conns;
 * the worker the master starts in its place (same number, same segment)
 * takes the dead one's share off the totals before it serves anything.
 *
 * Here too are the questions the rest of the engine asks of those counts:
 * may a peer take a new connection (has_room), is every server full, and
 * should a finished or idle connection close rather than stay (give_back).
 * It calls nothing of the engine: the queue, the idle pool, learning and
 * round robin stand on it.
 */
#include <stdatomic.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_metrics.h"
#include "shm.h"
#include "clock.h"
#include "process.h"

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

/* At load: the shared counters of a group that needs them (learn: some
 * of its peers' capacity is learned, http_upstream_learn.c). */
rx_int_t
rx_http_upstream_init_shared(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us,
    bool learn)
{
    rx_uint_t          i, n = us->primary.n + us->backup.n;
    bool               limited;
    rx_shm_t          *shm;
    rx_pool_cleanup_t *cln;

    limited = learn || us->queue_max > 0;

    for (i = 0; i < n; i++) {
        rx_http_upstream_peer_t *p = i < us->primary.n ? &us->primary.peer[i]
                                     : &us->backup.peer[i - us->primary.n];
        limited = limited || p->max_conns;
    }
    if (!limited) {
        return RX_OK;
    }
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

static bool
may_probe(const rx_http_upstream_peer_t *p)
{
    return !p->probing && p->stuck == 0 && rx_current_msec >= p->probe_after;
}

/* The peer holds all the connections this worker learned it takes. */
bool
rx_http_upstream_learn_full(const rx_http_upstream_peer_t *p)
{
    return p->learned && p->open >= p->learned && !may_probe(p);
}

/* A connection finished its response while another one, of any worker,
 * waits in the backlog: it closes, and its child takes the waiting one. */
bool
rx_http_upstream_learn_give_way(const rx_http_upstream_conn_t *uc)
{
    return uc->peer->learn && (uc->peer->stuck > 0
                               || rx_http_upstream_stuck_elsewhere(uc->us,
                                                                   uc->peer));
}

/* The groups with counters, for the queue's tick (NULL: none). */
const rx_array_t *
rx_http_upstream_shared_groups(void)
{
    return shared_groups;
}

/* A request of this worker starts (+1) or stops (-1) waiting in the
 * group's queue; the count of every worker's after it. */
uint32_t
rx_http_upstream_shared_wait(rx_http_upstream_srv_conf_t *us, int delta)
{
    uint32_t now = atomic_fetch_add(&us->shared->waiting, (uint32_t) delta)
                   + (uint32_t) delta;

    atomic_fetch_add(mine(us, rx_http_upstream_npeers(us)), (uint32_t) delta);
    return now;
}

/* A request of this worker takes a place in the group's queue if every
 * worker's waiting requests are fewer than `queue`: the check and the count
 * are one compare-and-swap, so two workers never both take the last place.
 * *waiting: the count the caller saw; on refusal, the count that refused. */
bool
rx_http_upstream_shared_enter(rx_http_upstream_srv_conf_t *us,
    uint32_t *waiting)
{
    do {
        if (*waiting >= us->queue_max) {
            return false;
        }
    } while (!atomic_compare_exchange_weak(&us->shared->waiting, waiting,
                                           *waiting + 1));
    atomic_fetch_add(mine(us, rx_http_upstream_npeers(us)), 1);
    return true;
}

/* Requests of every worker waiting in the group's queue. */
uint32_t
rx_http_upstream_shared_waiting(const rx_http_upstream_srv_conf_t *us)
{
    return atomic_load_explicit(&us->shared->waiting, memory_order_relaxed);
}

/* Requests wait for the group in other workers, or one was refused for
 * want of a slot within the last second: this worker's idle connections
 * give way. */
bool
rx_http_upstream_wanted_elsewhere(const rx_http_upstream_srv_conf_t *us)
{
    uint32_t waiting = atomic_load_explicit(&us->shared->waiting,
                                            memory_order_relaxed);
    int64_t  pressure = atomic_load_explicit(&us->shared->pressure,
                                             memory_order_relaxed);

    return waiting > us->nqueued
           || (pressure && rx_current_msec - pressure < 1000);
}

/* Every server is at max_conns and the group has no queue: the request
 * gets 502, and the other workers' idle connections are told to go, so
 * that the next one finds a slot (without a queue nobody waits for it). */
void
rx_http_upstream_note_pressure(rx_http_upstream_srv_conf_t *us)
{
    rx_http_metrics_queue_overflow(us->metrics);
    if (us->shared) {
        atomic_store_explicit(&us->shared->pressure, rx_current_msec,
                              memory_order_relaxed);
    }
}
