/*
 * http_upstream_block.c: the `upstream name { ... }` block and its directives
 * (server, keepalive*, resolver*), and the implicit upstreams that proxy_pass and
 * fastcgi_pass make for a literal address. Every upstream of the http
 * block is listed here; at the end of the block their peers are built
 * (http_upstream_rr.c). Runtime state (failures, the keepalive pool) is
 * per worker: each worker has its own copy of these structures; the
 * names of `server ... resolve` lines are asked by each worker once its
 * loop runs (http_upstream_resolve.c).
 */
#include "http.h"
#include <arpa/inet.h>
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "resolver.h"

typedef struct {
    rx_array_t  upstreams;     /* rx_http_upstream_srv_conf_t * */
} rx_http_upstream_main_conf_t;

static const char *upstream_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_server(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_keepalive(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_queue(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_ignored_balancer(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t init_process(rx_cycle_t *cycle);
static void *create_main_conf(rx_conf_t *cf);
static const char *init_main_conf(rx_conf_t *cf, void *conf);

static const rx_conf_bounds_t positive = { 1, 0 };

static const rx_command_t upstream_commands[] = {
    { "upstream", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_TAKE1,
      upstream_block, 0, 0, NULL },
    { "server", RX_HTTP_UPS_CONF | RX_CONF_1MORE, set_server,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "keepalive", RX_HTTP_UPS_CONF | RX_CONF_TAKE1, set_keepalive,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "keepalive_requests", RX_HTTP_UPS_CONF | RX_CONF_TAKE1,
      rx_conf_set_num_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_upstream_srv_conf_t, keepalive_requests), &positive },
    { "keepalive_time", RX_HTTP_UPS_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_upstream_srv_conf_t, keepalive_time), NULL },
    { "keepalive_timeout", RX_HTTP_UPS_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_upstream_srv_conf_t, keepalive_timeout), NULL },
    { "queue", RX_HTTP_UPS_CONF | RX_CONF_TAKE12, set_queue,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    /* for `server ... resolve` (nginx 1.27.3) */
    { "resolver", RX_HTTP_UPS_CONF | RX_CONF_1MORE, rx_resolver_set_slot,
      RX_HTTP_SRV_CONF_OFFSET, offsetof(rx_http_upstream_srv_conf_t, resolver),
      NULL },
    { "resolver_timeout", RX_HTTP_UPS_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, RX_HTTP_SRV_CONF_OFFSET,
      offsetof(rx_http_upstream_srv_conf_t, resolver_timeout), NULL },
    /* shared-memory zones: the state is per worker for now (docs) */
    { "zone", RX_HTTP_UPS_CONF | RX_CONF_TAKE12, set_ignored_balancer,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t upstream_ctx = {
    rx_http_upstream_add_variables, NULL, create_main_conf, init_main_conf, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_upstream_module = {
    "rx_http_upstream_module", 0, 0, RX_HTTP_MODULE, &upstream_ctx,
    /* init_process: a respawned worker uncounts its dead predecessor's
     * connections (http_upstream_queue.c), and starts looking up the
     * names of `server ... resolve` lines */
    upstream_commands, NULL, init_process, NULL, NULL
};


/* The worker's loop runs: the names of `server ... resolve` are asked. */
static void
worker_started(rx_cycle_t *cycle)
{
    rx_http_conf_ctx_t            *ctx;
    rx_http_upstream_main_conf_t  *umcf;
    rx_http_upstream_srv_conf_t  **all;
    rx_uint_t                      i;

    ctx = cycle->conf_ctx ? cycle->conf_ctx[rx_http_module.index] : NULL;
    if (ctx == NULL) {
        return;                             /* no http block */
    }
    umcf = ctx->main_conf[rx_http_upstream_module.ctx_index];
    all = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        rx_http_upstream_resolve_worker(all[i]);
    }
}

rx_http_upstream_srv_conf_t **
rx_http_upstream_groups(void **main_conf, rx_uint_t *n)
{
    rx_http_upstream_main_conf_t *umcf =
        main_conf[rx_http_upstream_module.ctx_index];

    *n = umcf->upstreams.nelts;
    return umcf->upstreams.elts;
}

static rx_int_t
init_process(rx_cycle_t *cycle)
{
    if (rx_http_upstream_shared_reclaim(cycle) != RX_OK) {
        return RX_ERROR;
    }
    return rx_worker_at_start(worker_started);
}

static void *
create_main_conf(rx_conf_t *cf)
{
    rx_http_upstream_main_conf_t *umcf = rx_pcalloc(cf->pool, sizeof(*umcf));

    if (umcf == NULL
        || rx_array_init(&umcf->upstreams, cf->pool, 4,
                         sizeof(rx_http_upstream_srv_conf_t *)) != RX_OK) {
        return NULL;
    }
    return umcf;
}

static rx_http_upstream_srv_conf_t *
new_upstream(rx_conf_t *cf, const rx_str_t *host, in_port_t port, bool no_port)
{
    rx_http_upstream_main_conf_t *umcf = rx_http_conf_get_module_main_conf(cf,
                                            rx_http_upstream_module);
    rx_http_upstream_srv_conf_t  *us, **slot;

    us = rx_pcalloc(cf->pool, sizeof(*us));
    slot = rx_array_push(&umcf->upstreams);
    if (us == NULL || slot == NULL) {
        return NULL;
    }
    us->host.data = rx_pstrdup(cf->pool, host);
    if (us->host.data == NULL) {
        return NULL;
    }
    us->host.len = host->len;
    us->port = port;
    us->no_port = no_port;
    us->implicit = true;
    us->keepalive_requests = RX_CONF_UNSET_UINT;
    us->keepalive_time = RX_CONF_UNSET_MSEC;
    us->keepalive_timeout = RX_CONF_UNSET_MSEC;
    us->resolver_timeout = RX_CONF_UNSET_MSEC;
    if (cf->conf_file) {
        us->file = cf->conf_file->name;
        us->line = cf->conf_file->line;
    }
    *slot = us;
    return us;
}

/*
 * The upstream a proxy_pass names: an `upstream` block of that name (when
 * no port is given), the same address used elsewhere, or a new implicit
 * one. A block defined after the proxy_pass takes over the implicit entry.
 */
rx_http_upstream_srv_conf_t *
rx_http_upstream_add(rx_conf_t *cf, const rx_str_t *host, in_port_t port,
    bool no_port)
{
    rx_http_upstream_main_conf_t *umcf = rx_http_conf_get_module_main_conf(cf,
                                            rx_http_upstream_module);
    rx_http_upstream_srv_conf_t **all = umcf->upstreams.elts;
    rx_uint_t                     i;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (all[i]->host.len != host->len
            || strncasecmp(all[i]->host.data, host->data, host->len) != 0) {
            continue;
        }
        if (!all[i]->implicit && !no_port) {
            /* nginx: a block's name with a port is a different thing */
            continue;
        }
        if (all[i]->implicit && (all[i]->port != port
                                 || all[i]->no_port != no_port)) {
            continue;
        }
        return all[i];
    }
    return new_upstream(cf, host, port, no_port);
}

/* fastcgi_pass names it: a FastCGI pool gives each connection a process
 * of its own, and its size may be learned (http_upstream_learn.c). */
void
rx_http_upstream_set_per_process(rx_http_upstream_srv_conf_t *us)
{
    us->per_process = true;
}

/* At run time (proxy_pass with variables): an upstream block by name. */
rx_http_upstream_srv_conf_t *
rx_http_upstream_find(rx_http_request_t *r, const rx_str_t *host, in_port_t port)
{
    rx_http_upstream_main_conf_t *umcf = rx_http_get_module_main_conf(r,
                                            rx_http_upstream_module);
    rx_http_upstream_srv_conf_t **all = umcf->upstreams.elts;
    rx_uint_t                     i;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (all[i]->host.len == host->len && all[i]->servers
            && strncasecmp(all[i]->host.data, host->data, host->len) == 0
            && (!all[i]->implicit || all[i]->port == port)) {
            return all[i];
        }
    }
    return NULL;
}

static const char *
upstream_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_conf_ctx_t           *http = cf->ctx, *ctx;
    rx_http_upstream_main_conf_t *umcf = rx_http_conf_get_module_main_conf(cf,
                                            rx_http_upstream_module);
    rx_http_upstream_srv_conf_t  *us = NULL, **all = umcf->upstreams.elts;
    rx_str_t                     *value = cf->args->elts;
    rx_conf_t                     saved;
    const char                   *rv;
    rx_uint_t                     i;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (all[i]->host.len != value[1].len
            || strncasecmp(all[i]->host.data, value[1].data, value[1].len) != 0) {
            continue;
        }
        if (!all[i]->implicit) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate upstream \"%s\"",
                              value[1].data);
            return RX_CONF_ERROR;
        }
        if (all[i]->no_port) {
            us = all[i];          /* a proxy_pass named it before */
        }
    }
    if (us == NULL && (us = new_upstream(cf, &value[1], 0, true)) == NULL) {
        return RX_CONF_ERROR;
    }
    us->implicit = false;
    if (cf->conf_file) {
        us->file = cf->conf_file->name;
        us->line = cf->conf_file->line;
    }
    us->servers = rx_array_create(cf->pool, 4, sizeof(rx_http_upstream_server_t));
    if (us->servers == NULL) {
        return RX_CONF_ERROR;
    }

    ctx = rx_pcalloc(cf->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return RX_CONF_ERROR;
    }
    ctx->main_conf = http->main_conf;
    ctx->srv_conf = rx_pcalloc(cf->pool,
                               rx_modules_count(RX_HTTP_MODULE) * sizeof(void *));
    ctx->loc_conf = http->loc_conf;
    if (ctx->srv_conf == NULL) {
        return RX_CONF_ERROR;
    }
    ctx->srv_conf[rx_http_upstream_module.ctx_index] = us;

    saved = *cf;
    cf->ctx = ctx;
    cf->cmd_type = RX_HTTP_UPS_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        return rv;
    }
    if (us->servers->nelts == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "no servers are inside upstream");
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/*
 * `server NAME resolve`: the name is looked up while running
 * (http_upstream_resolve.c), into RX_HTTP_UPSTREAM_RESOLVE_MAX empty
 * slots; an address (or unix:) stays what it is, as in nginx.
 */
