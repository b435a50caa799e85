/*
 * process.c: the master process: forks workers, respawns those that die,
 * and turns signals into reloads, log reopening and stops. It never serves
 * a request.
 */
#include <sys/time.h>
#include <sys/wait.h>
#include "core.h"
#include "cycle.h"
#include "clock.h"
#include "process.h"
#include "counters.h"
#include "proctitle.h"

volatile sig_atomic_t rx_quit, rx_terminate, rx_reconfigure, rx_reopen,
    rx_noaccept, rx_reap, rx_alarm, rx_change_binary;

typedef struct {
    pid_t      pid;           /* 0: free slot */
    rx_uint_t  index;         /* worker number: affinity, reuseport socket */
    rx_uint_t  generation;    /* cycle generation it serves */
    rx_msec_t  started;
    rx_uint_t  quick_deaths;  /* consecutive deaths within a second of start */
    rx_msec_t  respawn_at;    /* delayed respawn, 0: none */
    rx_msec_t  kill_at;       /* asked to leave: SIGKILL if still here then */
    bool       exiting;       /* asked to leave: not respawned */
    bool       respawn;       /* waiting for a delayed respawn */
} rx_worker_t;

static rx_worker_t workers[RX_MAX_WORKERS];
static rx_uint_t   generation;
static sigset_t    master_mask;

static void
signal_handler(int signo)
{
    int saved = errno;

    switch (signo) {
    case SIGQUIT:  rx_quit = 1; break;
    case SIGTERM:
    case SIGINT:   rx_terminate = 1; break;
    case SIGHUP:   rx_reconfigure = 1; break;
    case SIGUSR1:  rx_reopen = 1; break;
    case SIGWINCH: rx_noaccept = 1; break;
    case SIGCHLD:  rx_reap = 1; break;
    case SIGALRM:  rx_alarm = 1; break;
    case SIGUSR2:  rx_change_binary = 1; break;
    }
    errno = saved;
}

rx_int_t
rx_init_signals(rx_log_t *log)
{
    static const int handled[] = { SIGQUIT, SIGTERM, SIGINT, SIGHUP, SIGUSR1,
                                   SIGWINCH, SIGCHLD, SIGALRM, SIGUSR2 };
    struct sigaction sa;
    size_t           i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = signal_handler;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < rx_nelems(handled); i++) {
        if (sigaction(handled[i], &sa, NULL) == -1) {
            rx_log_error(RX_LOG_EMERG, log, errno, "sigaction(%d) failed",
                         handled[i]);
            return RX_ERROR;
        }
    }
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGSYS, &sa, NULL);

    /* Signals are only taken inside sigsuspend() (master) or through a
     * signalfd (workers), so they are blocked everywhere else. */
    sigemptyset(&master_mask);
    for (i = 0; i < rx_nelems(handled); i++) {
        sigaddset(&master_mask, handled[i]);
    }
    if (sigprocmask(SIG_BLOCK, &master_mask, NULL) == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "sigprocmask() failed");
        return RX_ERROR;
    }
    return RX_OK;
}

rx_int_t
rx_daemon(rx_log_t *log)
{
    int fd;

    switch (fork()) {
    case -1:
        rx_log_error(RX_LOG_EMERG, log, errno, "fork() failed");
        return RX_ERROR;
    case 0:
        break;
    default:
        _exit(0);
    }
    if (setsid() == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "setsid() failed");
        return RX_ERROR;
    }
    umask(0);
    fd = open("/dev/null", O_RDWR);
    if (fd == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "open(\"/dev/null\") failed");
        return RX_ERROR;
    }
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    if (fd > STDERR_FILENO) {
        close(fd);
    }
    return RX_OK;
}

static rx_core_conf_t *
core_conf(rx_cycle_t *cycle)
{
    return rx_get_conf(cycle->conf_ctx, rx_core_module);
}

static void
worker_main(rx_cycle_t *cycle, rx_uint_t index)
{
    rx_int_t rc;

    rx_process = RX_PROCESS_WORKER;
    rx_setproctitle(RINGX_NAME ": worker process");
    if (rx_worker_init(cycle, index, true) != RX_OK) {
        exit(RX_EXIT_FATAL);
    }
    rc = rx_worker_loop(cycle, index);
    rx_free_cycle(cycle);
    exit(rc == RX_OK ? 0 : 1);
}

static rx_int_t
spawn(rx_cycle_t *cycle, rx_worker_t *w)
{
    pid_t pid = fork();

    if (pid == -1) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno,
                     "fork() failed while spawning worker process");
        return RX_ERROR;
    }
    if (pid == 0) {
        worker_main(cycle, w->index);   /* never returns */
    }
    w->pid = pid;
    w->started = rx_current_msec;
    w->exiting = false;
    w->respawn = false;
    w->kill_at = 0;
    w->generation = generation;
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "start worker process %d",
                 (int) pid);
    return RX_OK;
}

