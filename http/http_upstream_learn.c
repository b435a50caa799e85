/*
 * http_upstream_learn.c: how many connections a pool on a unix socket (or
 * a loopback address) takes, learned without max_conns.
 *
 * A PHP-FPM child serves one connection until that connection closes. A
 * connection beyond the pool's children waits in the socket's listen
 * backlog, its request unread, while the connections the front end keeps
 * (busy, or idle in its keepalive pool) hold every child; nothing frees a
 * child until one of them closes: nginx's stall of seconds, with nothing
 * logged. For a `server unix:` without max_conns in a group with
 * `keepalive` that fastcgi_pass uses (an HTTP backend serves many
 * connections per process, and a slow read there means a busy process, not
 * a full pool), each worker watches its new connections instead: one whose
 * request is still unread by the peer (SIOCOUTQ: what the receiver has not
 * consumed yet) STUCK_MS after it went out waits in the backlog.
 * A FastCGI responder reads the request's last record (the empty STDIN
 * that ends it) only when it reads its next request, and the kernel
 * counts a message in SIOCOUTQ until the reader consumed all of it: so the
 * first request on a watched connection goes out in two sends, all but
 * its last TAIL bytes, then those. A peer that read the first part leaves
 * at most the tail's message queued; one that read nothing leaves both.
 * Then
 *
 *  - the worker keeps at most as many connections to the peer as were
 *    read (the learned capacity); requests beyond it wait in the group's
 *    queue, first in first out, and take the next connection that
 *    finishes, as with max_conns;
 *  - its idle connections to the peer close, and so does each connection
 *    that finishes while one is stuck, so that the child it held accepts
 *    the stuck one (which is never closed instead: its request would run
 *    all the same once a child accepts it, and nobody would read the
 *    answer);
 *  - a connection beyond the capacity probes for more children (pm
 *    dynamic and ondemand start them under load) at most once per
 *    PROBE_MS while requests wait, and at once again after a probe that
 *    was read: the capacity follows the pool up as fast as the pool grows.
 *
 * Over TCP the kernel acknowledges what an unaccepted connection receives,
 * so our side cannot tell; for a server on a loopback address, the far
 * end's socket is on this host and sock_diag says how many bytes it holds
 * unread (exactly: one that read all but the tail holds TAIL). A server
 * that sock_diag cannot find (another network namespace) is not learned
 * any further; elsewhere max_conns is the way (docs/php-fpm.md).
 */
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <netinet/in.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"

#define STUCK_MS  4       /* unread this long after it went out: backlog */
#define TICK_MS   2
#define PROBE_MS  1000
#define LOG_MS    10000   /* a peer's capacity is logged this seldom */
#define TAIL      8       /* a FastCGI record header: FCGI_STDIN, empty */

static rx_http_upstream_conn_t *watched;   /* unconfirmed connections */
static rx_timer_t               tick = { .node.index = RX_HEAP_NONE };

static int                      tail_outq = -1;   /* SIOCOUTQ of TAIL */
static int                      diag_fd = -1;     /* NETLINK_SOCK_DIAG */
static uint32_t                 diag_seq;

static void tick_handler(rx_timer_t *t);

/* What SIOCOUTQ says of a message of TAIL bytes nobody read: the memory
 * the kernel charges for it, measured once. */
static int
measure_tail(void)
{
    int  sv[2], n = -1;
    char tail[TAIL] = { 0 };

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
        return -1;
    }
    if (send(sv[0], tail, sizeof(tail), 0) != (ssize_t) sizeof(tail)
        || ioctl(sv[0], SIOCOUTQ, &n) == -1) {
        n = -1;
    }
    close(sv[0]);
    close(sv[1]);
    return n;
}

static bool
loopback(const rx_sockaddr_t *a)
{
    if (a->u.sa.sa_family == AF_INET) {
        return (ntohl(a->u.sin.sin_addr.s_addr) >> 24) == 127;
    }
    return a->u.sa.sa_family == AF_INET6
           && (IN6_IS_ADDR_LOOPBACK(&a->u.sin6.sin6_addr)
               || (IN6_IS_ADDR_V4MAPPED(&a->u.sin6.sin6_addr)
                   && a->u.sin6.sin6_addr.s6_addr[12] == 127));
}

/* The bytes the far end of a TCP connection to a loopback server holds
 * unread, asked of sock_diag for the far end's socket (local: the
 * server's address, remote: ours); -1 when it cannot tell. */
