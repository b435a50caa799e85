/*
 * http_cache_store.c: a response of the upstream engine on its way into
 * the cache (whether it may be stored and for how long:
 * http_cache_policy.c): its file, written through the ring as the body streams to the client
 * (http_temp_file.c's writer, a named file in the cache's directory),
 * then its head completed and the file renamed into place (the rename,
 * and the level directories' mkdir when they are missing, on the ring
 * too: a directory entry may wait for the disk as much as data).
 *
 * Whatever goes wrong with the file (an unwritable directory, a full
 * disk, a body cut short), the client's response goes on untouched: the
 * file is dropped, one line is logged, and the response is not cached.
 *
 * The file's operations run on a slot of its own (a connection without a
 * socket, as an HTTP/2 stream's), not on the request's: the store, its
 * buffers and its file live in that slot's pool until the last of them
 * completed, whatever became of the request meanwhile (a keepalive
 * request's memory goes as soon as it ends, and a failed store may still
 * have a write in flight then). The request and the store each drop
 * their link to the other when they end first (detach).
 */
#include <ctype.h>
#include "http.h"
#include "http_cache.h"
#include "http_upstream.h"
#include "http_date.h"
#include "clock.h"

/* Bytes of the file that may wait in memory for the disk before the
 * response is no longer stored (the client's response never waits). */
#define STORE_MAX_BACKLOG  (4 * 1024 * 1024)
/* How often a file waiting for an old file's unlink (of its name) asks
 * whether it completed (it may be another worker's). */
#define STORE_UNLINK_POLL_MS  5

typedef struct rx_http_cache_store_s {
    rx_http_temp_file_t    tf;
    rx_http_cache_head_t   head;
    rx_conn_t             *c;        /* the file's slot; c->pool holds st */
    rx_http_upstream_t    *u;        /* NULL once detached */
    rx_pool_cleanup_t     *rcln;     /* the request's, that detaches */
    void                 (*done)(rx_http_upstream_t *u);
    rx_http_cache_t       *cache;    /* for the index once in place */
    uint32_t               seq;      /* the fetch's claim */
    char                  *dest;     /* the entry's name (slot's pool) */
    size_t                 dir_end;  /* the level directory being made */
    unsigned               failed:1;
    unsigned               ending:1;     /* the body is complete */
    unsigned               patching:1;   /* the head's final write runs */
    unsigned               closed:1;     /* the slot is closing */
    unsigned               made_dirs:1;  /* the levels were made once */
    unsigned               waiting:1;    /* for an old file's unlink */
} store_t;

