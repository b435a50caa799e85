/*
 * resolver.c: the `resolver` directive's object, lookups, the per-worker
 * cache of answers and the matching of answers to queries (see
 * resolver.h). The sockets are resolver_io.c's, the wire format dns.c's.
 */
#include <ctype.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include "event.h"
#include "clock.h"
#include "conf.h"
#include "resolver_int.h"

#define EXPIRE      30000      /* ms an unused answer stays (nginx: 30 s) */
#define MAX_NODES   1000       /* names kept per resolver and worker */

static rx_log_t *
wlog(void)
{
    return rx_worker.cycle->log;
}

/* --- configuration ---------------------------------------------------- */

static bool
on_off(const rx_str_t *v, size_t skip, bool *flag)
{
    rx_str_t s = { v->len - skip, (char *) v->data + skip };

    if (rx_str_eq(&s, "on")) {
        *flag = true;
    } else if (rx_str_eq(&s, "off")) {
        *flag = false;
    } else {
        return false;
    }
    return true;
}

/* The cycle's pool goes: in a worker, its cache and sockets with it. */
static void
resolver_cleanup(void *data)
{
    rx_resolver_t      *r = data;
    rx_resolver_node_t *node, *next;
    rx_uint_t           i;

    rx_resolver_io_release(r);
    for (i = 0; i < RX_RESOLVER_BUCKETS; i++) {
        for (node = r->buckets[i]; node; node = next) {
            next = node->hnext;
            free(node->addrs);
            free(node);
        }
        r->buckets[i] = NULL;
    }
    r->lru_head = r->lru_tail = NULL;
    r->nnodes = 0;
}

/* The name servers, and their names for the log. */
static rx_int_t
name_servers(rx_conf_t *cf, rx_resolver_t *r, rx_array_t *addrs)
{
    rx_sockaddr_t *a;
    rx_uint_t      j;

    r->nservers = addrs->nelts;
    r->servers = addrs->elts;
    r->names = rx_pcalloc(cf->pool, r->nservers * sizeof(rx_str_t));
    r->udp = rx_pcalloc(cf->pool, r->nservers * sizeof(rx_dns_ep_t *));
    if (r->names == NULL || r->udp == NULL) {
        return RX_ERROR;
    }
    a = r->servers;
    for (j = 0; j < r->nservers; j++) {
        char   text[RX_SOCKADDR_STRLEN];
        size_t len = rx_sock_ntop(&a[j], text, sizeof(text), true);

        r->names[j].data = rx_pstrdup_c(cf->pool, text, len);
        if (r->names[j].data == NULL) {
            return RX_ERROR;
        }
        r->names[j].len = len;
    }
    return RX_OK;
}

rx_resolver_t *
rx_resolver_create(rx_conf_t *cf, const rx_str_t *args, rx_uint_t n)
{
    rx_resolver_t *r = rx_pcalloc(cf->pool, sizeof(*r));
    rx_pool_cleanup_t *cln;
    rx_array_t    *addrs = rx_array_create(cf->pool, 2, sizeof(rx_sockaddr_t));
    rx_uint_t      i;
    const char    *err;

    if (r == NULL || addrs == NULL) {
        return NULL;
    }
    cln = rx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        return NULL;
    }
    cln->handler = resolver_cleanup;
    cln->data = r;
    r->ipv4 = r->ipv6 = true;
    for (i = 0; i < n; i++) {
        const rx_str_t *v = &args[i];

        if (v->len > 6 && strncmp(v->data, "valid=", 6) == 0) {
            rx_str_t s = { v->len - 6, (char *) v->data + 6 };
            rx_int_t t = rx_parse_time(&s, false);

            if (t < 0) {
                goto invalid;
            }
            r->valid = (rx_msec_t) t;
        } else if (v->len >= 5 && strncmp(v->data, "ipv4=", 5) == 0) {
            if (!on_off(v, 5, &r->ipv4)) {
                goto invalid;
            }
        } else if (v->len >= 5 && strncmp(v->data, "ipv6=", 5) == 0) {
            if (!on_off(v, 5, &r->ipv6)) {
                goto invalid;
            }
        } else if (v->len > 12 && strncmp(v->data, "status_zone=", 12) == 0) {
            continue;          /* nginx Plus's statistics: none here */
        } else {
            if (v->len >= 5 && strncasecmp(v->data, "unix:", 5) == 0) {
                err = "invalid address";
            } else {
                err = rx_parse_addr(cf->pool, v, 53, false, addrs);
            }
            if (err) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in resolver \"%.*s\"",
                                  err, (int) v->len, v->data);
                return NULL;
            }
        }
    }
    if (!r->ipv4 && !r->ipv6) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"ipv4\" and \"ipv6\" cannot "
                          "both be \"off\"");
        return NULL;
    }
    if (addrs->nelts == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "no name servers defined");
        return NULL;
    }
    if (name_servers(cf, r, addrs) != RX_OK) {
        return NULL;
    }
    return r;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter: %.*s",
                      (int) args[i].len, args[i].data);
    return NULL;
}

