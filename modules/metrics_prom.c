/*
 * metrics_prom.c: the counters as Prometheus text (format 0.0.4) or
 * OpenMetrics 1.0 (the scraper's Accept asks): the same samples, except
 * that an OpenMetrics counter family is named without its _total suffix
 * and the text ends with "# EOF". docs/metrics.md lists every family.
 */
#include "metrics.h"
#include "http_stats.h"
#include "counters.h"

typedef struct {
    rx_metrics_buf_t        *b;
    rx_metrics_main_conf_t  *mcf;
    bool                     om;
} out_t;

#define N64(t)  (sizeof(t) / sizeof(int64_t))

static void
family(out_t *o, const char *name, const char *type, const char *help)
{
    const char *suffix = type[0] == 'c' && !o->om ? "_total" : "";

    rx_metrics_printf(o->b, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix,
                      help, name, suffix, type);
}

/* A label value, escaped, into dst (cut to fit). */
static const char *
esc(char *dst, size_t n, const rx_str_t *s)
{
    size_t i, j = 0;

    for (i = 0; i < s->len && j + 3 < n; i++) {
        char c = s->data[i];

        if (c == '\\' || c == '"') {
            dst[j++] = '\\';
            dst[j++] = c;
        } else if (c == '\n') {
            dst[j++] = '\\';
            dst[j++] = 'n';
        } else {
            dst[j++] = (unsigned char) c < 0x20 ? '?' : c;
        }
    }
    dst[j] = '\0';
    return dst;
}

/* The buckets (cumulative), sum and count of h, labels already written
 * as `k="v",` (or empty). */
static void
histogram(out_t *o, const char *name, const char *labels,
    const rx_http_metrics_hist_t *h)
{
    const rx_http_metrics_layout_t *l = &o->mcf->layout;
    int64_t                         cum = 0;
    rx_uint_t                       i;
    const char                     *sep = labels[0] ? "," : "";

    for (i = 0; i < l->nbounds; i++) {
        cum += h->bucket[i];
        rx_metrics_printf(o->b, "%s_bucket{%s%sle=\"%g\"} %" PRId64 "\n", name,
                          labels, sep, (double) l->bounds[i] / 1000, cum);
    }
    cum += h->bucket[RX_HTTP_METRICS_BUCKETS];
    rx_metrics_printf(o->b, "%s_bucket{%s%sle=\"+Inf\"} %" PRId64 "\n"
                      "%s_sum{%s} %.3f\n%s_count{%s} %" PRId64 "\n",
                      name, labels, sep, cum, name, labels,
                      (double) h->sum_ms / 1000, name, labels, cum);
}

/* Worker slots to show: this configuration's, and any other a live
 * worker wrote (more workers before a reload). */
static bool
shown(out_t *o, rx_uint_t w)
{
    const rx_counters_worker_t *c = rx_counters_slot(w);

    return w < o->mcf->layout.nworkers || (c && c->pid != 0);
}

