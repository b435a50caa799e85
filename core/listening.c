/*
 * listening.c: opening the cycle's listening sockets in the master (a TCP
 * address gets one SO_REUSEPORT socket per worker unless worker_reuseport
 * is off), taking over those of the previous cycle whose address is
 * unchanged, and closing the ones no longer configured.
 */
#include <linux/filter.h>
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
    /* set or cleared: a socket taken over from the previous cycle may
     * have it from a configuration that differed */
    if (ls->addr.u.sa.sa_family != AF_UNIX) {
        set_opt(log, ls, IPPROTO_TCP, TCP_NODELAY, ls->nodelay, "TCP_NODELAY");
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

/* A reuseport group we did not ask for must not join another process's
 * sockets on the address (which a second server started by the same user
 * may hold, with reuseport): before binding the group's first socket, a
 * probe without SO_REUSEPORT must bind, as a plain listen would. */
static bool
address_in_use(rx_log_t *log, rx_listening_t *ls)
{
    int family = ls->addr.u.sa.sa_family, one = 1, v6only;
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int err = 0;

    if (fd == -1) {
        return false;            /* the real socket() will say why */
    }
    v6only = ls->ipv6only == -1 ? 1 : ls->ipv6only;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1
        || (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
                                             &v6only, sizeof(v6only)) == -1)
        || bind(fd, &ls->addr.u.sa, ls->addr.len) == -1) {
        err = errno;
    }
    close(fd);
    if (err == EADDRINUSE) {
        rx_log_error(RX_LOG_EMERG, log, err, "bind() to %s failed",
                     ls->addr_text.data);
        return true;
    }
    return false;
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
    if (ls->reuseport_auto && ls->worker == 0 && address_in_use(log, ls)) {
        goto failed;
    }

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
 * entry is cloned once per worker, each bound separately. A TCP address
 * is reuseport unless worker_reuseport is off: on one shared socket, the
 * kernel hands every connection to the accept armed first (a multishot
 * accept stays at the head of the wait queue), so one worker took all.
 * Unix sockets cannot be bound twice and stay shared. Without a master,
 * the one process serves a single socket. */
static rx_int_t
clone_reuseport(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_uint_t       n = cycle->listening.nelts, i, w, workers;

    workers = ccf->master ? (rx_uint_t) ccf->worker_processes : 1;
    for (i = 0; i < n; i++) {
        rx_listening_t *ls = (rx_listening_t *) cycle->listening.elts + i;
        if (ls->worker != 0) {
            continue;
        }
        if (!ls->reuseport && ccf->worker_reuseport
            && ls->addr.u.sa.sa_family != AF_UNIX) {
            ls->reuseport = true;
            ls->reuseport_auto = true;
        }
        if (!ls->reuseport) {
            continue;
        }
        for (w = 1; w < workers; w++) {
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

/* Takes over old socket o for entry ls. A shared socket may become worker
 * 0's of a reuseport group (nginx sets SO_REUSEPORT on it, as here: the
 * kernel forms the group when the next socket binds), and worker 0's
 * socket of a group may become the shared one (the group's others close
 * with the old cycle). */
static void
take_over(rx_cycle_t *cycle, rx_listening_t *ls, rx_listening_t *o)
{
    ls->fd = o->fd;
    ls->inherited = true;
    o->remove = true;               /* now owned by the new cycle */
    if (ls->reuseport && !o->reuseport) {
        set_opt(cycle->log, ls, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT");
    }
    apply_options(cycle->log, ls);
}

/* The kernel picks a group's socket by hash among all its sockets, in the
 * order they joined: here worker 0's, 1's ... (clones bind in that order,
 * and a closed socket's slot takes the last one). When a reload lowers
 * worker_processes, the sockets of the workers that go stay in the group
 * until their old worker has served its backlog and closed them, and
 * without net.ipv4.tcp_migrate_req what is in a closing socket's queue is
 * reset. So the group gets a program that picks among the first `workers`
 * sockets only, at random: a socket on its way out gets no connection. */
static void
attach_selector(rx_cycle_t *cycle, rx_listening_t *ls, rx_uint_t workers)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_RANDOM),
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, (uint32_t) workers),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

    if (setsockopt(ls->fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
                   sizeof(prog)) == -1) {
        rx_log_error(RX_LOG_WARN, cycle->log, errno, "setsockopt("
                     "SO_ATTACH_REUSEPORT_CBPF) %s failed, ignored: a reload "
                     "to fewer workers may reset connections",
                     ls->addr_text.data);
    }
}

void
rx_listening_select_workers(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_listening_t *ls = cycle->listening.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        /* only a group that is ours alone (see address_in_use()) */
        if (ls[i].reuseport_auto && ls[i].worker == 0 && ls[i].fd != -1) {
            attach_selector(cycle, &ls[i], ccf->master
                            ? (rx_uint_t) ccf->worker_processes : 1);
        }
    }
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
                && old_ls[j].worker == ls[i].worker) {
                take_over(cycle, &ls[i], &old_ls[j]);
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
    rx_listening_select_workers(cycle);
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
