/*
 * http_cache.c: the cache of one *_cache_path: its index in the keys zone
 * (a hash of entries by the key's MD5, in LRU order), its files' names,
 * and the loader that rebuilds the index from the files at start; the
 * test of a location's predicates (*_cache_bypass, *_no_cache,
 * *_cache_purge), which the lookup and the store both ask.
 *
 * The loader runs in the master, in the zone's init hook, before any
 * worker exists: a worker never blocks on the directory walk, and a
 * request never sees a half-built index. A reload that keeps the zone
 * keeps the index as it is (no walk). Files whose name is not an entry's
 * (what a crashed worker left while writing) are removed by the walk.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "http.h"
#include "http_cache.h"
#include "clock.h"

#define CACHE_EVICT_PER_INSERT  4       /* inactive entries dropped per insert */

/* An entry's unlink in flight in a worker (http_cache_unlink.c): a new
 * file is not renamed to its name until the unlink completed, or the late
 * unlink would remove the new file the index names (nginx keeps its node
 * "deleting" for the same reason). Apart from the node, which may go (or
 * be made again) meanwhile. */
typedef struct cache_gone_s cache_gone_t;
struct cache_gone_s {
    cache_gone_t  *next;
    uint8_t        md5[16];
    pid_t          pid;             /* the worker that unlinks */
};

typedef struct {
    rx_uint_t               nbuckets;   /* a power of two */
    rx_http_cache_node_t  **buckets;
    rx_http_cache_node_t   *head;       /* most recently used */
    rx_http_cache_node_t   *tail;
    rx_uint_t               count;
    int64_t                 total;      /* bytes of the files (max_size) */
    int64_t                 responses[RX_HTTP_CACHE_STATUSES];
    uint64_t                gen;        /* the last file's (node->gen) */
    cache_gone_t           *gone;       /* unlinks in flight */
} cache_root_t;

const char *const rx_http_cache_status_names[RX_HTTP_CACHE_STATUSES] = {
    "NONE", "MISS", "BYPASS", "EXPIRED", "STALE", "UPDATING",
    "REVALIDATED", "HIT"
};

static void
set_fsize(cache_root_t *root, rx_http_cache_node_t *n, int64_t fsize)
{
    root->total += fsize - n->fsize;
    n->fsize = fsize;
}

rx_http_cache_t *
rx_http_cache_of(rx_shm_zone_t *zone)
{
    return zone ? zone->data : NULL;
}

static uint32_t
md5_hash(const uint8_t md5[16])
{
    uint32_t h;

    memcpy(&h, md5, sizeof(h));
    return h;
}

static void
hex(char *out, const uint8_t *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
}

/* nginx's layout: levels=1:2 puts the entry ...c29b into DIR/b/92/...c29b
 * (each level takes the characters before the previous one's, from the
 * end of the name). */
/* The name into buf (PATH_MAX bytes); false when it does not fit. */
static bool
file_name(char *buf, const rx_http_cache_t *cache, const uint8_t md5[16])
{
    char      name[32], *p = buf;
    size_t    end = 32;
    rx_uint_t i;

    if (cache->path.len + 32 + 3 * 3 + 2 > PATH_MAX) {
        return false;
    }
    hex(name, md5, 16);
    memcpy(p, cache->path.data, cache->path.len);
    p += cache->path.len;
    for (i = 0; i < 3 && cache->levels[i]; i++) {
        end -= cache->levels[i];
        *p++ = '/';
        memcpy(p, name + end, cache->levels[i]);
        p += cache->levels[i];
    }
    *p++ = '/';
    memcpy(p, name, 32);
    p[32] = '\0';
    return true;
}

char *
rx_http_cache_file_name(rx_pool_t *pool, const rx_http_cache_t *cache,
    const uint8_t md5[16])
{
    char buf[PATH_MAX], *file;

    if (!file_name(buf, cache, md5)) {
        return NULL;
    }
    file = rx_pnalloc(pool, strlen(buf) + 1);
    if (file) {
        memcpy(file, buf, strlen(buf) + 1);
    }
    return file;
}