/* The response header as it went to the client, as text. */
static rx_int_t
append_header(store_t *st, rx_http_request_t *r)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_table_elt_t        *e = ho->headers.elts;
    char                   line[64];
    rx_uint_t              i;
    int                    n;

    if (ho->status_line.len) {
        if (rx_http_temp_append(&st->tf, ho->status_line.data,
                                ho->status_line.len) != RX_OK) {
            return RX_ERROR;
        }
    } else {
        n = snprintf(line, sizeof(line), "%u", (unsigned) ho->status);
        if (rx_http_temp_append(&st->tf, line, (size_t) n) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (rx_http_temp_append(&st->tf, "\r\n", 2) != RX_OK) {
        return RX_ERROR;
    }
    if (ho->content_type.len
        && (rx_http_temp_append(&st->tf, "Content-Type: ", 14) != RX_OK
            || rx_http_temp_append(&st->tf, ho->content_type.data,
                                   ho->content_type.len) != RX_OK
            || rx_http_temp_append(&st->tf, "\r\n", 2) != RX_OK)) {
        return RX_ERROR;
    }
    for (i = 0; i < ho->headers.nelts; i++) {
        if (e[i].deleted || e[i].key.len == 0) {
            continue;
        }
        if (rx_http_temp_append(&st->tf, e[i].key.data, e[i].key.len) != RX_OK
            || rx_http_temp_append(&st->tf, ": ", 2) != RX_OK
            || rx_http_temp_append(&st->tf, e[i].value.data,
                                   e[i].value.len) != RX_OK
            || rx_http_temp_append(&st->tf, "\r\n", 2) != RX_OK) {
            return RX_ERROR;
        }
    }
    return rx_http_temp_append(&st->tf, "\r\n", 2);
}

static void store_cqe(rx_conn_t *c, const rx_cqe_t *cqe);

/* The body bytes that came with the header (the protocol's parser hands
 * them over before the header is complete): the last try's are the last
 * u->body_bytes of them. RX_OK, or RX_ERROR when they are not all there. */
static rx_int_t
append_early_body(store_t *st, rx_http_upstream_t *u)
{
    rx_http_cache_req_t *ctx = u->r->cache_ctx;
    size_t               n = (size_t) u->body_bytes;

    if (n > ctx->early_len) {
        return RX_ERROR;
    }
    return rx_http_temp_append(&st->tf, ctx->early + ctx->early_len - n, n);
}

/* The store and its request part: the request's ctx no longer sees the
 * store (a failed one is as none), its cleanup no longer runs. */
static void
detach(store_t *st)
{
    rx_http_cache_req_t *ctx;

    if (st->u == NULL) {
        return;
    }
    ctx = st->u->r->cache_ctx;
    if (ctx && ctx->store == st) {
        ctx->store = NULL;
    }
    if (st->rcln) {
        st->rcln->handler = NULL;
        st->rcln = NULL;
    }
    st->u = NULL;
}

/* A detached store ends when nothing is in flight on its file: the slot
 * closes, and its pool (st with it) goes at the end of this loop turn,
 * its cleanup closing the file and removing it unless it is in place. */
static void
settle(store_t *st)
{
    if (st->u == NULL && !st->closed && !st->waiting
        && st->c->inflight == 0) {
        st->closed = 1;
        rx_conn_close(st->c);
    }
}

/* The request ends before its file was in place (its client's connection
 * closed, or a keepalive request ended after the store failed): the file
 * is dropped once its last operation completed. */
static void
store_cleanup(void *data)
{
    store_t *st = data;

    st->rcln = NULL;                     /* running now */
    st->u = NULL;
    st->failed = 1;
    settle(st);
}

/* The slot's pool goes: every operation on the file has completed. A
 * file not put in place is removed on the ring, as an entry's (its name
 * copied there: this pool goes now). */
static void
store_teardown(void *data)
{
    store_t *st = data;
    bool     drop = st->tf.fd != -1 && !st->tf.keep && st->tf.name;

    if (drop) {
        st->tf.keep = 1;                 /* not by rx_http_temp_free */
    }
    rx_http_temp_free(&st->tf);
    if (drop) {
        (void) rx_http_cache_unlink(st->tf.name, NULL, NULL, NULL);
    }
}

/* The slot is closed from outside (the worker's exit closes them all)
 * while the request may live on: the two part. */
static void
store_slot_free(rx_conn_t *c)
{
    store_t *st = c->data;

    if (st) {
        st->failed = 1;
        st->closed = 1;
        detach(st);
    }
}

static const rx_conn_ops_t store_ops = {
    .on_free = store_slot_free,
    .on_op = store_cqe,
};

/* The file failed: dropped, said once (per worker and directory). The
 * fetch's waiters go upstream each (pass: the disk failed, a next fetch
 * would fare no better) or the next of them fetches (the response broke). */
static void
store_fail(store_t *st, const char *what, int err, bool pass)
{
    rx_http_upstream_t  *u = st->u;
    rx_http_cache_req_t *ctx;
    void               (*done)(rx_http_upstream_t *u);

    if (u == NULL) {
        /* detached while it waited for an old file's unlink: the claim
         * is the store's */
        rx_http_cache_release(st->cache, st->head.md5, st->seq, pass);
        rx_log_error(RX_LOG_CRIT, &st->c->log, err, "%s \"%s\" failed: a "
                     "response for the cache is not cached", what ? what
                     : "storing", st->tf.name);
        st->failed = 1;
        settle(st);
        return;
    }
    ctx = u->r->cache_ctx;
    if (ctx->claimed) {
        ctx->claimed = false;
        rx_http_cache_release(ctx->cache, ctx->md5, ctx->seq, pass);
    }
    if (what) {
        rx_http_temp_log_failure(st->u->r, ctx->cache->path.data,
            ctx->cache->directive, what, err, "a response for the cache",
            "responses are not cached");
    }
    st->failed = 1;
    done = st->ending ? st->done : NULL;
    st->done = NULL;
    /* an open or a write in flight still completes on the slot, and the
     * file is closed and removed after the last */
    detach(st);
    settle(st);
    if (done) {
        done(u);
    }
}

static void start(rx_http_upstream_t *u);

/* A store for r's response: its slot, its memory there, and the request's
 * cleanup that detaches it. RX_ERROR: none (logged when slots ran out). */
static rx_int_t
new_store(rx_http_request_t *r, store_t **out)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_pool_cleanup_t   *rcln, *tcln;
    rx_conn_t           *c;
    store_t             *st;

    rcln = rx_pool_cleanup_add(r->pool, 0);
    if (rcln == NULL) {
        return RX_ERROR;
    }
    c = rx_conn_get(&rx_worker, -1, NULL);
    if (c == NULL) {
        rx_http_request_log_error(r, RX_LOG_WARN, 0, "%lu worker_connections "
            "are not enough for the cache file of this response: it is not "
            "cached", (unsigned long) rx_worker.nconns);
        return RX_ERROR;
    }
    st = rx_pcalloc(c->pool, sizeof(*st));
    tcln = rx_pool_cleanup_add(c->pool, 0);
    if (st == NULL || tcln == NULL) {
        rx_conn_close(c);
        return RX_ERROR;
    }
    rx_http_temp_init(&st->tf, ctx->cache->path.data);
    tcln->handler = store_teardown;
    tcln->data = st;
    st->c = c;
    c->ops = &store_ops;
    c->data = st;
    if (rx_http_temp_set_named(&st->tf, c->pool, false) != RX_OK) {
        st->closed = 1;
        rx_conn_close(c);
        return RX_ERROR;
    }
    rcln->handler = store_cleanup;
    rcln->data = st;
    st->rcln = rcln;
    *out = st;
    return RX_OK;
}

