/*
 * access_log.c: nginx's ngx_http_log_module: log_format, access_log
 * (buffered or not, conditional, paths with variables, syslog), the ignored
 * open_log_file_cache, and the log-phase handler writing one line per
 * request in the location where processing ended.
 *
 * Lines go out with write(2) on an O_APPEND descriptor: a line is small, the
 * file is local, and one write per line (or per buffer) keeps lines whole
 * between workers without a ring round trip holding request memory. A
 * syslog line is one datagram on a non-blocking socket (core/syslog.c).
 * With gzip[=level] each write (a flushed buffer, or a line longer than
 * it) is one gzip member (modules/gzip_log.c), as in nginx.
 */
#include "http.h"
#include "http_script.h"
#include "clock.h"
#include "syslog.h"
#include "access_log.h"
#if (RX_HTTP_GZIP)
#include "gzip_log.h"
#endif

/* A log file as every access_log naming it shares it, with its buffer. */
typedef struct {
    rx_open_file_t  *file;
    char            *start;             /* buffer; NULL: unbuffered */
    char            *pos;
    char            *end;
    rx_msec_t        flush;             /* 0: no flush timer */
    rx_int_t         gzip;              /* 0: plain; else the level */
    rx_timer_t       timer;             /* armed when data enters */
    rx_log_limit_t   limit;             /* write() errors */
} log_file_t;

typedef struct {
    log_file_t               *file;     /* NULL: path has variables, or syslog */
    rx_http_complex_value_t  *path;     /* with variables: opened per line */
    rx_syslog_peer_t         *syslog;   /* "syslog:...": sent there */
    log_fmt_t                *format;
    rx_http_complex_value_t  *filter;   /* if=: skipped when "" or "0" */
    rx_log_limit_t            limit;    /* errors: open() of paths, syslog */
} log_t;

typedef struct {
    rx_array_t  formats;                /* log_fmt_t *; [0] is "combined" */
    rx_array_t  files;                  /* log_file_t * */
} log_main_conf_t;

typedef struct {
    rx_array_t  *logs;                  /* log_t; NULL: inherited */
    bool         off;                   /* access_log off at this level */
} log_loc_conf_t;