static void
connections(out_t *o)
{
    const rx_http_stat_slot_t  *s;
    const rx_counters_worker_t *c;
    rx_uint_t                   w;
    int64_t                     waiting;

    family(o, "ringx_connections", "gauge", "Client connections by state.");
    for (w = 0; w < RX_COUNTERS_SLOTS; w++) {
        if (shown(o, w) && (s = rx_http_stats_slot(w)) != NULL) {
            waiting = rx_max(s->active - s->reading - s->writing, (int64_t) 0);
            rx_metrics_printf(o->b,
                "ringx_connections{worker=\"%lu\",state=\"reading\"} %" PRId64 "\n"
                "ringx_connections{worker=\"%lu\",state=\"writing\"} %" PRId64 "\n"
                "ringx_connections{worker=\"%lu\",state=\"waiting\"} %" PRId64 "\n",
                (unsigned long) w, s->reading, (unsigned long) w, s->writing,
                (unsigned long) w, waiting);
        }
    }
#define PER_WORKER(name, type, help, expr)                                    \
    family(o, name, type, help);                                              \
    for (w = 0; w < RX_COUNTERS_SLOTS; w++) {                                 \
        if (shown(o, w) && (s = rx_http_stats_slot(w)) != NULL                \
            && (c = rx_counters_slot(w)) != NULL) {                           \
            rx_metrics_printf(o->b, "%s%s{worker=\"%lu\"} %" PRId64 "\n",     \
                name, type[0] == 'c' ? "_total" : "", (unsigned long) w,      \
                (int64_t) (expr));                                            \
        }                                                                     \
    }
    PER_WORKER("ringx_connections_accepted", "counter",
               "Client connections accepted (handled, and dropped).",
               s->accepted + c->accept_dropped)
    PER_WORKER("ringx_connections_handled", "counter",
               "Client connections handled.", s->handled)
    PER_WORKER("ringx_connections_dropped", "counter",
               "Accepted connections closed unserved (no slot).",
               c->accept_dropped)
    PER_WORKER("ringx_http_requests", "counter", "Client requests.",
               s->requests)
    PER_WORKER("ringx_worker_connections_used", "gauge",
               "Connection table slots in use (clients and upstreams).",
               c->conns_used)
    PER_WORKER("ringx_worker_connections_limit", "gauge",
               "worker_connections: the connection table's size.",
               c->conns_max)
    PER_WORKER("ringx_worker_connections_headroom", "gauge",
               "Connection table slots free.",
               rx_max(c->conns_max - c->conns_used, (int64_t) 0))
    PER_WORKER("ringx_worker_fds_used", "gauge", "Open file descriptors.",
               c->fds_used)
    PER_WORKER("ringx_worker_fds_limit", "gauge",
               "The worker's file descriptor limit (RLIMIT_NOFILE).",
               c->fds_max)
    PER_WORKER("ringx_worker_pid", "gauge", "The worker's process id.",
               c->pid)
}

static void
process(out_t *o)
{
    rx_counters_worker_t  sum;
    rx_counters_master_t *m = rx_counters_master();
    rx_http_stat_slot_t   st;
    rx_uint_t             w;
    const rx_counters_worker_t *c;
    static const char    *protos[] = { "TLSv1", "TLSv1.1", "TLSv1.2",
                                       "TLSv1.3", "other" };

    memset(&sum, 0, sizeof(sum));
    for (w = 0; w < RX_COUNTERS_SLOTS; w++) {
        if ((c = rx_counters_slot(w)) != NULL) {
            rx_metrics_sum(&sum.tls_new, &c->tls_new,
                           (size_t) (&sum.pid - &sum.tls_new));
        }
    }
    family(o, "ringx_tls_handshakes", "counter",
           "TLS handshakes with clients, by result.");
    rx_metrics_printf(o->b, "ringx_tls_handshakes_total{result=\"new\"} %" PRId64
        "\nringx_tls_handshakes_total{result=\"resumed\"} %" PRId64
        "\nringx_tls_handshakes_total{result=\"failed\"} %" PRId64 "\n",
        sum.tls_new, sum.tls_resumed, sum.tls_failed);
    family(o, "ringx_tls_handshakes_protocol", "counter",
           "Completed TLS handshakes with clients, by protocol.");
    for (w = 0; w < RX_COUNTERS_TLS_PROTOS; w++) {
        rx_metrics_printf(o->b, "ringx_tls_handshakes_protocol_total{protocol="
                          "\"%s\"} %" PRId64 "\n", protos[w], sum.tls_proto[w]);
    }
    family(o, "ringx_accept_errors", "counter",
           "accept4() failures for want of descriptors.");
    rx_metrics_printf(o->b, "ringx_accept_errors_total{error=\"EMFILE\"} %"
        PRId64 "\nringx_accept_errors_total{error=\"ENFILE\"} %" PRId64 "\n",
        sum.accept_emfile, sum.accept_enfile);
    family(o, "ringx_reloads", "counter", "Configurations loaded by reload.");
    rx_metrics_printf(o->b, "ringx_reloads_total %" PRId64 "\n",
                      m ? m->reloads : 0);
    family(o, "ringx_reload_failures", "counter",
           "Reloads that failed (the old configuration stayed).");
    rx_metrics_printf(o->b, "ringx_reload_failures_total %" PRId64 "\n",
                      m ? m->reload_failures : 0);
    family(o, "ringx_worker_crashes", "counter", "Workers that died unasked.");
    rx_metrics_printf(o->b, "ringx_worker_crashes_total %" PRId64 "\n",
                      m ? m->worker_crashes : 0);
    family(o, "ringx_worker_respawns", "counter",
           "Workers started in place of one that died.");
    rx_metrics_printf(o->b, "ringx_worker_respawns_total %" PRId64 "\n",
                      m ? m->respawns : 0);
    rx_http_stats_sum(&st);
    family(o, "ringx_limit_req_rejected", "counter",
           "Requests refused by limit_req.");
    rx_metrics_printf(o->b, "ringx_limit_req_rejected_total %" PRId64 "\n",
                      st.limit_req_rejected);
    family(o, "ringx_limit_conn_rejected", "counter",
           "Requests refused by limit_conn.");
    rx_metrics_printf(o->b, "ringx_limit_conn_rejected_total %" PRId64 "\n",
                      st.limit_conn_rejected);
}