bool
rx_http_cache_revalidated(rx_http_upstream_t *u)
{
    rx_http_request_t    *r = u->r;
    rx_http_cache_req_t  *ctx = r->cache_ctx;
    rx_http_cache_head_t  head;
    rx_uint_t             status = u->headers_in.status;
    time_t                valid;

    if (ctx == NULL || !ctx->revalidating || !ctx->claimed
        || status != RX_HTTP_NOT_MODIFIED || r->header_sent) {
        return false;
    }
    /* the 304's own headers may say for how long; else *_cache_valid of
     * the stored response's status */
    memset(&head, 0, sizeof(head));
    u->headers_in.status = ctx->entry.status;
    valid = rx_http_cache_validity(u, ctx->conf, &head);
    u->headers_in.status = status;
    ctx->claimed = false;
    ctx->refreshed_until = valid > 0 ? rx_time_sec + valid : 0;
    rx_http_cache_refresh(ctx->cache, ctx->md5, ctx->seq,
                          ctx->refreshed_until);
    ctx->refreshed = true;
    r->cache_status = RX_HTTP_CACHE_REVALIDATED;
    return true;
}

void
rx_http_cache_store_start(rx_http_upstream_t *u)
{
    rx_http_cache_req_t *ctx = u->r->cache_ctx;

    if (ctx == NULL || !ctx->claimed) {
        return;                  /* only the request that fetches stores */
    }
    start(u);
    ctx->decided = true;
    if (ctx->store == NULL && ctx->claimed) {
        /* not a response to store: its waiters go upstream each */
        ctx->claimed = false;
        rx_http_cache_release(ctx->cache, ctx->md5, ctx->seq, true);
    }
}