static void
lru_unlink(cache_root_t *root, rx_http_cache_node_t *n)
{
    if (n->prev) n->prev->next = n->next; else root->head = n->next;
    if (n->next) n->next->prev = n->prev; else root->tail = n->prev;
    n->prev = n->next = NULL;
}

static void
lru_front(cache_root_t *root, rx_http_cache_node_t *n)
{
    n->prev = NULL;
    n->next = root->head;
    if (root->head) root->head->prev = n; else root->tail = n;
    root->head = n;
}

static rx_http_cache_node_t *
find(cache_root_t *root, const uint8_t md5[16], rx_http_cache_node_t ***link)
{
    rx_http_cache_node_t **pp = &root->buckets[md5_hash(md5)
                                               & (root->nbuckets - 1)];

    for ( ; *pp; pp = &(*pp)->hnext) {
        if (memcmp((*pp)->md5, md5, 16) == 0) {
            break;
        }
    }
    if (link) {
        *link = pp;
    }
    return *pp;
}

/* The zone locked, its root (NULL: not laid out) and md5's node (NULL:
 * none) in *root and *n; RX_ERROR (not locked) when the lock failed. */
static rx_int_t
lock_node(rx_http_cache_t *cache, const uint8_t md5[16], cache_root_t **root,
    rx_http_cache_node_t **n)
{
    if (rx_shm_zone_lock(cache->zone) != RX_OK) {
        return RX_ERROR;
    }
    *root = rx_shm_zone_root(cache->zone);
    *n = *root ? find(*root, md5, NULL) : NULL;
    return RX_OK;
}

/* Removes md5's file from the disk (on the ring in a worker:
 * http_cache_unlink.c), marked in the index until that completed. Without
 * memory for the mark the worker unlinks it itself: a file removed late
 * could be a newer one. */
static void unlinked(void *cache, const uint8_t md5[16]);

static void
unlink_entry(rx_http_cache_t *cache, cache_root_t *root,
    const uint8_t md5[16])
{
    cache_gone_t *g;
    char          file[PATH_MAX];

    if (!file_name(file, cache, md5)) {
        return;
    }
    g = rx_shm_zone_alloc_locked(cache->zone, sizeof(*g));
    if (g == NULL) {
        (void) unlink(file);
        return;
    }
    memcpy(g->md5, md5, 16);
    g->pid = getpid();
    g->next = root->gone;
    root->gone = g;
    if (!rx_http_cache_unlink(file, unlinked, cache, md5)) {
        root->gone = g->next;            /* made already */
        rx_shm_zone_free_locked(cache->zone, g);
    }
}

/* The marks of md5 (of one worker, or of any dead one: its unlinks
 * completed or never will), each dropped; whether one of another live
 * worker's is left in *live. */
static bool
gone_clear(rx_http_cache_t *cache, cache_root_t *root, const uint8_t md5[16],
    bool own_one, bool *live)
{
    cache_gone_t **pp = &root->gone, *g;
    pid_t          pid = getpid();
    bool           cleared = false;

    while ((g = *pp) != NULL) {
        if (memcmp(g->md5, md5, 16) != 0) {
            pp = &g->next;
            continue;
        }
        if ((own_one && !cleared && g->pid == pid)
            || (g->pid != pid && kill(g->pid, 0) == -1 && errno == ESRCH)) {
            cleared = cleared || g->pid == pid;
            *pp = g->next;
            rx_shm_zone_free_locked(cache->zone, g);
            continue;
        }
        *live = true;
        pp = &g->next;
    }
    return cleared;
}

/* The marks of md5 after a pass of gone_clear: one of another live
 * worker's is left. */
static bool
gone_locked(rx_http_cache_t *cache, const uint8_t md5[16], bool own_one)
{
    cache_root_t          *root;
    rx_http_cache_node_t  *n;
    bool                   live = false;

    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return false;
    }
    if (root) {
        (void) gone_clear(cache, root, md5, own_one, &live);
    }
    rx_shm_zone_unlock(cache->zone);
    return live;
}

/* An entry's unlink completed (http_cache_unlink.c's done hook): its own
 * mark goes. */
static void
unlinked(void *cache, const uint8_t md5[16])
{
    (void) gone_locked(cache, md5, true);
}

