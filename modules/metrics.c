/*
 * metrics.c: the metrics module: its directives, the layout of its
 * counters (http/http_metrics.h) at load, each worker's pointers into it,
 * the log-phase handler that counts requests per server and location, and
 * the `metrics` content handler (Prometheus text, OpenMetrics, JSON, the
 * status page).
 */
#include "metrics.h"
#include "http_core.h"
#include "cycle.h"
#include "process.h"
#include "clock.h"

static const char *set_metrics(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_location(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_buckets(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t postconfiguration(rx_conf_t *cf);
static void *create_main_conf(rx_conf_t *cf);
static const char *init_main_conf(rx_conf_t *cf, void *conf);
static void *create_srv_conf(rx_conf_t *cf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t init_module(rx_cycle_t *cycle);
static rx_int_t init_process(rx_cycle_t *cycle);

/* Prometheus's default buckets, in ms, from 5 ms to 10 s. */
static const rx_msec_t default_bounds[] = {
    5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000
};

static const rx_command_t metrics_commands[] = {
    { "metrics", RX_HTTP_LOC_CONF | RX_CONF_NOARGS | RX_CONF_TAKE1,
      set_metrics, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "metrics_location", RX_HTTP_LOC_CONF | RX_CONF_FLAG, set_location,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "metrics_collect", RX_HTTP_MAIN_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, RX_HTTP_MAIN_CONF_OFFSET,
      offsetof(rx_metrics_main_conf_t, collect), NULL },
    { "metrics_buckets", RX_HTTP_MAIN_CONF | RX_CONF_1MORE, set_buckets,
      RX_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "metrics_alarm_interval", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_MAIN_CONF_OFFSET,
      offsetof(rx_metrics_main_conf_t, alarm_interval), NULL },
    { "metrics_alarm_queue_wait", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_MAIN_CONF_OFFSET,
      offsetof(rx_metrics_main_conf_t, alarm_queue_wait), NULL },
    { "metrics_alarm_pool_full", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_MAIN_CONF_OFFSET,
      offsetof(rx_metrics_main_conf_t, alarm_pool_full), NULL },
    rx_null_command
};

static const rx_http_module_t metrics_ctx = {
    NULL, postconfiguration, create_main_conf, init_main_conf,
    create_srv_conf, NULL, create_loc_conf, merge_loc_conf, NULL
};

rx_module_t rx_http_metrics_module = {
    "rx_http_metrics_module", 0, 0, RX_HTTP_MODULE, &metrics_ctx,
    metrics_commands, init_module, init_process, NULL, NULL
};

/* This worker's blocks (NULL: nothing is counted). */
static rx_http_metrics_req_t  *my_servers;
static rx_http_metrics_req_t  *my_locations;

/* ---- configuration ------------------------------------------------------ */

static void *
create_main_conf(rx_conf_t *cf)
{
    rx_metrics_main_conf_t *mcf = rx_pcalloc(cf->pool, sizeof(*mcf));

    if (mcf == NULL
        || rx_array_init(&mcf->servers, cf->pool, 4, sizeof(rx_str_t))
           != RX_OK
        || rx_array_init(&mcf->locations, cf->pool, 4, sizeof(rx_str_t))
           != RX_OK) {
        return NULL;
    }
    mcf->collect = RX_CONF_UNSET;
    mcf->alarm_interval = RX_CONF_UNSET_MSEC;
    mcf->alarm_queue_wait = RX_CONF_UNSET_MSEC;
    mcf->alarm_pool_full = RX_CONF_UNSET_MSEC;
    return mcf;
}

static const char *
init_main_conf(rx_conf_t *cf, void *conf)
{
    rx_metrics_main_conf_t *mcf = conf;

    rx_conf_init_value(mcf->collect, 1);
    rx_conf_init_msec(mcf->alarm_interval, 60000);
    rx_conf_init_msec(mcf->alarm_queue_wait, 1000);
    rx_conf_init_msec(mcf->alarm_pool_full, 10000);
    if (mcf->nbounds == 0) {
        mcf->nbounds = sizeof(default_bounds) / sizeof(default_bounds[0]);
        memcpy(mcf->bounds, default_bounds, sizeof(default_bounds));
    }
    return RX_CONF_OK;
}

static void *
create_srv_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(rx_metrics_srv_conf_t));
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_metrics_loc_conf_t *mlcf = rx_pcalloc(cf->pool, sizeof(*mlcf));

    if (mlcf) {
        mlcf->location = -1;
    }
    return mlcf;
}

/* A nested location without metrics_location counts into its parent's
 * series: the format is the location's own (a content handler). */
static const char *
merge_loc_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_metrics_loc_conf_t *p = prev, *c = conf;

    rx_conf_merge_value(c->location, p->location, -2);
    return RX_CONF_OK;
}

static rx_int_t metrics_handler(void *data);

/* metrics [prometheus | json | html]; */
static const char *
set_metrics(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    static const rx_conf_enum_t formats[] = {
        { "prometheus", RX_METRICS_PROMETHEUS }, { "json", RX_METRICS_JSON },
        { "html", RX_METRICS_HTML }, { NULL, 0 }
    };
    rx_metrics_loc_conf_t   *mlcf = conf;
    rx_http_core_loc_conf_t *clcf;
    rx_str_t                *value = cf->args->elts;
    rx_uint_t                i;

    if (mlcf->format != RX_METRICS_NONE) {
        return "is duplicate";
    }
    mlcf->format = RX_METRICS_PROMETHEUS;
    if (cf->args->nelts == 2) {
        for (i = 0; formats[i].name && !rx_str_eq(&value[1], formats[i].name);
             i++) {
            /* find the format */
        }
        if (formats[i].name == NULL) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in "
                "\"metrics\" directive, it must be \"prometheus\", \"json\" "
                "or \"html\"", value[1].data);
            return RX_CONF_ERROR;
        }
        mlcf->format = (rx_metrics_format_t) formats[i].value;
    }
    clcf = rx_http_conf_get_module_loc_conf(cf, rx_http_core_module);
    clcf->handler = metrics_handler;
    return RX_CONF_OK;
}