static rx_int_t
resolve_server(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_server_t *s, const rx_str_t *text)
{
    rx_str_t     host;
    in_port_t    port;
    bool         no_port;
    const char  *err;
    char         name[64];
    uint8_t      bin[16];
    rx_uint_t    i;

    if (text->len > 5 && strncasecmp(text->data, "unix:", 5) == 0) {
        return RX_DECLINED;
    }
    err = rx_http_upstream_parse_host(text, &host, &port, &no_port);
    if (err) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in upstream \"%s\"", err,
                          text->data);
        return RX_ERROR;
    }
    if (host.data[0] == '[') {
        return RX_DECLINED;                 /* an IPv6 address */
    }
    if (host.len < sizeof(name)) {
        memcpy(name, host.data, host.len);
        name[host.len] = '\0';
        if (inet_pton(AF_INET, name, bin) == 1) {
            return RX_DECLINED;
        }
    }
    s->resolve = true;
    s->host = host;
    s->port = no_port ? 80 : port;
    for (i = 0; i < RX_HTTP_UPSTREAM_RESOLVE_MAX; i++) {
        rx_sockaddr_t *a = rx_array_push(s->addrs);

        if (a == NULL) {
            return RX_ERROR;
        }
        memset(a, 0, sizeof(*a));
    }
    us->resolve = true;
    return RX_OK;
}

