/*
 * http_open_file.c: opening the file a request serves (nginx's
 * open_cached_file). Every step is an operation on the worker's ring:
 *
 *   open_file_cache hit, still valid        -> answered at once
 *   hit whose open_file_cache_valid passed  -> statx; unchanged (inode,
 *                                              device, mtime, size) -> hit,
 *                                              changed or gone -> open
 *   miss                                    -> open
 *
 * and the open obeys disable_symlinks: off is a plain openat; on is
 * openat2 with RESOLVE_NO_SYMLINKS (from= first opens the trusted part
 * with O_PATH and resolves the rest beneath it); if_not_owner tries the
 * same, and when a symlink is met it compares, for each component, the
 * owner of the link with the owner of what it points to (statx of both,
 * all in flight together), then opens following the links and checks
 * that it opened the object it checked.
 *
 * The open (off, or on without from=) is first tried on the worker's
 * thread (rx_ring_try_openat2: a path in the dentry cache, no disk): then
 * the answer is the caller's at once, RX_OK, without the loop turn a
 * completion costs; the ring's open when it would wait.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>
#include "http_open_file_int.h"
#include "clock.h"

#define OPEN_FLAGS      (O_RDONLY | O_CLOEXEC | O_NOCTTY)
#define MAX_COMPONENTS  64
#define STATX_WANT      (STATX_TYPE | STATX_UID | STATX_INO | STATX_SIZE \
                         | STATX_MTIME)

typedef enum {
    STEP_REVALIDATE = 1,    /* statx of a cached entry */
    STEP_FROM,              /* O_PATH open of the trusted part (from=) */
    STEP_OPEN,              /* the open under the policy */
    STEP_WALK,              /* if_not_owner: statx of every component */
    STEP_OPEN_FOLLOW        /* if_not_owner: the open after the walk */
} open_step_t;

typedef struct {
    rx_http_open_file_t       *of;
    rx_http_open_file_pt       done;
    void                     (*saved)(rx_http_request_t *r,
                                      const rx_cqe_t *cqe);
    rx_str_t                   path;
    rx_http_open_file_conf_t  *conf;
    rx_http_file_entry_t      *entry;     /* being revalidated (referenced) */
    rx_uint_t                  uses;      /* carried over to the new entry */
    open_step_t                step;
    rx_uint_t                  symlinks;  /* the policy for this path */
    uint32_t                   tag;
    size_t                     from;      /* checked part starts here */
    int                        dirfd;     /* from=: the trusted part */
    struct open_how            how;
    struct statx               stx;
    struct statx              *walk;      /* lstat, stat per component */
    rx_uint_t                  nwalk;
    rx_uint_t                  pending;
    unsigned                   sync:1;      /* inside rx_http_open_file */
    unsigned                   answered:1;  /* of filled while sync */
    unsigned                   nonblock:1;  /* the fd opened inline */
} open_ctx_t;

static void open_op(rx_http_request_t *r, const rx_cqe_t *cqe);
static void start_open(rx_http_request_t *r, open_ctx_t *ctx);

/* The request's files go at its end, through the ring: no completion,
 * and no syscall of its own (the loop's submission carries it). */
static void
close_fd(void *data)
{
    int *fd = data;

    if (*fd != -1) {
        rx_ring_close_quiet(*fd);
        *fd = -1;
    }
}

static void
ctx_cleanup(void *data)
{
    open_ctx_t *ctx = data;

    close_fd(&ctx->dirfd);
}

static uint64_t
op_ud(rx_http_request_t *r, open_ctx_t *ctx, open_step_t step,
    rx_op_kind_t kind)
{
    ctx->step = step;
    r->op_handler = open_op;
    return rx_http_op_ud(r, kind);
}

/* The answer, to the caller: its op_handler back first. Inside
 * rx_http_open_file (an open done inline), the caller learns it from
 * RX_OK instead. */
static void
finish(rx_http_request_t *r, open_ctx_t *ctx)
{
    r->op_handler = ctx->saved;
    r->open_file_ctx = NULL;
    if (ctx->sync) {
        ctx->answered = 1;
        return;
    }
    ctx->done(r, ctx->of);
}

