/*
 * http_upstream_resolve.c: upstream addresses found while running, through
 * the resolver (event/resolver.c).
 *
 * - proxy_pass / fastcgi_pass with variables whose host is no upstream
 *   block: the request gets its own peers in its pool, one per address
 *   (nginx's "resolved" upstream): from the text itself for an IP address
 *   or unix:, else from the location's resolver once the exchange starts.
 * - `server NAME resolve` in an upstream block: each worker looks the
 *   name up at its start and again when the answer's TTL (or valid=) ends,
 *   and fills or empties the server's fixed slots of peers
 *   (RX_HTTP_UPSTREAM_RESOLVE_MAX), so that the peer array, its indexes
 *   and the requests' tried-bits never move. A slot is refilled only once
 *   no connection of its old address is left.
 */
#include <arpa/inet.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"
#include "resolver.h"

typedef struct rx_http_upstream_lookup_s {
    rx_resolver_ctx_t    ctx;
    rx_http_upstream_t  *u;
    rx_str_t             host;        /* as written, for the log */
    in_port_t            port;
    rx_resolver_t       *resolver;
    /* the exchange's, called with the answer (0: u->us is set) */
    void               (*done)(rx_http_upstream_t *u, rx_int_t status);
} lookup_t;

/* --- a request's own peers ------------------------------------------- */

static rx_int_t
build(rx_http_upstream_t *u, const rx_str_t *host, in_port_t port,
    const rx_sockaddr_t *addrs, rx_uint_t n, rx_uint_t first)
{
    rx_pool_t                   *pool = u->r->pool;
    rx_http_upstream_srv_conf_t *us = rx_pcalloc(pool, sizeof(*us));
    rx_http_upstream_server_t   *s;
    rx_uint_t                    i;
    char                        *p;

    if (us == NULL) {
        return RX_ERROR;
    }
    us->host = *host;
    us->port = port;
    us->implicit = true;
    us->servers = rx_array_create(pool, 1, sizeof(rx_http_upstream_server_t));
    s = us->servers ? rx_array_push(us->servers) : NULL;
    us->primary.peer = rx_pcalloc(pool, n * sizeof(rx_http_upstream_peer_t));
    p = rx_pnalloc(pool, host->len + 8);
    if (s == NULL || us->primary.peer == NULL || p == NULL) {
        return RX_ERROR;
    }
    memset(s, 0, sizeof(*s));
    /* "no live upstreams" names the group by this */
    s->name.data = p;
    s->name.len = port ? (size_t) sprintf(p, "%.*s:%u", (int) host->len,
                                          host->data, (unsigned) port)
                       : (size_t) sprintf(p, "%.*s", (int) host->len,
                                          host->data);
    s->weight = 1;
    for (i = 0; i < n; i++) {
        rx_http_upstream_peer_t *peer = &us->primary.peer[i];
        char                     text[RX_SOCKADDR_STRLEN];
        size_t                   len;

        peer->addr = addrs[(first + i) % n];
        if (peer->addr.u.sa.sa_family == AF_INET) {
            peer->addr.u.sin.sin_port = htons(port);
        } else if (peer->addr.u.sa.sa_family == AF_INET6) {
            peer->addr.u.sin6.sin6_port = htons(port);
        }
        len = rx_sock_ntop(&peer->addr, text, sizeof(text), true);
        peer->name.data = rx_pstrdup_c(pool, text, len);
        if (peer->name.data == NULL) {
            return RX_ERROR;
        }
        peer->name.len = len;
        peer->weight = peer->effective_weight = 1;
        peer->max_fails = 1;
        peer->fail_timeout = 10000;
        peer->transient = true;
    }
    us->primary.n = n;
    us->primary.total_weight = (rx_int_t) n;
    u->us = us;
    return RX_OK;
}

/* "[::1]" -> "::1" */
static rx_str_t
bare(const rx_str_t *host)
{
    rx_str_t h = *host;

    if (h.len >= 2 && h.data[0] == '[' && h.data[h.len - 1] == ']') {
        h.data++;
        h.len -= 2;
    }
    return h;
}