static const char *set_format(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_log(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static rx_int_t postconfiguration(rx_conf_t *cf);
static void *create_main_conf(rx_conf_t *cf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);
static void exit_process(rx_cycle_t *cycle);
static void flush_all(rx_cycle_t *cycle);

static const rx_command_t log_commands[] = {
    { "log_format", RX_HTTP_MAIN_CONF | RX_CONF_2MORE,
      set_format, RX_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "access_log", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_HTTP_LIF_CONF | RX_HTTP_LMT_CONF | RX_CONF_1MORE,
      set_log, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "open_log_file_cache", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1234,
      rx_conf_set_ignored, 0, 0,
      "logs with variables in their path are opened for each line" },
    rx_null_command
};

static const rx_http_module_t log_ctx = {
    preconfiguration, postconfiguration, create_main_conf, NULL, NULL, NULL,
    create_loc_conf, merge_loc_conf
};

rx_module_t rx_http_log_module = {
    "rx_http_log_module", 0, 0, RX_HTTP_MODULE, &log_ctx, log_commands,
    NULL, NULL, exit_process, NULL, flush_all
};

#define COMBINED_FORMAT                                                       \
    "$remote_addr - $remote_user [$time_local] \"$request\" $status "         \
    "$body_bytes_sent \"$http_referer\" \"$http_user_agent\""

/* ---- writing ---- */

/* Writes all of p; a regular file only stops short on an error. */
static void
write_fd(int fd, const char *name, const char *p, size_t n,
    rx_log_limit_t *limit, rx_log_t *log)
{
    ssize_t w;

    while (n) {
        w = write(fd, p, n);
        if (w == -1) {
            if (errno == EINTR) {
                continue;
            }
            if (rx_log_limit_allow(limit, 1000)) {
                rx_log_error(RX_LOG_ALERT, log, errno, "write() to \"%s\" "
                             "failed", name);
            }
            return;
        }
        p += w;
        n -= (size_t) w;
    }
}

/* Bytes to a log file: as they are, or as one gzip member. */
static void
write_file(log_file_t *lf, const char *p, size_t n, rx_log_t *log)
{
#if (RX_HTTP_GZIP)
    char   *z;
    size_t  zlen;

    if (lf->gzip) {
        z = rx_gzip_log_member((int) lf->gzip, p, n, &zlen, log);
        if (z == NULL) {
            return;                 /* logged; the lines are lost, as nginx */
        }
        write_fd(lf->file->fd, lf->file->name.data, z, zlen, &lf->limit, log);
        free(z);
        return;
    }
#endif
    write_fd(lf->file->fd, lf->file->name.data, p, n, &lf->limit, log);
}

static void
flush_file(log_file_t *lf, rx_log_t *log)
{
    if (rx_timer_is_set(&lf->timer)) {
        rx_timer_del(&lf->timer);
    }
    if (lf->pos > lf->start) {
        write_file(lf, lf->start, (size_t) (lf->pos - lf->start), log);
        lf->pos = lf->start;
    }
}

static void
flush_timer(rx_timer_t *t)
{
    flush_file(t->data, rx_cycle->log);
}

/* Every buffered line of cycle's logs to its file: at worker exit, and
 * before log files are reopened (USR1) so no line lands in the wrong one. */
static void
flush_all(rx_cycle_t *cycle)
{
    rx_http_conf_ctx_t  *ctx;
    log_main_conf_t     *lmcf;
    log_file_t         **files;
    rx_uint_t            i;

    ctx = cycle->conf_ctx ? cycle->conf_ctx[rx_http_module.index] : NULL;
    if (ctx == NULL) {
        return;                             /* no http block */
    }
    lmcf = ctx->main_conf[rx_http_log_module.ctx_index];
    files = lmcf->files.elts;
    for (i = 0; i < lmcf->files.nelts; i++) {
        if (files[i]->start) {
            flush_file(files[i], cycle->log);
        }
    }
}

static void
exit_process(rx_cycle_t *cycle)
{
    flush_all(cycle);
}

/* A path with variables: nginx's rules (no buffer, the request's root must
 * exist, opened and closed per line), and no "/../" out of the tree. */
static void
write_path(rx_http_request_t *r, log_t *log, const char *line, size_t len,
    rx_log_t *elog)
{
    rx_http_core_loc_conf_t *clcf;
    rx_str_t                 path;
    struct stat              st;
    char                    *name, *root;
    int                      fd;

    if (rx_http_complex_value(r, log->path, &path) != RX_OK
        || (name = rx_pstrdup(r->pool, &path)) == NULL) {
        return;
    }
    if (strlen(name) != path.len || strstr(name, "/../")
        || (path.len >= 3 && strcmp(name + path.len - 3, "/..") == 0)) {
        if (rx_log_limit_allow(&log->limit, 1000)) {
            rx_log_error(RX_LOG_ERR, elog, 0, "access_log path \"%s\" is "
                         "unsafe, line not written", name);
        }
        return;
    }
    clcf = r->loc_conf ? rx_http_get_module_loc_conf(r, rx_http_core_module)
                       : NULL;
    if (clcf && clcf->root.data) {
        root = rx_pstrdup(r->pool, &clcf->root);
        if (root == NULL || stat(root, &st) == -1 || !S_ISDIR(st.st_mode)) {
            if (rx_log_limit_allow(&log->limit, 1000)) {
                rx_log_error(RX_LOG_ERR, elog, errno, "testing \"%s\" "
                             "existence failed", root ? root : "root");
            }
            return;
        }
    }
    fd = open(name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        if (rx_log_limit_allow(&log->limit, 1000)) {
            rx_log_error(RX_LOG_ERR, elog, errno, "open() \"%s\" failed", name);
        }
        return;
    }
    write_fd(fd, name, line, len, &log->limit, elog);
    close(fd);
}

/* The line after the syslog header, as one datagram without its '\n' (a
 * datagram is sent whole or not at all). A failure is reported as nginx
 * does, but once a second. */
static void
write_syslog(rx_http_request_t *r, log_t *log, rx_log_t *elog)
{
    size_t  len = rx_http_log_line_len(r, log->format), size;
    char   *line = rx_pnalloc(r->pool, RX_SYSLOG_HEADER_MAX + len);

    if (line == NULL) {
        return;
    }
    size = rx_syslog_header(log->syslog, log->syslog->severity, line);
    size = (size_t) (rx_http_log_render(r, log->format, line + size) - line) - 1;
    if (rx_syslog_send(log->syslog, line, size) < 0
        && rx_log_limit_allow(&log->limit, 1000)) {
        rx_log_error(RX_LOG_WARN, elog, 0, "send() to syslog failed");
    }
}

static void
write_line(rx_http_request_t *r, log_t *log, rx_log_t *elog)
{
    log_file_t *lf = log->file;
    size_t      len = rx_http_log_line_len(r, log->format);
    char       *line, *end;

    if (lf && lf->start) {
        if (len > (size_t) (lf->end - lf->pos)) {
            flush_file(lf, elog);
        }
        if (len <= (size_t) (lf->end - lf->pos)) {
            if (lf->pos == lf->start && lf->flush) {
                rx_timer_add(&lf->timer, lf->flush);
            }
            lf->pos = rx_http_log_render(r, log->format, lf->pos);
            return;
        }
        /* longer than the whole buffer: straight to the file */
    }
    line = rx_pnalloc(r->pool, len);
    if (line == NULL) {
        return;
    }
    end = rx_http_log_render(r, log->format, line);
    if (lf) {
        write_file(lf, line, (size_t) (end - line), elog);
    } else {
        write_path(r, log, line, (size_t) (end - line), elog);
    }
}

/* if=condition: a line is written unless it evaluates to "" or "0". */
static bool
wanted(rx_http_request_t *r, const log_t *log)
{
    rx_str_t val;

    if (log->filter == NULL) {
        return true;
    }
    if (rx_http_complex_value(r, log->filter, &val) != RX_OK) {
        return false;
    }
    return !(val.len == 0 || (val.len == 1 && val.data[0] == '0'));
}

static rx_int_t
log_handler(rx_http_request_t *r)
{
    log_loc_conf_t *llcf;
    log_t          *log;
    rx_log_t       *elog;
    rx_uint_t       i;

    if (r->loc_conf == NULL) {
        return RX_OK;
    }
    llcf = rx_http_get_module_loc_conf(r, rx_http_log_module);
    if (llcf->off || llcf->logs == NULL) {
        return RX_OK;
    }
    elog = r->conn ? &r->conn->log : rx_cycle->log;
    log = llcf->logs->elts;
    for (i = 0; i < llcf->logs->nelts; i++) {
        if (wanted(r, &log[i])) {
            (log[i].syslog ? write_syslog : write_line)(r, &log[i], elog);
        }
    }
    return RX_OK;
}

/* ---- configuration ---- */

static void *
create_main_conf(rx_conf_t *cf)
{
    log_main_conf_t *lmcf = rx_pcalloc(cf->pool, sizeof(*lmcf));

    if (lmcf == NULL
        || rx_array_init(&lmcf->formats, cf->pool, 4, sizeof(void *)) != RX_OK
        || rx_array_init(&lmcf->files, cf->pool, 4, sizeof(void *)) != RX_OK) {
        return NULL;
    }
    return lmcf;
}

static rx_int_t
add_format(rx_conf_t *cf, log_main_conf_t *lmcf, const rx_str_t *name,
    log_escape_t escape, const rx_str_t *text)
{
    log_fmt_t **slot, *fmt = rx_pcalloc(cf->pool, sizeof(log_fmt_t));

    slot = rx_array_push(&lmcf->formats);
    if (fmt == NULL || slot == NULL) {
        return RX_ERROR;
    }
    fmt->name = *name;
    fmt->escape = escape;
    *slot = fmt;
    return rx_http_compile_complex_value(cf, text, &fmt->cv);
}

/* "combined" is always defined, before any log_format line. */
static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    log_main_conf_t *lmcf = rx_http_conf_get_module_main_conf(cf,
                                                          rx_http_log_module);
    rx_str_t         name = rx_string("combined");
    rx_str_t         text = rx_string(COMBINED_FORMAT);

    return add_format(cf, lmcf, &name, ESC_DEFAULT, &text);
}

static rx_int_t
postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_LOG_PHASE, log_handler);
}

