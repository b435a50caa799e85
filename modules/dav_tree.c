/*
 * dav_tree.c: the WebDAV module's file work through the ring: copying a
 * file 64 KiB at a time, and walking a directory tree to delete or copy
 * what it holds, one file operation at a time and at most DAV_BUDGET
 * directory entries per loop turn, so a large tree never stalls the
 * worker. Reading a directory is the one synchronous part: io_uring has
 * no getdents, so readdir() reads one buffer of entries when the walk
 * needs more (as for opendir(), fstatat() of an entry without a type and
 * the directory times set after a copy: metadata calls, no data).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include "dav.h"

#define DAV_BUDGET  64         /* directory entries looked at per turn */

typedef struct {
    DIR              *dir;
    size_t            len;     /* the directory's path length in src */
    struct timespec   atime;   /* copy: the source's, set on the copy */
    struct timespec   mtime;
} dav_frame_t;

struct rx_http_dav_tree_s {
    rx_http_request_t   *r;
    rx_http_dav_ctx_t   *ctx;
    char                 src[PATH_MAX];   /* the entry being worked on */
    char                 dst[PATH_MAX];   /* copy: where it goes */
    size_t               sroot;           /* length of the walked root */
    size_t               droot;           /* length of the copy's root */
    bool                 copy;
    const char          *failed;          /* unlink() or rmdir() */
    dav_frame_t         *frames;          /* malloc'd: open directories */
    unsigned             n;
    unsigned             cap;
    rx_posted_t          resume;          /* the next turn's share */
    rx_http_dav_done_pt  done;
};

/* ---------------------------------------------------------------- errors */

rx_int_t
rx_http_dav_error(rx_http_request_t *r, int err, rx_int_t not_found,
    const char *failed, const char *path)
{
    unsigned level = RX_LOG_ERR;
    rx_int_t rc;

    if (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG) {
        rc = not_found;
    } else if (err == EACCES || err == EPERM) {
        rc = RX_HTTP_FORBIDDEN;
    } else if (err == EEXIST) {
        rc = RX_HTTP_NOT_ALLOWED;
    } else if (err == ENOSPC) {
        level = RX_LOG_CRIT;
        rc = 507;                         /* Insufficient Storage */
    } else {
        level = RX_LOG_CRIT;
        rc = RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    rx_http_request_log_error(r, level, err, "%s \"%s\" failed", failed, path);
    return rc;
}

void
rx_http_dav_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    rx_http_dav_ctx_t   *ctx = r->ctx;
    rx_http_dav_step_pt  next = ctx ? ctx->next : NULL;

    if (next == NULL) {
        if (rx_op_kind(cqe->user_data) == RX_OP_OPEN && cqe->res >= 0) {
            close(cqe->res);
        }
        return;
    }
    ctx->next = NULL;
    next(r, ctx, cqe->res);
}

/* ------------------------------------------------------------- file copy */

static void copy_read(rx_http_request_t *r, rx_http_dav_ctx_t *ctx);

static void
copy_end(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    rx_http_dav_copy_t *c = &ctx->copy;

    if (c->dst_fd != -1) {
        close(c->dst_fd);
        c->dst_fd = -1;
    }
    if (c->own_src && c->src_fd != -1) {
        close(c->src_fd);
        c->src_fd = -1;
    }
    c->done(r, ctx, rc);
}

static void
copy_fail(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int err,
    const char *failed, const char *path)
{
    rx_http_request_log_error(r, RX_LOG_CRIT, err, "%s \"%s\" failed", failed,
                              path);
    copy_end(r, ctx, err == ENOSPC ? 507 : RX_HTTP_INTERNAL_SERVER_ERROR);
}

static void
copy_written(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_dav_copy_t *c = &ctx->copy;

    if (res < 0) {
        copy_fail(r, ctx, -res, "write()", c->dst);
        return;
    }
    if ((unsigned) res != c->want) {
        /* a regular file takes fewer bytes only when its disk is full */
        copy_fail(r, ctx, ENOSPC, "write()", c->dst);
        return;
    }
    c->off += res;
    copy_read(r, ctx);
}