static rx_int_t
own_peers(rx_http_upstream_t *u, const rx_str_t *host,
    in_port_t port)
{
    rx_http_request_t       *r = u->r;
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                        rx_http_core_module);
    rx_str_t                 h = bare(host);
    rx_sockaddr_t            a;
    char                     text[64];
    lookup_t                *lk;

    if (host->len > 5 && strncasecmp(host->data, "unix:", 5) == 0) {
        rx_array_t *arr = rx_array_create(r->pool, 1, sizeof(rx_sockaddr_t));

        if (arr == NULL || rx_parse_addr(r->pool, host, 0, false, arr) != NULL) {
            return RX_ERROR;
        }
        return build(u, host, 0, arr->elts, 1, 0);
    }
    memset(&a, 0, sizeof(a));
    if (h.len < sizeof(text)) {
        memcpy(text, h.data, h.len);
        text[h.len] = '\0';
        if (inet_pton(AF_INET, text, &a.u.sin.sin_addr) == 1) {
            a.len = sizeof(struct sockaddr_in);
            a.u.sin.sin_family = AF_INET;
            return build(u, host, port, &a, 1, 0);
        }
        if (inet_pton(AF_INET6, text, &a.u.sin6.sin6_addr) == 1) {
            a.len = sizeof(struct sockaddr_in6);
            a.u.sin6.sin6_family = AF_INET6;
            return build(u, host, port, &a, 1, 0);
        }
    }
    if (clcf->resolver == NULL) {
        return RX_DECLINED;
    }
    lk = rx_pcalloc(r->pool, sizeof(*lk));
    if (lk == NULL) {
        return RX_ERROR;
    }
    lk->u = u;
    lk->host = *host;
    lk->port = port;
    lk->resolver = clcf->resolver;
    lk->ctx.name = h;
    lk->ctx.timeout = clcf->resolver_timeout;
    lk->ctx.data = lk;
    u->lookup = lk;
    return RX_OK;
}

rx_int_t
rx_http_upstream_resolve_host(rx_http_upstream_t *u, const rx_str_t *host,
    in_port_t port)
{
    rx_int_t rc = own_peers(u, host, port);

    if (rc == RX_DECLINED) {
        rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "no resolver defined "
                                  "to resolve %.*s", (int) host->len,
                                  host->data);
        return RX_HTTP_BAD_GATEWAY;
    }
    return rc == RX_OK ? RX_OK : RX_HTTP_INTERNAL_SERVER_ERROR;
}

/* The answer for a request: its peers, or 502 with nginx's line. */
static rx_int_t
answered(lookup_t *lk)
{
    rx_resolver_ctx_t *ctx = &lk->ctx;
    rx_http_upstream_t *u = lk->u;

    if (ctx->state) {
        rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "%.*s could not be "
                                  "resolved (%u: %s)", (int) lk->host.len,
                                  lk->host.data, ctx->state,
                                  rx_dns_strerror(ctx->state));
        return RX_HTTP_BAD_GATEWAY;
    }
    if (build(u, &lk->host, lk->port, ctx->addrs, ctx->naddrs, ctx->first)
        != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    return RX_OK;
}

static void
lookup_handler(rx_resolver_ctx_t *ctx)
{
    lookup_t *lk = ctx->data;
    rx_int_t  rc = answered(lk);

    lk->done(lk->u, rc == RX_OK ? 0 : rc);
}

