/*
 * pool_asan.c: core/pool.c's API with one malloc() per allocation, for the
 * fuzz build only (mk/fuzz.mk links it instead of core/pool.o unless
 * FUZZ_POOL=ringx). The real pool carves allocations out of 4 KB blocks,
 * so a write one byte past a pool string lands in the next allocation and
 * AddressSanitizer cannot see it; here every allocation has its own
 * redzones and dies (poisoned) with its pool, the way nginx's
 * NGX_DEBUG_PALLOC works. Semantics are the real pool's: alignment,
 * zeroing, cleanup handlers in LIFO order, rx_pfree() for allocations above
 * the pool's max only, rx_pool_reset() freeing everything but the pool.
 *
 * The fields of struct rx_pool_s (pool.h) are reused: `large` is the list
 * of every allocation, `max` the size above which rx_pfree() works.
 */
#include "core.h"
#include "slab.h"

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

rx_pool_t *
rx_pool_create(size_t size, rx_log_t *log)
{
    rx_pool_t *pool = rx_calloc(sizeof(rx_pool_t), log);
    size_t     head = rx_align(sizeof(rx_pool_t) + 4 * sizeof(void *),
                               RX_POOL_ALIGNMENT);

    if (pool == NULL) {
        return NULL;
    }
    if (size < head + 256) {
        size = head + 256;
    }
    pool->block_size = size;
    pool->max = rx_min(size - head, (size_t) 4096);
    pool->log = log;
    return pool;
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
free_all(rx_pool_t *pool)
{
    rx_pool_large_t *l, *next;

    for (l = pool->large; l; l = next) {
        next = l->next;
        free(l->alloc);
        free(l);
    }
    pool->large = NULL;
}

/* Here a slab's pool is a plain one of the slab's size: every allocation
 * keeps its own redzones (the slab itself is tested in t/unit). */
rx_pool_t *
rx_pool_create_in(rx_slab_t *slab, rx_log_t *log)
{
    return rx_pool_create(slab->size, log);
}

/* No spares here: a request's pool is a new one, and a spare block a new
 * malloc, so that ASan sees a use after the put as a use after free. */
rx_pool_t *
rx_pool_create_spare(rx_log_t *log)
{
    return rx_pool_create(RX_POOL_DEFAULT_SIZE, log);
}

rx_uint_t
rx_pool_spares_release(void)
{
    return 0;
}

void *
rx_spare_block_get(size_t size, rx_log_t *log)
{
    return rx_alloc(size, log);
}

void
rx_spare_block_put(void *p, size_t size)
{
    (void) size;
    free(p);
}

static rx_uint_t ndestroyed;

rx_uint_t
rx_pool_destroyed(void)
{
    return ndestroyed;
}

void
rx_pool_destroy(rx_pool_t *pool)
{
    if (pool == NULL) {
        return;
    }
    ndestroyed++;
    run_cleanups(pool);
    free_all(pool);
    free(pool);
}

void
rx_pool_reset(rx_pool_t *pool)
{
    run_cleanups(pool);
    free_all(pool);
}

static void *
palloc(rx_pool_t *pool, size_t size, size_t align)
{
    rx_pool_large_t *l = rx_alloc(sizeof(rx_pool_large_t), pool->log);
    void            *p;

    if (l == NULL) {
        return NULL;
    }
    /* malloc's alignment (16) is RX_POOL_ALIGNMENT; a 0-byte request gets
     * a distinct pointer with no addressable byte, as ASan sees it */
    p = align > 1 ? aligned_alloc(align, rx_align(size ? size : 1, align))
                  : malloc(size);
    if (p == NULL) {
        if (pool->log) {
            rx_log_error(RX_LOG_EMERG, pool->log, errno,
                         "malloc(%zu) failed", size);
        }
        free(l);
        return NULL;
    }
    l->alloc = p;
    l->size = size;
    l->next = pool->large;
    pool->large = l;
    return p;
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
    rx_pool_large_t **lp, *l;

    for (lp = &pool->large; (l = *lp) != NULL; lp = &l->next) {
        if (l->alloc == p) {
            if (l->size <= pool->max) {
                return RX_DECLINED;      /* a small one: the real pool keeps it */
            }
            *lp = l->next;
            free(l->alloc);
            free(l);
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
