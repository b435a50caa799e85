/*
 * worker_loop.c: a worker's life: its ring, its signals (read through a
 * signalfd on the ring, so none is lost between checks), the loop that
 * dispatches completions and expires timers, and the graceful stop.
 */
#include <sys/signalfd.h>
#include <malloc.h>
#include "event.h"
#include "clock.h"
#include "process.h"
#include "proctitle.h"
#include "resolver.h"


static int                     signal_fd = -1;
static struct signalfd_siginfo siginfo;
/* outside rx_worker, which the loop clears when it starts */
static void                  (*start_handlers[RX_WORKER_START_MAX])(rx_cycle_t *);
static rx_uint_t               nstart;
static rx_timer_t              close_idle;
static rx_msec_t               quit_at;

rx_int_t
rx_worker_at_start(void (*handler)(rx_cycle_t *cycle))
{
    if (nstart == RX_WORKER_START_MAX) {
        return RX_ERROR;
    }
    start_handlers[nstart++] = handler;
    return RX_OK;
}

static void
arm_signal_read(void)
{
    rx_ring_read(signal_fd, &siginfo, sizeof(siginfo), 0,
                 rx_op_pack(RX_OP_SIGNAL, 0, 0));
}

static void
shutdown_timeout_handler(rx_timer_t *t)
{
    rx_worker_t *w = t->data;
    rx_uint_t    i;

    rx_log_error(RX_LOG_WARN, w->cycle->log, 0, "worker_shutdown_timeout "
                 "expired: closing %lu connections",
                 (unsigned long) (w->nconns - w->nfree));
    for (i = 0; i < w->nconns; i++) {
        rx_conn_close(&w->conns[i]);
    }
}

/*
 * Idle keepalive connections are closed once they have been quiet for a
 * second (a client in the middle of a series of requests sends its next
 * one before that, and gets it answered with Connection: close), checked
 * again until none is left; after 10 s (or worker_shutdown_timeout,
 * which closes everything) they go regardless.
 */
#define RX_IDLE_QUIET_MS   1000
#define RX_IDLE_FORCE_MS   10000

static void
close_idle_handler(rx_timer_t *t)
{
    rx_worker_t *w = t->data;
    rx_msec_t    next;

    next = rx_conn_close_idle(w, RX_IDLE_QUIET_MS,
                              rx_current_msec - quit_at >= RX_IDLE_FORCE_MS);
    if (next) {
        rx_timer_add(t, next);
    }
}

void
rx_worker_close_idle_later(rx_worker_t *w)
{
    if (close_idle.node.index == RX_HEAP_NONE) {
        close_idle.handler = close_idle_handler;
        close_idle.data = w;
        rx_timer_add(&close_idle, 0);
    }
}

static void
begin_graceful_stop(rx_worker_t *w)
{
    rx_core_conf_t *ccf = rx_get_conf(w->cycle->conf_ctx, rx_core_module);

    if (w->quit) {
        return;
    }
    w->quit = true;
    rx_log_error(RX_LOG_NOTICE, w->cycle->log, 0, "gracefully shutting down");
    rx_setproctitle(RINGX_NAME ": worker process is shutting down");
    /* Our copy of the listening sockets goes too, as nginx's workers do
     * (once each accept's cancel is in and its backlog served): once the
     * master and every stopping worker have closed theirs, a new client is
     * refused at once instead of waiting in a backlog nobody accepts from
     * until the last download ends (and then being reset). At a reload
     * the new workers' copies keep the sockets open. */
    rx_accept_stop_gracefully(w);
    quit_at = rx_current_msec;
    rx_worker_close_idle_later(w);
    if (ccf->shutdown_timeout > 0) {
        w->shutdown_timer.handler = shutdown_timeout_handler;
        w->shutdown_timer.data = w;
        rx_timer_add(&w->shutdown_timer, ccf->shutdown_timeout);
    }
}

static void
handle_signal(rx_worker_t *w, const rx_cqe_t *cqe)
{
    if (cqe->res != (int32_t) sizeof(siginfo)) {
        if (cqe->res < 0 && cqe->res != -EINTR && cqe->res != -EAGAIN) {
            rx_log_error(RX_LOG_ALERT, w->cycle->log, -cqe->res,
                         "read() from signalfd failed");
            w->terminate = true;
            return;
        }
        arm_signal_read();
        return;
    }
    switch (siginfo.ssi_signo) {
    case SIGQUIT:
        begin_graceful_stop(w);
        break;
    case SIGTERM:
    case SIGINT:
        w->terminate = true;
        break;
    case SIGUSR1:
        rx_log_error(RX_LOG_NOTICE, w->cycle->log, 0, "reopening logs");
        rx_modules_reopen(w->cycle);   /* buffered lines go to the old file */
        rx_reopen_files(w->cycle);
        break;
    default:
        break;
    }
    arm_signal_read();
}

