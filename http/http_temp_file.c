/*
 * http_temp_file.c: the append-only temporary file of http_temp_file.h.
 */
#include <fcntl.h>
#include <pwd.h>
#include "http.h"
#include "http_temp_file.h"

void
rx_http_temp_init(rx_http_temp_file_t *tf, const char *dir)
{
    memset(tf, 0, sizeof(*tf));
    tf->dir = dir;
    tf->fd = -1;
}

#define NAME_TRIES  16

/* The next name: a per-worker sequence started from the pid, so that the
 * workers' names rarely meet (EEXIST moves on to the next). */
static void
next_name(rx_http_temp_file_t *tf)
{
    static uint32_t seq;

    if (seq == 0) {
        seq = (uint32_t) getpid() * 7919u;
    }
    sprintf(tf->name, "%s/%010u", tf->dir, ++seq % 1000000000u);
}

rx_int_t
rx_http_temp_set_named(rx_http_temp_file_t *tf, rx_pool_t *pool, bool keep)
{
    tf->name = rx_pnalloc(pool, strlen(tf->dir) + 12);
    if (tf->name == NULL) {
        return RX_ERROR;
    }
    tf->keep = keep;
    next_name(tf);
    return RX_OK;
}

rx_int_t
rx_http_temp_append(rx_http_temp_file_t *tf, const char *data, size_t len)
{
    unsigned i = tf->wcur;

    if (tf->wlen[i] + len > tf->wcap[i]) {
        /* never the buffer being written: that one is the other. It
         * doubles: a disk slower than the upstream lets a cache file's
         * buffer grow to megabytes (http_cache_store.c's backlog), and
         * growing it by each append copied it once per append */
        size_t cap = rx_max(tf->wlen[i] + len,
                            rx_max(tf->wcap[i] * 2, (size_t) RX_HTTP_TEMP_CHUNK));
        char  *grown = realloc(tf->wbuf[i], cap);

        if (grown == NULL) {
            return RX_ERROR;
        }
        tf->wbuf[i] = grown;
        tf->wcap[i] = cap;
    }
    memcpy(tf->wbuf[i] + tf->wlen[i], data, len);
    tf->wlen[i] += len;
    return RX_OK;
}

/* An operation's user_data: on the request's connection (r), or on a
 * slot of the file's own (c, when r is NULL). */
static uint64_t
file_ud(rx_http_request_t *r, rx_conn_t *c, rx_op_kind_t kind)
{
    if (r) {
        return rx_http_op_ud(r, kind);
    }
    c->inflight++;
    return rx_conn_ud(c, kind);
}

static void kick(rx_http_request_t *r, rx_conn_t *c, rx_http_temp_file_t *tf);

void
rx_http_temp_kick(rx_http_request_t *r, rx_http_temp_file_t *tf)
{
    kick(r, NULL, tf);
}

void
rx_http_temp_kick_on(rx_conn_t *c, rx_http_temp_file_t *tf)
{
    kick(NULL, c, tf);
}

static void
kick(rx_http_request_t *r, rx_conn_t *c, rx_http_temp_file_t *tf)
{
    unsigned i = tf->wcur;

    if (tf->fd == -1) {
        if (!tf->opening) {
            tf->opening = 1;
            if (tf->name) {
                rx_ring_openat(AT_FDCWD, tf->name,
                               O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600,
                               file_ud(r, c, RX_OP_OPEN));
            } else {
                rx_ring_openat(AT_FDCWD, tf->dir,
                               O_TMPFILE | O_RDWR | O_CLOEXEC, 0600,
                               file_ud(r, c, RX_OP_OPEN));
            }
        }
        return;
    }
    if (!tf->writing && tf->wlen[i]) {
        tf->writing = 1;
        rx_ring_write(tf->fd, tf->wbuf[i], (unsigned) tf->wlen[i],
                      (uint64_t) tf->submitted, file_ud(r, c, RX_OP_WRITE));
        tf->submitted += (int64_t) tf->wlen[i];
        tf->wcur ^= 1;
    }
}