static rx_worker_t *
free_slot(void)
{
    rx_uint_t i;

    for (i = 0; i < RX_MAX_WORKERS; i++) {
        if (workers[i].pid == 0 && !workers[i].respawn) {
            return &workers[i];
        }
    }
    return NULL;
}

static void
start_workers(rx_cycle_t *cycle)
{
    rx_int_t     n = core_conf(cycle)->worker_processes, i;
    rx_worker_t *w;

    for (i = 0; i < n; i++) {
        w = free_slot();
        if (w == NULL) {
            rx_log_error(RX_LOG_ALERT, cycle->log, 0, "too many worker "
                         "processes, old ones have not exited yet");
            return;
        }
        memset(w, 0, sizeof(*w));
        w->index = (rx_uint_t) i;
        spawn(cycle, w);
    }
}

/*
 * A worker asked to leave gets a deadline after which it is killed: 3 s
 * after TERM; after QUIT, worker_shutdown_timeout (which the worker
 * enforces itself) and 2 s more for one that is stuck or stopped and
 * cannot. Without worker_shutdown_timeout a QUIT waits for the requests.
 */
static void
set_kill_deadline(rx_cycle_t *cycle, rx_worker_t *w, int signo)
{
    rx_msec_t timeout = core_conf(cycle)->shutdown_timeout, at = 0;

    if (signo == SIGTERM) {
        at = rx_current_msec + 3000;
    } else if (signo == SIGQUIT && timeout > 0) {
        at = rx_current_msec + timeout + 2000;
    }
    if (at && (w->kill_at == 0 || at < w->kill_at)) {
        w->kill_at = at;
    }
}

/* Signals every live worker (of one generation, or all when gen is -1). */
static void
signal_workers(rx_cycle_t *cycle, int signo, long gen)
{
    rx_uint_t i;

    for (i = 0; i < RX_MAX_WORKERS; i++) {
        rx_worker_t *w = &workers[i];

        if (gen != -1 && w->generation != (rx_uint_t) gen) {
            continue;
        }
        if (w->respawn && (signo == SIGQUIT || signo == SIGTERM)) {
            w->respawn = false;         /* a pending respawn is cancelled */
            continue;
        }
        if (w->pid == 0) {
            continue;
        }
        if (signo == SIGQUIT || signo == SIGTERM || signo == SIGKILL) {
            w->exiting = true;
            set_kill_deadline(cycle, w, signo);
        }
        if (kill(w->pid, signo) == -1 && errno != ESRCH) {
            rx_log_error(RX_LOG_ALERT, cycle->log, errno, "kill(%d, %d) failed",
                         (int) w->pid, signo);
        }
    }
}

static void
schedule_alarm(rx_msec_t ms)
{
    struct itimerval itv;

    memset(&itv, 0, sizeof(itv));
    itv.it_value.tv_sec = ms / 1000;
    itv.it_value.tv_usec = (ms % 1000) * 1000;
    setitimer(ITIMER_REAL, &itv, NULL);
}

/* One more of the master's counters (the metrics module shows them). */
static void
count_master(size_t field)
{
    rx_counters_master_t *m = rx_counters_master();

    if (m) {
        rx_counters_add((int64_t *) ((char *) m + field), 1);
    }
}

/* A worker died: log how, and respawn it unless it was asked to leave or
 * cannot start; a worker that keeps dying at start is delayed. */
static void
worker_died(rx_cycle_t *cycle, rx_worker_t *w, int status)
{
    bool     fatal = WIFEXITED(status) && WEXITSTATUS(status) == RX_EXIT_FATAL;
    rx_msec_t delay;

    if (WIFSIGNALED(status)) {
        rx_log_error(RX_LOG_ALERT, cycle->log, 0, "worker process %d exited on "
                     "signal %d%s", (int) w->pid, WTERMSIG(status),
                     WCOREDUMP(status) ? " (core dumped)" : "");
    } else {
        /* code 0 is a clean exit (a signal to the whole process group
         * reaches workers before the master); anything else is a failure */
        rx_log_error(w->exiting || WEXITSTATUS(status) == 0 ? RX_LOG_NOTICE
                     : RX_LOG_ALERT, cycle->log, 0,
                     "worker process %d exited with code %d", (int) w->pid,
                     WEXITSTATUS(status));
    }
    w->pid = 0;
    if (w->exiting || rx_quit || rx_terminate || rx_noaccept
        || w->generation != generation) {
        return;
    }
    count_master(offsetof(rx_counters_master_t, worker_crashes));
    if (fatal) {
        rx_log_error(RX_LOG_ALERT, cycle->log, 0, "worker process exited with "
                     "fatal code %d and cannot be respawned", RX_EXIT_FATAL);
        return;
    }
    w->quick_deaths = rx_current_msec - w->started < 1000 ? w->quick_deaths + 1 : 0;
    if (w->quick_deaths < 3) {
        count_master(offsetof(rx_counters_master_t, respawns));
        spawn(cycle, w);
        return;
    }
    delay = rx_min((rx_msec_t) 1000 << rx_min(w->quick_deaths - 3, 3u), 8000);
    rx_log_error(RX_LOG_ALERT, cycle->log, 0, "worker process %lu is dying "
                 "right after start; respawning it in %ld ms",
                 (unsigned long) w->index, (long) delay);
    w->respawn = true;
    w->respawn_at = rx_current_msec + delay;    /* run_timers sets the alarm */
}

