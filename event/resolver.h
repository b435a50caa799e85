/*
 * resolver.h: the worker's DNS client (nginx's `resolver`). A resolver is
 * made from its directive at load time (name servers, valid=, ipv4=,
 * ipv6=); each worker then asks through its own ring: UDP to one name
 * server at a time (round robin, the next one every 5 s while no answer
 * comes), TCP when an answer is truncated, the answers cached per worker
 * for their TTL (or valid=). Concurrent lookups of one name share one
 * query. Failures are nginx's codes: 1..5 (the DNS rcode) or 110
 * (timed out), with nginx's texts (rx_dns_strerror).
 */
#ifndef RX_RESOLVER_H
#define RX_RESOLVER_H

#include "event.h"
#include "inet.h"
#include "dns.h"

typedef struct rx_resolver_s       rx_resolver_t;
typedef struct rx_resolver_ctx_s   rx_resolver_ctx_t;
typedef struct rx_resolver_node_s  rx_resolver_node_t;

/* One lookup, owned by its caller (e.g. in a request's pool). */
struct rx_resolver_ctx_s {
    /* set by the caller */
    rx_str_t              name;        /* a trailing dot is dropped */
    rx_msec_t             timeout;     /* resolver_timeout */
    void                (*handler)(rx_resolver_ctx_t *ctx);
    void                 *data;
    /* the answer: state 0 with naddrs >= 1 addresses (port 0), else a
     * code; addrs is valid during the handler (or, after rx_resolve_name
     * returned RX_OK, until the caller returns to the loop): copy it.
     * Take them from addrs[first] on, wrapping, to spread the load. */
    unsigned              state;
    const rx_sockaddr_t  *addrs;
    rx_uint_t             naddrs;
    rx_uint_t             first;
    rx_msec_t             valid;       /* rx_current_msec until which it holds */
    /* the resolver's */
    rx_resolver_node_t   *node;        /* waiting for its answer */
    rx_resolver_ctx_t    *prev;
    rx_resolver_ctx_t    *next;
    rx_timer_t            timer;
};

/*
 * From the directive's arguments (`resolver address ... [valid=time]
 * [ipv4=on|off] [ipv6=on|off] [status_zone=zone]`): addresses may be
 * names, resolved now as nginx does. NULL when an argument is wrong
 * (logged with file:line).
 */
rx_resolver_t *rx_resolver_create(rx_conf_t *cf, const rx_str_t *args,
    rx_uint_t n);
/* The directive's setter: an rx_resolver_t * at cmd->offset of conf,
 * NULL until set ("is duplicate" the second time). */
const char *rx_resolver_set_slot(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/*
 * Starts a lookup. RX_OK: answered at once (the cache, an address
 * literal, a name that cannot be asked); the handler is not called.
 * RX_AGAIN: the handler is called later from the loop, once.
 * RX_ERROR: out of memory. A lookup still waiting is withdrawn with
 * rx_resolve_cancel (harmless otherwise).
 */
rx_int_t rx_resolve_name(rx_resolver_t *r, rx_resolver_ctx_t *ctx);
void rx_resolve_cancel(rx_resolver_ctx_t *ctx);

/* worker_loop.c: a completion of kind RX_OP_DNS. */
void rx_resolver_handle_cqe(const rx_cqe_t *cqe);

#endif /* RX_RESOLVER_H */
