/*
 * listening.c: opening the cycle's listening sockets in the master, taking
 * over those of the previous cycle whose address is unchanged, and closing
 * the ones no longer configured.
 */
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "core.h"
#include "cycle.h"
#include "process.h"

static void
set_opt(rx_log_t *log, rx_listening_t *ls, int level, int name, int value,
    const char *what)
{
    if (setsockopt(ls->fd, level, name, &value, sizeof(value)) == -1) {
        rx_log_error(RX_LOG_ALERT, log, errno, "setsockopt(%s) %s failed, "
                     "ignored", what, ls->addr_text.data);
    }
}

static void
apply_options(rx_log_t *log, rx_listening_t *ls)
{
    if (ls->rcvbuf != -1) {
        set_opt(log, ls, SOL_SOCKET, SO_RCVBUF, ls->rcvbuf, "SO_RCVBUF");
    }
    if (ls->sndbuf != -1) {
        set_opt(log, ls, SOL_SOCKET, SO_SNDBUF, ls->sndbuf, "SO_SNDBUF");
    }
    if (ls->so_keepalive) {
        set_opt(log, ls, SOL_SOCKET, SO_KEEPALIVE, ls->so_keepalive == 1,
                "SO_KEEPALIVE");
    }
    if (ls->keepidle) {
        set_opt(log, ls, IPPROTO_TCP, TCP_KEEPIDLE, ls->keepidle, "TCP_KEEPIDLE");
    }
    if (ls->keepintvl) {
        set_opt(log, ls, IPPROTO_TCP, TCP_KEEPINTVL, ls->keepintvl,
                "TCP_KEEPINTVL");
    }
    if (ls->keepcnt) {
        set_opt(log, ls, IPPROTO_TCP, TCP_KEEPCNT, ls->keepcnt, "TCP_KEEPCNT");
    }
    if (ls->deferred) {
        set_opt(log, ls, IPPROTO_TCP, TCP_DEFER_ACCEPT, 1, "TCP_DEFER_ACCEPT");
    }
}

/* A unix socket file left by a process that is gone can be removed; one
 * that still accepts connections belongs to a live server. */
static bool
unix_socket_stale(const rx_sockaddr_t *addr)
{
    int  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool stale;

    if (fd == -1) {
        return false;
    }
    stale = connect(fd, &addr->u.sa, addr->len) == -1 && errno == ECONNREFUSED;
    close(fd);
    return stale;
}

static rx_int_t
open_one(rx_cycle_t *cycle, rx_listening_t *ls)
{
    rx_log_t *log = cycle->log;
    int       family = ls->addr.u.sa.sa_family, tries;

    ls->fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls->fd == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "socket() %s failed",
                     ls->addr_text.data);
        return RX_ERROR;
    }
    if (family != AF_UNIX) {
        set_opt(log, ls, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
    }
    if (ls->reuseport) {
        set_opt(log, ls, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT");
    }
    if (family == AF_INET6) {
        /* nginx's default is ipv6only=on: [::]:80 does not take IPv4 */
        set_opt(log, ls, IPPROTO_IPV6, IPV6_V6ONLY,
                ls->ipv6only == -1 ? 1 : ls->ipv6only, "IPV6_V6ONLY");
    }
    apply_options(log, ls);

    for (tries = 0; ; tries++) {
        if (bind(ls->fd, &ls->addr.u.sa, ls->addr.len) == 0) {
            break;
        }
        if (errno == EADDRINUSE && family == AF_UNIX && tries == 0
            && unix_socket_stale(&ls->addr)) {
            unlink(ls->addr.u.sun.sun_path);
            continue;
        }
        rx_log_error(RX_LOG_EMERG, log, errno, "bind() to %s failed",
                     ls->addr_text.data);
        goto failed;
    }
    if (family == AF_UNIX && chmod(ls->addr.u.sun.sun_path, 0666) == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "chmod() \"%s\" failed",
                     ls->addr.u.sun.sun_path);
        goto failed;
    }
    if (listen(ls->fd, ls->backlog) == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "listen() to %s, backlog %d "
                     "failed", ls->addr_text.data, ls->backlog);
        goto failed;
    }
    return RX_OK;

failed:
    close(ls->fd);
    ls->fd = -1;
    return RX_ERROR;
}

/* With reuseport every worker gets its own socket on the address: the
 * entry is cloned once per worker, each bound separately. */
static rx_int_t
clone_reuseport(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_uint_t       n = cycle->listening.nelts, i, w;

    for (i = 0; i < n; i++) {
        rx_listening_t *ls = (rx_listening_t *) cycle->listening.elts + i;
        if (!ls->reuseport || ls->worker != 0) {
            continue;
        }
        for (w = 1; w < (rx_uint_t) ccf->worker_processes; w++) {
            rx_listening_t *copy = rx_array_push(&cycle->listening);
            if (copy == NULL) {
                return RX_ERROR;
            }
            ls = (rx_listening_t *) cycle->listening.elts + i;
            *copy = *ls;
            copy->worker = w;
        }
    }
    return RX_OK;
}

rx_int_t
rx_open_listening_sockets(rx_cycle_t *cycle)
{
    rx_listening_t *ls, *old_ls = NULL;
    rx_uint_t       i, j, old_n = 0;

    if (clone_reuseport(cycle) != RX_OK) {
        return RX_ERROR;
    }
    if (cycle->old_cycle && cycle->old_cycle->listening.elts) {
        old_ls = cycle->old_cycle->listening.elts;
        old_n = cycle->old_cycle->listening.nelts;
    }
    ls = cycle->listening.elts;
    for (i = 0; i < cycle->listening.nelts; i++) {
        /* take over an unchanged socket from the running cycle */
        for (j = 0; j < old_n; j++) {
            if (old_ls[j].fd != -1 && !old_ls[j].remove
                && rx_sockaddr_eq(&old_ls[j].addr, &ls[i].addr)
                && old_ls[j].reuseport == ls[i].reuseport
                && old_ls[j].worker == ls[i].worker) {
                ls[i].fd = old_ls[j].fd;
                ls[i].inherited = true;
                old_ls[j].remove = true;   /* now owned by the new cycle */
                apply_options(cycle->log, &ls[i]);
                break;
            }
        }
        if (ls[i].fd == -1) {
            /* the first cycle: a socket the old binary handed over */
            ls[i].fd = rx_inherited_take(&ls[i]);
            if (ls[i].fd != -1) {
                apply_options(cycle->log, &ls[i]);
            }
        }
        if (ls[i].fd == -1 && open_one(cycle, &ls[i]) != RX_OK) {
            goto failed;
        }
    }
    return RX_OK;

failed:
    /* give back what we took over, close what we opened */
    for (j = 0; j < old_n; j++) {
        old_ls[j].remove = false;
    }
    for (i = 0; i < cycle->listening.nelts; i++) {
        if (ls[i].inherited) {
            ls[i].fd = -1;
        }
    }
    return RX_ERROR;
}

/* Closes sockets this cycle still owns (those not handed to a newer
 * cycle); unix socket files are removed when the socket really goes. */
void
rx_close_listening_sockets(rx_cycle_t *cycle)
{
    rx_listening_t *ls = cycle->listening.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (ls[i].fd == -1 || ls[i].remove) {
            continue;
        }
        close(ls[i].fd);
        ls[i].fd = -1;
        if (ls[i].addr.u.sa.sa_family == AF_UNIX
            && rx_process != RX_PROCESS_WORKER && !rx_listening_shared()) {
            unlink(ls[i].addr.u.sun.sun_path);
        }
    }
}