static int64_t
tcp_unread(const rx_http_upstream_conn_t *uc)
{
    struct {
        struct nlmsghdr          nlh;
        struct inet_diag_req_v2  req;
    } q;
    union {
        struct nlmsghdr  nlh;
        char             buf[1024];
    } a;
    struct sockaddr_nl        nl = { .nl_family = AF_NETLINK };
    struct sockaddr_storage   local;
    socklen_t                 len = sizeof(local);
    const rx_sockaddr_t      *peer = &uc->peer->addr;
    struct nlmsghdr          *h;
    ssize_t                   n;

    if (diag_fd == -1) {
        diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
                         NETLINK_SOCK_DIAG);
        if (diag_fd == -1) {
            return -1;
        }
    }
    if (getsockname(uc->c->fd, (struct sockaddr *) &local, &len) == -1
        || local.ss_family != peer->u.sa.sa_family) {
        return -1;
    }
    memset(&q, 0, sizeof(q));
    q.nlh.nlmsg_len = sizeof(q);
    q.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    q.nlh.nlmsg_flags = NLM_F_REQUEST;
    q.nlh.nlmsg_seq = ++diag_seq;
    q.req.sdiag_family = (uint8_t) peer->u.sa.sa_family;
    q.req.sdiag_protocol = IPPROTO_TCP;
    q.req.idiag_states = ~0u;
    q.req.id.idiag_cookie[0] = q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (peer->u.sa.sa_family == AF_INET) {
        const struct sockaddr_in *l = (const struct sockaddr_in *) &local;

        q.req.id.idiag_sport = peer->u.sin.sin_port;
        q.req.id.idiag_src[0] = peer->u.sin.sin_addr.s_addr;
        q.req.id.idiag_dport = l->sin_port;
        q.req.id.idiag_dst[0] = l->sin_addr.s_addr;
    } else {
        const struct sockaddr_in6 *l = (const struct sockaddr_in6 *) &local;

        q.req.id.idiag_sport = peer->u.sin6.sin6_port;
        memcpy(q.req.id.idiag_src, &peer->u.sin6.sin6_addr, 16);
        q.req.id.idiag_dport = l->sin6_port;
        memcpy(q.req.id.idiag_dst, &l->sin6_addr, 16);
    }
    if (sendto(diag_fd, &q, sizeof(q), 0, (struct sockaddr *) &nl,
               sizeof(nl)) != (ssize_t) sizeof(q)) {
        return -1;
    }
    /* the kernel answers within sendto(); an older answer is skipped */
    for ( ;; ) {
        n = recv(diag_fd, &a, sizeof(a), MSG_DONTWAIT);
        if (n < (ssize_t) sizeof(struct nlmsghdr)) {
            return -1;
        }
        h = &a.nlh;
        if (!NLMSG_OK(h, (size_t) n) || h->nlmsg_seq != diag_seq) {
            continue;
        }
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY
            || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
            return -1;               /* NLMSG_ERROR: not found here */
        }
        return ((const struct inet_diag_msg *) NLMSG_DATA(h))->idiag_rqueue;
    }
}

/* At load: a unix or loopback peer without max_conns, in a group that
 * fastcgi_pass names and that pools connections, is learned; the group
 * gets the queue's machinery (shared counters, a queue of no set size,
 * 60 s) when it has no `queue`. */
bool
rx_http_upstream_learn_init(rx_http_upstream_srv_conf_t *us)
{
    rx_uint_t i, n = rx_http_upstream_npeers(us);
    bool      learn = false;

    if (us->keepalive == 0 || !us->per_process) {
        return false;      /* no pool to pin children, or not a FastCGI one */
    }
    for (i = 0; i < n; i++) {
        rx_http_upstream_peer_t *p = i < us->primary.n ? &us->primary.peer[i]
                                     : &us->backup.peer[i - us->primary.n];

        p->learn = (p->addr.u.sa.sa_family == AF_UNIX || loopback(&p->addr))
                   && p->max_conns == 0;
        learn = learn || p->learn;
    }
    if (learn && us->queue_max == 0) {
        us->queue_max = UINT32_MAX;
        us->queue_timeout = 60000;
    }
    return learn;
}

static void
unwatch(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_peer_t *p = uc->peer;

    if (uc->wprev) uc->wprev->wnext = uc->wnext; else watched = uc->wnext;
    if (uc->wnext) uc->wnext->wprev = uc->wprev;
    uc->wprev = uc->wnext = NULL;
    uc->unconfirmed = false;
    p->unconfirmed--;
    if (uc->stuck) {
        uc->stuck = false;
        p->stuck--;
        rx_http_upstream_shared_stuck(uc->us, p, -1);
    }
    if (uc->probe) {
        uc->probe = false;
        p->probing = false;
    }
}

static void
tick_arm(void)
{
    if (watched && !rx_timer_is_set(&tick)) {
        tick.handler = tick_handler;
        rx_timer_add(&tick, TICK_MS);
    }
}

/* A new connection to p (counted in p->open). */
void
rx_http_upstream_learn_opened(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_peer_t *p = uc->peer;

    if (!p->learn) {
        return;
    }
    uc->unconfirmed = true;
    p->unconfirmed++;
    uc->wprev = NULL;
    uc->wnext = watched;
    if (watched) {
        watched->wprev = uc;
    }
    watched = uc;
    if (p->learned && p->open > p->learned) {
        uc->probe = true;
        p->probing = true;
    }
}

/* Where the first send of a request stops (0: it does not): see above. */
int64_t
rx_http_upstream_learn_split(const rx_http_upstream_t *u)
{
    const rx_http_upstream_conn_t *uc = u->uc;

    if (!uc->unconfirmed || uc->sent_at || u->streaming
        || u->request_size <= TAIL) {
        return 0;
    }
    if (tail_outq < 0) {
        tail_outq = measure_tail();
        if (tail_outq < 0) {
            tail_outq = 0;      /* then only an empty queue says "read" */
        }
    }
    return u->request_size - TAIL;
}

