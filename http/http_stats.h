/*
 * http_stats.h: the shared counters behind stub_status and the metrics
 * module (http_stats.c).
 */
#ifndef RX_HTTP_STATS_H
#define RX_HTTP_STATS_H

typedef struct {
    int64_t  accepted;
    int64_t  handled;
    int64_t  requests;
    int64_t  active;
    int64_t  reading;
    int64_t  writing;
    int64_t  limit_req_rejected;    /* limit_req refused (not dry runs) */
    int64_t  limit_conn_rejected;
} __attribute__((aligned(64))) rx_http_stat_slot_t;

/* In the master, once: maps the counters. */
rx_int_t rx_http_stats_init(rx_cycle_t *cycle);
/* In a worker: which slot it adds to. */
void rx_http_stat_worker_slot(rx_uint_t worker);
void rx_http_stat_accepted(int delta);   /* +1 accepted, -1 closed */
void rx_http_stat_reading(int delta);
void rx_http_stat_writing(int delta);
void rx_http_stat_request(void);
void rx_http_stat_limit_rejected(bool limit_req);
/* Worker slot i (NULL without the mapping), for per-worker figures. */
const rx_http_stat_slot_t *rx_http_stats_slot(rx_uint_t i);
/* Sums every worker's slot. */
void rx_http_stats_sum(rx_http_stat_slot_t *sum);

#endif /* RX_HTTP_STATS_H */
