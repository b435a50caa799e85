/*
 * http_stats.h: the shared counters behind stub_status (http_stats.c).
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
    char     pad[16];
} __attribute__((aligned(64))) rx_http_stat_slot_t;

/* In the master, once: maps the counters. */
rx_int_t rx_http_stats_init(rx_cycle_t *cycle);
/* In a worker: which slot it adds to. */
void rx_http_stat_worker_slot(rx_uint_t worker);
void rx_http_stat_accepted(int delta);   /* +1 accepted, -1 closed */
void rx_http_stat_reading(int delta);
void rx_http_stat_writing(int delta);
void rx_http_stat_request(void);
/* Sums every worker's slot. */
void rx_http_stats_sum(rx_http_stat_slot_t *sum);

#endif /* RX_HTTP_STATS_H */
