/*
 * metrics.h: what the files of the metrics module share: its confs, the
 * reading side of the counters (a snapshot summed over workers) and the
 * text buffer the renderers write into. metrics.c owns the directives and
 * the counting, metrics_prom.c the Prometheus/OpenMetrics text,
 * metrics_json.c the JSON and the status page, metrics_tick.c the worker's
 * once-a-second tick (gauges, history, saturation alarms).
 */
#ifndef RX_METRICS_H
#define RX_METRICS_H

#include "http.h"
#include "http_metrics.h"
#include "http_upstream.h"
#include "http_upstream_int.h"   /* the engine's state the metrics report */

typedef enum {
    RX_METRICS_NONE = 0,
    RX_METRICS_PROMETHEUS,
    RX_METRICS_JSON,
    RX_METRICS_HTML
} rx_metrics_format_t;

#define RX_METRICS_HISTORY  60      /* samples of the status page's history */

/* One second of a worker's figures, for the status page's history. */
typedef struct {
    int64_t   time;                 /* unix seconds; 0: empty */
    int64_t   requests;             /* requests so far */
    int64_t   active;               /* client connections */
    int64_t   queued;               /* upstream waiters of this worker */
} rx_metrics_sample_t;

/* A worker's history ring, in the layout's mapping after the blocks. */
typedef struct {
    rx_metrics_sample_t  s[RX_METRICS_HISTORY];
    int64_t              next;
} __attribute__((aligned(64))) rx_metrics_history_t;

typedef struct {
    rx_int_t                   collect;      /* metrics_collect */
    rx_uint_t                  nbounds;      /* metrics_buckets, 0: unset */
    rx_msec_t                  bounds[RX_HTTP_METRICS_BUCKETS];
    rx_msec_t                  alarm_interval;
    rx_msec_t                  alarm_queue_wait;   /* p95 above: alarm */
    rx_msec_t                  alarm_pool_full;    /* at size so long */
    rx_array_t                 servers;      /* rx_str_t, unique names */
    rx_array_t                 locations;    /* rx_str_t, as written */
    rx_http_upstream_srv_conf_t **upstreams;
    rx_uint_t                  nupstreams;
    rx_http_metrics_layout_t   layout;
    rx_metrics_history_t      *history;      /* nworkers of them */
} rx_metrics_main_conf_t;

typedef struct {
    rx_uint_t   index;                       /* its block among servers */
} rx_metrics_srv_conf_t;

typedef struct {
    rx_metrics_format_t  format;             /* `metrics` here */
    rx_int_t             location;           /* metrics_location: index,
                                                -2 off, -1 unset */
} rx_metrics_loc_conf_t;

extern rx_module_t rx_http_metrics_module;

/* A growing text in a pool; failed after an allocation failed. */
typedef struct {
    rx_pool_t  *pool;
    char       *data;
    size_t      len;
    size_t      cap;
    bool        failed;
} rx_metrics_buf_t;

void rx_metrics_buf_init(rx_metrics_buf_t *b, rx_pool_t *pool, size_t cap);
void rx_metrics_printf(rx_metrics_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s escaped for a label value or a JSON string (same rules for
 * what ringx writes: backslash, quote, newline). */
void rx_metrics_escaped(rx_metrics_buf_t *b, const rx_str_t *s);

/* Reading: worker w's blocks (NULL past the layout). */
rx_http_metrics_req_t *rx_metrics_servers(rx_metrics_main_conf_t *mcf,
    rx_uint_t w);
rx_http_metrics_req_t *rx_metrics_locations(rx_metrics_main_conf_t *mcf,
    rx_uint_t w);
rx_http_metrics_ups_t *rx_metrics_upstreams(rx_metrics_main_conf_t *mcf,
    rx_uint_t w);
rx_http_metrics_peer_t *rx_metrics_peers(rx_metrics_main_conf_t *mcf,
    rx_uint_t w);
/* Sums a over the workers into sum (n int64_t fields each). */
void rx_metrics_sum(int64_t *sum, const int64_t *a, size_t n);
/* The quantile q (0..1) of a histogram, in ms (the bound of the bucket
 * it falls in; -1: empty). */
int64_t rx_metrics_quantile(const rx_metrics_main_conf_t *mcf,
    const rx_http_metrics_hist_t *h, double q);

/* metrics_prom.c, metrics_json.c: the body of the answer. */
void rx_metrics_prometheus(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b,
    bool openmetrics);
void rx_metrics_json(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b);
extern const char rx_metrics_page[];

/* metrics_tick.c: the worker's tick (from init_process). */
rx_int_t rx_metrics_tick_start(rx_metrics_main_conf_t *mcf);
/* This worker's gauges, written now (before a page is rendered). */
void rx_metrics_publish(rx_metrics_main_conf_t *mcf);

#endif /* RX_METRICS_H */
