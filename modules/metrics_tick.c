/*
 * metrics_tick.c: each worker's once-a-second tick: it publishes the
 * gauges only the worker knows (its connection table and fds, its peers'
 * busy, idle and learned counts, its queue), keeps the status page's
 * history, and writes the saturation alarms to the error log, each
 * condition at most once per metrics_alarm_interval, with its figures:
 *
 *   this worker's connection table or fds above 90%;
 *   a peer at its learned size (this worker's) or at max_conns (worker 0,
 *   for every worker) for metrics_alarm_pool_full;
 *   worker 0, for the whole group: an upstream queue that refused or timed
 *   out requests, or whose wait p95 exceeds metrics_alarm_queue_wait;
 *   worker 0: accepts skewed more than 2x between workers over an alarm
 *   interval.
 */
#include <dirent.h>
#include <sys/resource.h>
#include "metrics.h"
#include "http_stats.h"
#include "counters.h"
#include "process.h"
#include "clock.h"

#define TICK_MS        1000
#define SKEW_MIN       100     /* accepts in a window before skew means much */

typedef struct {
    rx_msec_t       full_since;     /* 0: not full */
    rx_log_limit_t  full_log;
} peer_state_t;

typedef struct {
    rx_http_metrics_ups_t  prev;    /* the group's sums at the last tick */
    rx_http_metrics_ups_t  acc;     /* what changed since the window began */
    rx_msec_t              window;
    rx_log_limit_t         reject_log;
    rx_log_limit_t         wait_log;
} ups_state_t;

static rx_metrics_main_conf_t *tick_mcf;
static rx_timer_t              tick;
static peer_state_t           *peers;
static ups_state_t            *groups;
static rx_log_limit_t          table_log, fds_log, skew_log;
static int64_t                 skew_prev[RX_COUNTERS_SLOTS];
static rx_msec_t               skew_at;

static void tick_handler(rx_timer_t *t);

/* The worker's open descriptors. The directory stays open for the
 * worker's life and is read again from its start each tick: opening it
 * anew would fail with EMFILE exactly when the count matters. */
static int64_t
count_fds(void)
{
    static DIR    *d;
    struct dirent *e;
    int64_t        n = 0;

    if (d == NULL) {
        d = opendir("/proc/self/fd");
        if (d == NULL) {
            return -1;
        }
    } else {
        rewinddir(d);
    }
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    return n - 1;                   /* the directory's own */
}

static rx_http_upstream_peer_t *
peer_at(rx_http_upstream_srv_conf_t *us, rx_uint_t j)
{
    return j < us->primary.n ? &us->primary.peer[j]
                             : &us->backup.peer[j - us->primary.n];
}

void
rx_metrics_publish(rx_metrics_main_conf_t *mcf)
{
    rx_counters_worker_t *c = rx_counters_mine();
    struct rlimit         rl;
    rx_uint_t             i, j;

    if (c) {
        c->pid = getpid();
        c->conns_used = (int64_t) (rx_worker.nconns - rx_worker.nfree);
        c->conns_max = (int64_t) rx_worker.nconns;
        c->fds_used = count_fds();
        c->fds_max = getrlimit(RLIMIT_NOFILE, &rl) == 0
                     ? (int64_t) rl.rlim_cur : -1;
    }
    for (i = 0; mcf && i < mcf->nupstreams; i++) {
        rx_http_upstream_srv_conf_t *us = mcf->upstreams[i];

        if (us->metrics == NULL) {
            continue;
        }
        us->metrics->queue_depth = (int64_t) us->nqueued;
        for (j = 0; j < rx_http_upstream_npeers(us); j++) {
            rx_http_upstream_peer_t *p = peer_at(us, j);

            if (p->metrics) {
                p->metrics->active = (int64_t) p->conns;
                p->metrics->idle = (int64_t) p->idle;
                p->metrics->learned = (int64_t) p->learned;
            }
        }
    }
}

static void
history(rx_metrics_main_conf_t *mcf)
{
    const rx_http_stat_slot_t *s = rx_http_stats_slot(rx_worker_index);
    rx_metrics_history_t      *h;
    rx_metrics_sample_t       *x;
    rx_uint_t                  i;
    int64_t                    queued = 0;

    if (mcf->history == NULL || rx_worker_index >= mcf->layout.nworkers
        || s == NULL) {
        return;
    }
    for (i = 0; i < mcf->nupstreams; i++) {
        queued += (int64_t) mcf->upstreams[i]->nqueued;
    }
    h = &mcf->history[rx_worker_index];
    x = &h->s[h->next % RX_METRICS_HISTORY];
    x->requests = s->requests;
    x->active = s->active;
    x->queued = queued;
    x->time = (int64_t) rx_time_sec;
    h->next++;
}