static const char *
set_location(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_metrics_loc_conf_t   *mlcf = conf;
    rx_metrics_main_conf_t  *mcf;
    rx_http_core_loc_conf_t *clcf;
    rx_str_t                *value = cf->args->elts, *name;

    if (mlcf->location != -1) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "off")) {
        mlcf->location = -2;
        return RX_CONF_OK;
    }
    if (!rx_str_eq(&value[1], "on")) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in "
            "\"metrics_location\" directive, it must be \"on\" or \"off\"",
            value[1].data);
        return RX_CONF_ERROR;
    }
    mcf = rx_http_conf_get_module_main_conf(cf, rx_http_metrics_module);
    clcf = rx_http_conf_get_module_loc_conf(cf, rx_http_core_module);
    name = rx_array_push(&mcf->locations);
    if (name == NULL) {
        return RX_CONF_ERROR;
    }
    *name = clcf->name;
    mlcf->location = (rx_int_t) mcf->locations.nelts - 1;
    return RX_CONF_OK;
}

/* metrics_buckets 10ms 50ms 1s ...: increasing, at most 12. */
static const char *
set_buckets(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_metrics_main_conf_t *mcf = conf;
    rx_str_t               *value = cf->args->elts;
    rx_uint_t               i;
    rx_int_t                ms;

    if (mcf->nbounds) {
        return "is duplicate";
    }
    if (cf->args->nelts - 1 > RX_HTTP_METRICS_BUCKETS) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "too many values in "
            "\"metrics_buckets\" directive, at most %d",
            RX_HTTP_METRICS_BUCKETS);
        return RX_CONF_ERROR;
    }
    for (i = 1; i < cf->args->nelts; i++) {
        ms = rx_parse_time(&value[i], false);
        if (ms <= 0 || (i > 1 && (rx_msec_t) ms <= mcf->bounds[i - 2])) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in "
                "\"metrics_buckets\" directive, the bounds must be times "
                "above 0 in increasing order", value[i].data);
            return RX_CONF_ERROR;
        }
        mcf->bounds[i - 1] = (rx_msec_t) ms;
    }
    mcf->nbounds = cf->args->nelts - 1;
    return RX_CONF_OK;
}

static rx_int_t log_handler(rx_http_request_t *r);

/* Each server counts under its first name; servers of the same name share
 * a series (label values must be unique). */