rx_int_t
rx_http_temp_handle(rx_http_temp_file_t *tf, const rx_cqe_t *cqe, int *err,
    const char **what)
{
    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_OPEN:
        if (!tf->opening) {
            return RX_DECLINED;
        }
        tf->opening = 0;
        if (cqe->res == -EEXIST && tf->name && ++tf->name_tries < NAME_TRIES) {
            next_name(tf);
            return RX_OK;               /* fd still -1: the kick opens */
        }
        if (cqe->res < 0) {
            *err = -cqe->res;
            *what = "creating";
            return RX_ERROR;
        }
        tf->fd = cqe->res;
        return RX_OK;
    case RX_OP_WRITE: {
        unsigned i = tf->wcur ^ 1;           /* the one that was written */

        if (!tf->writing) {
            return RX_DECLINED;
        }
        tf->writing = 0;
        if (cqe->res < 0 || (size_t) cqe->res != tf->wlen[i]) {
            /* a file takes fewer bytes than given only when its disk (or
             * the user's quota) is full: the next write would say so */
            *err = cqe->res < 0 ? -cqe->res : ENOSPC;
            *what = "writing to";
            return RX_ERROR;
        }
        tf->written += cqe->res;
        tf->wlen[i] = 0;
        return RX_OK;
    }
    default:
        return RX_DECLINED;
    }
}

const char *
rx_http_temp_worker_user(char *buf, size_t size)
{
    /* who the worker is now (after `user`) */
    struct passwd *pw = getpwuid(geteuid());

    snprintf(buf, size, "%ld", (long) geteuid());
    return pw ? pw->pw_name : buf;
}

void
rx_http_temp_log_failure(rx_http_request_t *r, const char *dir,
    const char *directive, const char *what, int err, const char *purpose,
    const char *effect)
{
    rx_path_t     *path = rx_cycle_path(rx_cycle, dir);
    char           uid[24];
    const char    *user;

    if (path) {
        if (path->reported) {
            return;
        }
        path->reported = 1;
    }
    /* once per directory, so NSS's file read is no cost */
    user = rx_http_temp_worker_user(uid, sizeof(uid));
    if (err == EACCES || err == EPERM) {
        rx_http_request_log_error_action(r, RX_LOG_CRIT, 0, NULL, "%s \"%s\" failed "
            "(%d: %s) while buffering %s to a temporary file: user \"%s\" "
            "cannot create files in %s \"%s\"; %s until it can (let \"%s\" "
            "write there, or set %s to a directory it can write; logged once "
            "per worker)", strcmp(what, "creating") == 0 ? "open()" : "write() to",
            dir, err, strerror(err), purpose, user, directive, dir, effect,
            user, directive);
        return;
    }
    rx_http_request_log_error_action(r, RX_LOG_CRIT, 0, NULL, "%s a temporary file "
        "in %s \"%s\" failed (%d: %s) while buffering %s to it; %s meanwhile "
        "(logged once per worker)", what, directive, dir, err, strerror(err),
        purpose, effect);
}

size_t
rx_http_temp_backlog(const rx_http_temp_file_t *tf)
{
    return tf->wlen[0] + tf->wlen[1];
}

bool
rx_http_temp_settled(const rx_http_temp_file_t *tf)
{
    return !tf->opening && !tf->writing && tf->wlen[0] == 0 && tf->wlen[1] == 0;
}

void
rx_http_temp_rewind(rx_http_temp_file_t *tf)
{
    tf->submitted = tf->written = 0;
}

void
rx_http_temp_free(rx_http_temp_file_t *tf)
{
    if (tf->fd != -1) {
        close(tf->fd);
        tf->fd = -1;
        if (tf->name && !tf->keep) {
            (void) unlink(tf->name);    /* a directory entry: no I/O wait */
        }
    }
    free(tf->wbuf[0]);
    free(tf->wbuf[1]);
    tf->wbuf[0] = tf->wbuf[1] = NULL;
}

/* *_temp_path path [level1 [level2 [level3]]]: the levels are accepted
 * and not needed (files are made with O_TMPFILE: they have no name). */
const char *
rx_http_set_temp_path_slot(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_str_t *field = rx_conf_field(conf, cmd, rx_str_t);
    rx_str_t *value = cf->args->elts, path = value[1];
    rx_uint_t i;

    if (field->data) {
        return "is duplicate";
    }
    for (i = 2; i < cf->args->nelts; i++) {
        rx_int_t level = rx_atoi(value[i].data, value[i].len);
        if (level < 1 || level > 2) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
    }
    if (rx_conf_full_name(cf->cycle, &path, false) != RX_OK
        || rx_conf_add_path(cf, &path, cmd->name) != RX_OK) {
        return RX_CONF_ERROR;
    }
    *field = path;
    return RX_CONF_OK;
}