static void
start(rx_http_upstream_t *u)
{
    rx_http_request_t    *r = u->r;
    rx_http_cache_req_t  *ctx = r->cache_ctx;
    rx_http_cache_head_t  head;
    store_t              *st;
    time_t                valid;

    if (ctx == NULL
        || !(r->method & (RX_HTTP_GET | RX_HTTP_POST) || ctx->head_as_get)
        || ctx->uses < (rx_uint_t) ctx->conf->min_uses
        || (r->cache_status != RX_HTTP_CACHE_MISS
            && r->cache_status != RX_HTTP_CACHE_EXPIRED
            && r->cache_status != RX_HTTP_CACHE_BYPASS)
        || rx_http_cache_test_predicates(r, ctx->conf->no_cache)
        /* an answer to the client's own Range or condition (passed on)
         * is not the entry: never stored */
        || u->headers_in.status == 206 || u->headers_in.status == 304
        || r->upgrade) {
        return;
    }
    memset(&head, 0, sizeof(head));
    if (!rx_http_cache_storable(u, &head) || (valid = rx_http_cache_validity(u, ctx->conf, &head)) <= 0) {
        return;
    }
    if (new_store(r, &st) != RX_OK) {
        return;
    }
    st->u = u;
    st->head = head;
    memcpy(st->head.magic, RX_HTTP_CACHE_MAGIC, 8);
    memcpy(st->head.md5, ctx->md5, 16);
    st->head.valid_until = rx_time_sec + valid;
    st->head.stored = rx_time_sec;
    st->head.status = (uint16_t) u->headers_in.status;
    st->head.key_len = (uint32_t) ctx->key.len;
    rx_http_cache_validators(u, &st->head);
    if (rx_http_temp_append(&st->tf, (char *) &st->head, sizeof(st->head))
            != RX_OK
        || rx_http_temp_append(&st->tf, ctx->key.data, ctx->key.len) != RX_OK
        || append_header(st, r) != RX_OK) {
        detach(st);
        settle(st);
        return;
    }
    st->head.body_start = (uint32_t) rx_http_temp_backlog(&st->tf);
    if (u->body_bytes && append_early_body(st, u) != RX_OK) {
        detach(st);
        settle(st);
        return;
    }
    ctx->store = st;
    /* the body is not spilled to the engine's own temporary file while
     * it is stored: the store tees what arrives, in arrival order */
    u->temp_failed = 1;
    rx_http_temp_kick_on(st->c, &st->tf);
}

/* Bytes before the store decided: kept for it (at most what came in the
 * header's reads, bounded by *_buffer_size). */
static void
stash(rx_http_cache_req_t *ctx, rx_pool_t *pool, const char *data, size_t len)
{
    if (ctx->early_len + len > ctx->early_cap) {
        size_t cap = rx_max(ctx->early_len + len, (size_t) 4096) * 2;
        char  *p = rx_pnalloc(pool, cap);

        if (p == NULL) {
            return;              /* the store will find them missing */
        }
        if (ctx->early_len) {
            memcpy(p, ctx->early, ctx->early_len);
        }
        ctx->early = p;
        ctx->early_cap = cap;
    }
    memcpy(ctx->early + ctx->early_len, data, len);
    ctx->early_len += len;
}

void
rx_http_cache_store_body(rx_http_upstream_t *u, const char *data, size_t len)
{
    rx_http_cache_req_t *ctx = u->r->cache_ctx;
    store_t             *st = ctx ? ctx->store : NULL;

    if (ctx && ctx->claimed && !ctx->decided) {
        stash(ctx, u->r->pool, data, len);
        return;
    }
    if (st == NULL || st->failed) {
        return;
    }
    if (rx_http_temp_backlog(&st->tf) + len > STORE_MAX_BACKLOG) {
        rx_http_request_log_error(u->r, RX_LOG_WARN, 0, "the cache file "
            "\"%s\" is written slower than the upstream sends: this response "
            "is not cached", ctx->file);
        store_fail(st, NULL, 0, true);
        return;
    }
    if (rx_http_temp_append(&st->tf, data, len) != RX_OK) {
        store_fail(st, NULL, 0, true);
        return;
    }
    rx_http_temp_kick_on(st->c, &st->tf);
}