/* Requests of servers (what="server") or locations. */
static void
requests(out_t *o, const char *what, const rx_array_t *names,
    rx_http_metrics_req_t *(*blocks)(rx_metrics_main_conf_t *, rx_uint_t))
{
    static const char *classes[] = { "1xx", "2xx", "3xx", "4xx", "5xx",
                                     "other" };
    rx_http_metrics_req_t *sum, *blk;
    const rx_str_t        *name = names->elts;
    rx_uint_t              i, w, k, n = names->nelts;
    char                   v[256], labels[300], fam[96];

    if (n == 0) {
        return;
    }
    sum = rx_pcalloc(o->b->pool, n * sizeof(*sum));
    if (sum == NULL) {
        o->b->failed = true;
        return;
    }
    for (w = 0; w < o->mcf->layout.nworkers; w++) {
        if ((blk = blocks(o->mcf, w)) != NULL) {
            rx_metrics_sum((int64_t *) sum, (int64_t *) blk,
                           n * N64(rx_http_metrics_req_t));
        }
    }
    snprintf(fam, sizeof(fam), "ringx_http_%s_requests", what);
    family(o, fam, "counter", "Requests by status class.");
    for (i = 0; i < n; i++) {
        esc(v, sizeof(v), &name[i]);
        for (k = 0; k < RX_HTTP_METRICS_CLASSES; k++) {
            rx_metrics_printf(o->b, "%s_total{%s=\"%s\",code=\"%s\"} %" PRId64
                              "\n", fam, what, v, classes[k], sum[i].status[k]);
        }
    }
#define BYTES(suffix, field, help)                                            \
    snprintf(fam, sizeof(fam), "ringx_http_%s_" suffix "_bytes", what);       \
    family(o, fam, "counter", help);                                          \
    for (i = 0; i < n; i++) {                                                 \
        rx_metrics_printf(o->b, "%s_total{%s=\"%s\"} %" PRId64 "\n", fam,     \
                          what, esc(v, sizeof(v), &name[i]), sum[i].field);   \
    }
    BYTES("received", bytes_in, "Bytes received from clients (request_length).")
    BYTES("sent", bytes_out, "Bytes sent to clients (bytes_sent).")
    snprintf(fam, sizeof(fam), "ringx_http_%s_request_duration_seconds", what);
    family(o, fam, "histogram", "Request time, first byte to log.");
    for (i = 0; i < n; i++) {
        snprintf(labels, sizeof(labels), "%s=\"%s\"", what,
                 esc(v, sizeof(v), &name[i]));
        histogram(o, fam, labels, &sum[i].duration);
    }
}

static rx_http_upstream_peer_t *
peer_at(rx_http_upstream_srv_conf_t *us, rx_uint_t j)
{
    return j < us->primary.n ? &us->primary.peer[j]
                             : &us->backup.peer[j - us->primary.n];
}