bool
rx_http_cache_unlinking(rx_http_cache_t *cache, const uint8_t md5[16])
{
    return gone_locked(cache, md5, false);
}

/* Drops n from the index and its file from the disk. */
static void
drop(rx_http_cache_t *cache, cache_root_t *root, rx_http_cache_node_t *n)
{
    rx_http_cache_node_t **pp;
    uint8_t                md5[16];
    bool                   had = n->fsize != 0;

    (void) find(root, n->md5, &pp);
    if (*pp == n) {
        *pp = n->hnext;
    }
    lru_unlink(root, n);
    root->count--;
    memcpy(md5, n->md5, 16);
    set_fsize(root, n, 0);
    /* the node's memory first: the unlink's mark may need it (a full
     * zone evicts to make room) */
    rx_shm_zone_free_locked(cache->zone, n);
    if (had) {
        unlink_entry(cache, root, md5);
    }
}

static bool
inactive(const rx_http_cache_t *cache, const rx_http_cache_node_t *n)
{
    return n->accessed + cache->inactive < rx_time_sec;
}

static rx_http_cache_node_t *node_for(rx_http_cache_t *cache,
    cache_root_t *root, const uint8_t md5[16]);

/* A fetch whose worker died (or was killed) ends with it. */
static void
check_updater(rx_http_cache_node_t *n)
{
    if (n->updating && n->pid != getpid() && kill(n->pid, 0) == -1
        && errno == ESRCH) {
        n->updating = 0;
        n->last_pass = 0;
    }
}

static void
copy_out(rx_http_cache_node_t *n, rx_http_cache_entry_t *e)
{
    e->exists = true;
    e->found = n->fsize != 0;
    e->valid_until = n->valid_until;
    e->fsize = n->fsize;
    e->vary_hash = n->vary_hash;
    memcpy(e->vary, n->vary, sizeof(e->vary));
    e->swr = n->swr;
    e->sie = n->sie;
    e->status = n->status;
    e->last_modified = n->last_modified;
    memcpy(e->etag, n->etag, sizeof(e->etag));
    e->uses = n->uses;
    e->updating = n->updating;
    e->last_pass = n->last_pass;
    e->last_stored = n->last_stored;
    e->seq = n->seq;
    memcpy(e->tmp, n->tmp, sizeof(e->tmp));
    e->body_start = n->body_start;
    e->clen = n->clen;
    e->written = n->written;
    e->gen = n->gen;
}

rx_int_t
rx_http_cache_lookup(rx_http_cache_t *cache, const uint8_t md5[16],
    rx_http_cache_entry_t *e, rx_log_t *log)
{
    cache_root_t          *root;
    rx_http_cache_node_t  *n;

    (void) log;
    memset(e, 0, sizeof(*e));
    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return RX_ERROR;
    }
    if (n) {
        check_updater(n);
    }
    if (n && !n->updating && inactive(cache, n)) {
        drop(cache, root, n);
        n = NULL;
    }
    if (n) {
        copy_out(n, e);
        n->accessed = rx_time_sec;
        lru_unlink(root, n);
        lru_front(root, n);
    }
    rx_shm_zone_unlock(cache->zone);
    return RX_OK;
}

rx_int_t
rx_http_cache_claim(rx_http_cache_t *cache, const uint8_t md5[16],
    rx_http_cache_entry_t *e, rx_log_t *log)
{
    cache_root_t          *root;
    rx_http_cache_node_t  *n;

    if (rx_shm_zone_lock(cache->zone) != RX_OK) {
        return RX_ERROR;
    }
    root = rx_shm_zone_root(cache->zone);
    n = root ? node_for(cache, root, md5) : NULL;
    if (n == NULL) {
        rx_shm_zone_unlock(cache->zone);
        rx_log_error(RX_LOG_ALERT, log, 0, "could not allocate node in cache "
                     "keys zone \"%s\"", cache->zone->name.data);
        return RX_ERROR;
    }
    check_updater(n);
    n->uses++;
    e->uses = n->uses;
    if (!n->updating) {
        n->updating = 1;
        n->last_pass = 0;
        n->last_stored = 0;
        n->seq++;
        n->pid = getpid();
        n->tmp[0] = '\0';
        n->body_start = 0;
        n->clen = -1;
        n->written = 0;
        n->accessed = rx_time_sec;
        e->claimed = true;
    }
    e->updating = true;
    e->seq = n->seq;
    rx_shm_zone_unlock(cache->zone);
    return RX_OK;
}