static void
copy_got(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_dav_copy_t *c = &ctx->copy;
    struct timespec     ts[2];

    if (res < 0) {
        copy_fail(r, ctx, -res, "read()", c->src ? c->src : "(fd)");
        return;
    }
    if (res > 0) {
        ctx->next = copy_written;
        c->want = (unsigned) res;
        rx_ring_write(c->dst_fd, c->buf, (unsigned) res, (uint64_t) c->off,
                      rx_http_op_ud(r, RX_OP_WRITE));
        return;
    }
    /* the end: the mode exactly as asked (no umask, also for a file that
     * was there), then the source's time (nginx's copy keeps it) */
    if (fchmod(c->dst_fd, c->mode) == -1) {
        copy_fail(r, ctx, errno, "chmod()", c->dst);
        return;
    }
    if (c->mtime.tv_nsec != UTIME_OMIT) {
        ts[0] = c->mtime;
        ts[1] = c->mtime;
        if (futimens(c->dst_fd, ts) == -1) {
            rx_http_request_log_error(r, RX_LOG_ALERT, errno,
                                      "utimes() \"%s\" failed", c->dst);
        }
    }
    copy_end(r, ctx, RX_OK);
}

static void
copy_read(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_http_dav_copy_t *c = &ctx->copy;

    ctx->next = copy_got;
    rx_ring_read(c->src_fd, c->buf, RX_HTTP_DAV_CHUNK, (uint64_t) c->off,
                 rx_http_op_ud(r, RX_OP_READ));
}

static void
copy_dst_opened(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_dav_copy_t *c = &ctx->copy;

    if (res < 0) {
        copy_fail(r, ctx, -res, "open()", c->dst);
        return;
    }
    c->dst_fd = res;
    copy_read(r, ctx);
}

static void
copy_open_dst(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_http_dav_copy_t *c = &ctx->copy;
    struct stat         st;

    /* the file was just opened: its inode is in memory */
    if (fstat(c->src_fd, &st) == -1) {
        copy_fail(r, ctx, errno, "fstat()", c->src ? c->src : "(fd)");
        return;
    }
    if (c->mode == 0) {
        c->mode = st.st_mode & 0777;
    }
    if (c->keep_time) {
        c->mtime = st.st_mtim;
    }
    ctx->next = copy_dst_opened;
    rx_ring_openat(AT_FDCWD, c->dst, O_WRONLY | O_CREAT | O_CLOEXEC
                   | c->dst_flags, c->mode, rx_http_op_ud(r, RX_OP_OPEN));
}

static void
copy_src_opened(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_dav_copy_t *c = &ctx->copy;

    if (res < 0) {
        copy_fail(r, ctx, -res, "open()", c->src);
        return;
    }
    c->src_fd = res;
    c->own_src = true;
    copy_open_dst(r, ctx);
}

