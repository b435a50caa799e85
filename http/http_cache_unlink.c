/*
 * http_cache_unlink.c: the removal of cache files a worker decided on (an
 * entry evicted by max_size or a full keys zone, found inactive, purged),
 * on the ring: a directory entry's removal may wait for the disk (its
 * journal, a frozen or remote filesystem) and a worker must not.
 *
 * The unlinks are fire-and-forget: nobody waits for them, and they run on
 * a slot of their own (a connection without a socket, as a store's), not
 * on a request's, so that a completion never reaches freed memory. The
 * paths live in that slot's pool until the kernel is done with them; a
 * slot takes at most UNLINK_BATCH of them and closes (its pool freed) as
 * soon as none is in flight (a graceful stop waits for no idle slot), the
 * next unlinks taking a new slot.
 *
 * Outside a worker (the loader, in the master at the zone's start: a
 * process that serves no request may block) the unlink is made directly.
 *
 * An entry's file is named by its key alone, so a late unlink of an old
 * file would remove a new one put in place meanwhile: the index keeps a
 * mark for every entry's unlink in flight (http_cache.c, made before the
 * unlink is submitted), its completion here clears it, and a store does
 * not rename a new file into place while one is there.
 */
#include <fcntl.h>
#include "http.h"
#include "http_cache.h"

#define UNLINK_BATCH  64       /* paths per slot (the op's tag is 8 bits) */

typedef struct {
    rx_uint_t         n;                     /* unlinks submitted */
    char             *path[UNLINK_BATCH];    /* in the slot's pool */
    /* an entry's file: called with its data and key once the unlink
     * completed (NULL: a store's temporary file, nothing to tell) */
    rx_http_cache_unlinked_pt done[UNLINK_BATCH];
    void             *data[UNLINK_BATCH];
    uint8_t           md5[UNLINK_BATCH][16];
} batch_t;

static rx_conn_t *open_batch;            /* the slot taking new unlinks */

/* An unlink completed: ENOENT (gone already: purged twice, or another
 * worker's eviction of the same entry) is no error. The slot closes after
 * its last one in flight. */
static void
unlink_done(rx_conn_t *c, const rx_cqe_t *cqe)
{
    batch_t *b = c->data;
    uint8_t  i = rx_op_tag(cqe->user_data);

    if (b == NULL) {
        return;                          /* closed from outside: exiting */
    }
    if (cqe->res < 0 && cqe->res != -ENOENT) {
        rx_log_error(RX_LOG_CRIT, &c->log, -cqe->res, "unlink() \"%s\" "
                     "failed", i < b->n ? b->path[i] : "?");
    }
    if (i < b->n && b->done[i]) {
        b->done[i](b->data[i], b->md5[i]);
    }
    if (c->inflight == 0) {
        if (c == open_batch) {
            open_batch = NULL;
        }
        rx_conn_close(c);
    }
}

/* The slot is closed from outside (the worker's exit closes them all): the
 * unlinks in flight still complete, and the slot waits for them. */
static void
batch_free(rx_conn_t *c)
{
    if (c == open_batch) {
        open_batch = NULL;
    }
}

static const rx_conn_ops_t unlink_ops = {
    .on_free = batch_free,
    .on_op = unlink_done,
};

/* The slot that takes the next unlink; NULL when none is left. */
static rx_conn_t *
batch_slot(void)
{
    rx_conn_t *c = open_batch;
    batch_t   *b;

    if (c != NULL && ((batch_t *) c->data)->n < UNLINK_BATCH) {
        return c;
    }
    if (c != NULL) {
        open_batch = NULL;               /* full: closes after its last */
    }
    c = rx_conn_get(&rx_worker, -1, NULL);
    if (c == NULL) {
        return NULL;
    }
    b = rx_pcalloc(c->pool, sizeof(*b));
    if (b == NULL) {
        rx_conn_close(c);
        return NULL;
    }
    c->ops = &unlink_ops;
    c->data = b;
    open_batch = c;
    return c;
}

bool
rx_http_cache_unlink(const char *file, rx_http_cache_unlinked_pt done,
    void *data, const uint8_t *md5)
{
    rx_conn_t *c;
    batch_t   *b;
    char      *p;
    size_t     len = strlen(file) + 1;

    if (rx_worker.conns == NULL) {
        (void) unlink(file);             /* the master's loader */
        return false;
    }
    c = batch_slot();
    p = c ? rx_pnalloc(c->pool, len) : NULL;
    if (p == NULL) {
        /* no slot (worker_connections all taken) or no memory: a file
         * left behind would stay on the disk uncounted; a blocked worker
         * is the lesser harm, and this is rare */
        rx_log_error(RX_LOG_WARN, rx_worker.cycle->log, 0, "unlink() \"%s\" "
                     "made in the worker: no free connection slot", file);
        (void) unlink(file);
        return false;
    }
    memcpy(p, file, len);
    b = c->data;
    b->path[b->n] = p;
    b->done[b->n] = done;
    b->data[b->n] = data;
    if (done) {
        memcpy(b->md5[b->n], md5, 16);
    }
    c->inflight++;
    rx_ring_unlinkat(AT_FDCWD, p, 0,
                     rx_conn_ud_tag(c, RX_OP_FS, (uint8_t) b->n));
    b->n++;
    return true;
}