static rx_int_t
index_servers(rx_conf_t *cf, rx_metrics_main_conf_t *mcf)
{
    rx_http_core_main_conf_t  *cmcf;
    rx_http_core_srv_conf_t  **cscf;
    rx_http_server_name_t     *sn;
    rx_metrics_srv_conf_t     *mscf;
    rx_str_t                  *names, *slot, name;
    rx_uint_t                  s, i;

    cmcf = rx_http_conf_get_module_main_conf(cf, rx_http_core_module);
    cscf = cmcf->servers.elts;
    for (s = 0; s < cmcf->servers.nelts; s++) {
        sn = cscf[s]->server_names.elts;
        name = cscf[s]->server_names.nelts && sn[0].name.len ? sn[0].name
               : (rx_str_t) rx_string("_");
        names = mcf->servers.elts;
        for (i = 0; i < mcf->servers.nelts && (names[i].len != name.len
                 || memcmp(names[i].data, name.data, name.len) != 0); i++) {
            /* an earlier server of that name */
        }
        if (i == mcf->servers.nelts) {
            slot = rx_array_push(&mcf->servers);
            if (slot == NULL) {
                return RX_ERROR;
            }
            *slot = name;
        }
        mscf = cscf[s]->ctx->srv_conf[rx_http_metrics_module.ctx_index];
        mscf->index = i;
    }
    return RX_OK;
}

static rx_int_t
postconfiguration(rx_conf_t *cf)
{
    rx_metrics_main_conf_t *mcf = rx_http_conf_get_module_main_conf(cf,
                                     rx_http_metrics_module);

    if (index_servers(cf, mcf) != RX_OK) {
        return RX_ERROR;
    }
    mcf->upstreams = rx_http_upstream_groups(
        ((rx_http_conf_ctx_t *) cf->ctx)->main_conf, &mcf->nupstreams);
    if (!mcf->collect) {
        return RX_OK;
    }
    return rx_http_add_phase_handler(cf, RX_HTTP_LOG_PHASE, log_handler);
}

/* ---- the mapping -------------------------------------------------------- */

static rx_metrics_main_conf_t *
main_conf_of(rx_cycle_t *cycle)
{
    rx_http_conf_ctx_t *ctx;

    ctx = cycle->conf_ctx ? cycle->conf_ctx[rx_http_module.index] : NULL;
    return ctx ? ctx->main_conf[rx_http_metrics_module.ctx_index] : NULL;
}

static void
free_mapping(void *data)
{
    rx_shm_free(data);
}

/* In the master, for each configuration loaded: the blocks of its
 * workers, then their history rings. */
static rx_int_t
init_module(rx_cycle_t *cycle)
{
    rx_metrics_main_conf_t   *mcf = main_conf_of(cycle);
    rx_http_metrics_layout_t *l;
    rx_core_conf_t           *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_pool_cleanup_t        *cln;
    rx_uint_t                 i;

    if (mcf == NULL || !mcf->collect) {
        return RX_OK;
    }
    l = &mcf->layout;
    l->nworkers = ccf->worker_processes > 0 ? (rx_uint_t) ccf->worker_processes
                                            : 1;
    l->nservers = mcf->servers.nelts;
    l->nlocations = mcf->locations.nelts;
    l->nupstreams = mcf->nupstreams;
    for (i = 0; i < mcf->nupstreams; i++) {
        l->npeers += rx_http_upstream_npeers(mcf->upstreams[i]);
    }
    l->nbounds = mcf->nbounds;
    memcpy(l->bounds, mcf->bounds, sizeof(l->bounds));
    rx_http_metrics_layout_size(l);
    cln = rx_pool_cleanup_add(cycle->pool, 0);
    if (cln == NULL
        || rx_shm_alloc(&l->shm, l->nworkers * (l->stride
                        + sizeof(rx_metrics_history_t)), cycle->log) != RX_OK) {
        return RX_ERROR;
    }
    cln->handler = free_mapping;
    cln->data = &l->shm;
    mcf->history = (rx_metrics_history_t *) ((char *) l->shm.addr
                                             + l->nworkers * l->stride);
    return RX_OK;
}