static void
fill_from_entry(rx_http_open_file_t *of, rx_http_file_entry_t *e)
{
    of->fd = e->fd;
    of->err = e->err;
    of->failed = e->failed;
    of->is_dir = e->is_dir;
    of->is_file = !e->is_dir;
    of->size = e->size;
    of->mtime = e->mtime;
    of->cached = e->err == 0;
}

/* An error: reported, and remembered with open_file_cache_errors. */
static void
fail(rx_http_request_t *r, open_ctx_t *ctx, int err, const char *failed)
{
    rx_http_open_file_conf_t *conf = ctx->conf;
    rx_http_file_entry_t     *e;

    ctx->of->fd = -1;
    ctx->of->err = err;
    ctx->of->failed = failed;
    if (conf->cache && conf->errors) {
        e = rx_http_file_cache_add(conf->cache, ctx->path.data, ctx->path.len,
                                   rx_time_sec);
        if (e) {
            e->err = err;
            e->failed = failed;
            e->tag = ctx->tag;
            e->uses = ctx->uses + 1;
        }
    }
    finish(r, ctx);
}

/* The file is open: what it is, and into the cache when it is on. */
static void
opened(rx_http_request_t *r, open_ctx_t *ctx, int fd)
{
    rx_http_open_file_conf_t *conf = ctx->conf;
    rx_http_open_file_t      *of = ctx->of;
    rx_http_file_entry_t     *e = NULL;
    rx_pool_cleanup_t        *cln;
    struct stat               st;

    /* fstat of an open fd reads the inode the open just brought in */
    if (fstat(fd, &st) == -1) {
        int err = errno;
        close(fd);
        fail(r, ctx, err, "fstat()");
        return;
    }
    /* open_file_cache shares the fd with requests that may read it through
     * the ring: blocking again at once. Otherwise the sender does it, when
     * it needs the ring (a small body read inline never does). */
    of->nonblock = ctx->nonblock;
    if (ctx->nonblock && conf->cache) {
        if (rx_ring_file_blocking(fd, OPEN_FLAGS) == -1) {
            int err = errno;
            close(fd);
            fail(r, ctx, err, "fcntl()");
            return;
        }
        of->nonblock = false;
    }
    of->fd = fd;
    of->err = 0;
    of->id.ino = st.st_ino;
    of->id.dev = st.st_dev;
    of->id.size = st.st_size;
    of->id.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    of->id.ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    of->id.mode = st.st_mode;
    of->id_known = true;
    of->is_dir = S_ISDIR(st.st_mode);
    of->is_file = S_ISREG(st.st_mode);
    of->size = st.st_size;
    of->mtime = st.st_mtime;
    of->cached = false;
    if (conf->cache) {
        e = rx_http_file_cache_add(conf->cache, ctx->path.data, ctx->path.len,
                                   rx_time_sec);
    }
    if (e) {
        e->tag = ctx->tag;
        e->uses = ctx->uses + 1;
        e->size = st.st_size;
        e->mtime = st.st_mtime;
        e->ino = st.st_ino;
        e->dev = st.st_dev;
        e->is_dir = of->is_dir;
        if (e->uses >= (rx_uint_t) conf->min_uses
            && rx_http_file_cache_ref(e, r->pool) == RX_OK) {
            e->fd = fd;                     /* the cache's from now on */
            of->cached = true;
            finish(r, ctx);
            return;
        }
    }
    cln = rx_pool_cleanup_add(r->pool, sizeof(int));
    if (cln == NULL) {
        close(fd);
        fail(r, ctx, ENOMEM, "open()");
        return;
    }
    *(int *) cln->data = fd;
    cln->handler = close_fd;
    finish(r, ctx);
}

/* if_not_owner: statx of every component from the checked part on, the
 * link itself and what it points to, all submitted together. */
