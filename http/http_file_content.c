/*
 * http_file_content.c: small_file_cache's store. A hash of entries by
 * path, each holding a small file's bytes and the state (inode, device,
 * size, mtime and ctime to the nanosecond, mode) it had before they were
 * read; an LRU list bounded by bytes. A lookup is one statx(2) of the
 * path (one an epoch of the worker's input, see rx_ring_epoch: requests
 * read together share it): the same state -> the bytes, where a request
 * without it opens, fstats, reads and closes (four calls for a 30-byte
 * file); another state, or an error -> the entry goes and the caller
 * opens as usual, so every answer (404, 403, a changed file) is the
 * open's.
 *
 * Why the state settles first: the kernel stamps mtime and ctime from a
 * clock that ticks every few milliseconds, so two writes within a tick
 * leave the same stamps; a file changed in the last 2 seconds is not
 * kept. Network filesystems may answer statx from a cache of attributes
 * while an open would revalidate them: files are kept only on the local
 * filesystems listed below.
 *
 * Each worker fills its own copy after fork: nothing shared, no locks.
 */
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include "http_file_content.h"
#include "clock.h"
#include "ring.h"

#define NBUCKETS       4096             /* a power of two */
#define SETTLE_SEC     2
#define ZFS_MAGIC      0x2fc12fc1       /* not in linux/magic.h */
#define STATX_WANT     (STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE \
                        | STATX_MTIME | STATX_CTIME)

struct rx_http_content_entry_s {
    rx_http_content_entry_t  *hnext;
    rx_http_content_entry_t  *prev;     /* LRU: toward the head */
    rx_http_content_entry_t  *next;
    uint32_t                  hash;
    size_t                    key_len;
    size_t                    n;        /* bytes of data */
    size_t                    charge;   /* counted in used */
    rx_http_file_id_t         id;
    rx_uint_t                 refs;     /* responses sending its bytes */
    uint64_t                  epoch;    /* rx_ring_epoch of its last statx */
    bool                      detached; /* out of the store: freed at refs 0 */
    char                     *key;      /* NUL-terminated, after the entry */
    char                   *data;     /* after the key */
};

static uint32_t
hash_path(const char *p, size_t len)
{
    uint32_t h = 2166136261u;           /* FNV-1a */

    while (len--) {
        h = (h ^ (unsigned char) *p++) * 16777619u;
    }
    return h;
}

static void
lru_unlink(rx_http_file_content_t *c, rx_http_content_entry_t *e)
{
    if (e->prev) e->prev->next = e->next; else c->head = e->next;
    if (e->next) e->next->prev = e->prev; else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void
lru_push(rx_http_file_content_t *c, rx_http_content_entry_t *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e; else c->tail = e;
    c->head = e;
}

static void
entry_remove(rx_http_file_content_t *c, rx_http_content_entry_t *e)
{
    rx_http_content_entry_t **pp;

    for (pp = &c->buckets[e->hash & (NBUCKETS - 1)]; *pp; pp = &(*pp)->hnext) {
        if (*pp == e) {
            *pp = e->hnext;
            break;
        }
    }
    lru_unlink(c, e);
    c->used -= e->charge;
    e->detached = true;
    if (e->refs == 0) {
        free(e);
    }
}

void
rx_http_file_content_release(rx_http_content_entry_t *e)
{
    if (--e->refs == 0 && e->detached) {
        free(e);
    }
}

/* The configuration's end (a worker's exit, a reload): every entry goes,
 * those a response still sends when it lets them go. */
static void
store_cleanup(void *data)
{
    rx_http_file_content_t *c = data;

    while (c->tail) {
        entry_remove(c, c->tail);
    }
    free(c->buckets);
    c->buckets = NULL;
}

static rx_http_content_entry_t *
lookup(rx_http_file_content_t *c, const char *path, size_t len, uint32_t hash)
{
    rx_http_content_entry_t *e;

    for (e = c->buckets[hash & (NBUCKETS - 1)]; e; e = e->hnext) {
        if (e->hash == hash && e->key_len == len
            && memcmp(e->key, path, len) == 0) {
            return e;
        }
    }
    return NULL;
}

rx_http_file_content_t *
rx_http_file_content_create(rx_pool_t *pool, size_t size, size_t file_max)
{
    rx_http_file_content_t *c = rx_pcalloc(pool, sizeof(*c));
    rx_pool_cleanup_t      *cln = rx_pool_cleanup_add(pool, 0);

    if (c == NULL || cln == NULL) {
        return NULL;
    }
    c->size = size;
    c->file_max = file_max;
    cln->handler = store_cleanup;
    cln->data = c;
    return c;
}

static int64_t
ns(const struct statx_timestamp *t)
{
    return t->tv_sec * 1000000000LL + t->tv_nsec;
}

rx_http_content_entry_t *
rx_http_file_content_find(rx_http_file_content_t *c, const char *path,
    size_t len, const char **data, size_t *n, rx_http_file_id_t *id)
{
    rx_http_content_entry_t *e;
    struct statx             stx;
    uint32_t                 hash;

    if (c->buckets == NULL || c->head == NULL) {
        return NULL;
    }
    hash = hash_path(path, len);
    e = lookup(c, path, len, hash);
    if (e == NULL) {
        return NULL;
    }
    /* not checked again before the worker's next input */
    if (e->epoch != rx_ring_epoch) {
        if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT, STATX_WANT, &stx) == -1
            || stx.stx_ino != e->id.ino
            || makedev(stx.stx_dev_major, stx.stx_dev_minor) != e->id.dev
            || (int64_t) stx.stx_size != e->id.size
            || ns(&stx.stx_mtime) != e->id.mtime_ns
            || ns(&stx.stx_ctime) != e->id.ctime_ns
            || stx.stx_mode != e->id.mode) {
            entry_remove(c, e);         /* the open says what it is now */
            return NULL;
        }
        e->epoch = rx_ring_epoch;
    }
    lru_unlink(c, e);
    lru_push(c, e);
    e->refs++;
    *data = e->data;
    *n = e->n;
    *id = e->id;
    return e;
}