void
rx_http_cache_progress(rx_http_cache_t *cache, const uint8_t md5[16],
    uint32_t seq, const char *tmp, uint32_t body_start, int64_t clen,
    int64_t written)
{
    cache_root_t          *root;
    rx_http_cache_node_t  *n;

    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return;
    }
    if (n && n->updating && n->seq == seq) {
        snprintf(n->tmp, sizeof(n->tmp), "%s", tmp);
        n->body_start = body_start;
        n->clen = clen;
        n->written = written;
    }
    rx_shm_zone_unlock(cache->zone);
}

void
rx_http_cache_release(rx_http_cache_t *cache, const uint8_t md5[16],
    uint32_t seq, bool pass)
{
    cache_root_t          *root;
    rx_http_cache_node_t  *n;

    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return;
    }
    if (n && n->updating && n->seq == seq) {
        n->updating = 0;
        n->last_pass = pass;
        n->tmp[0] = '\0';
    }
    rx_shm_zone_unlock(cache->zone);
}

/* A node for md5, evicting from the LRU end while the zone is full. */
static rx_http_cache_node_t *
node_for(rx_http_cache_t *cache, cache_root_t *root, const uint8_t md5[16])
{
    rx_http_cache_node_t **pp, *n = find(root, md5, &pp);

    if (n) {
        lru_unlink(root, n);
        lru_front(root, n);
        return n;
    }
    while ((n = rx_shm_zone_alloc_locked(cache->zone, sizeof(*n))) == NULL) {
        rx_http_cache_node_t *old = root->tail;

        while (old && old->updating) {
            old = old->prev;         /* a fetch runs: its waiters need it */
        }
        if (old == NULL) {
            return NULL;
        }
        drop(cache, root, old);
    }
    memset(n, 0, sizeof(*n));
    memcpy(n->md5, md5, 16);
    (void) find(root, md5, &pp);     /* drop() may have changed the chain */
    n->hnext = *pp;
    *pp = n;
    lru_front(root, n);
    root->count++;
    return n;
}

/* max_size: the least recently used files go until the rest fits (never
 * keep, the entry just stored, nor one a fetch is writing). */
static void
evict_to_size(rx_http_cache_t *cache, cache_root_t *root,
    rx_http_cache_node_t *keep)
{
    rx_http_cache_node_t *n = root->tail, *prev;

    while (cache->max_size && root->total > cache->max_size && n) {
        prev = n->prev;
        if (n != keep && !n->updating && n->fsize) {
            drop(cache, root, n);
        }
        n = prev;
    }
}

rx_int_t
rx_http_cache_insert(rx_http_cache_t *cache, const rx_http_cache_head_t *h,
    int64_t fsize, uint32_t seq, rx_log_t *log)
{
    cache_root_t         *root;
    rx_http_cache_node_t *n;
    rx_uint_t             i;

    if (rx_shm_zone_lock(cache->zone) != RX_OK) {
        return RX_ERROR;
    }
    root = rx_shm_zone_root(cache->zone);
    if (root == NULL) {
        rx_shm_zone_unlock(cache->zone);
        return RX_ERROR;
    }
    /* entries nobody asked for within inactive= leave as others come */
    for (i = 0; i < CACHE_EVICT_PER_INSERT && root->tail
                && memcmp(root->tail->md5, h->md5, 16) != 0
                && !root->tail->updating
                && inactive(cache, root->tail); i++) {
        drop(cache, root, root->tail);
    }
    n = node_for(cache, root, h->md5);
    if (n == NULL) {
        rx_shm_zone_unlock(cache->zone);
        rx_log_error(RX_LOG_ALERT, log, 0, "could not allocate node in cache "
                     "keys zone \"%s\"", cache->zone->name.data);
        return RX_ERROR;
    }
    n->valid_until = h->valid_until;
    n->gen = ++root->gen;
    set_fsize(root, n, fsize);
    n->accessed = rx_time_sec;
    n->vary_hash = h->vary_hash;
    memcpy(n->vary, h->vary, sizeof(n->vary));
    n->swr = h->swr;
    n->sie = h->sie;
    n->status = h->status;
    n->last_modified = h->last_modified;
    memcpy(n->etag, h->etag, sizeof(n->etag));
    evict_to_size(cache, root, n);
    if (n->updating && n->seq == seq) {
        n->updating = 0;         /* its waiters find the file */
        n->last_pass = 0;
        n->last_stored = 1;
        n->tmp[0] = '\0';
    }
    rx_shm_zone_unlock(cache->zone);
    return RX_OK;
}