static void
start_walk(rx_http_request_t *r, open_ctx_t *ctx)
{
    const char *p = ctx->path.data, *end = p + ctx->path.len;
    const char *c;
    rx_uint_t   i, n = 0;

    for (c = p + ctx->from + 1; c <= end; c++) {
        n += (c == end || *c == '/') && c[-1] != '/';
    }
    if (n == 0 || n > MAX_COMPONENTS) {
        fail(r, ctx, n ? ENAMETOOLONG : ENOENT, "openat()");
        return;
    }
    ctx->walk = rx_pcalloc(r->pool, 2 * n * sizeof(struct statx));
    if (ctx->walk == NULL) {
        fail(r, ctx, ENOMEM, "openat()");
        return;
    }
    ctx->nwalk = n;
    ctx->pending = 2 * n;
    i = 0;
    for (c = p + ctx->from + 1; c <= end; c++) {
        char *prefix;

        if ((c != end && *c != '/') || c[-1] == '/') {
            continue;
        }
        prefix = rx_pstrdup_c(r->pool, p, (size_t) (c - p));
        if (prefix == NULL) {
            /* the walk is in flight: finish it with what was submitted */
            ctx->pending -= 2 * (n - i);
            ctx->nwalk = i;
            break;
        }
        rx_ring_statx(AT_FDCWD, prefix, AT_SYMLINK_NOFOLLOW, STATX_WANT,
                      &ctx->walk[2 * i], op_ud(r, ctx, STEP_WALK, RX_OP_STATX));
        rx_ring_statx(AT_FDCWD, prefix, 0, STATX_WANT, &ctx->walk[2 * i + 1],
                      op_ud(r, ctx, STEP_WALK, RX_OP_STATX));
        i++;
    }
    if (ctx->pending == 0) {
        fail(r, ctx, ENOMEM, "openat()");
    }
}

/* if_not_owner: every symlink checked belongs to the owner of its target? */
static void
walk_done(rx_http_request_t *r, open_ctx_t *ctx)
{
    rx_uint_t i;

    for (i = 0; i < ctx->nwalk; i++) {
        struct statx *l = &ctx->walk[2 * i], *t = &ctx->walk[2 * i + 1];

        if (!(l->stx_mask & STATX_TYPE) || !S_ISLNK(l->stx_mode)) {
            continue;
        }
        if ((t->stx_mask & STATX_UID) && t->stx_uid != l->stx_uid) {
            fail(r, ctx, ELOOP, "openat()");
            return;
        }
    }
    rx_ring_openat(AT_FDCWD, ctx->path.data, OPEN_FLAGS, 0,
                   op_ud(r, ctx, STEP_OPEN_FOLLOW, RX_OP_OPEN));
}

/* if_not_owner: the object opened is the one whose owner was checked. */
static void
open_follow_done(rx_http_request_t *r, open_ctx_t *ctx, int fd)
{
    struct statx *t = ctx->nwalk ? &ctx->walk[2 * ctx->nwalk - 1] : NULL;
    struct stat   st;

    if (t && (t->stx_mask & STATX_INO) && fstat(fd, &st) == 0
        && (st.st_ino != t->stx_ino
            || st.st_dev != makedev(t->stx_dev_major, t->stx_dev_minor))) {
        close(fd);
        fail(r, ctx, ELOOP, "openat()");
        return;
    }
    opened(r, ctx, fd);
}

/* Is the cached entry still the file the path names? */
static void
revalidated(rx_http_request_t *r, open_ctx_t *ctx, int32_t res)
{
    rx_http_file_entry_t *e = ctx->entry;
    struct statx         *s = &ctx->stx;

    ctx->entry = NULL;
    if (e->cache && res == 0
        && s->stx_ino == e->ino
        && makedev(s->stx_dev_major, s->stx_dev_minor) == e->dev
        && (int64_t) s->stx_size == e->size
        && s->stx_mtime.tv_sec == e->mtime
        && S_ISDIR(s->stx_mode) == e->is_dir) {
        e->validated = rx_time_sec;
        e->uses++;
        fill_from_entry(ctx->of, e);     /* referenced when it started */
        finish(r, ctx);
        return;
    }
    /* changed, gone, or dropped meanwhile: open it anew */
    ctx->uses = e->uses;
    if (e->cache) {
        rx_http_file_cache_remove(e);
    }
    start_open(r, ctx);
}

/* The open under the policy answered (the ring's, or inline) */
static void
open_done(rx_http_request_t *r, open_ctx_t *ctx, int32_t res)
{
    close_fd(&ctx->dirfd);
    if (res == -ELOOP && ctx->symlinks == RX_SYMLINKS_NOT_OWNER) {
        start_walk(r, ctx);
    } else if (res < 0) {
        fail(r, ctx, -res, ctx->symlinks ? "openat()" : "open()");
    } else {
        opened(r, ctx, res);
    }
}

