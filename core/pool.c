/*
 * pool.c: arenas: bump allocation in blocks, large allocations on a side
 * list, cleanup handlers run before the memory goes.
 */
#include "core.h"
#include "slab.h"

struct rx_pool_block_s {
    char             *last;   /* first free byte */
    char             *end;
    rx_pool_block_t  *next;
    rx_uint_t         failed; /* times an allocation did not fit */
};

/*
 * Spare pools: a request's pool is created and destroyed at every request,
 * and glibc serves 4 KiB chunks (above its per-thread cache) from its bins
 * at a cost that showed in a small static response's profile (two mallocs
 * and two frees each: the pool and its second block). Pools from
 * rx_pool_create_spare (flagged by `spare`) go back to this stack on
 * destroy, reset, with up to SPARE_BLOCKS blocks; a larger one, or one
 * beyond SPARES_MAX, is freed. Not under AddressSanitizer, which must see
 * every pool freed to catch a use after it.
 */
#define SPARES_MAX    64
#define SPARE_BLOCKS  2

/* Pools destroyed in this process: a measure of activity for whoever
 * tidies the heap after a burst (event/mem_tidy.c). */
static rx_uint_t ndestroyed;

static rx_pool_t *spares[SPARES_MAX];
static rx_uint_t  nspares;

/*
 * Spare blocks: a keep-alive connection's input buffer and HTTP parser are
 * malloc'd when a request starts arriving and freed when the connection
 * waits idle again (an idle one holds neither), once per request: a
 * realloc, a calloc and two frees in a small response's profile; so are
 * a pool's large allocations of up to BLOCK_MAX bytes (an upstream's
 * header buffer and first body block: two 4 KiB mallocs and frees, ~800
 * instructions, in every FastCGI request). Freed
 * blocks of up to BLOCK_MAX bytes are kept here, a stack per size (one of
 * BLOCK_CLASSES sizes at a time: a class that holds none takes the next
 * size asked for), BLOCKS_MAX each, for the next rx_spare_block_get; the
 * quiet tick frees them with the spare pools. Not under AddressSanitizer.
 */
#define BLOCK_CLASSES  4
#define BLOCKS_MAX     32
#define BLOCK_MAX      4096

typedef struct {
    size_t     size;
    rx_uint_t  n;
    void      *blocks[BLOCKS_MAX];
} block_class_t;

static block_class_t block_classes[BLOCK_CLASSES];

static rx_uint_t spare_blocks_release(void);

/* A large allocation: one of up to BLOCK_MAX bytes is a spare block (an
 * upstream's 4 KiB header buffer and its body's first block, in every
 * proxied or FastCGI request), given back on free. */
struct rx_pool_large_s {
    rx_pool_large_t  *next;
    void             *alloc;
    size_t            size;
};

void *
rx_alloc(size_t size, rx_log_t *log)
{
    void *p = malloc(size);
    if (p == NULL && log) {
        rx_log_error(RX_LOG_EMERG, log, errno, "malloc(%zu) failed", size);
    }
    return p;
}

void *
rx_calloc(size_t size, rx_log_t *log)
{
    void *p = rx_alloc(size, log);
    if (p) {
        memset(p, 0, size);
    }
    return p;
}

_Static_assert(rx_align(sizeof(rx_pool_t) + sizeof(rx_pool_block_t),
                         RX_POOL_ALIGNMENT) == RX_POOL_HEAD,
               "RX_POOL_HEAD is the pool's header");

/* Lays a pool out in `size` bytes at `pool` (its own first block). */
static rx_pool_t *
pool_init(rx_pool_t *pool, size_t size, rx_slab_t *slab, rx_log_t *log)
{
    rx_pool_block_t  *b;
    size_t            head = rx_align(sizeof(rx_pool_t) + sizeof(rx_pool_block_t),
                                      RX_POOL_ALIGNMENT);

    b = (rx_pool_block_t *) (pool + 1);
    b->last = (char *) pool + head;
    b->end = (char *) pool + size;
    b->next = NULL;
    b->failed = 0;
    pool->current = b;
    pool->blocks = b;
    pool->large = NULL;
    pool->cleanup = NULL;
    pool->block_size = (uint32_t) size;
    pool->max = rx_min(size - head, (size_t) 4096);
    pool->log = log;
    pool->slab = slab;
    pool->spare = 0;
    return pool;
}

rx_pool_t *
rx_pool_create(size_t size, rx_log_t *log)
{
    rx_pool_t *pool;

    if (size < RX_POOL_HEAD + 256) {
        size = RX_POOL_HEAD + 256;
    }
    pool = rx_alloc(size, log);
    if (pool == NULL) {
        return NULL;
    }
    return pool_init(pool, size, NULL, log);
}