rx_int_t
rx_http_upstream_lookup_start(rx_http_upstream_t *u,
    void (*done)(rx_http_upstream_t *u, rx_int_t status))
{
    lookup_t *lk = u->lookup;
    rx_int_t  rc;

    if (lk == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    lk->done = done;
    lk->ctx.handler = lookup_handler;
    rc = rx_resolve_name(lk->resolver, &lk->ctx);
    if (rc == RX_AGAIN) {
        return RX_AGAIN;
    }
    if (rc != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    return answered(lk);
}

void
rx_http_upstream_lookup_cancel(rx_http_upstream_t *u)
{
    if (u->lookup) {
        rx_resolve_cancel(&u->lookup->ctx);
    }
}

/* --- `server NAME resolve` --------------------------------------------- */

typedef struct {
    rx_resolver_ctx_t            ctx;
    rx_timer_t                   timer;
    rx_http_upstream_srv_conf_t *us;
    rx_http_upstream_server_t   *s;
    rx_resolver_t               *resolver;
    rx_msec_t                    timeout;
} host_t;

rx_int_t
rx_http_upstream_resolve_init(rx_conf_t *cf, rx_http_upstream_srv_conf_t *us)
{
    rx_http_core_loc_conf_t   *clcf = rx_http_conf_get_module_loc_conf(cf,
                                          rx_http_core_module);
    rx_http_upstream_server_t *s = us->servers->elts;
    rx_uint_t                  i;

    if (!us->resolve) {
        return RX_OK;
    }
    if (us->balancer && strcmp(us->balancer->name, "hash consistent") == 0) {
        /* its ring is built once, from the servers' addresses */
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "load balancing method does "
                     "not support resolving names at run time in upstream "
                     "\"%.*s\" in %s:%lu", (int) us->host.len, us->host.data,
                     us->file.data, (unsigned long) us->line);
        return RX_ERROR;
    }
    if (us->resolver == NULL) {
        us->resolver = clcf->resolver;
    }
    if (us->resolver_timeout == RX_CONF_UNSET_MSEC) {
        us->resolver_timeout = clcf->resolver_timeout;
    }
    if (us->resolver_timeout == RX_CONF_UNSET_MSEC) {
        us->resolver_timeout = 30000;
    }
    if (us->resolver == NULL) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "no resolver defined to "
                     "resolve names at run time in upstream \"%.*s\" in "
                     "%s:%lu", (int) us->host.len, us->host.data,
                     us->file.data, (unsigned long) us->line);
        return RX_ERROR;
    }
    for (i = 0; i < us->servers->nelts; i++) {
        host_t *h;

        if (!s[i].resolve) {
            continue;
        }
        h = rx_pcalloc(cf->pool, sizeof(*h));
        if (h == NULL) {
            return RX_ERROR;
        }
        h->us = us;
        h->s = &s[i];
        h->resolver = us->resolver;
        h->timeout = us->resolver_timeout;
        s[i].host_state = h;
    }
    return RX_OK;
}

/* Connections of an address that went: idle ones close now; busy ones
 * are not pooled when they finish (the slot is absent). */
static void
close_idle(rx_http_upstream_srv_conf_t *us, rx_http_upstream_peer_t *p)
{
    rx_http_upstream_conn_t *uc;

    for (uc = us->idle_head; uc; ) {
        if (uc->peer != p) {
            uc = uc->next;
            continue;
        }
        rx_conn_close(uc->c);          /* takes it off the list */
        uc = us->idle_head;
    }
}

static void
fill(rx_http_upstream_peers_t *ps, rx_http_upstream_peer_t *p,
    const rx_sockaddr_t *a)
{
    p->addr = *a;
    p->name.len = rx_sock_ntop(a, p->name.data, RX_SOCKADDR_STRLEN, true);
    p->absent = false;
    ps->absent--;
    p->fails = 0;
    p->checked = p->accessed = 0;
    p->effective_weight = p->weight;
    p->current_weight = 0;
}