void
rx_http_cache_forget(rx_http_cache_t *cache, const uint8_t md5[16])
{
    cache_root_t         *root;
    rx_http_cache_node_t *n;

    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return;
    }
    if (n) {
        set_fsize(root, n, 0);   /* the file is gone already */
        if (!n->updating) {
            drop(cache, root, n);
        }
    }
    rx_shm_zone_unlock(cache->zone);
}

void
rx_http_cache_refresh(rx_http_cache_t *cache, const uint8_t md5[16],
    uint32_t seq, int64_t valid_until)
{
    cache_root_t          *root;
    rx_http_cache_node_t  *n;

    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return;
    }
    if (n && n->updating && n->seq == seq) {
        if (valid_until > n->valid_until) {
            n->valid_until = valid_until;   /* the file's head learns
                                               it from the serve that
                                               follows (cache_serve.c) */
        }
        n->updating = 0;
        n->last_pass = 0;
        n->last_stored = 1;
        n->tmp[0] = '\0';
    }
    rx_shm_zone_unlock(cache->zone);
}

bool
rx_http_cache_remove(rx_http_cache_t *cache, const uint8_t md5[16])
{
    cache_root_t         *root;
    rx_http_cache_node_t *n;
    bool                  had = false;

    if (lock_node(cache, md5, &root, &n) != RX_OK) {
        return false;
    }
    if (n) {
        had = n->fsize != 0;
        if (!n->updating) {
            drop(cache, root, n);
        } else if (n->fsize) {
            unlink_entry(cache, root, n->md5);
            set_fsize(root, n, 0);
        }
    }
    rx_shm_zone_unlock(cache->zone);
    return had;
}

/* One file of the walk: an entry when its head is sound, else removed. */
static void
load_file(rx_http_cache_t *cache, cache_root_t *root, const char *file,
    const char *name, rx_log_t *log)
{
    rx_http_cache_head_t  h;
    rx_http_cache_node_t *n;
    struct stat           st;
    uint8_t               md5[16];
    char                  want[32];
    ssize_t               got = -1;
    bool                  have_st = false;
    int                   fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd != -1) {
        got = read(fd, &h, sizeof(h));
        have_st = fstat(fd, &st) == 0;
        if (!have_st) {
            got = -1;
        }
        close(fd);
    }
    if (got == (ssize_t) sizeof(h) && strlen(name) == 32) {
        memcpy(md5, h.md5, 16);
        hex(want, md5, 16);
    }
    if (strlen(name) == 10 && strspn(name, "0123456789") == 10
        && have_st && st.st_mtime > rx_time_sec - 60) {
        return;      /* a file being written by an older worker (a reload
                        that made a new zone): not the loader's to remove */
    }
    if (got != (ssize_t) sizeof(h) || strlen(name) != 32
        || memcmp(h.magic, RX_HTTP_CACHE_MAGIC, 8) != 0
        || memcmp(want, name, 32) != 0
        || st.st_size != (off_t) h.body_start + h.body_len) {
        rx_log_error(RX_LOG_INFO, log, 0, "cache loader: removing \"%s\" "
                     "(not a complete cache file)", file);
        (void) unlink(file);
        return;
    }
    (void) root;
    n = node_for(cache, root, md5);
    if (n == NULL) {
        return;                  /* the zone is full: the rest stays cold */
    }
    n->valid_until = h.valid_until;
    n->gen = ++root->gen;
    set_fsize(root, n, st.st_size);
    n->accessed = rx_time_sec;
    n->vary_hash = h.vary_hash;
    memcpy(n->vary, h.vary, sizeof(n->vary));
    n->swr = h.swr;
    n->sie = h.sie;
    n->status = h.status;
    n->last_modified = h.last_modified;
    memcpy(n->etag, h.etag, sizeof(n->etag));
    n->etag[sizeof(n->etag) - 1] = '\0';
}