static void
open_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    open_ctx_t *ctx = r->open_file_ctx;
    int32_t     res = cqe->res;

    if (ctx == NULL) {
        return;
    }
    switch (ctx->step) {
    case STEP_REVALIDATE:
        revalidated(r, ctx, res);
        return;
    case STEP_FROM:
        if (res < 0) {
            fail(r, ctx, -res, "open()");
            return;
        }
        ctx->dirfd = res;
        rx_ring_openat2(ctx->dirfd, ctx->path.data + ctx->from, &ctx->how,
                        op_ud(r, ctx, STEP_OPEN, RX_OP_OPEN));
        return;
    case STEP_OPEN:
        open_done(r, ctx, res);
        return;
    case STEP_WALK:
        if (--ctx->pending == 0) {
            walk_done(r, ctx);
        }
        return;
    case STEP_OPEN_FOLLOW:
        if (res < 0) {
            fail(r, ctx, -res, "openat()");
        } else {
            open_follow_done(r, ctx, res);
        }
        return;
    }
}

/* The open of the whole path (no from=) on the worker's thread: true when
 * it answered (a path in the dentry cache), false when the ring's open
 * must go instead. */
static bool
open_inline(rx_http_request_t *r, open_ctx_t *ctx)
{
    int res = rx_ring_try_openat2(AT_FDCWD, ctx->path.data, &ctx->how);

    if (res == -EAGAIN) {
        return false;
    }
    ctx->step = STEP_OPEN;
    ctx->nonblock = res >= 0;
    open_done(r, ctx, res);
    return true;
}

/* The open under the location's disable_symlinks. */
static void
start_open(rx_http_request_t *r, open_ctx_t *ctx)
{
    memset(&ctx->how, 0, sizeof(ctx->how));
    ctx->how.flags = OPEN_FLAGS;
    if (ctx->symlinks == RX_SYMLINKS_OFF) {
        if (!open_inline(r, ctx)) {
            rx_ring_openat(AT_FDCWD, ctx->path.data, OPEN_FLAGS, 0,
                           op_ud(r, ctx, STEP_OPEN, RX_OP_OPEN));
        }
        return;
    }
    ctx->how.resolve = RESOLVE_NO_SYMLINKS;
    if (ctx->from) {
        /* the trusted part may hold links: resolved as usual, once */
        char *dir = rx_pstrdup_c(r->pool, ctx->path.data, ctx->from);
        if (dir == NULL) {
            fail(r, ctx, ENOMEM, "open()");
            return;
        }
        rx_ring_openat(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                       op_ud(r, ctx, STEP_FROM, RX_OP_OPEN));
        return;
    }
    if (!open_inline(r, ctx)) {
        rx_ring_openat2(AT_FDCWD, ctx->path.data, &ctx->how,
                        op_ud(r, ctx, STEP_OPEN, RX_OP_OPEN));
    }
}

/*
 * Where checking starts (nginx's from=): after an initial part of the
 * path that ends at a component boundary; the whole path when the value
 * is not such a part; nothing to check when it is the whole path.
 */
static rx_int_t
symlink_policy(rx_http_request_t *r, open_ctx_t *ctx)
{
    rx_str_t from;

    ctx->symlinks = ctx->conf->symlinks;
    ctx->from = 0;
    if (ctx->symlinks == RX_SYMLINKS_OFF || ctx->conf->from == NULL) {
        return RX_OK;
    }
    if (rx_http_complex_value(r, ctx->conf->from, &from) != RX_OK) {
        return RX_ERROR;
    }
    while (from.len > 1 && from.data[from.len - 1] == '/') {
        from.len--;
    }
    if (from.len == 0 || from.len > ctx->path.len
        || memcmp(from.data, ctx->path.data, from.len) != 0) {
        return RX_OK;
    }
    if (from.len == ctx->path.len) {
        ctx->symlinks = RX_SYMLINKS_OFF;
        return RX_OK;
    }
    if (from.len == 1) {
        return RX_OK;                        /* "/": the whole path */
    }
    if (ctx->path.data[from.len] != '/') {
        return RX_OK;
    }
    ctx->from = from.len + 1;                /* the rest is relative */
    return RX_OK;
}