rx_pool_t *
rx_pool_create_spare(rx_log_t *log)
{
    rx_pool_t *pool;

    if (nspares) {
        pool = spares[--nspares];
        pool->log = log;
        return pool;
    }
    pool = rx_pool_create(RX_POOL_DEFAULT_SIZE, log);
#ifndef __SANITIZE_ADDRESS__
    if (pool) {
        pool->spare = 1;
    }
#endif
    return pool;
}

rx_uint_t
rx_pool_spares_release(void)
{
    rx_uint_t n = nspares;

    while (nspares) {
        rx_pool_t *pool = spares[--nspares];

        pool->spare = 0;
        rx_pool_destroy(pool);
        ndestroyed--;         /* not activity: mem_tidy calls this */
    }
    return n + spare_blocks_release();
}

#ifndef __SANITIZE_ADDRESS__
/* The class of `size`, or one that holds none (given that size), or NULL. */
static block_class_t *
block_class(size_t size)
{
    block_class_t *free_class = NULL;
    rx_uint_t      i;

    for (i = 0; i < BLOCK_CLASSES; i++) {
        if (block_classes[i].size == size) {
            return &block_classes[i];
        }
        if (block_classes[i].n == 0 && free_class == NULL) {
            free_class = &block_classes[i];
        }
    }
    if (free_class) {
        free_class->size = size;
    }
    return free_class;
}
#endif

void *
rx_spare_block_get(size_t size, rx_log_t *log)
{
#ifndef __SANITIZE_ADDRESS__
    block_class_t *bc;

    for (rx_uint_t i = 0; i < BLOCK_CLASSES; i++) {
        bc = &block_classes[i];
        if (bc->size == size && bc->n) {
            return bc->blocks[--bc->n];
        }
    }
#endif
    return rx_alloc(size, log);
}

void
rx_spare_block_put(void *p, size_t size)
{
#ifndef __SANITIZE_ADDRESS__
    block_class_t *bc;

    if (p && size <= BLOCK_MAX && (bc = block_class(size)) != NULL
        && bc->n < BLOCKS_MAX)
    {
        bc->blocks[bc->n++] = p;
        return;
    }
#endif
    free(p);
}

static rx_uint_t
spare_blocks_release(void)
{
    rx_uint_t i, n = 0;

    for (i = 0; i < BLOCK_CLASSES; i++) {
        while (block_classes[i].n) {
            free(block_classes[i].blocks[--block_classes[i].n]);
            n++;
        }
    }
    return n;
}

/* Keeps a spare pool, reset, for the next rx_pool_create_spare; false
 * when it is to be freed. */
static bool
keep_spare(rx_pool_t *pool)
{
    rx_pool_block_t *b;
    rx_uint_t        n = 0;

    if (!pool->spare || nspares == SPARES_MAX) {
        return false;
    }
    for (b = pool->blocks; b; b = b->next) {
        if (++n > SPARE_BLOCKS) {
            return false;
        }
    }
    rx_pool_reset(pool);
    spares[nspares++] = pool;
    return true;
}

rx_pool_t *
rx_pool_create_in(rx_slab_t *slab, rx_log_t *log)
{
    rx_pool_t *pool = rx_slab_alloc(slab, log);

    if (pool == NULL) {
        return NULL;
    }
    return pool_init(pool, slab->size, slab, log);
}

static void
run_cleanups(rx_pool_t *pool)
{
    rx_pool_cleanup_t *c;

    for (c = pool->cleanup; c; c = c->next) {
        if (c->handler) {
            c->handler(c->data);
        }
    }
    pool->cleanup = NULL;
}

static void
free_large(rx_pool_t *pool)
{
    rx_pool_large_t *l;

    for (l = pool->large; l; l = l->next) {
        rx_spare_block_put(l->alloc, l->size);
        l->alloc = NULL;
    }
    pool->large = NULL;
}

rx_uint_t
rx_pool_destroyed(void)
{
    return ndestroyed;
}

void
rx_pool_destroy(rx_pool_t *pool)
{
    rx_pool_block_t *b, *next;

    if (pool == NULL) {
        return;
    }
    ndestroyed++;
    if (keep_spare(pool)) {
        return;
    }
    run_cleanups(pool);
    free_large(pool);
    /* the first block lives inside the pool's own allocation */
    for (b = pool->blocks->next; b; b = next) {
        next = b->next;
        free(b);
    }
    if (pool->slab) {
        rx_slab_free(pool);
    } else {
        free(pool);
    }
}

void
rx_pool_reset(rx_pool_t *pool)
{
    rx_pool_block_t *b;

    run_cleanups(pool);
    free_large(pool);
    pool->blocks->last = (char *) pool + RX_POOL_HEAD;
    pool->blocks->failed = 0;
    for (b = pool->blocks->next; b; b = b->next) {
        b->last = (char *) (b + 1);
        b->last = (char *) rx_align((uintptr_t) b->last, RX_POOL_ALIGNMENT);
        b->failed = 0;
    }
    pool->current = pool->blocks;
}

