/*
 * log.h: error logs. A log is a chain of targets (a file, stderr or a syslog
 * server, core/syslog.h), each with its own level; lines are written in
 * nginx's format
 *   2026/11/29 12:00:00 [warn] 1234#1234: message (24: Too many open files)
 * A log may carry a context handler that appends ", client: ..." etc.
 */
#ifndef RX_LOG_H
#define RX_LOG_H

#define RX_LOG_STDERR  0
#define RX_LOG_EMERG   1
#define RX_LOG_ALERT   2
#define RX_LOG_CRIT    3
#define RX_LOG_ERR     4
#define RX_LOG_WARN    5
#define RX_LOG_NOTICE  6
#define RX_LOG_INFO    7
#define RX_LOG_DEBUG   8

/* An open file shared by logs; reopened on USR1. */
struct rx_open_file_s {
    int       fd;
    rx_str_t  name;     /* NUL-terminated; empty for stderr */
};

typedef size_t (*rx_log_handler_pt)(rx_log_t *log, char *buf, size_t len);

struct rx_log_s {
    unsigned           level;
    rx_open_file_t    *file;       /* NULL for a syslog target */
    rx_syslog_peer_t  *syslog;      /* a syslog target: the line goes there */
    rx_uint_t          connection;  /* "*N " in lines when non-zero */
    const char        *action;      /* "while <action>" when set */
    rx_log_handler_pt  handler;     /* appends context; may be NULL */
    void              *data;        /* for handler */
    rx_log_t          *next;        /* further targets (several error_log) */
};

/* Errors of level <= warn also go to stderr with a "ringx: [level] " prefix
 * while rx_use_stderr is set (start-up, -t, -s), as nginx does. */
extern bool rx_use_stderr;
extern rx_open_file_t rx_stderr_file;
extern const char *rx_log_levels[];

void rx_log_error(unsigned level, rx_log_t *log, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rx_log_verror(unsigned level, rx_log_t *log, int err, const char *fmt,
    va_list args);

/* "ringx: message (err: text)" on stderr, for the command line. */
void rx_log_stderr(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void rx_write_stderr(const char *text);

/*
 * Rate limiting for messages that can repeat in a loop: returns true when
 * the caller may log now, at most once per `interval` ms per limiter.
 */
typedef struct { rx_msec_t last; rx_uint_t suppressed; } rx_log_limit_t;
bool rx_log_limit_allow(rx_log_limit_t *lim, rx_msec_t interval);

/* Parses "file [level]"; used by error_log and -e. */
rx_int_t rx_log_level_by_name(const rx_str_t *name);

/* The first target of the chain that writes to a file (or stderr), or
 * NULL. After rx_log_open_default() a cycle's log always has one. */
rx_log_t *rx_log_get_file_log(rx_log_t *log);

#if (RX_DEBUG)
#define rx_log_debug(log, err, ...)                                           \
    do {                                                                      \
        if ((log)->level >= RX_LOG_DEBUG)                                     \
            rx_log_error(RX_LOG_DEBUG, log, err, __VA_ARGS__);                \
    } while (0)
#else
#define rx_log_debug(log, err, ...)  do { } while (0)
#endif

#endif /* RX_LOG_H */
