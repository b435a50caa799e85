/*
 * resolver_int.h: what resolver.c (lookups, the cache, answers) and
 * resolver_io.c (the sockets on the ring) share. Nothing else includes it.
 */
#ifndef RX_RESOLVER_INT_H
#define RX_RESOLVER_INT_H

#include "resolver.h"

#define RX_RESOLVER_BUCKETS  256
#define RX_RESOLVER_RESEND   5000     /* ms: the next name server (nginx) */

typedef struct rx_dns_ep_s rx_dns_ep_t;

struct rx_resolver_s {
    rx_sockaddr_t        *servers;    /* port set (53 by default) */
    rx_str_t             *names;      /* "127.0.0.1:53", for log lines */
    rx_uint_t             nservers;
    rx_msec_t             valid;      /* valid=; 0: the answers' TTL */
    bool                  ipv4;
    bool                  ipv6;
    /* this worker's (each worker has its copy after fork) */
    rx_dns_ep_t         **udp;        /* a socket per server, made when needed */
    rx_uint_t             last;       /* round robin of new queries */
    rx_resolver_node_t   *buckets[RX_RESOLVER_BUCKETS];
    rx_resolver_node_t   *lru_head;   /* most recently used first */
    rx_resolver_node_t   *lru_tail;
    rx_uint_t             nnodes;
};

/* One question (A or AAAA) of a name. */
typedef struct {
    bool                  pending;    /* asked, no usable answer yet */
    bool                  tcp;        /* truncated over UDP: TCP now */
    uint16_t              id;
    unsigned              code;       /* the answer's rcode */
    uint32_t              ttl;
    rx_uint_t             n;
    uint8_t               addrs[RX_DNS_MAX_ADDRS][16];
    uint8_t               packet[RX_DNS_QUERY_MAX];
    size_t                len;
    rx_dns_ep_t          *ep;         /* its TCP connection, if any */
} rx_resolver_query_t;

/* A name: the query in flight and its waiters, then the cached answer. */
struct rx_resolver_node_s {
    rx_resolver_t        *r;
    rx_resolver_node_t   *hnext;      /* hash chain */
    rx_resolver_node_t   *lprev;      /* LRU */
    rx_resolver_node_t   *lnext;
    char                  name[RX_DNS_NAME_MAX + 1];   /* lower case */
    size_t                len;
    uint32_t              hash;
    rx_resolver_ctx_t    *waiting;
    bool                  querying;
    bool                  notifying;  /* handlers run: not to be freed */
    rx_uint_t             server;     /* the one asked now */
    rx_resolver_query_t   q[2];       /* A, AAAA */
    rx_timer_t            resend;
    rx_sockaddr_t        *addrs;      /* the answer (port 0), malloc'd */
    rx_uint_t             naddrs;
    rx_uint_t             rotate;
    rx_msec_t             valid_until;
    rx_msec_t             used;
};

/* resolver_io.c: sends q of node to node->server (UDP, or TCP when
 * q->tcp); a failure is logged and left to the resend timer. */
void rx_resolver_send(rx_resolver_node_t *node, rx_resolver_query_t *q);
/* Drops q's TCP connection (if any). */
void rx_resolver_tcp_drop(rx_resolver_query_t *q);

/* The cycle goes (a worker exiting, its ring already gone): r's sockets
 * are closed and freed without touching the ring. */
void rx_resolver_io_release(rx_resolver_t *r);

/* resolver.c: a message from a name server (q: the TCP query it came
 * on, NULL for UDP). */
void rx_resolver_answer(rx_resolver_t *r, rx_uint_t server,
    const uint8_t *buf, size_t n, rx_resolver_query_t *q);

#endif /* RX_RESOLVER_INT_H */