static void
upstream_queues(out_t *o, rx_http_metrics_ups_t *sum)
{
    rx_metrics_main_conf_t *mcf = o->mcf;
    rx_uint_t               i;
    char                    v[256], labels[300];

#define PER_UPS(name, type, help, expr)                                       \
    family(o, name, type, help);                                              \
    for (i = 0; i < mcf->nupstreams; i++) {                                   \
        rx_metrics_printf(o->b, "%s%s{upstream=\"%s\"} %" PRId64 "\n", name,  \
            type[0] == 'c' ? "_total" : "",                                   \
            esc(v, sizeof(v), &mcf->upstreams[i]->host), (int64_t) (expr));   \
    }
    PER_UPS("ringx_upstream_queue_depth", "gauge",
            "Requests waiting in the upstream's queue.", sum[i].queue_depth)
    PER_UPS("ringx_upstream_queue_limit", "gauge",
            "The queue's size (queue N; 0: no queue).",
            mcf->upstreams[i]->queue_max)
    PER_UPS("ringx_upstream_queue_timeouts", "counter",
            "Requests that waited in the queue for its whole timeout.",
            sum[i].queue_timeouts)
    PER_UPS("ringx_upstream_queue_overflows", "counter",
            "Requests refused: the queue full, or none and every server at "
            "max_conns.", sum[i].queue_overflows)
    family(o, "ringx_upstream_queue_wait_seconds", "histogram",
           "Time requests waited in the upstream's queue.");
    for (i = 0; i < mcf->nupstreams; i++) {
        snprintf(labels, sizeof(labels), "upstream=\"%s\"",
                 esc(v, sizeof(v), &mcf->upstreams[i]->host));
        histogram(o, "ringx_upstream_queue_wait_seconds", labels,
                  &sum[i].queue_wait);
    }
}

/* Calls fn(o, us, peer, summed counters, labels) for every peer. */
#define EACH_PEER(body)                                                       \
    for (i = 0, k = 0; i < mcf->nupstreams; i++) {                            \
        us = mcf->upstreams[i];                                               \
        for (j = 0; j < rx_http_upstream_npeers(us); j++, k++) {              \
            p = peer_at(us, j);                                               \
            if (p->absent) continue;                                          \
            snprintf(labels, sizeof(labels), "upstream=\"%s\",peer=\"%s\"",   \
                     esc(v, sizeof(v), &us->host),                            \
                     esc(v2, sizeof(v2), &p->name));                          \
            body                                                              \
        }                                                                     \
    }

static void
upstream_peers(out_t *o, rx_http_metrics_peer_t *sum)
{
    static const char *kinds[] = { "connect", "timeout", "5xx", "error" };
    rx_metrics_main_conf_t      *mcf = o->mcf;
    rx_http_upstream_srv_conf_t *us;
    rx_http_upstream_peer_t     *p;
    rx_http_metrics_peer_t      *blk;
    rx_uint_t                    i, j, k, f, w;
    char                         v[256], v2[256], labels[560];

#define PEER_GAUGE(name, type, help, expr)                                    \
    family(o, name, type, help);                                              \
    EACH_PEER(rx_metrics_printf(o->b, "%s%s{%s} %" PRId64 "\n", name,         \
              type[0] == 'c' ? "_total" : "", labels, (int64_t) (expr));)
    PEER_GAUGE("ringx_upstream_peer_active_connections", "gauge",
               "Connections busy with a request.", sum[k].active)
    PEER_GAUGE("ringx_upstream_peer_idle_connections", "gauge",
               "Connections idle in the keepalive pool.", sum[k].idle)
    PEER_GAUGE("ringx_upstream_peer_max_connections", "gauge",
               "max_conns (0: no limit).", p->max_conns)
    PEER_GAUGE("ringx_upstream_peer_requests", "counter",
               "Tries sent to the peer.", sum[k].requests)
    family(o, "ringx_upstream_peer_failures", "counter",
           "Failed tries by kind: connect, timeout, 5xx, error.");
    EACH_PEER(for (f = 0; f < RX_HTTP_METRICS_FAILS; f++) {
                  rx_metrics_printf(o->b, "ringx_upstream_peer_failures_total"
                      "{%s,kind=\"%s\"} %" PRId64 "\n", labels, kinds[f],
                      sum[k].fails[f]);
              })
    family(o, "ringx_upstream_peer_learned_connections", "gauge",
           "The pool size learned for the peer, per worker (0: not learned).");
    EACH_PEER(for (w = 0; w < mcf->layout.nworkers; w++) {
                  blk = rx_metrics_peers(mcf, w);
                  rx_metrics_printf(o->b, "ringx_upstream_peer_learned_"
                      "connections{%s,worker=\"%lu\"} %" PRId64 "\n", labels,
                      (unsigned long) w, blk ? blk[k].learned : 0);
              })
    family(o, "ringx_upstream_peer_response_seconds", "histogram",
           "Time of each try, connect to the response's end.");
    EACH_PEER(histogram(o, "ringx_upstream_peer_response_seconds", labels,
                        &sum[k].response);)
}

