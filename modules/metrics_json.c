/*
 * metrics_json.c: the counters as one JSON document for scripts (`metrics
 * json`, or `metrics html` asked with ?json), per worker (with the last
 * minute's history) and per upstream peer; and the status page itself, one
 * self-contained HTML document whose script reads that JSON every second.
 */
#include "metrics.h"
#include "http_stats.h"
#include "counters.h"
#include "clock.h"

#define N64(t)  (sizeof(t) / sizeof(int64_t))

static void
str(rx_metrics_buf_t *b, const rx_str_t *s)
{
    rx_metrics_printf(b, "\"");
    rx_metrics_escaped(b, s);
    rx_metrics_printf(b, "\"");
}

static void
workers(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b)
{
    const rx_http_stat_slot_t  *s;
    const rx_counters_worker_t *c;
    const rx_metrics_sample_t  *x;
    rx_uint_t                   w, i;
    int64_t                     next;

    rx_metrics_printf(b, "\"workers\":[");
    for (w = 0; w < mcf->layout.nworkers && w < RX_COUNTERS_SLOTS; w++) {
        s = rx_http_stats_slot(w);
        c = rx_counters_slot(w);
        if (s == NULL || c == NULL) {
            break;
        }
        rx_metrics_printf(b, "%s{\"worker\":%lu,\"pid\":%" PRId64
            ",\"active\":%" PRId64 ",\"reading\":%" PRId64 ",\"writing\":%"
            PRId64 ",\"accepted\":%" PRId64 ",\"requests\":%" PRId64
            ",\"table_used\":%" PRId64 ",\"table_limit\":%" PRId64
            ",\"fds_used\":%" PRId64 ",\"fds_limit\":%" PRId64
            ",\"history\":[", w ? "," : "", (unsigned long) w, c->pid,
            s->active, s->reading, s->writing, s->accepted, s->requests,
            c->conns_used, c->conns_max, c->fds_used, c->fds_max);
        next = mcf->history ? mcf->history[w].next : 0;
        for (i = 0; i < RX_METRICS_HISTORY && mcf->history; i++) {
            x = &mcf->history[w].s[(next + i) % RX_METRICS_HISTORY];
            if (x->time == 0) {
                continue;
            }
            rx_metrics_printf(b, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%"
                PRId64 "]", b->data[b->len - 1] == '[' ? "" : ",", x->time,
                x->requests, x->active, x->queued);
        }
        rx_metrics_printf(b, "]}");
    }
    rx_metrics_printf(b, "]");
}

static void
totals(rx_metrics_buf_t *b)
{
    rx_counters_master_t *m = rx_counters_master();
    rx_counters_worker_t  sum;
    rx_http_stat_slot_t   st;
    rx_uint_t             w;
    const rx_counters_worker_t *c;

    memset(&sum, 0, sizeof(sum));
    for (w = 0; w < RX_COUNTERS_SLOTS; w++) {
        if ((c = rx_counters_slot(w)) != NULL) {
            rx_metrics_sum(&sum.tls_new, &c->tls_new,
                           (size_t) (&sum.pid - &sum.tls_new));
        }
    }
    rx_http_stats_sum(&st);
    rx_metrics_printf(b, "\"tls\":{\"new\":%" PRId64 ",\"resumed\":%" PRId64
        ",\"failed\":%" PRId64 "},\"accept_errors\":{\"EMFILE\":%" PRId64
        ",\"ENFILE\":%" PRId64 "},\"reloads\":%" PRId64 ",\"respawns\":%"
        PRId64 ",\"limit_req_rejected\":%" PRId64 ",\"limit_conn_rejected\":%"
        PRId64, sum.tls_new, sum.tls_resumed, sum.tls_failed,
        sum.accept_emfile, sum.accept_enfile, m ? m->reloads : 0,
        m ? m->respawns : 0, st.limit_req_rejected, st.limit_conn_rejected);
}