void
rx_http_dav_copy_file(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_http_dav_copy_t *c = &ctx->copy;

    c->off = 0;
    c->dst_fd = -1;
    if (c->buf == NULL) {
        c->buf = rx_palloc(r->pool, RX_HTTP_DAV_CHUNK);
        if (c->buf == NULL) {
            c->done(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
    }
    if (c->src_fd != -1) {
        c->own_src = false;
        copy_open_dst(r, ctx);
        return;
    }
    ctx->next = copy_src_opened;
    rx_ring_openat(AT_FDCWD, c->src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0,
                   rx_http_op_ud(r, RX_OP_OPEN));
}

/* ------------------------------------------------------------- tree walk */

static void walk_step(rx_http_request_t *r, rx_http_dav_tree_t *t);

static void
walk_cleanup(void *data)
{
    rx_http_dav_tree_t *t = data;

    rx_post_cancel(&t->resume);
    while (t->n) {
        closedir(t->frames[--t->n].dir);
    }
    free(t->frames);
    t->frames = NULL;
}

static void
walk_resume(rx_posted_t *p)
{
    rx_http_dav_tree_t *t = p->data;

    walk_step(t->r, t);
}

static void
walk_again(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_dav_tree_t *t = ctx->tree;

    if (res < 0) {
        /* nginx logs what fails inside the tree and goes on: the final
         * rmdir() (or the copy's answer) tells the client */
        (void) rx_http_dav_error(r, -res, 0, t->failed, t->src);
    }
    walk_step(r, t);
}

static void
walk_copied(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    (void) rc;                            /* logged by the copy */
    walk_step(r, ctx->tree);
}

/* Opens the directory at t->src (its length len) as the walk's top.
 * Returns the errno of a failure, else 0. */
static int
walk_push(rx_http_dav_tree_t *t, size_t len, const struct stat *st)
{
    dav_frame_t *f;
    DIR         *dir;

    if (t->n == t->cap) {
        unsigned     cap = t->cap ? 2 * t->cap : 8;
        dav_frame_t *grown = realloc(t->frames, cap * sizeof(*grown));

        if (grown == NULL) {
            return ENOMEM;
        }
        t->frames = grown;
        t->cap = cap;
    }
    dir = opendir(t->src);
    if (dir == NULL) {
        return errno;
    }
    f = &t->frames[t->n++];
    f->dir = dir;
    f->len = len;
    if (st) {
        f->atime = st->st_atim;
        f->mtime = st->st_mtim;
    }
    return 0;
}

/* The copy of t->src goes to t->dst: the root's copy and the same tail. */
static void
walk_dst(rx_http_dav_tree_t *t, size_t len)
{
    memcpy(t->dst + t->droot, t->src + t->sroot, len - t->sroot + 1);
}

static void
walk_mkdir_done(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_dav_tree_t *t = ctx->tree;
    struct stat         st;
    size_t              len = strlen(t->src);
    int                 err;

    if (res < 0 && res != -EEXIST) {
        (void) rx_http_dav_error(r, -res, 0, "mkdir()", t->dst);
        walk_step(r, t);                  /* its files would fail too */
        return;
    }
    err = stat(t->src, &st) == -1 ? errno : walk_push(t, len, &st);
    if (err != 0) {
        rx_http_request_log_error(r, RX_LOG_CRIT, err, "opendir() \"%s\" "
                                  "failed", t->src);
    }
    walk_step(r, t);
}

/* The top directory has nothing more: delete it (not the root, whose
 * removal is the caller's), or give its copy the source's times.
 * Returns true when an operation is in flight. */
static bool
walk_dir_end(rx_http_request_t *r, rx_http_dav_tree_t *t)
{
    dav_frame_t     *f = &t->frames[--t->n];
    struct timespec  ts[2];

    closedir(f->dir);
    t->src[f->len] = '\0';
    if (t->copy) {
        walk_dst(t, f->len);
        ts[0] = f->atime;
        ts[1] = f->mtime;
        if (t->n && utimensat(AT_FDCWD, t->dst, ts, 0) == -1) {
            rx_http_request_log_error(r, RX_LOG_ALERT, errno,
                                      "utimes() \"%s\" failed", t->dst);
        }
        return false;
    }
    if (t->n == 0) {
        return false;
    }
    t->failed = "rmdir()";
    t->ctx->next = walk_again;
    rx_ring_unlinkat(AT_FDCWD, t->src, AT_REMOVEDIR, rx_http_op_ud(r, RX_OP_FS));
    return true;
}

/* One entry of the top directory, at t->src (len). Returns true when an
 * operation is in flight. */
static bool
walk_entry(rx_http_request_t *r, rx_http_dav_tree_t *t, dav_frame_t *f,
    struct dirent *de, size_t len)
{
    rx_http_dav_ctx_t *ctx = t->ctx;
    struct stat        st;
    unsigned char      type = de->d_type;
    int                err;

    if (type == DT_UNKNOWN || (t->copy && type == DT_DIR)) {
        if (fstatat(dirfd(f->dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
            rx_http_request_log_error(r, RX_LOG_CRIT, errno, "lstat() \"%s\" "
                                      "failed", t->src);
            return false;
        }
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG
                                                                  : DT_LNK;
    }
    if (type == DT_DIR) {
        if (t->copy) {
            walk_dst(t, len);
            ctx->next = walk_mkdir_done;
            rx_ring_mkdirat(AT_FDCWD, t->dst,
                rx_http_dav_dir_access(st.st_mode & 0777),
                rx_http_op_ud(r, RX_OP_FS));
            return true;
        }
        if ((err = walk_push(t, len, NULL)) != 0) {
            rx_http_request_log_error(r, RX_LOG_CRIT, err, "opendir() \"%s\" "
                                      "failed", t->src);
        }
        return false;
    }
    if (t->copy) {
        if (type != DT_REG) {
            return false;                 /* nginx copies files and dirs */
        }
        walk_dst(t, len);
        ctx->copy.src = t->src;
        ctx->copy.dst = t->dst;
        ctx->copy.src_fd = -1;
        ctx->copy.dst_flags = O_TRUNC;
        ctx->copy.mode = 0;
        ctx->copy.keep_time = true;
        ctx->copy.done = walk_copied;
        rx_http_dav_copy_file(r, ctx);
        return true;
    }
    t->failed = "unlink()";
    ctx->next = walk_again;
    rx_ring_unlinkat(AT_FDCWD, t->src, 0, rx_http_op_ud(r, RX_OP_FS));
    return true;
}

static void
walk_step(rx_http_request_t *r, rx_http_dav_tree_t *t)
{
    unsigned       budget = DAV_BUDGET;
    dav_frame_t   *f;
    struct dirent *de;
    size_t         len;

    while (t->n) {
        if (budget-- == 0) {
            rx_post(&t->resume);          /* the rest next turn */
            return;
        }
        f = &t->frames[t->n - 1];
        errno = 0;
        de = readdir(f->dir);
        if (de == NULL) {
            if (errno) {
                t->src[f->len] = '\0';
                rx_http_request_log_error(r, RX_LOG_CRIT, errno, "readdir() "
                                          "\"%s\" failed", t->src);
            }
            if (walk_dir_end(r, t)) {
                return;
            }
            continue;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        len = f->len + 1 + strlen(de->d_name);
        if (len >= PATH_MAX
            || (t->copy && len - t->sroot + t->droot >= PATH_MAX)) {
            t->src[f->len] = '\0';
            rx_http_request_log_error(r, RX_LOG_CRIT, ENAMETOOLONG, "\"%s/%s\" "
                                      "skipped", t->src, de->d_name);
            continue;
        }
        t->src[f->len] = '/';
        memcpy(t->src + f->len + 1, de->d_name, len - f->len);
        if (walk_entry(r, t, f, de, len)) {
            return;
        }
    }
    t->ctx->tree = NULL;
    t->done(r, t->ctx, RX_OK);
}

void
rx_http_dav_walk(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    const char *dir, const char *to, rx_http_dav_done_pt done)
{
    rx_http_dav_tree_t *t = rx_pcalloc(r->pool, sizeof(*t));
    rx_pool_cleanup_t  *cln = rx_pool_cleanup_add(r->pool, 0);
    struct stat         st;
    size_t              len = strlen(dir);
    int                 err;

    if (t == NULL || cln == NULL || len >= PATH_MAX
        || (to && strlen(to) >= PATH_MAX)) {
        done(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    cln->handler = walk_cleanup;
    cln->data = t;
    t->r = r;
    t->ctx = ctx;
    t->done = done;
    t->resume.handler = walk_resume;
    t->resume.data = t;
    memcpy(t->src, dir, len + 1);
    t->sroot = len;
    if (to) {
        t->copy = true;
        t->droot = strlen(to);
        memcpy(t->dst, to, t->droot + 1);
    }
    err = (to && stat(dir, &st) == -1) ? errno
                                       : walk_push(t, len, to ? &st : NULL);
    if (err != 0) {
        if (err == ENOENT) {
            done(r, ctx, RX_OK);          /* gone meanwhile: nothing to do */
            return;
        }
        rx_http_request_log_error(r, RX_LOG_CRIT, err, "opendir() \"%s\" "
                                  "failed", dir);
        done(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    ctx->tree = t;
    walk_step(r, t);
}
