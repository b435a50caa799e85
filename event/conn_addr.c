/*
 * conn_addr.c: a connection's addresses, its peer's and its own, fetched
 * from the socket only when a log line or a variable asks for them (a
 * request that names neither costs no syscall for them) and kept in the
 * connection's pool; the "client: ..., server: ..." part of its log lines.
 */
#include "event.h"

/* The peer's address by getsockopt(SO_PEERNAME), which still answers
 * once the peer has reset the connection (getpeername says ENOTCONN
 * then): it is asked for only when a log line or a variable needs it,
 * and that may come after a reset. The option wants the exact size of
 * the family's address; a unix socket's peer is asked the usual way. */
static int
peer_name(rx_conn_t *c, rx_sockaddr_t *got)
{
    int family = c->listening ? c->listening->addr.u.sa.sa_family : AF_UNSPEC;

    if (family == AF_INET || family == AF_INET6) {
        got->len = family == AF_INET ? sizeof(struct sockaddr_in)
                                     : sizeof(struct sockaddr_in6);
        return getsockopt(c->fd, SOL_SOCKET, SO_PEERNAME, &got->u,
                          &got->len);
    }
    return getpeername(c->fd, &got->u.sa, &got->len);
}

/* Addresses are asked for by logs and variables, not by every request:
 * they are fetched once and kept in the connection's pool. */
static const rx_sockaddr_t *
conn_addr(rx_conn_t *c, rx_sockaddr_t **slot, bool peer)
{
    rx_sockaddr_t *a = *slot, got;
    size_t         size;

    if (a) {
        return a;
    }
    memset(&got, 0, sizeof(got));
    got.len = sizeof(got.u);
    if ((peer ? peer_name(c, &got)
              : getsockname(c->fd, &got.u.sa, &got.len)) == -1) {
        if (!peer) {
            return &c->listening->addr;
        }
        memset(&got, 0, sizeof(got));
        got.u.sa.sa_family = AF_UNIX;
    }
    /* an IP address is kept in 32 bytes, not the 116 of a unix path:
     * every idle keepalive connection holds its peer's */
    size = got.u.sa.sa_family == AF_INET || got.u.sa.sa_family == AF_INET6
           ? RX_SOCKADDR_IP_SIZE : sizeof(rx_sockaddr_t);
    a = rx_palloc(c->pool, size);
    if (a == NULL) {
        return &c->listening->addr;
    }
    memcpy(a, &got, size);
    *slot = a;
    return a;
}

const rx_sockaddr_t *
rx_conn_peer(rx_conn_t *c)
{
    return conn_addr(c, &c->peer, true);
}

const rx_sockaddr_t *
rx_conn_local(rx_conn_t *c)
{
    return conn_addr(c, &c->local, false);
}

size_t
rx_conn_log_client_server(rx_log_t *log, char *buf, size_t len)
{
    rx_conn_t *c = log->data;
    char       peer[RX_SOCKADDR_STRLEN], local[RX_SOCKADDR_STRLEN];
    int        n;

    rx_sock_ntop(rx_conn_peer(c), peer, sizeof(peer), false);
    rx_sock_ntop(&c->listening->addr, local, sizeof(local), true);
    n = snprintf(buf, len, ", client: %s, server: %s", peer, local);
    return n < 0 ? 0 : rx_min((size_t) n, len);
}