bool
rx_http_open_file_test(rx_http_request_t *r, const rx_str_t *path,
    rx_http_open_file_t *of, rx_http_open_file_pt done)
{
    rx_http_open_file_conf_t *conf = rx_http_get_module_loc_conf(r,
                                        rx_http_open_file_module);
    rx_int_t                  rc;

    if (conf->cache == NULL) {
        return false;
    }
    rc = rx_http_open_file(r, path, of, done);
    if (rc == RX_OK) {
        done(r, of);            /* an answer from the cache comes at once */
    } else if (rc == RX_ERROR) {
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
    }
    return true;
}

static void
content_release(void *data)
{
    rx_http_file_content_release(data);
}

/* small_file_cache: the file unchanged since its bytes were kept (one
 * statx) -> those bytes, referenced until r's pool goes, stand for the
 * open file: no fd, nothing to close. No memory for the reference: a
 * miss (the open goes on). */
static bool
content_hit(rx_http_request_t *r, const rx_str_t *path,
    rx_http_open_file_t *of)
{
    rx_http_content_entry_t *e;
    rx_pool_cleanup_t       *cln;
    const char              *data;
    size_t                   n;

    e = rx_http_file_content_find(of->content_store, path->data, path->len,
                                  &data, &n, &of->id);
    if (e == NULL) {
        return false;
    }
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        rx_http_file_content_release(e);
        return false;
    }
    cln->handler = content_release;
    cln->data = e;
    of->content = data;
    of->fd = -1;
    of->err = 0;
    of->is_dir = false;
    of->is_file = true;
    of->size = of->id.size;
    of->mtime = (time_t) (of->id.mtime_ns / 1000000000LL
                          - (of->id.mtime_ns % 1000000000LL < 0));
    of->cached = false;
    of->nonblock = false;
    of->id_known = true;
    return true;
}

rx_int_t
rx_http_open_file(rx_http_request_t *r, const rx_str_t *path,
    rx_http_open_file_t *of, rx_http_open_file_pt done)
{
    rx_http_open_file_conf_t *conf = rx_http_get_module_loc_conf(r,
                                        rx_http_open_file_module);
    rx_http_file_entry_t     *e = NULL;
    rx_pool_cleanup_t        *cln;
    open_ctx_t               *ctx;

    if (of->want_content && conf->content && conf->cache == NULL
        && conf->symlinks == RX_SYMLINKS_OFF) {
        of->content_store = conf->content;
        if (content_hit(r, path, of)) {
            return RX_OK;
        }
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (ctx == NULL || cln == NULL) {
        return RX_ERROR;
    }
    ctx->dirfd = -1;
    cln->handler = ctx_cleanup;
    cln->data = ctx;
    ctx->of = of;
    ctx->done = done;
    ctx->saved = r->op_handler;
    ctx->path = *path;
    ctx->conf = conf;
    of->fd = -1;
    of->nonblock = false;
    if (symlink_policy(r, ctx) != RX_OK) {
        return RX_ERROR;
    }
    ctx->tag = (uint32_t) ctx->symlinks | (uint32_t) ctx->from << 2;
    if (conf->cache) {
        e = rx_http_file_cache_find(conf->cache, path->data, path->len,
                                    rx_time_sec);
    }
    if (e && e->tag != ctx->tag) {
        e = NULL;                   /* opened under another policy */
    }
    if (e && (e->fd != -1 || e->err)) {
        if (rx_time_sec - e->validated < (time_t) conf->valid) {
            if (e->err == 0 && rx_http_file_cache_ref(e, r->pool) != RX_OK) {
                return RX_ERROR;
            }
            e->uses++;
            fill_from_entry(of, e);
            return RX_OK;
        }
        if (e->err == 0) {
            /* the fd is kept while statx says whether it still serves */
            if (rx_http_file_cache_ref(e, r->pool) != RX_OK) {
                return RX_ERROR;
            }
            ctx->entry = e;
            r->open_file_ctx = ctx;
            rx_ring_statx(AT_FDCWD, ctx->path.data, 0, STATX_WANT, &ctx->stx,
                          op_ud(r, ctx, STEP_REVALIDATE, RX_OP_STATX));
            return RX_AGAIN;
        }
    }
    if (e) {
        ctx->uses = e->uses;        /* counting towards min_uses, or stale */
    }
    r->open_file_ctx = ctx;
    ctx->sync = 1;
    start_open(r, ctx);
    ctx->sync = 0;
    return ctx->answered ? RX_OK : RX_AGAIN;
}