/* This worker's own table and fds. */
static void
worker_alarms(rx_cycle_t *cycle)
{
    rx_counters_worker_t *c = rx_counters_mine();

    if (c == NULL) {
        return;
    }
    if (c->conns_max > 0 && c->conns_used * 10 > c->conns_max * 9
        && rx_log_limit_allow(&table_log, tick_mcf->alarm_interval)) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "worker %lu: its connection "
            "table is %" PRId64 "%% full (%" PRId64 " of %" PRId64
            " worker_connections in use): raise worker_connections or add "
            "workers", (unsigned long) rx_worker_index,
            c->conns_used * 100 / c->conns_max, c->conns_used, c->conns_max);
    }
    if (c->fds_max > 0 && c->fds_used * 10 > c->fds_max * 9
        && rx_log_limit_allow(&fds_log, tick_mcf->alarm_interval)) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "worker %lu: %" PRId64
            " file descriptors open of its limit %" PRId64 " (%" PRId64
            "%%): raise worker_rlimit_nofile", (unsigned long) rx_worker_index,
            c->fds_used, c->fds_max, c->fds_used * 100 / c->fds_max);
    }
}

/* A peer at its size: this worker's learned one, or max_conns in all
 * (judged by worker 0 alone, so that it is said once). */
static void
pool_alarms(rx_cycle_t *cycle)
{
    rx_metrics_main_conf_t *mcf = tick_mcf;
    rx_uint_t               i, j, k, open;
    bool                    learned_full, max_full;

    for (i = 0, k = 0; i < mcf->nupstreams; i++) {
        rx_http_upstream_srv_conf_t *us = mcf->upstreams[i];

        for (j = 0; j < rx_http_upstream_npeers(us); j++, k++) {
            rx_http_upstream_peer_t *p = peer_at(us, j);
            peer_state_t            *st = &peers[k];

            open = rx_http_upstream_peer_open(us, p);
            learned_full = p->learned && p->open >= p->learned;
            max_full = rx_worker_index == 0 && p->max_conns
                       && open >= p->max_conns;
            if (!learned_full && !max_full) {
                st->full_since = 0;
                continue;
            }
            if (st->full_since == 0) {
                st->full_since = rx_current_msec;
            }
            if (rx_current_msec - st->full_since < mcf->alarm_pool_full
                || !rx_log_limit_allow(&st->full_log, mcf->alarm_interval)) {
                continue;
            }
            rx_log_error(RX_LOG_WARN, cycle->log, 0, "upstream \"%.*s\" "
                "server %.*s has been at its %s size of %lu connections for "
                "%ld s (%lu open%s, %lu requests of this worker waiting): its "
                "pool is too small for the load",
                (int) us->host.len, us->host.data, (int) p->name.len,
                p->name.data, max_full ? "max_conns" : "learned",
                (unsigned long) (max_full ? p->max_conns : p->learned),
                (long) ((rx_current_msec - st->full_since) / 1000),
                (unsigned long) (max_full ? open : p->open),
                max_full ? " from every worker" : " from this worker",
                (unsigned long) us->nqueued);
        }
    }
}

