/*
 * worker_loop.c: a worker's life: its ring, its signals (read through a
 * signalfd on the ring, so none is lost between checks), and the loop
 * that dispatches completions until the worker is told to leave.
 */
#include <sys/signalfd.h>
#include "core.h"
#include "cycle.h"
#include "clock.h"
#include "process.h"
#include "proctitle.h"
#include "ring.h"

typedef struct {
    rx_cycle_t              *cycle;
    int                      signal_fd;
    struct signalfd_siginfo  siginfo;
    bool                     quit;       /* graceful: finish, then leave */
    bool                     terminate;  /* fast: leave now */
} rx_worker_state_t;

static void
arm_signal_read(rx_worker_state_t *ws)
{
    rx_ring_read(ws->signal_fd, &ws->siginfo, sizeof(ws->siginfo), 0,
                 rx_op_pack(RX_OP_SIGNAL, 0, 0));
}

static void
handle_signal(rx_worker_state_t *ws, const rx_cqe_t *cqe)
{
    if (cqe->res != (int32_t) sizeof(ws->siginfo)) {
        if (cqe->res < 0 && cqe->res != -EINTR && cqe->res != -EAGAIN) {
            rx_log_error(RX_LOG_ALERT, ws->cycle->log, -cqe->res,
                         "read() from signalfd failed");
            ws->terminate = true;
            return;
        }
        arm_signal_read(ws);
        return;
    }
    switch (ws->siginfo.ssi_signo) {
    case SIGQUIT:
        if (!ws->quit) {
            rx_log_error(RX_LOG_NOTICE, ws->cycle->log, 0,
                         "gracefully shutting down");
            rx_setproctitle(RINGX_NAME ": worker process is shutting down");
        }
        ws->quit = true;
        break;
    case SIGTERM:
    case SIGINT:
        ws->terminate = true;
        break;
    case SIGUSR1:
        rx_log_error(RX_LOG_NOTICE, ws->cycle->log, 0, "reopening logs");
        rx_reopen_files(ws->cycle);
        break;
    default:
        break;
    }
    arm_signal_read(ws);
}

static void
dispatch(const rx_cqe_t *cqe, void *data)
{
    rx_worker_state_t *ws = data;

    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_SIGNAL:
        handle_signal(ws, cqe);
        break;
    default:
        break;
    }
}

rx_int_t
rx_worker_loop(rx_cycle_t *cycle, rx_uint_t worker)
{
    rx_worker_state_t ws;
    sigset_t          set;
    rx_uint_t         i;
    rx_int_t          rc = RX_OK;

    memset(&ws, 0, sizeof(ws));
    ws.cycle = cycle;
    sigemptyset(&set);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGWINCH);
    sigprocmask(SIG_BLOCK, &set, NULL);
    ws.signal_fd = signalfd(-1, &set, SFD_CLOEXEC);
    if (ws.signal_fd == -1) {
        rx_log_error(RX_LOG_EMERG, cycle->log, errno, "signalfd() failed");
        return RX_ERROR;
    }
    if (rx_ring_init(256, cycle->log) != RX_OK) {
        close(ws.signal_fd);
        return RX_ERROR;
    }
    arm_signal_read(&ws);

    while (!ws.terminate && !ws.quit) {
        rx_time_update();
        if (rx_ring_run(-1, dispatch, &ws) == RX_ERROR) {
            rx_log_error(RX_LOG_ALERT, cycle->log, errno,
                         "io_uring_submit_and_wait() failed");
            rc = RX_ERROR;
            break;
        }
    }

    for (i = 0; i < rx_modules_n; i++) {
        if (rx_modules[i]->exit_process) {
            rx_modules[i]->exit_process(cycle);
        }
    }
    rx_ring_exit();
    close(ws.signal_fd);
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "exiting");
    return rc;
}