/* In a worker: its pointers into its own block. */
static rx_int_t
init_process(rx_cycle_t *cycle)
{
    rx_metrics_main_conf_t  *mcf = main_conf_of(cycle);
    rx_http_metrics_ups_t   *ups;
    rx_http_metrics_peer_t  *peers;
    rx_uint_t                i, j, n, w = rx_worker_index;

    if (mcf == NULL || !mcf->collect || mcf->layout.shm.addr == NULL
        || w >= mcf->layout.nworkers) {
        return RX_OK;
    }
    rx_http_metrics_use_bounds(&mcf->layout);
    my_servers = rx_metrics_servers(mcf, w);
    my_locations = rx_metrics_locations(mcf, w);
    ups = rx_metrics_upstreams(mcf, w);
    peers = rx_metrics_peers(mcf, w);
    for (i = 0; i < mcf->nupstreams; i++) {
        rx_http_upstream_srv_conf_t *us = mcf->upstreams[i];

        us->metrics = &ups[i];
        n = rx_http_upstream_npeers(us);
        for (j = 0; j < n; j++) {
            rx_http_upstream_peer_t *p = j < us->primary.n
                ? &us->primary.peer[j] : &us->backup.peer[j - us->primary.n];

            p->metrics = peers++;
        }
    }
    return rx_metrics_tick_start(mcf);
}

/* ---- counting ----------------------------------------------------------- */

static void
count(rx_http_metrics_req_t *m, rx_uint_t status, rx_msec_t ms,
    int64_t in, int64_t out)
{
    rx_uint_t cls = status / 100;

    m->status[cls >= 1 && cls <= 5 ? cls - 1 : 5]++;
    m->bytes_in += in;
    m->bytes_out += out;
    rx_http_metrics_observe(&m->duration, ms);
}

static rx_int_t
log_handler(rx_http_request_t *r)
{
    rx_metrics_srv_conf_t *mscf;
    rx_metrics_loc_conf_t *mlcf;
    rx_uint_t              status;
    rx_msec_t              ms;

    if (my_servers == NULL || r != r->main || r->srv_conf == NULL) {
        return RX_OK;
    }
    status = r->err_status ? r->err_status : r->headers_out.status;
    ms = rx_current_msec - r->start_msec;
    mscf = rx_http_get_module_srv_conf(r, rx_http_metrics_module);
    count(&my_servers[mscf->index], status, ms, r->request_length,
          r->bytes_sent);
    if (r->loc_conf) {
        mlcf = rx_http_get_module_loc_conf(r, rx_http_metrics_module);
        if (mlcf->location >= 0) {
            count(&my_locations[mlcf->location], status, ms,
                  r->request_length, r->bytes_sent);
        }
    }
    return RX_OK;
}

/* ---- reading ------------------------------------------------------------ */

rx_http_metrics_req_t *
rx_metrics_servers(rx_metrics_main_conf_t *mcf, rx_uint_t w)
{
    char *b = rx_http_metrics_block(&mcf->layout, w);

    return b ? (rx_http_metrics_req_t *) b : NULL;
}

rx_http_metrics_req_t *
rx_metrics_locations(rx_metrics_main_conf_t *mcf, rx_uint_t w)
{
    char *b = rx_http_metrics_block(&mcf->layout, w);

    return b ? (rx_http_metrics_req_t *) (b + mcf->layout.off_locations) : NULL;
}

rx_http_metrics_ups_t *
rx_metrics_upstreams(rx_metrics_main_conf_t *mcf, rx_uint_t w)
{
    char *b = rx_http_metrics_block(&mcf->layout, w);

    return b ? (rx_http_metrics_ups_t *) (b + mcf->layout.off_upstreams) : NULL;
}

rx_http_metrics_peer_t *
rx_metrics_peers(rx_metrics_main_conf_t *mcf, rx_uint_t w)
{
    char *b = rx_http_metrics_block(&mcf->layout, w);

    return b ? (rx_http_metrics_peer_t *) (b + mcf->layout.off_peers) : NULL;
}

void
rx_metrics_sum(int64_t *sum, const int64_t *a, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        sum[i] += __atomic_load_n(&a[i], __ATOMIC_RELAXED);
    }
}

