/*
 * binary.c: the binary upgrade (USR2), both sides. The old master renames
 * its pid file to .oldbin and execs the binary at its argv[0] with the
 * listening sockets open and named in RINGX="fd;fd;..."; the new master
 * takes those sockets (NGINX's variable of the same form too, so that an
 * nginx master can hand over to ringx) instead of binding again.
 */
#include <sys/wait.h>
#include "core.h"
#include "cycle.h"
#include "process.h"
#include "proctitle.h"

#define RX_INHERIT_MAX  1024

typedef struct {
    int           fd;
    rx_sockaddr_t addr;
    bool          reuseport;
    bool          taken;      /* a listen of the first cycle uses it */
} rx_inherited_t;

static rx_inherited_t inherited[RX_INHERIT_MAX];
static rx_uint_t      ninherited;
static char         **saved_argv;
static pid_t          parent_pid;      /* the old master that started us */

pid_t rx_new_binary;                   /* the new master we started, or 0 */

/* argv as it was: process titles are written over the original. */
rx_int_t
rx_save_argv(int argc, char *const *argv)
{
    int i;

    saved_argv = calloc((size_t) argc + 1, sizeof(char *));
    if (saved_argv == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < argc; i++) {
        saved_argv[i] = strdup(argv[i]);
        if (saved_argv[i] == NULL) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* One fd of the variable: kept when it is a listening stream socket. */
static void
inherit_one(rx_log_t *log, int fd, const char *var)
{
    rx_inherited_t *in = &inherited[ninherited];
    int             v = 0;
    socklen_t       len = sizeof(v);

    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 || !v) {
        rx_log_error(RX_LOG_WARN, log, errno, "inherited fd %d in %s "
                     "environment variable is not a listening socket, "
                     "ignored", fd, var);
        return;
    }
    in->addr.len = sizeof(in->addr.u);
    if (getsockname(fd, &in->addr.u.sa, &in->addr.len) == -1) {
        rx_log_error(RX_LOG_WARN, log, errno, "getsockname() of inherited "
                     "socket %d failed, ignored", fd);
        return;
    }
    len = sizeof(v);
    v = 0;
    getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &v, &len);
    in->reuseport = v != 0;
    in->fd = fd;
    in->taken = false;
    (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
    ninherited++;
}

/*
 * At start: the sockets a previous master handed over, from RINGX (or
 * NGINX). A malformed number ends the list, as nginx reads it. The
 * variable is removed so that nothing started later sees stale fds.
 */
void
rx_inherit_sockets(rx_log_t *log)
{
    const char *var = "RINGX", *p, *s;
    char       *end;
    long        fd;

    s = getenv(var);
    if (s == NULL) {
        var = "NGINX";
        s = getenv(var);
    }
    if (s == NULL) {
        return;
    }
    rx_log_error(RX_LOG_NOTICE, log, 0, "using inherited sockets from \"%s\"",
                 s);
    parent_pid = getppid();
    for (p = s; *p && ninherited < RX_INHERIT_MAX; p = end + 1) {
        errno = 0;
        fd = strtol(p, &end, 10);
        if (end == p || (*end != ';' && *end != ':') || errno || fd < 0
            || fd > INT_MAX) {
            rx_log_error(RX_LOG_EMERG, log, 0, "invalid socket number \"%s\" "
                         "in %s environment variable, ignoring the rest of "
                         "the variable", p, var);
            break;
        }
        inherit_one(log, (int) fd, var);
    }
    rx_env_unset("RINGX");
    rx_env_unset("NGINX");
}

/* A handed-over socket bound where ls wants one, or -1. */
int
rx_inherited_take(const rx_listening_t *ls)
{
    rx_uint_t i;

    for (i = 0; i < ninherited; i++) {
        if (!inherited[i].taken && inherited[i].reuseport == ls->reuseport
            && rx_sockaddr_eq(&inherited[i].addr, &ls->addr)) {
            inherited[i].taken = true;
            return inherited[i].fd;
        }
    }
    return -1;
}

/* After the first cycle: sockets it did not want are closed. */
void
rx_inherited_close_unused(void)
{
    rx_uint_t i;

    for (i = 0; i < ninherited; i++) {
        if (!inherited[i].taken) {
            close(inherited[i].fd);
        }
    }
    ninherited = 0;
}

/* Started by an old master's USR2: no daemonizing (we are its child). */
bool
rx_started_by_upgrade(void)
{
    return parent_pid != 0;
}

bool
rx_old_master_running(void)
{
    return parent_pid > 1 && getppid() == parent_pid;
}

/* A unix socket file is left in place while another master uses the
 * socket: the new binary we started, or the old master that started us. */
bool
rx_listening_shared(void)
{
    return rx_new_binary != 0 || rx_old_master_running();
}

static rx_int_t
oldbin_name(rx_cycle_t *cycle, char *buf, size_t size)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    int             n;

    n = snprintf(buf, size, "%s.oldbin", ccf->pid.data);
    return n > 0 && (size_t) n < size ? RX_OK : RX_ERROR;
}

