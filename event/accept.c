/*
 * accept.c: multishot accept on every listening socket this worker serves,
 * the table-full path (hold what was accepted, close the oldest reusable
 * connection for it, else pause accepting), and EMFILE/ENFILE back-off.
 */
#include <netinet/tcp.h>
#include "event.h"
#include "clock.h"
#include "counters.h"

#define PENDING_MAX      64     /* accepted sockets waiting for a slot */
#define EMFILE_PAUSE_MS  500

typedef struct {
    int              fd;
    rx_listening_t  *ls;
} rx_pending_t;

static rx_pending_t pending[PENDING_MAX];
static rx_uint_t   npending;
static bool        paused;          /* multishot accepts cancelled */
static bool        stopped;         /* never again */
/* A graceful stop: each listener's accept is cancelled, and when its last
 * completion is in, what waits in its backlog is accepted and served before
 * our copy of the socket is closed. A cancelled accept may have taken the
 * kernel's wake-up for a connection (accept waiters are woken one at a
 * time): without the drain, that connection would wait for the next one
 * to wake another worker: a request lost to a reload (t/reload_accept.t). */
static bool        draining;
static rx_uint_t   ndraining;       /* listeners whose accept is still in */
static rx_timer_t  resume_timer;

void (*rx_event_init_connection)(rx_conn_t *c);

static void start_connection(rx_worker_t *w, int fd, rx_listening_t *ls);
static void table_full(rx_worker_t *w, int fd, rx_listening_t *ls);

static bool
serves(rx_worker_t *w, rx_listening_t *ls)
{
    return ls->fd != -1 && (!ls->reuseport || ls->worker == w->index);
}

/* A socket other workers also accept on (a unix socket, or any with
 * worker_reuseport off) gets one-shot accepts: the kernel wakes the accept
 * at the head of the socket's wait queue, and a multishot one stays there,
 * so its worker took every connection; a one-shot accept re-armed after
 * each connection queues behind the other workers' and they take turns. */
static bool
shared(rx_worker_t *w, rx_listening_t *ls)
{
    rx_core_conf_t *ccf = rx_get_conf(w->cycle->conf_ctx, rx_core_module);

    return !ls->reuseport && ccf->master && ccf->worker_processes > 1;
}

static void
arm(rx_worker_t *w, rx_uint_t i)
{
    rx_listening_t *ls = (rx_listening_t *) w->cycle->listening.elts + i;

    if (serves(w, ls)) {
        rx_ring_accept(ls->fd,
                       rx_ring_features.multishot_accept && !shared(w, ls),
                       rx_op_pack(RX_OP_ACCEPT, (uint32_t) i, 0));
    }
}

static void
arm_all(rx_worker_t *w)
{
    rx_uint_t i;

    for (i = 0; i < w->cycle->listening.nelts; i++) {
        arm(w, i);
    }
}

static void
cancel_all(rx_worker_t *w)
{
    rx_uint_t i;

    for (i = 0; i < w->cycle->listening.nelts; i++) {
        rx_listening_t *ls = (rx_listening_t *) w->cycle->listening.elts + i;
        if (serves(w, ls)) {
            rx_ring_cancel(rx_op_pack(RX_OP_ACCEPT, (uint32_t) i, 0),
                           rx_op_pack(RX_OP_CANCEL, UINT32_MAX, 0));
        }
    }
}

static void
resume_handler(rx_timer_t *t)
{
    rx_accept_resume(&rx_worker);
}

rx_int_t
rx_accept_init(rx_worker_t *w)
{
    memset(&resume_timer, 0, sizeof(resume_timer));
    resume_timer.node.index = RX_HEAP_NONE;
    resume_timer.handler = resume_handler;
    arm_all(w);
    return RX_OK;
}

void
rx_accept_pause(rx_worker_t *w)
{
    if (!paused && !stopped) {
        paused = true;
        cancel_all(w);
    }
}

void
rx_accept_resume(rx_worker_t *w)
{
    if (paused && !stopped) {
        paused = false;
        arm_all(w);
    }
}

/* Accepts what waits in listener i's backlog without waiting (a receive
 * timeout bounds accept(2) on the blocking socket; io_uring's accepts do
 * not use it), serves it, and closes our copy of the socket. */
