/*
 * http_metrics.h: the per-server, per-location and per-upstream counters
 * behind the metrics module (modules/metrics*.c), and the inline counting
 * points the upstream engine calls.
 *
 * The layout is fixed at configuration load: one block per worker
 * (worker_processes of them) holding, in order, a rx_http_metrics_req_t per
 * server name and per location that asked (`metrics_location on`), a
 * rx_http_metrics_ups_t per upstream group and a rx_http_metrics_peer_t
 * per peer of every group. The block is one anonymous shared mapping made
 * by the master for each loaded configuration (so a reload starts these
 * series at zero, as a restart would; the process-wide counters of
 * stub_status and core/counters.h are kept). Each worker writes only its
 * own block, through pointers its init_process sets (us->metrics,
 * peer->metrics): no locks and no atomics on the request path; readers sum
 * the blocks. A NULL pointer (metrics_collect off) counts nothing.
 */
#ifndef RX_HTTP_METRICS_H
#define RX_HTTP_METRICS_H

#include "shm.h"

#define RX_HTTP_METRICS_BUCKETS  12   /* finite bounds at most; +Inf added */

/* A histogram of milliseconds: non-cumulative bucket counts (the last is
 * +Inf), their sum in ms. The bounds are the layout's. */
typedef struct {
    int64_t  bucket[RX_HTTP_METRICS_BUCKETS + 1];
    int64_t  sum_ms;
} rx_http_metrics_hist_t;

/* Status classes: 1xx .. 5xx, then anything else (0: no response). */
#define RX_HTTP_METRICS_CLASSES  6

/* Requests of a server name or a location. */
typedef struct {
    int64_t                 status[RX_HTTP_METRICS_CLASSES];
    int64_t                 bytes_in;       /* request_length */
    int64_t                 bytes_out;      /* bytes_sent */
    rx_http_metrics_hist_t  duration;       /* request_time */
} rx_http_metrics_req_t;

/* An upstream group: its queue. */
typedef struct rx_http_metrics_ups_s {
    int64_t                 queue_depth;    /* gauge: this worker's waiters */
    int64_t                 queue_timeouts;
    int64_t                 queue_overflows;  /* full queue, or none and
                                                 every server at max_conns */
    rx_http_metrics_hist_t  queue_wait;
} rx_http_metrics_ups_t;

/* Why a try at a peer failed. */
typedef enum {
    RX_HTTP_METRICS_FAIL_CONNECT = 0,   /* connect() failed, socket() too */
    RX_HTTP_METRICS_FAIL_TIMEOUT,       /* connect, send or read timeout */
    RX_HTTP_METRICS_FAIL_5XX,           /* a 5xx response from the peer */
    RX_HTTP_METRICS_FAIL_ERROR,         /* reset, early close, bad header */
    RX_HTTP_METRICS_FAILS
} rx_http_metrics_fail_t;

/* A peer (one address of a server line). */
typedef struct rx_http_metrics_peer_s {
    int64_t                 requests;       /* tries sent to it */
    int64_t                 fails[RX_HTTP_METRICS_FAILS];
    int64_t                 active;         /* gauges, this worker: busy, */
    int64_t                 idle;           /* idle in the keepalive pool, */
    int64_t                 learned;        /* learned capacity (0: none) */
    rx_http_metrics_hist_t  response;       /* $upstream_response_time */
} rx_http_metrics_peer_t;

/* The mapping of one configuration (in the metrics module's main conf). */
typedef struct {
    rx_shm_t    shm;
    size_t      stride;          /* bytes of one worker's block */
    rx_uint_t   nworkers;
    rx_uint_t   nservers, nlocations, nupstreams, npeers;
    size_t      off_locations, off_upstreams, off_peers;
    rx_uint_t   nbounds;         /* finite bucket bounds in use */
    rx_msec_t   bounds[RX_HTTP_METRICS_BUCKETS];
} rx_http_metrics_layout_t;

/* Sizes the block from the counts (stride, offsets). */
void rx_http_metrics_layout_size(rx_http_metrics_layout_t *l);
/* Worker w's block (NULL without a mapping or beyond nworkers). */
char *rx_http_metrics_block(const rx_http_metrics_layout_t *l, rx_uint_t w);
/* The bounds this worker counts against (set by its init_process). */
void rx_http_metrics_use_bounds(const rx_http_metrics_layout_t *l);

/* Counts ms into h (this worker's). */
void rx_http_metrics_observe(rx_http_metrics_hist_t *h, rx_msec_t ms);

/* ---- counting points of the upstream engine ---- */

static inline void
rx_http_metrics_peer_try(rx_http_metrics_peer_t *m, rx_msec_t ms,
    rx_uint_t status)
{
    if (m) {
        m->requests++;
        rx_http_metrics_observe(&m->response, ms);
        if (status >= 500 && status < 600) {
            m->fails[RX_HTTP_METRICS_FAIL_5XX]++;
        }
    }
}

static inline void
rx_http_metrics_peer_failed(rx_http_metrics_peer_t *m,
    rx_http_metrics_fail_t kind)
{
    if (m) {
        m->fails[kind]++;
    }
}

static inline void
rx_http_metrics_queue_left(rx_http_metrics_ups_t *m, rx_msec_t waited)
{
    if (m) {
        rx_http_metrics_observe(&m->queue_wait, waited);
    }
}

static inline void
rx_http_metrics_queue_timeout(rx_http_metrics_ups_t *m)
{
    if (m) {
        m->queue_timeouts++;
    }
}

static inline void
rx_http_metrics_queue_overflow(rx_http_metrics_ups_t *m)
{
    if (m) {
        m->queue_overflows++;
    }
}

#endif /* RX_HTTP_METRICS_H */
