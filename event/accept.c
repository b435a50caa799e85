/*
 * accept.c: multishot accept on every listening socket this worker serves,
 * the table-full path (hold what was accepted, close the oldest reusable
 * connection for it, else pause accepting), and EMFILE/ENFILE back-off.
 */
#include <netinet/tcp.h>
#include "event.h"
#include "clock.h"

#define PENDING_MAX      64     /* accepted sockets waiting for a slot */
#define EMFILE_PAUSE_MS  500

typedef struct {
    int              fd;
    rx_listening_t  *ls;
} rx_pending_t;

static rx_pending_t pending[PENDING_MAX];
static rx_uint_t   npending;
static bool        paused;          /* multishot accepts cancelled */
static bool        stopped;         /* graceful stop: never again */
static rx_timer_t  resume_timer;

void (*rx_event_init_connection)(rx_conn_t *c);

static bool
serves(rx_worker_t *w, rx_listening_t *ls)
{
    return ls->fd != -1 && (!ls->reuseport || ls->worker == w->index);
}

static void
arm(rx_worker_t *w, rx_uint_t i)
{
    rx_listening_t *ls = (rx_listening_t *) w->cycle->listening.elts + i;

    if (serves(w, ls)) {
        rx_ring_accept(ls->fd, rx_ring_features.multishot_accept,
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

void
rx_accept_stop(rx_worker_t *w)
{
    rx_uint_t i;

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
        if (stopped) {
            close(cqe->res);
        } else if (w->nfree == 0 || npending) {
            table_full(w, cqe->res, ls);
        } else {
            start_connection(w, cqe->res, ls);
        }
    } else if (cqe->res == -EMFILE || cqe->res == -ENFILE) {
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
               && cqe->res != -EOPNOTSUPP && cqe->res != -ENETUNREACH) {
        rx_log_error(RX_LOG_ALERT, w->cycle->log, -cqe->res,
                     "accept4() on %s failed", ls->addr_text.data);
    }
    /* multishot ended (error, or the kernel dropped it): re-arm unless we
     * meant it to stop */
    if (!more && !paused && !stopped && cqe->res != -ECANCELED) {
        arm(w, i);
    }
}