static void
requests(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b, const char *key,
    const rx_array_t *names,
    rx_http_metrics_req_t *(*blocks)(rx_metrics_main_conf_t *, rx_uint_t))
{
    const rx_str_t        *name = names->elts;
    rx_http_metrics_req_t  sum, *blk;
    rx_uint_t              i, w;

    rx_metrics_printf(b, ",\"%s\":[", key);
    for (i = 0; i < names->nelts; i++) {
        memset(&sum, 0, sizeof(sum));
        for (w = 0; w < mcf->layout.nworkers; w++) {
            if ((blk = blocks(mcf, w)) != NULL) {
                rx_metrics_sum((int64_t *) &sum, (int64_t *) &blk[i],
                               N64(sum));
            }
        }
        rx_metrics_printf(b, "%s{\"name\":", i ? "," : "");
        str(b, &name[i]);
        rx_metrics_printf(b, ",\"status\":{\"1xx\":%" PRId64 ",\"2xx\":%"
            PRId64 ",\"3xx\":%" PRId64 ",\"4xx\":%" PRId64 ",\"5xx\":%"
            PRId64 "},\"bytes_in\":%" PRId64 ",\"bytes_out\":%" PRId64
            ",\"p50_ms\":%" PRId64 ",\"p95_ms\":%" PRId64 "}",
            sum.status[0], sum.status[1], sum.status[2], sum.status[3],
            sum.status[4], sum.bytes_in, sum.bytes_out,
            rx_metrics_quantile(mcf, &sum.duration, 0.5),
            rx_metrics_quantile(mcf, &sum.duration, 0.95));
    }
    rx_metrics_printf(b, "]");
}

static void
peer(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b,
    rx_http_upstream_peer_t *p, rx_uint_t k)
{
    rx_http_metrics_peer_t  sum, *blk;
    rx_uint_t               w;

    memset(&sum, 0, sizeof(sum));
    rx_metrics_printf(b, "{\"name\":");
    str(b, &p->name);
    rx_metrics_printf(b, ",\"max_conns\":%lu,\"learned\":[",
                      (unsigned long) p->max_conns);
    for (w = 0; w < mcf->layout.nworkers; w++) {
        if ((blk = rx_metrics_peers(mcf, w)) != NULL) {
            rx_metrics_sum((int64_t *) &sum, (int64_t *) &blk[k], N64(sum));
            rx_metrics_printf(b, "%s%" PRId64, w ? "," : "", blk[k].learned);
        }
    }
    rx_metrics_printf(b, "],\"active\":%" PRId64 ",\"idle\":%" PRId64
        ",\"requests\":%" PRId64 ",\"failures\":{\"connect\":%" PRId64
        ",\"timeout\":%" PRId64 ",\"5xx\":%" PRId64 ",\"error\":%" PRId64
        "},\"p95_ms\":%" PRId64 "}", sum.active, sum.idle, sum.requests,
        sum.fails[0], sum.fails[1], sum.fails[2], sum.fails[3],
        rx_metrics_quantile(mcf, &sum.response, 0.95));
}

static void
upstreams(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b)
{
    rx_http_metrics_ups_t  sum, *blk;
    rx_uint_t              i, j, w, k = 0;

    rx_metrics_printf(b, ",\"upstreams\":[");
    for (i = 0; i < mcf->nupstreams; i++) {
        rx_http_upstream_srv_conf_t *us = mcf->upstreams[i];

        memset(&sum, 0, sizeof(sum));
        for (w = 0; w < mcf->layout.nworkers; w++) {
            if ((blk = rx_metrics_upstreams(mcf, w)) != NULL) {
                rx_metrics_sum((int64_t *) &sum, (int64_t *) &blk[i], N64(sum));
            }
        }
        rx_metrics_printf(b, "%s{\"name\":", i ? "," : "");
        str(b, &us->host);
        rx_metrics_printf(b, ",\"queue\":{\"depth\":%" PRId64 ",\"limit\":%lu"
            ",\"timeouts\":%" PRId64 ",\"overflows\":%" PRId64 ",\"wait_p95_ms"
            "\":%" PRId64 "},\"peers\":[", sum.queue_depth,
            (unsigned long) us->queue_max, sum.queue_timeouts,
            sum.queue_overflows, rx_metrics_quantile(mcf, &sum.queue_wait, 0.95));
        for (j = 0; j < rx_http_upstream_npeers(us); j++, k++) {
            rx_http_upstream_peer_t *p = j < us->primary.n ? &us->primary.peer[j]
                                         : &us->backup.peer[j - us->primary.n];

            if (j) {
                rx_metrics_printf(b, ",");
            }
            peer(mcf, b, p, k);
        }
        rx_metrics_printf(b, "]}");
    }
    rx_metrics_printf(b, "]");
}

void
rx_metrics_json(rx_metrics_main_conf_t *mcf, rx_metrics_buf_t *b)
{
    rx_metrics_printf(b, "{\"time\":%" PRId64 ",", (int64_t) rx_time_sec);
    workers(mcf, b);
    rx_metrics_printf(b, ",");
    totals(b);
    if (mcf->layout.shm.addr) {
        requests(mcf, b, "servers", &mcf->servers, rx_metrics_servers);
        requests(mcf, b, "locations", &mcf->locations, rx_metrics_locations);
        upstreams(mcf, b);
    }
    rx_metrics_printf(b, "}\n");
}