static void
upstreams(out_t *o)
{
    rx_metrics_main_conf_t *mcf = o->mcf;
    rx_http_metrics_ups_t  *usum, *ublk;
    rx_http_metrics_peer_t *psum, *pblk;
    rx_uint_t               w;

    if (mcf->nupstreams == 0) {
        return;
    }
    usum = rx_pcalloc(o->b->pool, mcf->layout.nupstreams * sizeof(*usum));
    psum = rx_pcalloc(o->b->pool, (mcf->layout.npeers + 1) * sizeof(*psum));
    if (usum == NULL || psum == NULL) {
        o->b->failed = true;
        return;
    }
    for (w = 0; w < mcf->layout.nworkers; w++) {
        ublk = rx_metrics_upstreams(mcf, w);
        pblk = rx_metrics_peers(mcf, w);
        if (ublk && pblk) {
            rx_metrics_sum((int64_t *) usum, (int64_t *) ublk,
                           mcf->layout.nupstreams * N64(*usum));
            rx_metrics_sum((int64_t *) psum, (int64_t *) pblk,
                           mcf->layout.npeers * N64(*psum));
        }
    }
    upstream_queues(o, usum);
    upstream_peers(o, psum);
}

/* proxy_cache / fastcgi_cache: each cache's figures, from its keys zone. */
static void
caches(out_t *o)
{
    rx_shm_zone_t         **z = rx_cycle->shm_zones.elts;
    rx_http_cache_stats_t   st;
    rx_uint_t               i, k, n = 0;
    char                    name[128];

    for (i = 0; i < rx_cycle->shm_zones.nelts; i++) {
        if (!rx_http_cache_stats(z[i], &st)) {
            continue;
        }
        if (n++ == 0) {
            family(o, "ringx_cache_responses", "counter", "Requests of a "
                   "proxy_cache/fastcgi_cache, by $upstream_cache_status.");
        }
        esc(name, sizeof(name), &z[i]->name);
        for (k = 1; k < RX_HTTP_CACHE_STATUSES; k++) {
            rx_metrics_printf(o->b, "ringx_cache_responses_total{zone=\"%s\","
                "status=\"%s\"} %" PRId64 "\n", name,
                rx_http_cache_status_names[k], st.responses[k]);
        }
    }
    for (i = 0, n = 0; i < rx_cycle->shm_zones.nelts; i++) {
        if (!rx_http_cache_stats(z[i], &st)) {
            continue;
        }
        if (n++ == 0) {
            family(o, "ringx_cache_entries", "gauge", "Entries in the index.");
        }
        esc(name, sizeof(name), &z[i]->name);
        rx_metrics_printf(o->b, "ringx_cache_entries{zone=\"%s\"} %" PRId64
                          "\n", name, st.entries);
    }
    for (i = 0, n = 0; i < rx_cycle->shm_zones.nelts; i++) {
        if (!rx_http_cache_stats(z[i], &st)) {
            continue;
        }
        if (n++ == 0) {
            family(o, "ringx_cache_size_bytes", "gauge",
                   "Bytes of the cache's files.");
        }
        esc(name, sizeof(name), &z[i]->name);
        rx_metrics_printf(o->b, "ringx_cache_size_bytes{zone=\"%s\"} %" PRId64
                          "\n", name, st.bytes);
    }
}

void
rx_metrics_prometheus(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b,
    bool openmetrics)
{
    out_t o = { b, mcf, openmetrics };

    connections(&o);
    process(&o);
    if (mcf->layout.shm.addr) {
        requests(&o, "server", &mcf->servers, rx_metrics_servers);
        requests(&o, "location", &mcf->locations, rx_metrics_locations);
        upstreams(&o);
    }
    caches(&o);
    if (openmetrics) {
        rx_metrics_printf(b, "# EOF\n");
    }
}