const char *
rx_resolver_set_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_resolver_t **field = (rx_resolver_t **) ((char *) conf + cmd->offset);
    rx_str_t       *value = cf->args->elts;

    if (*field) {
        return "is duplicate";
    }
    *field = rx_resolver_create(cf, value + 1, cf->args->nelts - 1);
    return *field ? RX_CONF_OK : RX_CONF_ERROR;
}

/* --- the cache -------------------------------------------------------- */

static uint32_t
hash_name(const char *name, size_t len)
{
    uint32_t h = 2166136261u;
    size_t   i;

    for (i = 0; i < len; i++) {
        h = (h ^ (uint8_t) name[i]) * 16777619u;
    }
    return h;
}

static rx_resolver_node_t *
lookup(rx_resolver_t *r, const char *name, size_t len, uint32_t hash)
{
    rx_resolver_node_t *node;

    for (node = r->buckets[hash % RX_RESOLVER_BUCKETS]; node;
         node = node->hnext) {
        if (node->hash == hash && node->len == len
            && memcmp(node->name, name, len) == 0) {
            return node;
        }
    }
    return NULL;
}

static void
lru_remove(rx_resolver_t *r, rx_resolver_node_t *node)
{
    if (node->lprev == NULL && r->lru_head != node) {
        return;                          /* a new node: not listed yet */
    }
    if (node->lprev) {
        node->lprev->lnext = node->lnext;
    } else {
        r->lru_head = node->lnext;
    }
    if (node->lnext) {
        node->lnext->lprev = node->lprev;
    } else {
        r->lru_tail = node->lprev;
    }
    node->lprev = node->lnext = NULL;
}

static void
lru_touch(rx_resolver_t *r, rx_resolver_node_t *node)
{
    lru_remove(r, node);
    node->lnext = r->lru_head;
    if (r->lru_head) {
        r->lru_head->lprev = node;
    } else {
        r->lru_tail = node;
    }
    r->lru_head = node;
    node->used = rx_current_msec;
}

/* Out of the hash: later lookups of the name start afresh. */
static void
unhash(rx_resolver_t *r, rx_resolver_node_t *node)
{
    rx_resolver_node_t **p = &r->buckets[node->hash % RX_RESOLVER_BUCKETS];

    for ( ; *p; p = &(*p)->hnext) {
        if (*p == node) {
            *p = node->hnext;
            break;
        }
    }
    node->hnext = NULL;
}

/* No waiter is left (the caller made sure). */
static void
node_free(rx_resolver_node_t *node)
{
    rx_resolver_t *r = node->r;

    unhash(r, node);
    lru_remove(r, node);
    rx_timer_del(&node->resend);
    rx_resolver_tcp_drop(&node->q[0]);
    rx_resolver_tcp_drop(&node->q[1]);
    free(node->addrs);
    free(node);
    r->nnodes--;
}

/* Answers unused for EXPIRE, from the least recently used on; the
 * oldest beyond MAX_NODES too. */