/* Worker 0, for each group: its queue refusing or waiting too long. */
static void
queue_alarms(rx_cycle_t *cycle)
{
    rx_metrics_main_conf_t *mcf = tick_mcf;
    rx_http_metrics_ups_t   cur, *blk;
    rx_uint_t               i, w, b;
    int64_t                 p95, *a, *pv, *ac;

    for (i = 0; i < mcf->nupstreams; i++) {
        rx_http_upstream_srv_conf_t *us = mcf->upstreams[i];
        ups_state_t                 *st = &groups[i];

        memset(&cur, 0, sizeof(cur));
        for (w = 0; w < mcf->layout.nworkers; w++) {
            if ((blk = rx_metrics_upstreams(mcf, w)) != NULL) {
                rx_metrics_sum((int64_t *) &cur, (int64_t *) &blk[i],
                               sizeof(cur) / sizeof(int64_t));
            }
        }
        if (rx_current_msec - st->window >= mcf->alarm_interval) {
            memset(&st->acc, 0, sizeof(st->acc));
            st->window = rx_current_msec;
        }
        a = (int64_t *) &cur; pv = (int64_t *) &st->prev; ac = (int64_t *) &st->acc;
        for (b = 1; b < sizeof(cur) / sizeof(int64_t); b++) {
            ac[b] += a[b] - pv[b];        /* [0] is the depth, a gauge */
        }
        st->prev = cur;
        if (st->acc.queue_overflows + st->acc.queue_timeouts > 0
            && rx_log_limit_allow(&st->reject_log, mcf->alarm_interval)) {
            rx_log_error(RX_LOG_WARN, cycle->log, 0, "upstream \"%.*s\": its "
                "queue refused %" PRId64 " requests (full) and timed out %"
                PRId64 " within %ld s, %" PRId64 " waiting of %lu: the pool "
                "serves fewer requests than arrive", (int) us->host.len, us->host.data,
                st->acc.queue_overflows, st->acc.queue_timeouts,
                (long) ((rx_current_msec - st->window) / 1000 + 1),
                cur.queue_depth, (unsigned long) us->queue_max);
            st->acc.queue_overflows = st->acc.queue_timeouts = 0;
        }
        p95 = rx_metrics_quantile(mcf, &st->acc.queue_wait, 0.95);
        if (p95 > (int64_t) mcf->alarm_queue_wait
            && rx_log_limit_allow(&st->wait_log, mcf->alarm_interval)) {
            rx_log_error(RX_LOG_WARN, cycle->log, 0, "upstream \"%.*s\": "
                "requests waited in its queue up to %" PRId64 " ms (p95), "
                "above metrics_alarm_queue_wait %ld ms; %" PRId64 " waiting "
                "now", (int) us->host.len, us->host.data, p95,
                (long) mcf->alarm_queue_wait, cur.queue_depth);
            memset(&st->acc.queue_wait, 0, sizeof(st->acc.queue_wait));
        }
    }
}

/* Worker 0, once per metrics_alarm_interval (the window: 60 s by default;
 * shorter makes the alarm testable): accepts spread unevenly between
 * workers. */
static void
skew_alarm(rx_cycle_t *cycle)
{
    const rx_http_stat_slot_t *s;
    rx_uint_t                  w, n = tick_mcf->layout.nworkers, lo = 0, hi = 0;
    int64_t                    d[RX_COUNTERS_SLOTS];

    if (n < 2 || n > RX_COUNTERS_SLOTS
        || rx_current_msec - skew_at < tick_mcf->alarm_interval) {
        return;
    }
    for (w = 0; w < n; w++) {
        s = rx_http_stats_slot(w);
        d[w] = s ? s->accepted - skew_prev[w] : 0;
        skew_prev[w] = s ? s->accepted : 0;
        lo = d[w] < d[lo] ? w : lo;
        hi = d[w] > d[hi] ? w : hi;
    }
    if (skew_at != 0 && d[hi] >= SKEW_MIN && d[hi] > 2 * d[lo]
        && rx_log_limit_allow(&skew_log, tick_mcf->alarm_interval)) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "accepts are skewed between "
            "workers: worker %lu accepted %" PRId64 " connections in the last "
            "%ld s, worker %lu %" PRId64 ": consider \"listen ... "
            "reuseport\"", (unsigned long) hi, d[hi],
            (long) ((rx_current_msec - skew_at) / 1000), (unsigned long) lo,
            d[lo]);
    }
    skew_at = rx_current_msec;
}

static void
tick_handler(rx_timer_t *t)
{
    rx_cycle_t *cycle = rx_worker.cycle;

    rx_metrics_publish(tick_mcf);
    history(tick_mcf);
    worker_alarms(cycle);
    pool_alarms(cycle);
    if (rx_worker_index == 0) {
        queue_alarms(cycle);
        skew_alarm(cycle);
    }
    rx_timer_add(&tick, TICK_MS);
}

static void
tick_first(rx_cycle_t *cycle)
{
    tick.node.index = RX_HEAP_NONE;
    tick.handler = tick_handler;
    tick.data = NULL;
    tick_handler(&tick);
}

rx_int_t
rx_metrics_tick_start(rx_metrics_main_conf_t *mcf)
{
    tick_mcf = mcf;
    peers = calloc(mcf->layout.npeers + 1, sizeof(*peers));
    groups = calloc(mcf->nupstreams + 1, sizeof(*groups));
    if (peers == NULL || groups == NULL) {
        return RX_ERROR;
    }
    return rx_worker_at_start(tick_first);
}
