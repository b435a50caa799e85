/*
 * resolver_io.c: the resolver's sockets, driven by the worker's ring:
 * one connected UDP socket per name server (made at its first query, kept
 * for the worker's life, a recv always armed), and a TCP connection per
 * truncated question (connect, send the length-prefixed query, read the
 * length-prefixed answer, close). They are not connections of the
 * connection table: their completions carry RX_OP_DNS, and
 * worker_loop.c hands those to rx_resolver_handle_cqe. As for
 * connections, a socket is closed only once the kernel gave back every
 * operation on it (cancel, wait, close).
 */
#include <netinet/tcp.h>
#include "event.h"
#include "resolver_int.h"

#define UDP_BUF      4096
#define TCP_BUF      (2 + 65535)
#define SEND_SLOTS   16            /* UDP queries in flight per socket */
#define MAX_EPS      65536

/* user_data: slot = endpoint index | sub-operation << 16 | send slot << 20 */
enum { EP_RECV = 1, EP_SEND, EP_CONNECT, EP_CANCEL };

struct rx_dns_ep_s {
    int                   fd;
    uint32_t              index;
    uint32_t              inflight;
    bool                  tcp;
    bool                  closing;
    rx_resolver_t        *r;
    rx_uint_t             server;
    rx_resolver_query_t  *q;          /* TCP: the question it carries */
    uint8_t              *in;
    size_t                in_size;
    size_t                have;
    uint16_t              busy;       /* UDP: send slots in use */
    size_t                out_len;    /* TCP: the query with its length */
    size_t                out_sent;
    uint8_t               out[SEND_SLOTS][2 + RX_DNS_QUERY_MAX];
};

typedef struct {
    rx_dns_ep_t  *ep;
    uint32_t      gen;
} ep_slot_t;

static ep_slot_t *table;
static uint32_t   ntable;
static uint32_t  *free_idx;
static uint32_t   nfree;

static rx_log_t *
wlog(void)
{
    return rx_worker.cycle->log;
}

static uint64_t
ud(rx_dns_ep_t *ep, unsigned sub, unsigned slot)
{
    return rx_op_pack(RX_OP_DNS, ep->index | sub << 16 | slot << 20,
                      table[ep->index].gen);
}

static void
ep_log(rx_dns_ep_t *ep, unsigned level, int err, const char *what)
{
    rx_str_t *name = &ep->r->names[ep->server];

    rx_log_error(level, wlog(), err, "%s while resolving, resolver: %.*s",
                 what, (int) name->len, name->data);
}

static rx_dns_ep_t *
ep_new(rx_resolver_t *r, rx_uint_t server, bool tcp)
{
    rx_sockaddr_t *sa = &r->servers[server];
    rx_dns_ep_t   *ep;
    uint32_t       index;
    int            fd, one = 1;

    if (nfree == 0) {
        ep_slot_t *t;
        uint32_t  *f, n = ntable ? ntable * 2 : 16, i;

        if (n > MAX_EPS || (t = realloc(table, n * sizeof(*t))) == NULL) {
            return NULL;
        }
        table = t;
        if ((f = realloc(free_idx, n * sizeof(*f))) == NULL) {
            return NULL;
        }
        free_idx = f;
        for (i = n; i > ntable; i--) {
            table[i - 1].ep = NULL;
            table[i - 1].gen = 0;
            free_idx[nfree++] = i - 1;
        }
        ntable = n;
    }
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        return NULL;
    }
    ep->in_size = tcp ? TCP_BUF : UDP_BUF;
    ep->in = malloc(ep->in_size);
    fd = socket(sa->u.sa.sa_family, (tcp ? SOCK_STREAM : SOCK_DGRAM)
                | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ep->in == NULL || fd == -1) {
        if (fd == -1) {
            rx_log_error(RX_LOG_ALERT, wlog(), errno, "socket() failed while "
                         "resolving, resolver: %.*s",
                         (int) r->names[server].len, r->names[server].data);
        }
        free(ep->in);
        free(ep);
        return NULL;
    }
    /* a UDP socket's connect only sets its peer (and filters what it
     * receives to that peer): local, it does not wait on the network */
    if (!tcp && connect(fd, &sa->u.sa, sa->len) == -1) {
        rx_log_error(RX_LOG_ERR, wlog(), errno, "connect() failed while "
                     "resolving, resolver: %.*s",
                     (int) r->names[server].len, r->names[server].data);
        close(fd);
        free(ep->in);
        free(ep);
        return NULL;
    }
    if (tcp) {
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    index = free_idx[--nfree];
    table[index].ep = ep;
    ep->index = index;
    ep->fd = fd;
    ep->tcp = tcp;
    ep->r = r;
    ep->server = server;
    return ep;
}

static void
ep_free(rx_dns_ep_t *ep)
{
    ep_slot_t *s = &table[ep->index];

    close(ep->fd);
    s->ep = NULL;
    s->gen = (s->gen + 1) & RX_OP_GEN_MASK;
    free_idx[nfree++] = ep->index;
    free(ep->in);
    free(ep);
}

static void
ep_close(rx_dns_ep_t *ep)
{
    if (ep->closing) {
        return;
    }
    ep->closing = true;
    if (ep->q) {
        ep->q->ep = NULL;
        ep->q = NULL;
    }
    if (ep->inflight == 0) {
        ep_free(ep);
        return;
    }
    rx_ring_cancel_fd(ep->fd, ud(ep, EP_CANCEL, 0));
    ep->inflight++;
}