static log_fmt_t *
find_format(log_main_conf_t *lmcf, const rx_str_t *name)
{
    log_fmt_t **fmt = lmcf->formats.elts;
    rx_uint_t   i;

    for (i = 0; i < lmcf->formats.nelts; i++) {
        if (fmt[i]->name.len == name->len
            && memcmp(fmt[i]->name.data, name->data, name->len) == 0) {
            return fmt[i];
        }
    }
    return NULL;
}

/* log_format name [escape=default|json|none] string ...: the strings are
 * joined without separator, as nginx does. */
static const char *
set_format(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    log_main_conf_t *lmcf = conf;
    rx_str_t        *value = cf->args->elts, text;
    log_escape_t     escape = ESC_DEFAULT;
    rx_uint_t        i, first = 2;
    char            *p;

    if (find_format(lmcf, &value[1])) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate \"log_format\" name "
                          "\"%s\"", value[1].data);
        return RX_CONF_ERROR;
    }
    if (strncmp(value[2].data, "escape=", 7) == 0) {
        const char *e = value[2].data + 7;

        if (strcmp(e, "default") == 0) {
            escape = ESC_DEFAULT;
        } else if (strcmp(e, "json") == 0) {
            escape = ESC_JSON;
        } else if (strcmp(e, "none") == 0) {
            escape = ESC_NONE;
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unknown log format "
                              "escaping \"%s\", it must be \"default\", "
                              "\"json\" or \"none\"", e);
            return RX_CONF_ERROR;
        }
        first = 3;
    }
    for (text.len = 0, i = first; i < cf->args->nelts; i++) {
        text.len += value[i].len;
    }
    text.data = p = rx_pnalloc(cf->temp_pool, text.len + 1);
    if (p == NULL) {
        return RX_CONF_ERROR;
    }
    for (i = first; i < cf->args->nelts; i++) {
        memcpy(p, value[i].data, value[i].len);
        p += value[i].len;
    }
    return add_format(cf, lmcf, &value[1], escape, &text) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* The shared record of a file, created on first mention. */