static void
expire(rx_resolver_t *r)
{
    rx_resolver_node_t *node = r->lru_tail, *prev;

    for ( ; node; node = prev) {
        prev = node->lprev;
        if (node->querying || node->notifying || node->waiting) {
            continue;
        }
        if (rx_current_msec - node->used < EXPIRE && r->nnodes <= MAX_NODES) {
            break;
        }
        node_free(node);
    }
}

/* --- queries ---------------------------------------------------------- */

/* Query ids that an off-path host cannot guess: from the kernel's
 * generator, a batch at a time. */
static uint16_t
random_id(void)
{
    static uint16_t pool[128];
    static size_t   left;

    if (left == 0) {
        ssize_t got = getrandom(pool, sizeof(pool), GRND_NONBLOCK);

        if (got != (ssize_t) sizeof(pool)) {
            size_t i;

            for (i = 0; i < 128; i++) {
                pool[i] = (uint16_t) random();
            }
        }
        left = 128;
    }
    return pool[--left];
}

static void resend_handler(rx_timer_t *t);

static void
start_query(rx_resolver_t *r, rx_resolver_node_t *node)
{
    static const uint16_t types[2] = { RX_DNS_A, RX_DNS_AAAA };
    bool                  want[2] = { r->ipv4, r->ipv6 };
    int                   i;

    node->querying = true;
    node->server = r->last++ % r->nservers;
    free(node->addrs);
    node->addrs = NULL;
    node->naddrs = 0;
    for (i = 0; i < 2; i++) {
        rx_resolver_query_t *q = &node->q[i];

        rx_resolver_tcp_drop(q);
        memset(q, 0, offsetof(rx_resolver_query_t, packet));
        if (!want[i]) {
            continue;
        }
        q->pending = true;
        q->id = random_id();
        q->len = rx_dns_query(q->packet, q->id, node->name, node->len,
                              types[i]);
        rx_resolver_send(node, q);
    }
    node->resend.handler = resend_handler;
    node->resend.data = node;
    rx_timer_add(&node->resend, RX_RESOLVER_RESEND);
}

/* No answer within 5 s: the next name server is asked; a name nobody
 * waits for any more is given up. */
static void
resend_handler(rx_timer_t *t)
{
    rx_resolver_node_t *node = t->data;
    rx_resolver_t      *r = node->r;
    int                 i;

    if (node->waiting == NULL) {
        node_free(node);
        return;
    }
    node->server = (node->server + 1) % r->nservers;
    for (i = 0; i < 2; i++) {
        if (node->q[i].pending) {
            rx_resolver_tcp_drop(&node->q[i]);
            rx_resolver_send(node, &node->q[i]);
        }
    }
    rx_timer_add(&node->resend, RX_RESOLVER_RESEND);
}

static void
ctx_unlink(rx_resolver_ctx_t *ctx)
{
    rx_resolver_node_t *node = ctx->node;

    if (ctx->prev) {
        ctx->prev->next = ctx->next;
    } else {
        node->waiting = ctx->next;
    }
    if (ctx->next) {
        ctx->next->prev = ctx->prev;
    }
    ctx->prev = ctx->next = NULL;
    ctx->node = NULL;
    rx_timer_del(&ctx->timer);
}

static void
ctx_timeout(rx_timer_t *t)
{
    rx_resolver_ctx_t *ctx = t->data;

    if (ctx->node) {
        ctx_unlink(ctx);
    }
    ctx->state = RX_DNS_TIMEDOUT;
    ctx->naddrs = 0;
    ctx->handler(ctx);
}

static void
export(rx_resolver_node_t *node, rx_resolver_ctx_t *ctx, bool rotate)
{
    ctx->state = 0;
    ctx->addrs = node->addrs;
    ctx->naddrs = node->naddrs;
    ctx->first = rotate ? node->rotate++ % node->naddrs : 0;
    ctx->valid = node->valid_until;
}