static void
drain_and_close(rx_worker_t *w, rx_uint_t i)
{
    rx_listening_t *ls = (rx_listening_t *) w->cycle->listening.elts + i;
    struct timeval  tv = { 0, 1000 };
    int             fd;

    if (ls->fd == -1) {
        return;
    }
    if (serves(w, ls)
        && setsockopt(ls->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0) {
        while ((fd = accept4(ls->fd, NULL, NULL, SOCK_CLOEXEC)) != -1) {
            if (w->nfree == 0 || npending) {
                table_full(w, fd, ls);
            } else {
                start_connection(w, fd, ls);
            }
        }
    }
    close(ls->fd);
    ls->fd = -1;
}

/* Graceful stop: no new accepts; what was accepted is served. */
void
rx_accept_stop_gracefully(rx_worker_t *w)
{
    rx_uint_t i;

    if (stopped) {
        return;
    }
    stopped = true;
    draining = true;
    rx_timer_del(&resume_timer);
    for (i = 0; i < w->cycle->listening.nelts; i++) {
        rx_listening_t *ls = (rx_listening_t *) w->cycle->listening.elts + i;

        if (!paused && serves(w, ls)) {
            rx_ring_cancel(rx_op_pack(RX_OP_ACCEPT, (uint32_t) i, 0),
                           rx_op_pack(RX_OP_CANCEL, UINT32_MAX, 0));
            ls->draining = 1;
            ndraining++;
        } else {
            drain_and_close(w, i);
        }
    }
}

/* Listeners whose cancelled accept has not completed yet. */
rx_uint_t
rx_accept_draining(void)
{
    return ndraining;
}

void
rx_accept_stop(rx_worker_t *w)
{
    rx_uint_t i;

    draining = false;         /* what the cancelled accepts bring: closed */
    if (!stopped) {
        if (!paused) {
            cancel_all(w);
        }
        stopped = true;
        rx_timer_del(&resume_timer);
    }
    for (i = 0; i < npending; i++) {
        close(pending[i].fd);
    }
    npending = 0;
}

static void
start_connection(rx_worker_t *w, int fd, rx_listening_t *ls)
{
    rx_conn_t *c = rx_conn_get(w, fd, ls);

    if (c == NULL) {
        close(fd);
        return;
    }
    rx_event_init_connection(c);
}

/* How many accepted sockets wait for a slot (the table was full). */
rx_uint_t
rx_accept_held(void)
{
    return npending;
}

/* A slot came free: serve a held socket, and accept again once every
 * held socket has a slot. */
void
rx_accept_slot_freed(rx_worker_t *w)
{
    while (npending && w->nfree) {
        rx_pending_t p = pending[0];
        memmove(pending, pending + 1, --npending * sizeof(rx_pending_t));
        start_connection(w, p.fd, p.ls);
    }
    if (npending == 0 && paused && !rx_timer_is_set(&resume_timer)) {
        rx_accept_resume(w);
    }
}

static void
table_full(rx_worker_t *w, int fd, rx_listening_t *ls)
{
    if (npending == PENDING_MAX) {
        rx_log_error(RX_LOG_ALERT, w->cycle->log, 0, "%lu worker_connections "
                     "are not enough, closing a new connection",
                     (unsigned long) w->nconns);
        rx_counters_accept_dropped();
        close(fd);
        return;
    }
    pending[npending].fd = fd;
    pending[npending++].ls = ls;
    /* each held socket needs a slot: close a reusable connection for each
     * one that no closing connection's slot is promised to, and stop
     * accepting if none is reusable */
    if (npending > w->nreclaiming && !rx_conn_reclaim(w, NULL)) {
        rx_accept_pause(w);
    }
}

void
rx_accept_handle_cqe(rx_worker_t *w, const rx_cqe_t *cqe)
{
    rx_uint_t       i = rx_op_slot(cqe->user_data);
    rx_listening_t *ls;
    bool            more = (cqe->flags & RX_CQE_F_MORE) != 0;

    if (i >= w->cycle->listening.nelts) {
        return;
    }
    ls = (rx_listening_t *) w->cycle->listening.elts + i;
    if (cqe->res >= 0) {
        if (stopped && !draining) {
            close(cqe->res);
        } else if (w->nfree == 0 || npending) {
            table_full(w, cqe->res, ls);
        } else {
            start_connection(w, cqe->res, ls);
        }
    } else if ((cqe->res == -EMFILE || cqe->res == -ENFILE) && !stopped) {
        rx_counters_accept_error(-cqe->res);
        if (rx_log_limit_allow(&w->accept_limit, 1000)) {
            rx_log_error(RX_LOG_CRIT, w->cycle->log, -cqe->res,
                         "accept4() failed");
        }
        /* the socket is still readable: accepting again now would spin */
        if (!paused) {
            rx_accept_pause(w);
        }
        rx_timer_add(&resume_timer, EMFILE_PAUSE_MS);
        return;
    } else if (cqe->res != -ECANCELED && cqe->res != -EAGAIN
               && cqe->res != -ECONNABORTED && cqe->res != -EINTR
               && cqe->res != -EPROTO && cqe->res != -ENETDOWN
               && cqe->res != -ENOPROTOOPT && cqe->res != -EHOSTDOWN
               && cqe->res != -ENONET && cqe->res != -EHOSTUNREACH
               && cqe->res != -EOPNOTSUPP && cqe->res != -ENETUNREACH
               && cqe->res != -EMFILE && cqe->res != -ENFILE) {
        rx_log_error(RX_LOG_ALERT, w->cycle->log, -cqe->res,
                     "accept4() on %s failed", ls->addr_text.data);
    }
    if (!more && ls->draining) {
        /* the last completion of a cancelled accept: now the backlog */
        ls->draining = 0;
        ndraining--;
        drain_and_close(w, i);
        return;
    }
    /* multishot ended (error, or the kernel dropped it): re-arm unless we
     * meant it to stop */
    if (!more && !paused && !stopped && cqe->res != -ECANCELED) {
        arm(w, i);
    }
}