int64_t
rx_metrics_quantile(const rx_metrics_main_conf_t *mcf,
    const rx_http_metrics_hist_t *h, double q)
{
    int64_t   total = 0, seen = 0;
    rx_uint_t i;

    for (i = 0; i <= RX_HTTP_METRICS_BUCKETS; i++) {
        total += h->bucket[i];
    }
    if (total == 0) {
        return -1;
    }
    for (i = 0; i < mcf->layout.nbounds; i++) {
        seen += h->bucket[i];
        if ((double) seen >= q * (double) total) {
            return (int64_t) mcf->layout.bounds[i];
        }
    }
    /* beyond the last bound: say so with the bound itself */
    return (int64_t) (mcf->layout.nbounds ? mcf->layout.bounds[mcf->layout.nbounds - 1] + 1 : 0);
}

/* ---- the text buffer ---------------------------------------------------- */

void
rx_metrics_buf_init(rx_metrics_buf_t *b, rx_pool_t *pool, size_t cap)
{
    b->pool = pool;
    b->len = 0;
    b->cap = cap;
    b->data = rx_pnalloc(pool, cap);
    b->failed = b->data == NULL;
}

static bool
grow(rx_metrics_buf_t *b, size_t need)
{
    size_t  cap = b->cap;
    char   *p;

    while (cap < b->len + need) {
        cap *= 2;
    }
    p = rx_pnalloc(b->pool, cap);
    if (p == NULL) {
        b->failed = true;
        return false;
    }
    memcpy(p, b->data, b->len);
    b->data = p;
    b->cap = cap;
    return true;
}

void
rx_metrics_printf(rx_metrics_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int     n;

    if (b->failed) {
        return;
    }
    for ( ;; ) {
        va_start(ap, fmt);
        n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t) n < b->cap - b->len) {
            b->len += (size_t) n;
            return;
        }
        if (!grow(b, (size_t) n + 1)) {
            return;
        }
    }
}

void
rx_metrics_escaped(rx_metrics_buf_t *b, const rx_str_t *s)
{
    size_t i;

    for (i = 0; i < s->len && !b->failed; i++) {
        char c = s->data[i];

        if (c == '\\' || c == '"') {
            rx_metrics_printf(b, "\\%c", c);
        } else if (c == '\n') {
            rx_metrics_printf(b, "\\n");
        } else if ((unsigned char) c < 0x20) {
            rx_metrics_printf(b, "?");
        } else {
            rx_metrics_printf(b, "%c", c);
        }
    }
}

/* ---- the handler -------------------------------------------------------- */

/* Does the scraper ask for OpenMetrics (Accept: application/openmetrics-text)? */
static bool
wants_openmetrics(rx_http_request_t *r)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        if (h[i].key.len == 6 && strncasecmp(h[i].key.data, "accept", 6) == 0
            && memmem(h[i].value.data, h[i].value.len,
                      "application/openmetrics-text", 28) != NULL) {
            return true;
        }
    }
    return false;
}

static rx_int_t
metrics_handler(void *data)
{
    rx_http_request_t      *r = data;
    rx_metrics_loc_conf_t  *mlcf;
    rx_metrics_main_conf_t *mcf;
    rx_metrics_buf_t        b;
    rx_str_t                body, type;
    bool                    om = false;

    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD))) {
        return RX_HTTP_NOT_ALLOWED;
    }
    mlcf = rx_http_get_module_loc_conf(r, rx_http_metrics_module);
    mcf = rx_http_get_module_main_conf(r, rx_http_metrics_module);
    rx_metrics_publish(mcf);
    rx_metrics_buf_init(&b, r->pool, 16384);
    switch (mlcf->format == RX_METRICS_HTML && r->args.len == 4
            && memcmp(r->args.data, "json", 4) == 0
            ? RX_METRICS_JSON : mlcf->format) {
    case RX_METRICS_JSON:
        rx_metrics_json(mcf, &b);
        type = (rx_str_t) rx_string("application/json");
        break;
    case RX_METRICS_HTML:
        rx_metrics_printf(&b, "%s", rx_metrics_page);
        type = (rx_str_t) rx_string("text/html; charset=utf-8");
        break;
    default:
        om = wants_openmetrics(r);
        rx_metrics_prometheus(mcf, &b, om);
        type = om ? (rx_str_t) rx_string("application/openmetrics-text; "
                                         "version=1.0.0; charset=utf-8")
                  : (rx_str_t) rx_string("text/plain; version=0.0.4; "
                                         "charset=utf-8");
        break;
    }
    if (b.failed) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = b.data;
    body.len = b.len;
    return rx_http_send_response(r, RX_HTTP_OK, &type, &body);
}