/* A server line's parameters after its address (weight=, max_fails=,
 * max_conns=, fail_timeout=, backup, down; resolve was taken already). */
static const char *
server_params(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_server_t *s)
{
    rx_str_t  *value = cf->args->elts, v;
    rx_uint_t  i;
    rx_int_t   n;

    for (i = 2; i < cf->args->nelts; i++) {
        if (strncmp(value[i].data, "weight=", 7) == 0) {
            n = rx_atoi(value[i].data + 7, value[i].len - 7);
            if (n <= 0) goto invalid;
            s->weight = n;
        } else if (strncmp(value[i].data, "max_fails=", 10) == 0) {
            n = rx_atoi(value[i].data + 10, value[i].len - 10);
            if (n < 0) goto invalid;
            s->max_fails = (rx_uint_t) n;
        } else if (strncmp(value[i].data, "max_conns=", 10) == 0) {
            n = rx_atoi(value[i].data + 10, value[i].len - 10);
            if (n < 0) goto invalid;
            s->max_conns = (rx_uint_t) n;
        } else if (strncmp(value[i].data, "fail_timeout=", 13) == 0) {
            v.data = value[i].data + 13;
            v.len = value[i].len - 13;
            n = rx_parse_time(&v, false);
            if (n < 0) goto invalid;
            s->fail_timeout = n;
        } else if (rx_str_eq(&value[i], "backup")) {
            if (us->balancer && !us->balancer->backup) {
                goto not_supported;
            }
            s->backup = true;
        } else if (rx_str_eq(&value[i], "down")) {
            s->down = true;
        } else if (rx_str_eq(&value[i], "resolve")) {
            continue;                       /* taken above */
        } else {
            goto invalid;
        }
    }
    return RX_CONF_OK;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                      value[i].data);
    return RX_CONF_ERROR;