static void
arm_recv(rx_dns_ep_t *ep)
{
    rx_ring_recv(ep->fd, ep->in + ep->have, (unsigned) (ep->in_size - ep->have),
                 ud(ep, EP_RECV, 0));
    ep->inflight++;
}

static void
tcp_send(rx_dns_ep_t *ep)
{
    rx_ring_send(ep->fd, ep->out[0] + ep->out_sent,
                 (unsigned) (ep->out_len - ep->out_sent), MSG_NOSIGNAL,
                 ud(ep, EP_SEND, 0));
    ep->inflight++;
}

void
rx_resolver_send(rx_resolver_node_t *node, rx_resolver_query_t *q)
{
    rx_resolver_t *r = node->r;
    rx_dns_ep_t   *ep;
    unsigned       slot;

    if (q->tcp) {
        ep = ep_new(r, node->server, true);
        if (ep == NULL) {
            return;
        }
        ep->q = q;
        q->ep = ep;
        ep->out[0][0] = (uint8_t) (q->len >> 8);
        ep->out[0][1] = (uint8_t) q->len;
        memcpy(ep->out[0] + 2, q->packet, q->len);
        ep->out_len = q->len + 2;
        rx_ring_connect(ep->fd, &r->servers[node->server].u.sa,
                        r->servers[node->server].len, ud(ep, EP_CONNECT, 0));
        ep->inflight++;
        return;
    }
    ep = r->udp[node->server];
    if (ep == NULL) {
        ep = ep_new(r, node->server, false);
        if (ep == NULL) {
            return;
        }
        r->udp[node->server] = ep;
        arm_recv(ep);
    }
    for (slot = 0; slot < SEND_SLOTS && (ep->busy >> slot) & 1; slot++) {
        /* the query is copied: its node may go before the send completes */
    }
    if (slot == SEND_SLOTS) {
        return;                    /* a burst: the resend timer asks again */
    }
    ep->busy |= (uint16_t) (1u << slot);
    memcpy(ep->out[slot], q->packet, q->len);
    rx_ring_send(ep->fd, ep->out[slot], (unsigned) q->len, 0,
                 ud(ep, EP_SEND, slot));
    ep->inflight++;
}

void
rx_resolver_tcp_drop(rx_resolver_query_t *q)
{
    if (q->ep) {
        ep_close(q->ep);
    }
}

void
rx_resolver_io_release(rx_resolver_t *r)
{
    uint32_t i;

    for (i = 0; i < ntable; i++) {
        rx_dns_ep_t *ep = table[i].ep;

        if (ep && ep->r == r) {
            if (ep->q) {
                ep->q->ep = NULL;
            }
            ep->inflight = 0;
            ep_free(ep);
        }
    }
}

static void
on_recv(rx_dns_ep_t *ep, int32_t res)
{
    size_t len;

    if (res < 0) {
        if (res != -ECANCELED && res != -EINTR && res != -EAGAIN) {
            ep_log(ep, RX_LOG_ERR, -res, "recv() failed");
        }
        if (ep->tcp) {
            ep_close(ep);
        } else if (res != -ECANCELED) {
            arm_recv(ep);
        }
        return;
    }
    if (!ep->tcp) {
        rx_resolver_answer(ep->r, ep->server, ep->in, (size_t) res, NULL);
        arm_recv(ep);
        return;
    }
    if (res == 0) {
        ep_log(ep, RX_LOG_ERR, 0, "connection closed prematurely");
        ep_close(ep);
        return;
    }
    ep->have += (size_t) res;
    len = ep->have >= 2 ? ((size_t) ep->in[0] << 8 | ep->in[1]) : SIZE_MAX;
    if (len != SIZE_MAX && ep->have >= 2 + len) {
        rx_resolver_query_t *q = ep->q;

        /* detached first: the answer may end the question, which would
         * drop this connection under us */
        ep->q = NULL;
        if (q) {
            q->ep = NULL;
        }
        rx_resolver_answer(ep->r, ep->server, ep->in + 2, len, q);
        ep_close(ep);
        return;
    }
    arm_recv(ep);
}

void
rx_resolver_handle_cqe(const rx_cqe_t *cqe)
{
    uint32_t     slot = rx_op_slot(cqe->user_data), index = slot & 0xffff;
    unsigned     sub = (slot >> 16) & 0xf, sslot = slot >> 20;
    rx_dns_ep_t *ep;

    if (index >= ntable || (ep = table[index].ep) == NULL
        || table[index].gen != rx_op_gen(cqe->user_data)) {
        return;
    }
    ep->inflight--;
    if (ep->closing) {
        if (ep->inflight == 0) {
            ep_free(ep);
        }
        return;
    }
    switch (sub) {
    case EP_RECV:
        on_recv(ep, cqe->res);
        break;
    case EP_SEND:
        if (!ep->tcp) {
            ep->busy &= (uint16_t) ~(1u << sslot);
            if (cqe->res < 0) {
                ep_log(ep, RX_LOG_ERR, -cqe->res, "send() failed");
            }
            break;
        }
        if (cqe->res < 0) {
            ep_log(ep, RX_LOG_ERR, -cqe->res, "send() failed");
            ep_close(ep);
            break;
        }
        ep->out_sent += (size_t) cqe->res;
        if (ep->out_sent < ep->out_len) {
            tcp_send(ep);
        } else {
            arm_recv(ep);
        }
        break;
    case EP_CONNECT:
        if (cqe->res < 0) {
            ep_log(ep, RX_LOG_ERR, -cqe->res, "connect() failed");
            ep_close(ep);
            break;
        }
        tcp_send(ep);
        break;
    default:
        break;
    }
    /* ep may be gone here: ep_close frees it when nothing is in flight */
}