/* The server's slots take the answer's addresses: kept, emptied, filled. */
static void
update(host_t *h, const rx_sockaddr_t *addrs, rx_uint_t n, rx_uint_t first)
{
    rx_http_upstream_server_t *s = h->s;
    rx_http_upstream_peers_t  *ps = s->backup ? &h->us->backup : &h->us->primary;
    rx_http_upstream_peer_t   *slot = s->peers_of;
    rx_sockaddr_t              want[RX_HTTP_UPSTREAM_RESOLVE_MAX];
    bool                       have[RX_HTTP_UPSTREAM_RESOLVE_MAX] = { false };
    rx_uint_t                  i, k, nwant = rx_min(n, RX_HTTP_UPSTREAM_RESOLVE_MAX);

    if (n > RX_HTTP_UPSTREAM_RESOLVE_MAX) {
        rx_log_error(RX_LOG_WARN, rx_worker.cycle->log, 0, "%.*s has %lu "
                     "addresses, upstream \"%.*s\" uses %d of them",
                     (int) s->host.len, s->host.data, (unsigned long) n,
                     (int) h->us->host.len, h->us->host.data,
                     RX_HTTP_UPSTREAM_RESOLVE_MAX);
    }
    for (i = 0; i < nwant; i++) {
        want[i] = addrs[(first + i) % n];
        if (want[i].u.sa.sa_family == AF_INET) {
            want[i].u.sin.sin_port = htons(s->port);
        } else {
            want[i].u.sin6.sin6_port = htons(s->port);
        }
    }
    for (k = 0; k < RX_HTTP_UPSTREAM_RESOLVE_MAX; k++) {
        if (slot[k].absent) {
            continue;
        }
        for (i = 0; i < nwant; i++) {
            if (!have[i] && rx_sockaddr_eq(&slot[k].addr, &want[i])) {
                have[i] = true;
                break;
            }
        }
        if (i == nwant) {
            slot[k].absent = true;
            ps->absent++;
            close_idle(h->us, &slot[k]);
        }
    }
    for (i = 0; i < nwant; i++) {
        if (have[i]) {
            continue;
        }
        for (k = 0; k < RX_HTTP_UPSTREAM_RESOLVE_MAX; k++) {
            /* a slot still holding connections of its old address waits */
            if (slot[k].absent && slot[k].open == 0 && slot[k].conns == 0) {
                fill(ps, &slot[k], &want[i]);
                break;
            }
        }
    }
}

static void host_timer(rx_timer_t *t);

static void
host_answer(rx_resolver_ctx_t *ctx)
{
    host_t    *h = ctx->data;
    rx_msec_t  next = rx_max(h->timeout, 1000);

    if (ctx->state) {
        rx_log_error(RX_LOG_ERR, rx_worker.cycle->log, 0, "%.*s could not be "
                     "resolved (%u: %s) in upstream \"%.*s\"",
                     (int) h->s->host.len, h->s->host.data, ctx->state,
                     rx_dns_strerror(ctx->state), (int) h->us->host.len,
                     h->us->host.data);
        if (ctx->state == RX_DNS_NXDOMAIN) {
            update(h, NULL, 0, 0);          /* the name is gone: so are they */
        }
    } else {
        update(h, ctx->addrs, ctx->naddrs, ctx->first);
        /* again once the answer expires (nginx: a second after) */
        next = (ctx->valid > rx_current_msec ? ctx->valid - rx_current_msec
                                             : 0) + 1000;
    }
    rx_timer_add(&h->timer, next);
}

static void
host_timer(rx_timer_t *t)
{
    host_t   *h = t->data;
    rx_int_t  rc;

    if (rx_worker.quit) {
        return;                  /* a stopping worker asks nothing more */
    }
    h->ctx.name = h->s->host;
    h->ctx.timeout = h->timeout;
    h->ctx.handler = host_answer;
    h->ctx.data = h;
    rc = rx_resolve_name(h->resolver, &h->ctx);
    if (rc == RX_OK) {
        host_answer(&h->ctx);
    } else if (rc == RX_ERROR) {
        rx_timer_add(&h->timer, rx_max(h->timeout, 1000));
    }
}

void
rx_http_upstream_resolve_worker(rx_http_upstream_srv_conf_t *us)
{
    rx_http_upstream_server_t *s = us->servers->elts;
    rx_uint_t                  i;

    for (i = 0; us->resolve && i < us->servers->nelts; i++) {
        host_t *h = s[i].host_state;

        if (h == NULL) {
            continue;
        }
        h->timer.node.index = RX_HEAP_NONE;
        h->timer.handler = host_timer;
        h->timer.data = h;
        rx_timer_add(&h->timer, 0);
    }
}