/* Its first request went out whole: the watch starts. */
void
rx_http_upstream_learn_sent(rx_http_upstream_conn_t *uc)
{
    if (uc->unconfirmed && uc->sent_at == 0) {
        uc->sent_at = rx_current_msec ? rx_current_msec : 1;
        tick_arm();
    }
}

/* The peer read the connection's request (or answered): a child has it. */
static void
confirm(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_peer_t *p = uc->peer;
    bool                     probe = uc->probe;
    rx_uint_t                taken;

    unwatch(uc);
    if (probe) {
        p->probe_after = rx_current_msec;    /* the next one may follow */
    }
    taken = p->open - p->unconfirmed;
    if (p->learned && taken > p->learned) {
        p->learned = taken;
        if (rx_current_msec - p->logged_up < LOG_MS) {
            return;
        }
        p->logged_up = rx_current_msec;
        rx_log_error(RX_LOG_INFO, rx_cycle->log, 0, "upstream \"%.*s\" server "
                     "%.*s took %lu connections of this worker",
                     (int) uc->us->host.len, uc->us->host.data,
                     (int) p->name.len, p->name.data, (unsigned long) taken);
    }
}

void
rx_http_upstream_learn_read(rx_http_upstream_conn_t *uc)
{
    if (uc->unconfirmed) {
        confirm(uc);
    }
}

void
rx_http_upstream_learn_closed(rx_http_upstream_conn_t *uc)
{
    if (uc->unconfirmed) {
        if (uc->probe) {
            uc->peer->probe_after = rx_current_msec + PROBE_MS;
        }
        unwatch(uc);
    }
}

static void
mark_stuck(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_srv_conf_t *us = uc->us;
    rx_http_upstream_peer_t     *p = uc->peer;
    rx_uint_t                    taken = p->open - p->unconfirmed;

    uc->stuck = true;
    if (uc->probe) {
        uc->probe = false;
        p->probing = false;
    }
    p->probe_after = rx_current_msec + PROBE_MS;
    if (taken == 0) {
        taken = 1;     /* other workers hold the children: one waits here */
    }
    /* the first one of a burst says what the pool took; while it waits,
     * the connections closed to let it in lower the count for nothing */
    rx_http_upstream_shared_stuck(us, p, 1);
    if (p->stuck++ == 0 && p->learned != taken) {
        if (p->learned == 0 || rx_current_msec - p->logged >= LOG_MS) {
            p->logged = rx_current_msec;
            rx_log_error(RX_LOG_WARN, rx_cycle->log, 0, "upstream \"%.*s\" "
                "server %.*s is saturated: a new connection's request waited "
                "%" PRId64 " ms unread in its listen backlog; this worker "
                "keeps at most %lu connections to it and queues the requests "
                "beyond", (int) us->host.len, us->host.data,
                (int) p->name.len, p->name.data,
                (int64_t) (rx_current_msec - uc->sent_at),
                (unsigned long) taken);
        }
        p->learned = taken;
    }
    /* an idle connection holds a child the stuck one needs */
    rx_http_upstream_keepalive_give_back(us);
}

/* sock_diag does not know the far end of this connection: it closed
 * meanwhile, or the kernel shows no sockets of the peer's (another network
 * namespace, no sock_diag). A peer never once found, three times, is not
 * learned any further. */
static void
cannot_tell(rx_http_upstream_conn_t *uc)
{
    rx_http_upstream_peer_t *p = uc->peer;

    if (p->learn && !p->diag_found && ++p->diag_misses >= 3) {
        p->learn = false;
        rx_log_error(RX_LOG_INFO, rx_cycle->log, 0, "upstream \"%.*s\" server "
                     "%.*s: the kernel does not show its sockets here, its "
                     "size is not learned (set max_conns)",
                     (int) uc->us->host.len, uc->us->host.data,
                     (int) p->name.len, p->name.data);
    }
    unwatch(uc);
}

static void
tick_handler(rx_timer_t *t)
{
    rx_http_upstream_conn_t *uc, *next;
    int                      unread;
    bool                     consumed;

    (void) t;
    for (uc = watched; uc; uc = next) {
        next = uc->wnext;
        if (uc->sent_at == 0 || rx_current_msec - uc->sent_at < STUCK_MS
            || uc->c->state != RX_CONN_ACTIVE) {
            continue;
        }
        if (uc->peer->addr.u.sa.sa_family == AF_UNIX) {
            if (ioctl(uc->c->fd, SIOCOUTQ, &unread) == -1) {
                continue;
            }
            consumed = unread <= tail_outq;
        } else {
            int64_t held = tcp_unread(uc);

            if (held < 0) {
                cannot_tell(uc);
                continue;
            }
            uc->peer->diag_found = true;
            consumed = held <= TAIL;
        }
        if (consumed) {
            confirm(uc);
        } else if (!uc->stuck) {
            mark_stuck(uc);
        }
    }
    tick_arm();
}
