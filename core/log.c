/*
 * log.c: writing error-log lines in nginx's format to every target of a log
 * chain whose level admits them, plus stderr during start-up.
 */
#include "core.h"
#include "clock.h"
#include "syslog.h"

bool rx_use_stderr = true;
rx_open_file_t rx_stderr_file = { STDERR_FILENO, rx_null_string };

const char *rx_log_levels[] = {
    "", "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"
};

static size_t
append(char *buf, size_t pos, size_t size, const char *fmt, ...)
{
    va_list args;
    int     n;

    if (pos >= size) {
        return pos;
    }
    va_start(args, fmt);
    n = vsnprintf(buf + pos, size - pos, fmt, args);
    va_end(args);
    if (n < 0) {
        return pos;
    }
    return rx_min(pos + (size_t) n, size - 1);
}

static void
write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w == -1) {
            if (errno == EINTR) continue;
            return;
        }
        p += w;
        n -= (size_t) w;
    }
}

/* Formats "msg (err: text)" into buf; returns its length. */
static size_t
format_message(char *buf, size_t pos, size_t size, int err, const char *fmt,
    va_list args)
{
    int n = vsnprintf(buf + pos, size - pos, fmt, args);

    if (n > 0) {
        pos = rx_min(pos + (size_t) n, size - 1);
    }
    if (err) {
        pos = append(buf, pos, size, " (%d: %s)", err, strerror(err));
    }
    return pos;
}

void
rx_log_verror(unsigned level, rx_log_t *log, int err, const char *fmt,
    va_list args)
{
    char      line[RX_MAX_ERROR_STR];
    size_t    head, len, size = sizeof(line) - 1;   /* room for '\n' */
    rx_log_t *target;
    bool      wrote_stderr = false;
    va_list   copy;

    rx_time_update();
    head = append(line, 0, size, "%s [%s] %d#%d: ", rx_log_time,
                  rx_log_levels[level], (int) getpid(), (int) gettid());
    if (log && log->connection) {
        head = append(line, head, size, "*%lu ", (unsigned long) log->connection);
    }
    va_copy(copy, args);
    len = format_message(line, head, size, err, fmt, copy);
    va_end(copy);
    if (log && log->action) {
        len = append(line, len, size, " while %s", log->action);
    }
    if (log && log->handler) {
        len += log->handler(log, line + len, size - len);
    }
    line[len++] = '\n';

    for (target = log; target; target = target->next) {
        if (level > target->level) {
            continue;
        }
        if (target->syslog) {
            rx_syslog_write_error(target->syslog, level, line, len - 1);
            continue;
        }
        if (target->file == NULL || target->file->fd == -1) {
            continue;
        }
        write_all(target->file->fd, line, len);
        if (target->file->fd == STDERR_FILENO) {
            wrote_stderr = true;
        }
    }

    /* During start-up, important messages also go to the terminal in the
     * short form "ringx: [emerg] ...". */
    if (rx_use_stderr && level <= RX_LOG_WARN && !wrote_stderr) {
        char   msg[RX_MAX_ERROR_STR];
        size_t n = append(msg, 0, sizeof(msg) - 1, RINGX_NAME ": [%s] ",
                          rx_log_levels[level]);
        memcpy(msg + n, line + head, len - head);
        n += len - head;
        write_all(STDERR_FILENO, msg, rx_min(n, sizeof(msg)));
    }
}

void
rx_log_error(unsigned level, rx_log_t *log, int err, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    rx_log_verror(level, log, err, fmt, args);
    va_end(args);
}

void
rx_log_stderr(int err, const char *fmt, ...)
{
    char    buf[RX_MAX_ERROR_STR];
    size_t  n = append(buf, 0, sizeof(buf) - 1, RINGX_NAME ": ");
    va_list args;

    va_start(args, fmt);
    n = format_message(buf, n, sizeof(buf) - 1, err, fmt, args);
    va_end(args);
    buf[n++] = '\n';
    write_all(STDERR_FILENO, buf, n);
}

void
rx_write_stderr(const char *text)
{
    write_all(STDERR_FILENO, text, strlen(text));
}

bool
rx_log_limit_allow(rx_log_limit_t *lim, rx_msec_t interval)
{
    struct timespec ts;
    rx_msec_t       now;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    now = (rx_msec_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (lim->last != 0 && now - lim->last < interval) {
        lim->suppressed++;
        return false;
    }
    lim->last = now;
    return true;
}

rx_int_t
rx_log_level_by_name(const rx_str_t *name)
{
    rx_uint_t i;

    for (i = 1; i < rx_nelems(rx_log_levels); i++) {
        if (rx_str_eq(name, rx_log_levels[i])) {
            return (rx_int_t) i;
        }
    }
    return RX_ERROR;
}

rx_log_t *
rx_log_get_file_log(rx_log_t *log)
{
    for ( ; log; log = log->next) {
        if (log->file) {
            return log;
        }
    }
    return NULL;
}