static void
walk(rx_http_cache_t *cache, cache_root_t *root, const char *dir,
    rx_uint_t depth, rx_log_t *log)
{
    DIR           *d = opendir(dir);
    struct dirent *de;
    char           path[PATH_MAX];

    if (d == NULL) {
        return;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') {
            continue;
        }
        if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name)
            >= (int) sizeof(path)) {
            continue;
        }
        if (de->d_type == DT_DIR) {
            if (depth < 3 && cache->levels[depth]) {
                walk(cache, root, path, depth + 1, log);
            }
            continue;
        }
        load_file(cache, root, path, de->d_name, log);
    }
    closedir(d);
}

rx_int_t
rx_http_cache_init_zone(rx_shm_zone_t *zone, void *old)
{
    rx_http_cache_t *cache = zone->data;
    cache_root_t    *root;
    rx_uint_t        n = 64;

    (void) old;                  /* a zone taken over keeps its index */
    if (rx_shm_zone_root(zone) != NULL) {
        return RX_OK;
    }
    root = rx_shm_zone_alloc_locked(zone, sizeof(*root));
    while (n * 2 * 256 <= zone->size) {
        n *= 2;                  /* about one bucket per entry that fits */
    }
    if (root == NULL
        || (root->buckets = rx_shm_zone_alloc_locked(zone,
                                n * sizeof(void *))) == NULL) {
        rx_log_error(RX_LOG_EMERG, zone->log, 0, "cache keys zone \"%s\" is "
                     "too small", zone->name.data);
        return RX_ERROR;
    }
    memset(root->buckets, 0, n * sizeof(void *));
    root->nbuckets = n;
    root->head = root->tail = NULL;
    root->count = 0;
    root->total = 0;
    root->gone = NULL;
    memset(root->responses, 0, sizeof(root->responses));
    /* file numbers start from the time: a zone emptied and made again (a
     * process died holding its lock) never gives a number a worker's
     * copy of an older file still has (cache_hot.c) */
    root->gen = (uint64_t) time(NULL) << 24;
    rx_shm_zone_set_root(zone, root);
    rx_time_update();
    walk(cache, root, cache->path.data, 0, zone->log);
    evict_to_size(cache, root, NULL);
    if (root->count) {
        rx_log_error(RX_LOG_NOTICE, zone->log, 0, "cache \"%s\": %lu entries "
                     "loaded from \"%s\"", zone->name.data,
                     (unsigned long) root->count, cache->path.data);
    }
    return RX_OK;
}

void
rx_http_cache_count(rx_http_cache_t *cache, rx_uint_t status)
{
    cache_root_t *root;

    if (status >= RX_HTTP_CACHE_STATUSES
        || rx_shm_zone_lock(cache->zone) != RX_OK) {
        return;
    }
    root = rx_shm_zone_root(cache->zone);
    if (root) {
        root->responses[status]++;
    }
    rx_shm_zone_unlock(cache->zone);
}

bool
rx_http_cache_stats(rx_shm_zone_t *zone, rx_http_cache_stats_t *out)
{
    rx_http_cache_t *cache = zone->data;
    cache_root_t    *root;

    if (zone->init != rx_http_cache_init_zone || cache == NULL
        || zone->shm.addr == NULL || rx_shm_zone_lock(zone) != RX_OK) {
        return false;
    }
    root = rx_shm_zone_root(zone);
    memset(out, 0, sizeof(*out));
    if (root) {
        memcpy(out->responses, root->responses, sizeof(out->responses));
        out->entries = (int64_t) root->count;
        out->bytes = root->total;
    }
    out->max_size = cache->max_size;
    rx_shm_zone_unlock(zone);
    return true;
}