static void
reap_children(rx_cycle_t *cycle)
{
    int       status;
    pid_t     pid;
    rx_uint_t i;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == rx_new_binary && rx_new_binary != 0) {
            rx_new_binary_exited(cycle, status);
            continue;
        }
        for (i = 0; i < RX_MAX_WORKERS; i++) {
            if (workers[i].pid == pid) {
                worker_died(cycle, &workers[i], status);
                break;
            }
        }
    }
}

/*
 * The master's timers: delayed respawns that are due, and workers past
 * their kill deadline. The alarm is set again for the next one due.
 */
static void
run_timers(rx_cycle_t *cycle)
{
    rx_msec_t next = 0, at;
    rx_uint_t i;

    for (i = 0; i < RX_MAX_WORKERS; i++) {
        rx_worker_t *w = &workers[i];

        if (w->respawn && w->respawn_at <= rx_current_msec) {
            count_master(offsetof(rx_counters_master_t, respawns));
            spawn(cycle, w);
        }
        if (w->pid != 0 && w->kill_at && w->kill_at <= rx_current_msec) {
            rx_log_error(RX_LOG_ALERT, cycle->log, 0, "worker process %d did "
                         "not exit in time, sending SIGKILL", (int) w->pid);
            w->kill_at = 0;
            if (kill(w->pid, SIGKILL) == -1 && errno != ESRCH) {
                rx_log_error(RX_LOG_ALERT, cycle->log, errno,
                             "kill(%d, SIGKILL) failed", (int) w->pid);
            }
        }
        at = w->respawn ? w->respawn_at : w->pid != 0 ? w->kill_at : 0;
        if (at && (next == 0 || at < next)) {
            next = at;
        }
    }
    if (next) {
        schedule_alarm(next > rx_current_msec ? next - rx_current_msec : 1);
    }
}

/* Workers still alive or waiting for a respawn: 0 lets a stop finish. */
static rx_uint_t
count_live(void)
{
    rx_uint_t i, live = 0;

    for (i = 0; i < RX_MAX_WORKERS; i++) {
        live += workers[i].pid != 0 || workers[i].respawn;
    }
    return live;
}

static void
master_exit(rx_cycle_t *cycle)
{
    rx_uint_t i;

    rx_delete_own_pidfile(cycle);
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "exit");
    for (i = 0; i < rx_modules_n; i++) {
        if (rx_modules[i]->exit_master) {
            rx_modules[i]->exit_master(cycle);
        }
    }
    rx_free_cycle(cycle);
    exit(0);
}

static rx_cycle_t *
reload(rx_cycle_t *cycle)
{
    rx_cycle_t *fresh;

    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "reconfiguring");
    fresh = rx_init_cycle(cycle);
    if (fresh == NULL) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "reload failed: the running "
                     "configuration stays in use");
        count_master(offsetof(rx_counters_master_t, reload_failures));
        return cycle;
    }
    rx_cycle = fresh;
    generation++;
    count_master(offsetof(rx_counters_master_t, reloads));
    /* the sockets the new cycle did not take over go before the fork: a
     * new worker would hold them open, unserved, and the kernel would
     * still queue connections there (a removed listen address, or the
     * socket of a worker a reload took away from a reuseport group) */
    rx_close_listening_sockets(cycle);
    start_workers(fresh);
    /* the old generation finishes its requests and leaves */
    signal_workers(fresh, SIGQUIT, (long) generation - 1);
    rx_free_cycle(cycle);
    return fresh;
}

/* Workers of this cycle in a new generation: after WINCH, or a HUP that
 * rolls an upgrade back. The ones still leaving are the old generation. */
static void
restart_workers(rx_cycle_t *cycle, const char *why)
{
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "%s", why);
    /* the new binary set the reuseport groups' selectors to its worker
     * count: back to ours before its workers go, or a socket only it
     * served would still be picked (and its queue reset as it closes) */
    rx_listening_select_workers(cycle);
    generation++;
    start_workers(cycle);
    signal_workers(cycle, SIGQUIT, (long) generation - 1);
}