static void *
alloc_large(rx_pool_t *pool, size_t size)
{
    rx_pool_large_t *l;
    rx_uint_t        n = 0;
    void            *p = size <= BLOCK_MAX ? rx_spare_block_get(size, pool->log)
                                            : rx_alloc(size, pool->log);

    if (p == NULL) {
        return NULL;
    }
    /* reuse an empty slot near the head before allocating a new one */
    for (l = pool->large; l && n < 3; l = l->next, n++) {
        if (l->alloc == NULL) {
            l->alloc = p;
            l->size = size;
            return p;
        }
    }
    l = rx_palloc(pool, sizeof(rx_pool_large_t));
    if (l == NULL) {
        rx_spare_block_put(p, size);
        return NULL;
    }
    l->alloc = p;
    l->size = size;
    l->next = pool->large;
    pool->large = l;
    return p;
}

static void *
alloc_block(rx_pool_t *pool, size_t size, size_t align)
{
    rx_pool_block_t *b, *last;
    char            *m;
    size_t           bsize = pool->block_size;

    b = rx_alloc(bsize, pool->log);
    if (b == NULL) {
        return NULL;
    }
    b->end = (char *) b + bsize;
    b->next = NULL;
    b->failed = 0;
    m = (char *) rx_align((uintptr_t) (b + 1), align);
    b->last = m + size;

    /* blocks that keep failing stop being searched first */
    for (last = pool->current; last->next; last = last->next) {
        if (last->failed++ > 4) {
            pool->current = last->next;
        }
    }
    last->next = b;
    return m;
}

/* A block that misses with less room than this left is full enough to be
 * passed over (palloc_slow). */
#define POOL_FULL_ROOM  256

/* The rest of palloc: the later blocks, a new block, or a large
 * allocation. Out of line, so that the common case stays a few
 * instructions without saving registers (tens of calls per request). */
static __attribute__((noinline)) void *
palloc_slow(rx_pool_t *pool, size_t size, size_t align)
{
    rx_pool_block_t *b, *first = pool->current;
    char            *m;
    bool             retire;

    if (size > pool->max) {
        return alloc_large(pool, size);
    }
    /* a block that keeps missing, or one that missed with less room left
     * than most allocations ask for, stops being tried first (without
     * this the full first block of a request is tried before every
     * allocation that lands in the second: six slow calls in a proxied
     * request where the room left decides at the first) */
    retire = first->failed++ > 4
             || (size_t) (first->end - first->last) < POOL_FULL_ROOM;
    if (retire && first->next) {
        pool->current = first->next;
    }
    for (b = first->next; b; b = b->next) {
        m = (char *) rx_align((uintptr_t) b->last, align);
        if (m <= b->end && (size_t) (b->end - m) >= size) {
            b->last = m + size;
            return m;
        }
    }
    m = alloc_block(pool, size, align);
    if (m && retire && pool->current == first) {
        /* the block just added follows it: as when a reset pool finds
         * that block already there, so that the same allocations after
         * rx_pool_reset land where they did the first time */
        pool->current = first->next;
    }
    return m;
}

static inline void *
palloc(rx_pool_t *pool, size_t size, size_t align)
{
    rx_pool_block_t *b = pool->current;
    char            *m = (char *) rx_align((uintptr_t) b->last, align);

    if (size <= pool->max && m <= b->end && (size_t) (b->end - m) >= size) {
        b->last = m + size;
        return m;
    }
    return palloc_slow(pool, size, align);
}

void *
rx_palloc(rx_pool_t *pool, size_t size)
{
    return palloc(pool, size, RX_POOL_ALIGNMENT);
}

void *
rx_pnalloc(rx_pool_t *pool, size_t size)
{
    return palloc(pool, size, 1);
}

void *
rx_pcalloc(rx_pool_t *pool, size_t size)
{
    void *p = rx_palloc(pool, size);
    if (p) {
        memset(p, 0, size);
    }
    return p;
}

rx_int_t
rx_pfree(rx_pool_t *pool, void *p)
{
    rx_pool_large_t *l;

    for (l = pool->large; l; l = l->next) {
        if (l->alloc == p) {
            rx_spare_block_put(p, l->size);
            l->alloc = NULL;
            return RX_OK;
        }
    }
    return RX_DECLINED;
}

rx_pool_cleanup_t *
rx_pool_cleanup_add(rx_pool_t *pool, size_t size)
{
    rx_pool_cleanup_t *c = rx_palloc(pool, sizeof(rx_pool_cleanup_t));

    if (c == NULL) {
        return NULL;
    }
    c->data = NULL;
    if (size) {
        c->data = rx_palloc(pool, size);
        if (c->data == NULL) {
            return NULL;
        }
    }
    c->handler = NULL;
    c->next = pool->cleanup;
    pool->cleanup = c;
    return c;
}