/* Whether statx on dev's filesystem sees every change at once. */
static bool
local_fs(rx_http_file_content_t *c, uint64_t dev, int fd)
{
    struct statfs sfs;
    rx_uint_t     i;
    bool          local;

    for (i = 0; i < c->ndevs; i++) {
        if (c->devs[i] == dev) {
            return c->dev_local[i];
        }
    }
    if (fstatfs(fd, &sfs) == -1) {
        return false;
    }
    switch ((unsigned long) sfs.f_type) {
    case EXT4_SUPER_MAGIC:              /* ext2, ext3 too */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case ZFS_MAGIC:
        local = true;
        break;
    default:
        local = false;
    }
    if (c->ndevs < sizeof(c->devs) / sizeof(c->devs[0])) {
        c->devs[c->ndevs] = dev;
        c->dev_local[c->ndevs++] = local;
    }
    return local;
}

bool
rx_http_file_content_wants(const rx_http_file_content_t *c,
    const rx_http_file_id_t *id)
{
    int64_t newest = rx_max(id->mtime_ns, id->ctime_ns) / 1000000000LL;

    /* a file changed just now: not yet */
    return id->size >= 0 && (uint64_t) id->size <= c->file_max
           && S_ISREG(id->mode) && (int64_t) rx_time_sec - newest >= SETTLE_SEC;
}

void
rx_http_file_content_add(rx_http_file_content_t *c, const char *path,
    size_t len, int fd, const rx_http_file_id_t *id, const char *data,
    size_t n)
{
    rx_http_content_entry_t *e;
    size_t                   charge;
    uint32_t                 hash;

    if ((int64_t) n != id->size || !rx_http_file_content_wants(c, id)) {
        return;
    }
    charge = sizeof(*e) + len + 1 + n;
    if (charge > c->size || !local_fs(c, id->dev, fd)) {
        return;
    }
    if (c->buckets == NULL) {
        c->buckets = calloc(NBUCKETS, sizeof(*c->buckets));
        if (c->buckets == NULL) {
            return;
        }
    }
    hash = hash_path(path, len);
    e = lookup(c, path, len, hash);
    if (e) {
        entry_remove(c, e);
    }
    while (c->used + charge > c->size && c->tail) {
        entry_remove(c, c->tail);
    }
    e = malloc(charge);
    if (e == NULL) {
        return;
    }
    e->hash = hash;
    e->refs = 0;
    e->epoch = rx_ring_epoch - 1;       /* its state may be older: checked
                                           at its first lookup */
    e->detached = false;
    e->prev = e->next = NULL;
    e->key_len = len;
    e->n = n;
    e->charge = charge;
    e->id = *id;
    e->key = (char *) (e + 1);
    memcpy(e->key, path, len);
    e->key[len] = '\0';
    e->data = e->key + len + 1;
    memcpy(e->data, data, n);
    e->hnext = c->buckets[hash & (NBUCKETS - 1)];
    c->buckets[hash & (NBUCKETS - 1)] = e;
    lru_push(c, e);
    c->used += charge;
}