not_supported:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "balancing method does not support "
                      "parameter \"%s\"", value[i].data);
    return RX_CONF_ERROR;
}

/* server address [weight=N] [max_fails=N] [fail_timeout=T] [max_conns=N]
 *        [backup] [down] */
static const char *
set_server(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_upstream_srv_conf_t *us = conf;
    rx_http_upstream_server_t   *s;
    rx_str_t                    *value = cf->args->elts;
    const char                  *err;
    rx_uint_t                    i;

    s = rx_array_push(us->servers);
    if (s == NULL) {
        return RX_CONF_ERROR;
    }
    memset(s, 0, sizeof(*s));
    s->name = value[1];
    s->weight = 1;
    s->max_fails = 1;
    s->fail_timeout = 10000;
    s->addrs = rx_array_create(cf->pool, 1, sizeof(rx_sockaddr_t));
    if (s->addrs == NULL) {
        return RX_CONF_ERROR;
    }
    for (i = 2; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "resolve")) {
            rx_int_t rc = resolve_server(cf, us, s, &value[1]);

            if (rc == RX_ERROR) {
                return RX_CONF_ERROR;
            }
            break;
        }
    }
    err = s->resolve ? NULL : rx_parse_addr(cf->pool, &value[1], 80, false,
                                            s->addrs);
    if (err != NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in upstream \"%s\"", err,
                          value[1].data);
        return RX_CONF_ERROR;
    }

    return server_params(cf, us, s);
}

const char *
rx_http_upstream_set_balancer(rx_conf_t *cf,
    const rx_http_upstream_balancer_t *balancer, void *balancer_conf)
{
    rx_http_upstream_srv_conf_t *us = rx_http_conf_get_module_srv_conf(cf,
                                          rx_http_upstream_module);
    rx_http_upstream_server_t   *s = us->servers->elts;
    rx_uint_t                    i;

    if (us->balancer) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "load balancing method redefined");
    }
    /* nginx checks only the server lines that follow; one written before
     * the method would be silently ignored there, so refuse it too */
    for (i = 0; !balancer->backup && i < us->servers->nelts; i++) {
        if (s[i].backup) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "balancing method does not "
                              "support parameter \"backup\"");
            return RX_CONF_ERROR;
        }
    }
    us->balancer = balancer;
    us->balancer_conf = balancer_conf;
    return RX_CONF_OK;
}

static const char *
set_keepalive(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_upstream_srv_conf_t *us = conf;
    rx_str_t                    *value = cf->args->elts;
    rx_int_t                     n;

    if (us->keepalive) {
        return "is duplicate";
    }
    n = rx_atoi(value[1].data, value[1].len);
    if (n <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in \"%s\" "
                          "directive", value[1].data, value[0].data);
        return RX_CONF_ERROR;
    }
    us->keepalive = (rx_uint_t) n;
    return RX_CONF_OK;
}

/* queue N [timeout=T]: ringx's own (nginx Plus has a similar one). */
static const char *
set_queue(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_upstream_srv_conf_t *us = conf;
    rx_str_t                    *value = cf->args->elts, t;
    rx_int_t                     n;

    if (us->queue_max) {
        return "is duplicate";
    }
    n = rx_atoi(value[1].data, value[1].len);
    if (n <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in "
                          "\"queue\" directive", value[1].data);
        return RX_CONF_ERROR;
    }
    us->queue_max = (rx_uint_t) n;
    us->queue_timeout = 60000;
    if (cf->args->nelts == 3) {
        if (strncmp(value[2].data, "timeout=", 8) != 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[2].data);
            return RX_CONF_ERROR;
        }
        t.data = value[2].data + 8;
        t.len = value[2].len - 8;
        n = rx_parse_time(&t, false);
        if (n <= 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid timeout \"%s\"",
                              value[2].data);
            return RX_CONF_ERROR;
        }
        us->queue_timeout = n;
    }
    return RX_CONF_OK;
}