/* Everything is in the file: its head gets the body's length. */
static void
patch_head(store_t *st)
{
    st->head.body_len = st->tf.written - st->head.body_start;
    st->patching = 1;
    st->c->inflight++;
    rx_ring_write(st->tf.fd, &st->head, sizeof(st->head), 0,
                  rx_conn_ud(st->c, RX_OP_WRITE));
}

/* The head is written: the file takes the entry's name, on the ring
 * (its paths in the slot's pool: the request may end before the kernel
 * read them). The index learns of it only once it is there. */
static void
rename_file(store_t *st)
{
    st->c->inflight++;
    rx_ring_renameat(AT_FDCWD, st->tf.name, AT_FDCWD, st->dest, 0,
                     rx_conn_ud(st->c, RX_OP_FS));
}

/* The next level directory of st->dest below st->dir_end, made on the
 * ring: false when there is none left (the rename is next). */
static bool
next_dir(store_t *st)
{
    char *slash = strchr(st->dest + st->dir_end + 1, '/');

    if (slash == NULL) {
        st->dir_end = 0;
        return false;
    }
    st->dir_end = (size_t) (slash - st->dest);
    *slash = '\0';
    st->c->inflight++;
    rx_ring_mkdirat(AT_FDCWD, st->dest, 0700, rx_conn_ud(st->c, RX_OP_FS));
    return true;
}

/* The old file's unlink is still pending: asked again shortly. */
static void
unlink_poll(rx_timer_t *t)
{
    rx_conn_t *c = t->data;
    store_t   *st = c->data;

    if (st == NULL || st->failed) {
        return;                          /* closed from outside */
    }
    if (rx_http_cache_unlinking(st->cache, st->head.md5)) {
        rx_timer_add(&c->timer, STORE_UNLINK_POLL_MS);
        return;
    }
    st->waiting = 0;
    rename_file(st);
}

/* An old file of the entry's name is being unlinked (a purge, or an
 * eviction, before this fetch): renamed now, the new file could be the
 * one the late unlink removes. The client's response does not wait: the
 * store takes over the fetch's claim (its waiters get the file once in
 * place) and waits on its own. */
static void
wait_unlink(store_t *st)
{
    rx_http_upstream_t  *u = st->u;
    void               (*done)(rx_http_upstream_t *u) = st->done;

    st->waiting = 1;
    st->c->timer.handler = unlink_poll;
    st->c->timer.data = st->c;
    rx_timer_add(&st->c->timer, STORE_UNLINK_POLL_MS);
    ((rx_http_cache_req_t *) u->r->cache_ctx)->claimed = false;
    st->done = NULL;
    detach(st);
    if (done) {
        done(u);
    }
}

static void
put_in_place(store_t *st)
{
    rx_http_cache_req_t *ctx = st->u->r->cache_ctx;

    st->cache = ctx->cache;
    st->seq = ctx->seq;
    st->dest = rx_pnalloc(st->c->pool, strlen(ctx->file) + 1);
    if (st->dest == NULL) {
        store_fail(st, "creating", ENOMEM, true);
        return;
    }
    strcpy(st->dest, ctx->file);
    if (rx_http_cache_unlinking(st->cache, st->head.md5)) {
        wait_unlink(st);
        return;
    }
    rename_file(st);
}

/* The file is under the entry's name: the index names it (also when the
 * request ended meanwhile: the file is the entry now), the fetch's claim
 * ends, and the request's end goes on. */
static void
in_place(store_t *st)
{
    rx_http_upstream_t  *u = st->u;
    void               (*done)(rx_http_upstream_t *u) = st->done;

    st->tf.keep = 1;
    (void) rx_http_cache_insert(st->cache, &st->head, st->tf.written,
                                st->seq, &st->c->log);
    rx_http_temp_free(&st->tf);          /* closed, kept */
    if (u == NULL) {
        settle(st);
        return;
    }
    ((rx_http_cache_req_t *) u->r->cache_ctx)->claimed = false;
    st->done = NULL;
    detach(st);
    settle(st);
    done(u);
}

/* A rename or a level's mkdir completed. A missing level is made (each
 * level once; EEXIST: another worker made it, as good), then the rename
 * is tried again. */