static log_file_t *
get_file(rx_conf_t *cf, const rx_str_t *name)
{
    log_main_conf_t  *lmcf = rx_http_conf_get_module_main_conf(cf,
                                                           rx_http_log_module);
    log_file_t      **files = lmcf->files.elts, *lf, **slot;
    rx_open_file_t   *of = rx_conf_open_file(cf->cycle, name);
    rx_uint_t         i;

    if (of == NULL) {
        return NULL;
    }
    for (i = 0; i < lmcf->files.nelts; i++) {
        if (files[i]->file == of) {
            return files[i];
        }
    }
    lf = rx_pcalloc(cf->pool, sizeof(log_file_t));
    slot = rx_array_push(&lmcf->files);
    if (lf == NULL || slot == NULL) {
        return NULL;
    }
    lf->file = of;
    lf->timer.node.index = RX_HEAP_NONE;
    lf->timer.handler = flush_timer;
    lf->timer.data = lf;
    *slot = lf;
    return lf;
}

/* buffer=, flush=, gzip[=level], if= of one access_log line. gzip alone
 * means level 1 and, without buffer=, a 64k buffer (nginx's defaults). */
static const char *
set_params(rx_conf_t *cf, log_t *log, ssize_t *size, rx_int_t *flush,
    rx_int_t *gzip)
{
    rx_str_t  *value = cf->args->elts, s;
    rx_uint_t  i;

    for (i = 3; i < cf->args->nelts; i++) {
        s = value[i];
        if (strncmp(s.data, "buffer=", 7) == 0) {
            s.data += 7;
            s.len -= 7;
            *size = rx_parse_size(&s);
            if (*size < 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid buffer size "
                                  "\"%s\"", s.data);
                return RX_CONF_ERROR;
            }
        } else if (strncmp(s.data, "flush=", 6) == 0) {
            s.data += 6;
            s.len -= 6;
            *flush = rx_parse_time(&s, false);
            if (*flush <= 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid flush time "
                                  "\"%s\"", s.data);
                return RX_CONF_ERROR;
            }
        } else if (strcmp(s.data, "gzip") == 0
                   || strncmp(s.data, "gzip=", 5) == 0) {
#if (RX_HTTP_GZIP)
            if (*size == 0) {
                *size = 64 * 1024;
            }
            if (s.len == 4) {
                *gzip = 1;
                continue;
            }
            s.data += 5;
            s.len -= 5;
            *gzip = rx_atoi(s.data, s.len);
            if (*gzip < 1 || *gzip > 9) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid compression "
                                  "level \"%s\"", s.data);
                return RX_CONF_ERROR;
            }
#else
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "ringx was built without "
                              "zlib support");
            return RX_CONF_ERROR;
#endif
        } else if (strncmp(s.data, "if=", 3) == 0) {
            s.data += 3;
            s.len -= 3;
            log->filter = rx_palloc(cf->pool, sizeof(rx_http_complex_value_t));
            if (log->filter == NULL
                || rx_http_compile_complex_value(cf, &s, log->filter) != RX_OK) {
                return RX_CONF_ERROR;
            }
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              s.data);
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

/* Attaches a buffer to the log's file; several lines naming one file must
 * agree on it. */