static void
set_master_title(int argc, char **argv)
{
    char   title[1024];
    size_t n = (size_t) snprintf(title, sizeof(title),
                                 RINGX_NAME ": master process");
    int    i;

    for (i = 0; i < argc && n < sizeof(title); i++) {
        n += (size_t) snprintf(title + n, sizeof(title) - n, " %s", argv[i]);
    }
    rx_setproctitle(title);
}

/* TERM and QUIT passed on to the workers, each once. A pending respawn is
 * cancelled by TERM: with none alive, the master's count of live children
 * is what lets it go (it used to wait for a SIGCHLD that never came). */
static void
pass_stop_signals(rx_cycle_t *cycle, bool *term_sent, bool *quit_sent)
{
    if (rx_terminate && !*term_sent) {
        *term_sent = true;
        signal_workers(cycle, SIGTERM, -1);
    }
    if (rx_quit && !*quit_sent && !rx_terminate) {
        *quit_sent = true;
        rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "gracefully shutting "
                     "down");
        signal_workers(cycle, SIGQUIT, -1);
        rx_close_listening_sockets(cycle);
    }
}

/* HUP: a new configuration, or after WINCH with a new binary running, a
 * rollback. Returns the cycle that serves from now on. */
static rx_cycle_t *
reconfigure(rx_cycle_t *cycle)
{
    rx_reconfigure = 0;
    rx_noaccept = 0;
    if (rx_new_binary != 0) {
        /* a rollback: workers again, with the configuration this
         * master has (nginx does not reread it either) */
        restart_workers(cycle, "starting worker processes again");
        return cycle;
    }
    return reload(cycle);
}

/* USR2: start the new binary, unless one (or an old master) still runs. */
static void
change_binary(rx_cycle_t *cycle)
{
    rx_change_binary = 0;
    if (rx_new_binary != 0) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "USR2 ignored: new "
                     "binary process %d is still running",
                     (int) rx_new_binary);
    } else if (rx_old_master_running()) {
        /* its .oldbin is the old master's pid file: a second
         * rename would overwrite it (nginx ignores it too) */
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "USR2 ignored: the "
                     "old master process %d is still running",
                     (int) getppid());
    } else {
        rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "changing binary");
        rx_new_binary = rx_exec_new_binary(cycle);
    }
}

/* The master's loop: wait for a signal, act on each flag the handlers set
 * (one pass handles all that came), run the respawn timers. */
void
rx_master_process_cycle(rx_cycle_t *cycle, int argc, char **argv)
{
    sigset_t  wait_mask;
    bool      term_sent = false, quit_sent = false, noaccepting = false;

    rx_process = RX_PROCESS_MASTER;
    set_master_title(argc, argv);
    sigemptyset(&wait_mask);
    start_workers(cycle);

    for ( ;; ) {
        sigsuspend(&wait_mask);
        rx_time_update();

        if (rx_reap) {
            pid_t new_binary = rx_new_binary;

            rx_reap = 0;
            reap_children(cycle);
            if (noaccepting && new_binary != 0 && rx_new_binary == 0
                && !rx_quit && !rx_terminate) {
                /* the upgrade failed after WINCH: nobody would serve */
                restart_workers(cycle, "the new binary exited: starting "
                                "worker processes again");
                noaccepting = false;
            }
        }
        rx_alarm = 0;
        pass_stop_signals(cycle, &term_sent, &quit_sent);
        if (rx_terminate || rx_quit) {
            if (count_live() == 0) {
                master_exit(cycle);
            }
            run_timers(cycle);
            continue;
        }
        if (rx_reconfigure) {
            noaccepting = false;
            cycle = reconfigure(cycle);
        }
        if (rx_change_binary) {
            change_binary(cycle);
        }
        if (rx_reopen) {
            rx_reopen = 0;
            rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "reopening logs");
            rx_reopen_files(cycle);
            signal_workers(cycle, SIGUSR1, -1);
        }
        if (rx_noaccept) {
            rx_noaccept = 0;
            rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "gracefully shutting "
                         "down worker processes (WINCH); HUP starts them again");
            signal_workers(cycle, SIGQUIT, -1);
            noaccepting = true;
        }
        run_timers(cycle);
    }
}

/* master_process off: this process is the only worker. */
void
rx_single_process_cycle(rx_cycle_t *cycle)
{
    rx_int_t rc;

    /* the only process keeps its privileges, as nginx's does: it must
     * remove the pid file and reopen logs as the user that created them */
    if (rx_worker_init(cycle, 0, false) != RX_OK) {
        exit(RX_EXIT_FATAL);
    }
    rc = rx_worker_loop(cycle, 0);
    rx_delete_pidfile(cycle);
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "exit");
    rx_free_cycle(cycle);
    exit(rc == RX_OK ? 0 : 1);
}
