/*
 * shm_zone.h: named shared memory zones declared in the configuration
 * (nginx's "zone=NAME:SIZE"), mapped by the master before it forks so that
 * every worker counts in the same memory, kept across a reload when the
 * name, the size and the owner are unchanged. Each zone has a lock that
 * works across processes and an allocator for the owner's records.
 *
 * The life of a zone:
 *
 *   parse      rx_shm_zone_add(cf, name, size, tag) declares it (size > 0)
 *              or only names it (size 0: a directive that uses a zone
 *              declared elsewhere, maybe further down). The owner sets
 *              zone->init and zone->data on the declaration.
 *   after it   rx_shm_zones_check(): a zone named but never declared is
 *              `zero size shared memory zone "NAME"` (with where it was
 *              named), also for -t.
 *   load       rx_shm_zones_init() (master, not for -t): a zone of the
 *              previous cycle with the same name, size and tag is taken
 *              over with its contents (init(zone, old zone's data)); any
 *              other is mapped afresh (init(zone, NULL)). A failed load
 *              leaves the old zones as they were.
 *   success    rx_shm_zones_commit(): the taken-over mappings now belong to
 *              the new cycle; freeing a cycle unmaps only what it still
 *              owns (old workers keep their own mapping from fork()).
 *
 * The lock is a process-shared robust mutex. A process that dies holding
 * it leaves the zone's contents suspect: the next process to lock it
 * empties the zone (allocator reset, root NULL, generation + 1), runs the
 * owner's init(zone, NULL) again and logs an alert. Owners read their root
 * through rx_shm_zone_root() after locking (never cache it), and a pointer
 * kept across unlocks (a connection's count) is checked against
 * rx_shm_zone_generation() before use.
 *
 * The allocator: 4 KiB pages; chunks of 16 .. 2048 bytes (powers of two)
 * carved from pages of their size, a page going back to the free pages when
 * its last chunk is freed; larger requests take a run of whole pages. It
 * never grows: NULL when the zone is full (the owner evicts and retries, or
 * refuses).
 */
#ifndef RX_SHM_ZONE_H
#define RX_SHM_ZONE_H

#include "shm.h"

/* The smallest zone the limit modules accept (nginx: 8 pages). */
#define RX_SHM_ZONE_MIN  (8 * 4096)

typedef struct rx_shm_zone_s rx_shm_zone_t;
typedef struct rx_shm_pool_s rx_shm_pool_t;

/*
 * The owner's hook, run in the master at load (and, with the lock held, in
 * the process that found a dead holder's zone): it never locks. old: the zone's data in the previous cycle
 * when the mapping was kept (its root is still there), NULL for an empty
 * zone. Makes or finds the owner's root (rx_shm_zone_alloc_locked +
 * rx_shm_zone_set_root). RX_OK, or RX_ERROR after logging (the load fails).
 */
typedef rx_int_t (*rx_shm_zone_init_pt)(rx_shm_zone_t *zone, void *old);

struct rx_shm_zone_s {
    rx_str_t             name;      /* NUL-terminated */
    size_t               size;      /* 0 while only named */
    const void          *tag;       /* the owner (its module): a zone is
                                       of one kind */
    void                *data;      /* the owner's, for this cycle */
    rx_shm_zone_init_pt  init;      /* set by the declaring directive */
    rx_shm_t             shm;       /* the mapping (NULL for -t) */
    rx_shm_pool_t       *pool;      /* = shm.addr */
    rx_log_t            *log;       /* for init's errors (the loading
                                       cycle's log) */
    const char          *file;      /* where first named, for errors */
    rx_uint_t            line;
    unsigned             reused:1;     /* mapping taken from the old cycle */
    unsigned             committed:1;  /* ... and the cycle was loaded */
    unsigned             passed:1;     /* a newer cycle took the mapping */
};

/*
 * Declares (size > 0) or names (size 0) the zone NAME of owner tag in the
 * cycle being loaded; the same NAME again returns the same zone. Errors,
 * with file:line, in nginx's words: `the shared memory zone "NAME" is
 * already declared for a different use`, `the size N of shared memory zone
 * "NAME" conflicts with already declared size M`. NULL after logging.
 */
rx_shm_zone_t *rx_shm_zone_add(rx_conf_t *cf, const rx_str_t *name,
    size_t size, const void *tag);

/*
 * Parses arg, a directive argument "zone=NAME:SIZE" (skip: the length of
 * "zone="), into name (a copy in the config pool) and size. Errors, logged
 * with file:line as nginx: `invalid zone size "ARG"` (no ':' or a bad
 * size, an empty name too), `zone "ARG" is too small` (under
 * RX_SHM_ZONE_MIN). RX_OK or RX_ERROR.
 */
rx_int_t rx_shm_zone_parse(rx_conf_t *cf, const rx_str_t *arg, size_t skip,
    rx_str_t *name, size_t *size);

/* Cycle steps (core/cycle.c), described above. RX_OK or RX_ERROR. */
rx_int_t rx_shm_zones_check(rx_cycle_t *cycle);
rx_int_t rx_shm_zones_init(rx_cycle_t *cycle);
void rx_shm_zones_commit(rx_cycle_t *cycle);

/*
 * The zone's lock. RX_OK with the lock held (a dead holder's zone has been
 * reset first, see above), or RX_ERROR (logged; not held): the caller goes
 * on without the zone, as if it were not configured.
 */
rx_int_t rx_shm_zone_lock(rx_shm_zone_t *zone);
void rx_shm_zone_unlock(rx_shm_zone_t *zone);

/* The owner's root record (NULL until set), and the reset count. */
void *rx_shm_zone_root(rx_shm_zone_t *zone);
void rx_shm_zone_set_root(rx_shm_zone_t *zone, void *root);
uint64_t rx_shm_zone_generation(rx_shm_zone_t *zone);

/* With the lock held (or in init): size bytes, 16-byte aligned, not
 * zeroed; NULL when the zone has no room. Free takes what alloc gave. */
void *rx_shm_zone_alloc_locked(rx_shm_zone_t *zone, size_t size);
void rx_shm_zone_free_locked(rx_shm_zone_t *zone, void *p);

/*
 * The allocator alone, on any memory (the zone's mapping, or a test's
 * buffer): rx_shm_pool_init lays out a pool over size bytes at addr
 * (page-aligned, at least 2 pages) and makes its lock; reset empties it.
 */
rx_int_t rx_shm_pool_init(void *addr, size_t size);
void rx_shm_pool_reset(rx_shm_pool_t *pool);
void *rx_shm_pool_alloc(rx_shm_pool_t *pool, size_t size);
void rx_shm_pool_free(rx_shm_pool_t *pool, void *p);
/* Pages not in use (for tests and -t arithmetic). */
size_t rx_shm_pool_free_pages(const rx_shm_pool_t *pool);

#endif /* RX_SHM_ZONE_H */