static const char *
set_buffer(rx_conf_t *cf, log_t *log, ssize_t size, rx_int_t flush,
    rx_int_t gzip)
{
    rx_str_t   *value = cf->args->elts;
    log_file_t *lf = log->file;

    if (flush && size == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "no buffer is defined for "
                          "access_log \"%s\"", value[1].data);
        return RX_CONF_ERROR;
    }
    if (size == 0) {
        return RX_CONF_OK;
    }
    if (log->syslog) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "logs to syslog cannot be "
                          "buffered");
        return RX_CONF_ERROR;
    }
    if (lf == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "buffered logs cannot have "
                          "variables in name");
        return RX_CONF_ERROR;
    }
    if (lf->start) {
        if (lf->end - lf->start != size || lf->flush != flush
            || lf->gzip != gzip) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "access_log \"%s\" already "
                              "defined with conflicting parameters",
                              value[1].data);
            return RX_CONF_ERROR;
        }
        return RX_CONF_OK;
    }
    lf->start = rx_pnalloc(cf->pool, (size_t) size);
    if (lf->start == NULL) {
        return RX_CONF_ERROR;
    }
    lf->pos = lf->start;
    lf->end = lf->start + size;
    lf->flush = flush;
    lf->gzip = gzip;
    return RX_CONF_OK;
}

/* access_log path [format [buffer=size] [gzip[=level]] [flush=time]
 *     [if=condition]];
 * access_log syslog:server=... [format [if=condition]];
 * access_log off; */
static const char *
set_log(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    log_loc_conf_t  *llcf = conf;
    log_main_conf_t *lmcf;
    rx_str_t        *value = cf->args->elts, path, combined = rx_string("combined");
    log_t           *log;
    ssize_t          size = 0;
    rx_int_t         flush = 0, gzip = 0;
    const char      *rv;

    if (rx_str_eq(&value[1], "off")) {
        llcf->off = true;
        if (cf->args->nelts == 2) {
            return RX_CONF_OK;
        }
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          value[2].data);
        return RX_CONF_ERROR;
    }
    if (llcf->logs == NULL) {
        llcf->logs = rx_array_create(cf->pool, 2, sizeof(log_t));
        if (llcf->logs == NULL) {
            return RX_CONF_ERROR;
        }
    }
    log = rx_array_push(llcf->logs);
    if (log == NULL) {
        return RX_CONF_ERROR;
    }
    memset(log, 0, sizeof(*log));

    if (strncmp(value[1].data, "syslog:", 7) == 0) {
        log->syslog = rx_syslog_process_conf(cf, &value[1]);
        if (log->syslog == NULL) {
            return RX_CONF_ERROR;
        }
    } else if (memchr(value[1].data, '$', value[1].len)) {
        path = value[1];
        log->path = rx_palloc(cf->pool, sizeof(rx_http_complex_value_t));
        if (log->path == NULL || rx_conf_full_name(cf->cycle, &path, false) != RX_OK
            || rx_http_compile_complex_value(cf, &path, log->path) != RX_OK) {
            return RX_CONF_ERROR;
        }
    } else if ((log->file = get_file(cf, &value[1])) == NULL) {
        return RX_CONF_ERROR;
    }

    lmcf = rx_http_conf_get_module_main_conf(cf, rx_http_log_module);
    log->format = find_format(lmcf, cf->args->nelts >= 3 ? &value[2] : &combined);
    if (log->format == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unknown log format \"%s\"",
                          value[2].data);
        return RX_CONF_ERROR;
    }
    rv = set_params(cf, log, &size, &flush, &gzip);
    return rv == RX_CONF_OK ? set_buffer(cf, log, size, flush, gzip) : rv;
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(log_loc_conf_t));
}

/* A level with access_log lines (or off) keeps them; else it inherits the
 * parent's; with none anywhere, "logs/access.log combined". */
static const char *
merge_loc_conf(rx_conf_t *cf, void *prev, void *conf)
{
    log_loc_conf_t  *p = prev, *c = conf;
    log_main_conf_t *lmcf = rx_http_conf_get_module_main_conf(cf,
                                                          rx_http_log_module);
    rx_str_t         path = rx_string(RX_HTTP_LOG_PATH);
    log_t           *log;

    if (c->logs || c->off) {
        return RX_CONF_OK;
    }
    c->logs = p->logs;
    c->off = p->off;
    if (c->logs || c->off) {
        return RX_CONF_OK;
    }
    c->logs = rx_array_create(cf->pool, 1, sizeof(log_t));
    log = c->logs ? rx_array_push(c->logs) : NULL;
    if (log == NULL) {
        return RX_CONF_ERROR;
    }
    memset(log, 0, sizeof(*log));
    log->file = get_file(cf, &path);
    log->format = ((log_fmt_t **) lmcf->formats.elts)[0];   /* combined */
    return log->file ? RX_CONF_OK : RX_CONF_ERROR;
}