/* The pid file goes to .oldbin while a new master runs, and back (or the
 * reverse way, when back is true). */
static rx_int_t
rename_pidfile(rx_cycle_t *cycle, bool back)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    char            old[PATH_MAX + 8];
    const char     *from, *to;

    if (oldbin_name(cycle, old, sizeof(old)) != RX_OK) {
        return RX_ERROR;
    }
    from = back ? old : ccf->pid.data;
    to = back ? ccf->pid.data : old;
    if (rename(from, to) == -1) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno, "rename() %s to %s "
                     "failed", from, to);
        return RX_ERROR;
    }
    return RX_OK;
}

/* The new binary's environment: ours with RINGX set to the sockets. */
static char *
sockets_var(rx_cycle_t *cycle)
{
    rx_listening_t *ls = cycle->listening.elts;
    size_t          size = sizeof("RINGX=") + cycle->listening.nelts * 12;
    char           *var = malloc(size), *p;
    rx_uint_t       i;

    if (var == NULL) {
        return NULL;
    }
    p = var + sprintf(var, "RINGX=");
    for (i = 0; i < cycle->listening.nelts; i++) {
        if (ls[i].fd != -1 && !ls[i].remove) {
            p += sprintf(p, "%d;", ls[i].fd);
        }
    }
    return var;
}

/* In the child: the sockets survive the exec, then the new binary. */
static void
exec_child(rx_cycle_t *cycle, char *var)
{
    rx_listening_t *ls = cycle->listening.elts;
    sigset_t        none;
    rx_uint_t       i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (ls[i].fd != -1 && !ls[i].remove) {
            (void) fcntl(ls[i].fd, F_SETFD, 0);
        }
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    putenv(var);
    execvp(saved_argv[0], saved_argv);
    rx_log_error(RX_LOG_ALERT, cycle->log, errno, "execve() failed while "
                 "executing new binary process \"%s\"", saved_argv[0]);
    _exit(1);
}

/* USR2 in the master: starts the new binary (its pid, or 0 when none
 * could be started: logged, the pid file back in place). */
pid_t
rx_exec_new_binary(rx_cycle_t *cycle)
{
    char  *var;
    pid_t  pid;

    if (saved_argv == NULL || saved_argv[0] == NULL) {
        return 0;
    }
    var = sockets_var(cycle);
    if (var == NULL || rename_pidfile(cycle, false) != RX_OK) {
        free(var);
        return 0;
    }
    pid = fork();
    if (pid == 0) {
        exec_child(cycle, var);        /* never returns */
    }
    free(var);
    if (pid == -1) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno, "fork() failed while "
                     "executing new binary process \"%s\"", saved_argv[0]);
        rename_pidfile(cycle, true);
        return 0;
    }
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "start new binary process %d",
                 (int) pid);
    return pid;
}

/* The new master left (its upgrade failed, or it was told to quit): our
 * pid file is the pid file again. */
void
rx_new_binary_exited(rx_cycle_t *cycle, int status)
{
    pid_t pid = rx_new_binary;

    rx_new_binary = 0;
    rename_pidfile(cycle, true);
    rx_log_error(RX_LOG_NOTICE, cycle->log, 0, "new binary process %d exited "
                 "with code %d; this master's pid file is back in place",
                 (int) pid, WIFEXITED(status) ? WEXITSTATUS(status)
                 : 128 + WTERMSIG(status));
}

/* At exit: the pid file this master holds (.oldbin during an upgrade). */
void
rx_delete_own_pidfile(rx_cycle_t *cycle)
{
    char old[PATH_MAX + 8];

    if (rx_new_binary == 0) {
        rx_delete_pidfile(cycle);
    } else if (oldbin_name(cycle, old, sizeof(old)) == RX_OK
               && unlink(old) == -1 && errno != ENOENT) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno, "unlink() \"%s\" failed",
                     old);
    }
}
