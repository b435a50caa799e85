/*
 * files.c: the pid file, and `-s signal` which reads it to signal a
 * running master.
 */
#include "core.h"
#include "cycle.h"
#include "process.h"

rx_int_t
rx_create_pidfile(rx_str_t *name, rx_log_t *log)
{
    char    text[32];
    int     fd, n;
    ssize_t w;

    fd = open(name->data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "open() \"%s\" failed",
                     name->data);
        return RX_ERROR;
    }
    n = snprintf(text, sizeof(text), "%d\n", (int) getpid());
    w = write(fd, text, (size_t) n);
    if (w != n) {
        rx_log_error(RX_LOG_EMERG, log, w == -1 ? errno : 0,
                     "write() to \"%s\" failed", name->data);
        close(fd);
        return RX_ERROR;
    }
    close(fd);
    return RX_OK;
}

void
rx_delete_pidfile(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);

    if (ccf && ccf->pid.data && unlink(ccf->pid.data) == -1 && errno != ENOENT) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno, "unlink() \"%s\" failed",
                     ccf->pid.data);
    }
}

static const struct {
    const char *name;
    int         signo;
} signal_names[] = {
    { "stop", SIGTERM }, { "quit", SIGQUIT }, { "reopen", SIGUSR1 },
    { "reload", SIGHUP },
};

int
rx_signal_by_name(const char *name)
{
    size_t i;

    for (i = 0; i < rx_nelems(signal_names); i++) {
        if (strcmp(name, signal_names[i].name) == 0) {
            return signal_names[i].signo;
        }
    }
    return 0;
}

/* -s: returns 0 on success, 1 after printing why it failed. */
rx_int_t
rx_signal_process(rx_cycle_t *cycle, const char *sig)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    char            buf[32];
    ssize_t         n;
    rx_int_t        pid;
    int             fd, signo = rx_signal_by_name(sig);

    fd = open(ccf->pid.data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        rx_log_error(RX_LOG_ERR, cycle->log, errno, "open() \"%s\" failed",
                     ccf->pid.data);
        return 1;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n == -1) {
        rx_log_error(RX_LOG_ERR, cycle->log, errno, "read() \"%s\" failed",
                     ccf->pid.data);
        return 1;
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'
                     || buf[n - 1] == ' ')) {
        n--;
    }
    buf[n] = '\0';
    pid = rx_atoi(buf, (size_t) n);
    if (pid <= 0 || pid > INT_MAX) {
        rx_log_error(RX_LOG_ERR, cycle->log, 0, "invalid PID number \"%s\" in "
                     "\"%s\"", buf, ccf->pid.data);
        return 1;
    }
    if (kill((pid_t) pid, signo) == -1) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno, "kill(%ld, %d) failed",
                     (long) pid, signo);
        return 1;
    }
    return 0;
}
