/*
 * pool.h: arenas. A pool hands out memory that lives until the pool is
 * destroyed in one go; cleanup handlers run first, in reverse order of
 * registration, so fds and foreign objects die with their owner.
 *
 * Invariant: never destroy a pool while the kernel may still write into one
 * of its buffers (io_uring reads); the owner waits for its completions first.
 */
#ifndef RX_POOL_H
#define RX_POOL_H

#define RX_POOL_DEFAULT_SIZE  4096
#define RX_POOL_ALIGNMENT     16
/* The pool's own header in its first block: sizes below it are useless. */
#define RX_POOL_HEAD          96

typedef void (*rx_pool_cleanup_pt)(void *data);

typedef struct rx_pool_cleanup_s rx_pool_cleanup_t;
struct rx_pool_cleanup_s {
    rx_pool_cleanup_pt  handler;
    void               *data;
    rx_pool_cleanup_t  *next;
};

typedef struct rx_pool_block_s rx_pool_block_t;
typedef struct rx_pool_large_s rx_pool_large_t;

struct rx_pool_s {
    rx_pool_block_t   *current;   /* block small allocations come from */
    rx_pool_block_t   *blocks;    /* every block, first is the pool's own */
    rx_pool_large_t   *large;     /* allocations above max, freed one by one */
    rx_pool_cleanup_t *cleanup;   /* LIFO list of handlers */
    uint32_t           block_size;
    uint32_t           spare;     /* rx_pool_create_spare's: kept, not freed */
    size_t             max;       /* larger requests go to the large list */
    rx_log_t          *log;
    rx_slab_t         *slab;      /* the pool's own block came from it */
};

rx_pool_t *rx_pool_create(size_t size, rx_log_t *log);
/* A pool of RX_POOL_DEFAULT_SIZE for something short-lived and frequent
 * (a request): a spare one, blocks and all, when a pool from here was
 * destroyed lately, else a new one. Destroy it as any other. */
rx_pool_t *rx_pool_create_spare(rx_log_t *log);
/* Frees the spare pools kept for rx_pool_create_spare and the spare
 * blocks (a worker gone quiet gives its memory back); returns how many. */
rx_uint_t rx_pool_spares_release(void);
/* A pool whose own block (slab->size bytes) is a chunk of a slab: for
 * pools that live long, such as a connection's (slab.h says why). */
rx_pool_t *rx_pool_create_in(rx_slab_t *slab, rx_log_t *log);
void rx_pool_destroy(rx_pool_t *pool);
void rx_pool_reset(rx_pool_t *pool);
/* How many pools this process destroyed so far (wraps). */
rx_uint_t rx_pool_destroyed(void);

/* All return NULL when memory is exhausted (and log at emerg). */
void *rx_palloc(rx_pool_t *pool, size_t size);    /* aligned */
void *rx_pnalloc(rx_pool_t *pool, size_t size);   /* unaligned, for strings */
void *rx_pcalloc(rx_pool_t *pool, size_t size);   /* aligned, zeroed */
rx_int_t rx_pfree(rx_pool_t *pool, void *p);      /* large allocations only */

/* Adds a handler with `size` bytes of data allocated from the pool. */
rx_pool_cleanup_t *rx_pool_cleanup_add(rx_pool_t *pool, size_t size);

/* A malloc'd block of `size` bytes (contents undefined), a spare one when
 * a block of that size was put back lately; give it back with
 * rx_spare_block_put (with the same size) or free(). For blocks freed and
 * allocated again at every request (a connection's input buffer). */
void *rx_spare_block_get(size_t size, rx_log_t *log);
/* Keeps a block from rx_spare_block_get (or malloc) of `size` bytes for
 * the next get of that size, or frees it. NULL is ignored. */
void rx_spare_block_put(void *p, size_t size);

/* Plain malloc wrappers that log failures. */
void *rx_alloc(size_t size, rx_log_t *log);
void *rx_calloc(size_t size, rx_log_t *log);

#endif /* RX_POOL_H */