/* The answer is complete: every waiter hears it; a failure is not kept. */
static void
finish(rx_resolver_node_t *node)
{
    rx_resolver_t     *r = node->r;
    rx_resolver_ctx_t *ctx;
    rx_uint_t          i, j, n = node->q[0].n + node->q[1].n;
    unsigned           code = 0;
    uint32_t           ttl = UINT32_MAX;

    node->querying = false;
    rx_timer_del(&node->resend);
    rx_resolver_tcp_drop(&node->q[0]);
    rx_resolver_tcp_drop(&node->q[1]);
    if (n) {
        node->addrs = calloc(n, sizeof(rx_sockaddr_t));
    }
    if (n == 0 || node->addrs == NULL) {
        code = node->q[0].code ? node->q[0].code : node->q[1].code;
        code = code ? code : RX_DNS_NXDOMAIN;
        if (n) {
            code = RX_DNS_SERVFAIL;                 /* out of memory */
        }
        unhash(r, node);
    }
    for (i = 0; code == 0 && i < 2; i++) {
        rx_resolver_query_t *q = &node->q[i];

        if (q->n) {
            ttl = rx_min(ttl, q->ttl);
        }
        for (j = 0; j < q->n; j++) {
            rx_sockaddr_t *a = &node->addrs[node->naddrs++];

            if (i == 0) {
                a->len = sizeof(struct sockaddr_in);
                a->u.sin.sin_family = AF_INET;
                memcpy(&a->u.sin.sin_addr, q->addrs[j], 4);
            } else {
                a->len = sizeof(struct sockaddr_in6);
                a->u.sin6.sin6_family = AF_INET6;
                memcpy(&a->u.sin6.sin6_addr, q->addrs[j], 16);
            }
        }
    }
    node->valid_until = rx_current_msec
                        + (r->valid ? r->valid : (rx_msec_t) ttl * 1000);
    node->notifying = true;
    while ((ctx = node->waiting) != NULL) {
        ctx_unlink(ctx);
        if (code) {
            ctx->state = code;
            ctx->naddrs = 0;
        } else {
            export(node, ctx, false);
        }
        ctx->handler(ctx);
    }
    node->notifying = false;
    if (code) {
        node_free(node);
    }
}

/* --- answers ---------------------------------------------------------- */

void
rx_resolver_answer(rx_resolver_t *r, rx_uint_t server, const uint8_t *buf,
    size_t n, rx_resolver_query_t *tcp)
{
    static rx_dns_answer_t  a;
    rx_resolver_node_t     *node;
    rx_resolver_query_t    *q;
    const char             *err, *via = tcp ? "TCP" : "UDP";
    size_t                  end;

    err = rx_dns_parse_question(buf, n, &a, &end);
    if (err) {
        goto invalid;
    }
    node = lookup(r, a.qname, a.qname_len, hash_name(a.qname, a.qname_len));
    q = node == NULL || !node->querying ? NULL
        : a.qtype == RX_DNS_A ? &node->q[0]
        : a.qtype == RX_DNS_AAAA ? &node->q[1] : NULL;
    if (q == NULL || !q->pending || (tcp != NULL && tcp != q)) {
        rx_log_error(RX_LOG_ERR, wlog(), 0, "unexpected DNS response for %s, "
                     "resolver: %.*s", a.qname, (int) r->names[server].len,
                     r->names[server].data);
        return;
    }
    if (a.id != q->id) {
        rx_log_error(RX_LOG_ERR, wlog(), 0, "wrong ident %u in DNS response "
                     "for %s, expect %u, resolver: %.*s", a.id, a.qname, q->id,
                     (int) r->names[server].len, r->names[server].data);
        return;
    }
    if (q->tcp && tcp == NULL) {
        return;                  /* a late UDP answer: TCP's is awaited */
    }
    if (a.truncated) {
        if (tcp) {
            err = "invalid TCP DNS response";
            goto invalid;
        }
        q->tcp = true;           /* the same question, over TCP */
        rx_resolver_send(node, q);
        return;
    }
    if (a.rcode == 0) {
        err = rx_dns_parse_answers(buf, n, end, &a);
        if (err) {
            goto invalid;
        }
    }
    q->pending = false;
    q->code = a.rcode;
    q->n = a.rcode ? 0 : a.naddrs;
    q->ttl = a.ttl;
    memcpy(q->addrs, a.addrs, q->n * sizeof(a.addrs[0]));
    rx_resolver_tcp_drop(q);
    if (!node->q[0].pending && !node->q[1].pending) {
        finish(node);
    }
    return;

invalid:
    /* ignored: the resend timer or the waiters' timeout go on */
    rx_log_error(RX_LOG_ERR, wlog(), 0, "%s (%s), resolver: %.*s", err, via,
                 (int) r->names[server].len, r->names[server].data);
}