static const char *
set_ignored_balancer(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t *value = cf->args->elts;

    rx_conf_log_error(RX_LOG_NOTICE, cf, 0, "\"%s\" is accepted; ringx keeps "
                      "upstream state per worker", value[0].data);
    return RX_CONF_OK;
}

/* An implicit upstream: its one address (all of a hostname's). */
static rx_int_t
implicit_servers(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_server_t *s;
    const char                *err;
    rx_str_t                   text;
    char                      *p;

    us->servers = rx_array_create(cf->pool, 1, sizeof(rx_http_upstream_server_t));
    s = us->servers ? rx_array_push(us->servers) : NULL;
    if (s == NULL) {
        return RX_ERROR;
    }
    memset(s, 0, sizeof(*s));
    s->weight = 1;
    s->max_fails = 1;
    s->fail_timeout = 10000;
    s->addrs = rx_array_create(cf->pool, 1, sizeof(rx_sockaddr_t));
    p = rx_pnalloc(cf->pool, us->host.len + 8);
    if (s->addrs == NULL || p == NULL) {
        return RX_ERROR;
    }
    if (us->host.len > 5 && strncmp(us->host.data, "unix:", 5) == 0) {
        text = us->host;
    } else if (us->no_port && us->port == 0) {
        /* fastcgi_pass has no default port: a name must be a block */
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "no port in upstream \"%.*s\" "
                     "in %s:%lu", (int) us->host.len, us->host.data,
                     us->file.data, (unsigned long) us->line);
        return RX_ERROR;
    } else {
        text.data = p;
        text.len = (size_t) sprintf(p, "%.*s:%u", (int) us->host.len,
                                    us->host.data, (unsigned) us->port);
    }
    s->name = text;
    err = rx_parse_addr(cf->pool, &text, us->port, false, s->addrs);
    if (err != NULL) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "%s in upstream \"%.*s\" in "
                     "%s:%lu", err, (int) text.len, text.data, us->file.data,
                     (unsigned long) us->line);
        return RX_ERROR;
    }
    return RX_OK;
}

/* -t's descriptor budget (core/conf_check.c): how many upstream
 * connections a worker may hold (bounded only when every server of every
 * group has max_conns) and how many idle ones its keepalive pools keep. */
static void
budget(rx_cycle_t *cycle, rx_http_upstream_main_conf_t *umcf)
{
    rx_http_upstream_srv_conf_t **all = umcf->upstreams.elts;
    rx_uint_t                     i, j, max = 0, idle = 0;
    bool                          bounded = umcf->upstreams.nelts > 0;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        rx_http_upstream_server_t *s = all[i]->servers
                                       ? all[i]->servers->elts : NULL;

        idle += all[i]->keepalive;
        for (j = 0; s && j < all[i]->servers->nelts; j++) {
            rx_uint_t n = s[j].resolve ? RX_HTTP_UPSTREAM_RESOLVE_MAX
                          : s[j].addrs ? s[j].addrs->nelts : 1;

            if (s[j].max_conns == 0) {
                bounded = false;
            }
            max += s[j].max_conns * n;
        }
    }
    cycle->budget_upstream_max = bounded ? max : 0;
    cycle->budget_upstream_idle = idle;
}

static const char *
init_main_conf(rx_conf_t *cf, void *conf)
{
    rx_http_upstream_main_conf_t *umcf = conf;
    rx_http_upstream_srv_conf_t **all = umcf->upstreams.elts;
    rx_uint_t                     i;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        rx_http_upstream_srv_conf_t *us = all[i];

        if (us->implicit && us->servers == NULL
            && implicit_servers(cf, us) != RX_OK) {
            return RX_CONF_ERROR;
        }
        rx_conf_init_uint(us->keepalive_requests, 1000);
        rx_conf_init_msec(us->keepalive_time, 3600000);
        rx_conf_init_msec(us->keepalive_timeout, 60000);
        if (rx_http_upstream_init_peers(cf, us) != RX_OK
            || rx_http_upstream_resolve_init(cf, us) != RX_OK
            || (us->balancer && us->balancer->init
                && us->balancer->init(cf, us) != RX_OK)
            || rx_http_upstream_init_shared(cf, us,
                                           rx_http_upstream_learn_init(us)) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    budget(cf->cycle, umcf);
    return RX_CONF_OK;
}