static void
placed(store_t *st, int res)
{
    if (st->dir_end) {                   /* a level's mkdir */
        st->dest[st->dir_end] = '/';
        if (res == 0 || res == -EEXIST) {
            if (st->failed) {
                settle(st);
            } else if (!next_dir(st)) {
                rename_file(st);
            }
            return;
        }
        st->dir_end = 0;
    } else if (res == 0) {
        in_place(st);
        return;
    } else if (res == -ENOENT && !st->made_dirs && !st->failed) {
        st->made_dirs = 1;
        st->dir_end = st->cache->path.len;
        if (!next_dir(st)) {
            rename_file(st);             /* no levels: once more */
        }
        return;
    }
    if (st->failed) {
        settle(st);
    } else {
        store_fail(st, "creating", res < 0 ? -res : EIO, true);
    }
}

/* A completion on the file's slot (conn.c counted it off first). */
static void
store_cqe(rx_conn_t *c, const rx_cqe_t *cqe)
{
    store_t             *st = c->data;
    rx_http_cache_req_t *ctx;
    const char          *what;
    int                  err;

    if (st == NULL) {
        /* the slot was closed from outside (the worker's exit): a file
         * opened now is closed; the loader removes it at the next start */
        if (rx_op_kind(cqe->user_data) == RX_OP_OPEN && cqe->res >= 0) {
            close(cqe->res);
        }
        return;
    }
    if (rx_op_kind(cqe->user_data) == RX_OP_FS) {
        placed(st, cqe->res);
        return;
    }
    if (st->failed) {
        /* what the kernel held is back: an fd opened is the teardown's */
        st->patching = 0;
        (void) rx_http_temp_handle(&st->tf, cqe, &err, &what);
        settle(st);
        return;
    }
    ctx = st->u->r->cache_ctx;
    if (st->patching && rx_op_kind(cqe->user_data) == RX_OP_WRITE) {
        st->patching = 0;
        if (cqe->res != (int) sizeof(st->head)) {
            store_fail(st, "writing to", cqe->res < 0 ? -cqe->res : ENOSPC,
                       true);
            return;
        }
        put_in_place(st);
        return;
    }
    if (rx_http_temp_handle(&st->tf, cqe, &err, &what) == RX_ERROR) {
        store_fail(st, what, err, true);
        return;
    }
    if (st->tf.fd != -1) {
        /* the fetch's waiters read the file as far as it is written */
        rx_http_cache_progress(ctx->cache, ctx->md5, ctx->seq,
            strrchr(st->tf.name, '/') + 1, st->head.body_start,
            st->u->headers_in.content_length_n, st->tf.written);
    }
    rx_http_temp_kick_on(c, &st->tf);
    if (st->ending && rx_http_temp_settled(&st->tf)) {
        patch_head(st);
    }
}

rx_int_t
rx_http_cache_store_end(rx_http_upstream_t *u,
    void (*done)(rx_http_upstream_t *u))
{
    rx_http_cache_req_t *ctx = u->r->cache_ctx;
    store_t             *st = ctx ? ctx->store : NULL;

    if (st == NULL || st->failed) {
        return RX_OK;
    }
    if (u->headers_in.content_length_n >= 0
        && u->headers_in.content_length_n != u->body_bytes) {
        store_fail(st, NULL, 0, false);  /* a short body is never stored */
        return RX_OK;
    }
    st->ending = 1;
    st->done = done;
    rx_http_temp_kick_on(st->c, &st->tf);
    if (rx_http_temp_settled(&st->tf)) {
        patch_head(st);
    }
    return RX_AGAIN;
}

bool
rx_http_cache_storing(rx_http_upstream_t *u)
{
    rx_http_cache_req_t *ctx = u->r->cache_ctx;

    return ctx && ctx->store && !ctx->store->failed;
}

void
rx_http_cache_store_abort(rx_http_request_t *r)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;

    if (ctx && ctx->store) {
        ctx->store->done = NULL;
        store_fail(ctx->store, NULL, 0, false);
    }
}