/* --- lookups ---------------------------------------------------------- */

/* An address written as such needs no name server. */
static bool
literal(rx_resolver_ctx_t *ctx, const char *name)
{
    static rx_sockaddr_t a;

    memset(&a, 0, sizeof(a));
    if (inet_pton(AF_INET, name, &a.u.sin.sin_addr) == 1) {
        a.len = sizeof(struct sockaddr_in);
        a.u.sin.sin_family = AF_INET;
    } else if (inet_pton(AF_INET6, name, &a.u.sin6.sin6_addr) == 1) {
        a.len = sizeof(struct sockaddr_in6);
        a.u.sin6.sin6_family = AF_INET6;
    } else {
        return false;
    }
    ctx->state = 0;
    ctx->addrs = &a;
    ctx->naddrs = 1;
    ctx->first = 0;
    ctx->valid = rx_current_msec;
    return true;
}

rx_int_t
rx_resolve_name(rx_resolver_t *r, rx_resolver_ctx_t *ctx)
{
    char                name[RX_DNS_NAME_MAX + 1];
    rx_resolver_node_t *node;
    size_t              i, len = ctx->name.len;
    uint32_t            hash;
    uint8_t             probe[RX_DNS_QUERY_MAX];

    ctx->node = NULL;
    ctx->prev = ctx->next = NULL;
    ctx->timer.node.index = RX_HEAP_NONE;
    ctx->timer.handler = ctx_timeout;
    ctx->timer.data = ctx;
    ctx->naddrs = 0;
    if (len && ctx->name.data[len - 1] == '.') {
        len--;
    }
    if (len > RX_DNS_NAME_MAX || rx_dns_query(probe, 0, ctx->name.data, len,
                                              RX_DNS_A) == 0) {
        ctx->state = RX_DNS_NXDOMAIN;       /* nginx: a name it cannot ask */
        return RX_OK;
    }
    for (i = 0; i < len; i++) {
        name[i] = (char) tolower((unsigned char) ctx->name.data[i]);
    }
    name[len] = '\0';
    if (literal(ctx, name)) {
        return RX_OK;
    }
    expire(r);
    hash = hash_name(name, len);
    node = lookup(r, name, len, hash);
    /* an answer being handed out stays good for the handlers' own
     * lookups of the name (with TTL 0 it is already past) */
    if (node && !node->querying && node->naddrs
        && (rx_current_msec < node->valid_until || node->notifying)) {
        lru_touch(r, node);
        export(node, ctx, true);
        return RX_OK;
    }
    if (node == NULL) {
        node = calloc(1, sizeof(*node));
        if (node == NULL) {
            return RX_ERROR;
        }
        node->r = r;
        memcpy(node->name, name, len + 1);
        node->len = len;
        node->hash = hash;
        node->resend.node.index = RX_HEAP_NONE;
        node->hnext = r->buckets[hash % RX_RESOLVER_BUCKETS];
        r->buckets[hash % RX_RESOLVER_BUCKETS] = node;
        r->nnodes++;
    }
    lru_touch(r, node);
    if (!node->querying) {
        start_query(r, node);
    }
    ctx->node = node;
    ctx->next = node->waiting;
    if (node->waiting) {
        node->waiting->prev = ctx;
    }
    node->waiting = ctx;
    ctx->state = 0;
    rx_timer_add(&ctx->timer, ctx->timeout);
    return RX_AGAIN;
}

void
rx_resolve_cancel(rx_resolver_ctx_t *ctx)
{
    if (ctx->node) {
        ctx_unlink(ctx);             /* its timer goes with it */
    }
}