static void
dispatch(const rx_cqe_t *cqe, void *data)
{
    rx_worker_t *w = data;

    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_SIGNAL:
        handle_signal(w, cqe);
        break;
    case RX_OP_ACCEPT:
        rx_accept_handle_cqe(w, cqe);
        break;
    case RX_OP_DNS:
        rx_resolver_handle_cqe(cqe);
        break;
    case RX_OP_NONE:
    case RX_OP_TIMEOUT:
        break;
    default:
        rx_conn_handle_cqe(w, cqe);
        break;
    }
}

static rx_int_t
setup_signals(rx_worker_t *w)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGWINCH);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal_fd = signalfd(-1, &set, SFD_CLOEXEC);
    if (signal_fd == -1) {
        rx_log_error(RX_LOG_EMERG, w->cycle->log, errno, "signalfd() failed");
        return RX_ERROR;
    }
    return RX_OK;
}

static bool
connections_left(rx_worker_t *w)
{
    return w->nfree != w->nconns;
}

/* Fast stop: close everything, then give in-flight operations a moment to
 * complete so that slots (and their pools) are freed cleanly. */
static void
terminate(rx_worker_t *w)
{
    rx_msec_t deadline;
    rx_uint_t i;

    rx_accept_stop(w);
    for (i = 0; i < w->nconns; i++) {
        rx_conn_close(&w->conns[i]);
    }
    rx_conn_free_closed(w);
    deadline = rx_current_msec + 1000;
    while (connections_left(w) && rx_current_msec < deadline) {
        if (rx_ring_wait(100) != RX_OK) {
            break;
        }
        rx_time_update();
        rx_ring_dispatch(dispatch, w);
        rx_conn_rearm_sweep(w);
        rx_conn_free_closed(w);
    }
}

static void
heap_setup(void)
{
    /* Requests allocate and free buffers of a few KiB all the time: glibc
     * would give the top of the heap back after each burst (brk, and a
     * TLB flush on every core the worker ran on) and fault it in again.
     * Keep up to 16 MiB of freed heap instead. */
    (void) mallopt(M_TRIM_THRESHOLD, 16 * 1024 * 1024);
    (void) mallopt(M_TOP_PAD, 1024 * 1024);
    /* Setting those turns off glibc's sliding mmap threshold: every block
     * of 128 KiB or more (a file read buffer, TLS output) would be mapped
     * and unmapped per response, its pages faulted in each time and the
     * unmap flushing the TLB on every core (measured: 3x the CPU of 1 MiB
     * responses over TLS). Blocks up to 4 MiB come from the heap. */
    (void) mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
}

rx_int_t
rx_worker_loop(rx_cycle_t *cycle, rx_uint_t index)
{
    rx_worker_t     *w = &rx_worker;
    rx_event_conf_t *ecf = rx_event_get_conf(cycle);
    rx_uint_t        i;
    rx_int_t         rc = RX_ERROR;

    memset(w, 0, sizeof(*w));
    w->cycle = cycle;
    w->index = index;
    heap_setup();
    w->shutdown_timer.node.index = RX_HEAP_NONE;
    close_idle.node.index = RX_HEAP_NONE;
    rx_mem_tidy_init(w);
    if (setup_signals(w) != RX_OK) {
        return RX_ERROR;
    }
    if (rx_ring_start(1024, ecf->use_epoll, cycle->log) != RX_OK) {
        goto done;
    }
    if (rx_conn_table_init(w, ecf->connections) != RX_OK) {
        goto done;
    }
    arm_signal_read();
    if (rx_event_init_connection == NULL) {
        rx_log_error(RX_LOG_EMERG, cycle->log, 0, "no protocol handles "
                     "connections");
        goto done;
    }
    rx_accept_init(w);
    for (i = 0; i < nstart; i++) {
        start_handlers[i](cycle);
    }

    rc = RX_OK;
    while (!w->terminate
           && !(w->quit && !connections_left(w) && !rx_accept_draining())) {
        if (rx_ring_wait(w->posted_head ? 0 : rx_timers_next_wait(w))
            != RX_OK) {
            rx_log_error(RX_LOG_ALERT, cycle->log, errno, rx_ring_epoll
                         ? "epoll_wait() failed"
                         : "io_uring_submit_and_wait() failed");
            rc = RX_ERROR;
            break;
        }
        rx_time_update();
        rx_ring_dispatch(dispatch, w);
        rx_conn_quiet_sweep(w);
        rx_posted_run(w);
        rx_timers_expire(w);
        rx_conn_rearm_sweep(w);
        rx_conn_free_closed(w);
        rx_mem_tidy_turn(w);
    }
    if (w->terminate || connections_left(w)) {
        terminate(w);
    }

done:
    for (i = 0; i < rx_modules_n; i++) {
        if (rx_modules[i]->exit_process) {
            rx_modules[i]->exit_process(cycle);
        }
    }
    rx_conn_table_free(w);
    rx_ring_exit();
    if (signal_fd != -1) {
        close(signal_fd);
        signal_fd = -1;
    }
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "exiting");
    return rc;
}
