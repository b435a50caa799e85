/*
 * shm_pool.c: the allocator and the lock inside a shared memory zone
 * (API in shm_zone.h). Pages of 4 KiB; small chunks come from pages of
 * their size class, large requests take runs of pages. Everything is
 * addressed by page index, so the layout holds in any process that maps
 * the zone at the same address (all do: the mapping is inherited).
 */
#include <pthread.h>
#include "core.h"
#include "cycle.h"
#include "shm_zone.h"

#define PAGE_SHIFT  12
#define PAGE_SIZE   ((size_t) 1 << PAGE_SHIFT)
#define MIN_SHIFT   4                       /* 16 bytes: room for a link */
#define MAX_SHIFT   (PAGE_SHIFT - 1)        /* 2048: larger takes pages */
#define NCLASSES    (MAX_SHIFT - MIN_SHIFT + 1)

/* page_t.shift besides a chunk size */
#define PAGE_FREE   0
#define PAGE_RUN    0xfffe                  /* first page of a run */
#define PAGE_TAIL   0xffff                  /* another page of a run */

/* One page's state. Lists link pages by index + 1 (0 ends a list). */
typedef struct {
    uint32_t  prev;
    uint32_t  next;
    uint16_t  shift;     /* chunk size 1 << shift, or PAGE_* */
    uint16_t  pad;
    uint32_t  used;      /* chunks handed out; for a run: its pages */
    uint32_t  free;      /* offset + 1 of the first freed chunk */
    uint32_t  bump;      /* offset of the first never-used chunk */
} page_t;

struct rx_shm_pool_s {
    pthread_mutex_t  mutex;
    void            *root;            /* the owner's record */
    uint64_t         generation;      /* resets so far */
    uint32_t         npages;
    uint32_t         nfree;
    uint32_t         free_head;       /* free pages */
    uint32_t         partial[NCLASSES]; /* pages with room, per class */
    page_t          *desc;
    char            *pages;           /* page-aligned */
};

/* ---- page lists ------------------------------------------------------------- */

static void
list_push(rx_shm_pool_t *p, uint32_t *head, uint32_t idx)
{
    page_t *pg = &p->desc[idx - 1];

    pg->prev = 0;
    pg->next = *head;
    if (*head) {
        p->desc[*head - 1].prev = idx;
    }
    *head = idx;
}

static void
list_unlink(rx_shm_pool_t *p, uint32_t *head, uint32_t idx)
{
    page_t *pg = &p->desc[idx - 1];

    if (pg->prev) {
        p->desc[pg->prev - 1].next = pg->next;
    } else {
        *head = pg->next;
    }
    if (pg->next) {
        p->desc[pg->next - 1].prev = pg->prev;
    }
    pg->prev = pg->next = 0;
}

/* ---- layout ------------------------------------------------------------------ */

rx_int_t
rx_shm_pool_init(void *addr, size_t size)
{
    rx_shm_pool_t       *p = addr;
    pthread_mutexattr_t  attr;
    size_t               fixed, n;
    int                  rc;

    /* the header and one descriptor per page, then the pages */
    fixed = sizeof(*p);
    if (size < fixed + 2 * PAGE_SIZE) {
        return RX_ERROR;
    }
    n = (size - fixed) / (PAGE_SIZE + sizeof(page_t));
    fixed = rx_align(fixed + n * sizeof(page_t), PAGE_SIZE);
    while (n && fixed + n * PAGE_SIZE > size) {
        n--;
    }
    if (n == 0 || n > UINT32_MAX / 2) {
        return RX_ERROR;
    }
    memset(p, 0, sizeof(*p));
    p->npages = (uint32_t) n;
    p->desc = (page_t *) (p + 1);
    p->pages = (char *) addr + fixed;
    rx_shm_pool_reset(p);

    if (pthread_mutexattr_init(&attr) != 0) {
        return RX_ERROR;
    }
    rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (rc == 0) {
        rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    }
    if (rc == 0) {
        rc = pthread_mutex_init(&p->mutex, &attr);
    }
    pthread_mutexattr_destroy(&attr);
    return rc == 0 ? RX_OK : RX_ERROR;
}

void
rx_shm_pool_reset(rx_shm_pool_t *p)
{
    uint32_t i;

    memset(p->desc, 0, p->npages * sizeof(page_t));
    memset(p->partial, 0, sizeof(p->partial));
    p->free_head = 0;
    for (i = p->npages; i > 0; i--) {
        list_push(p, &p->free_head, i);   /* page 1 first */
    }
    p->nfree = p->npages;
    p->root = NULL;
    p->generation++;
}

size_t
rx_shm_pool_free_pages(const rx_shm_pool_t *p)
{
    return p->nfree;
}

/* ---- allocation ---------------------------------------------------------------- */

/* n contiguous free pages, taken off the free list; 0 when none. */
static uint32_t
take_run(rx_shm_pool_t *p, uint32_t n)
{
    uint32_t i, start = 0, len = 0;

    if (n > p->nfree) {
        return 0;
    }
    for (i = 0; i < p->npages && len < n; i++) {
        if (p->desc[i].shift != PAGE_FREE) {
            len = 0;
            continue;
        }
        if (len++ == 0) {
            start = i;
        }
    }
    if (len < n) {
        return 0;
    }
    for (i = start; i < start + n; i++) {
        list_unlink(p, &p->free_head, i + 1);
        p->desc[i].shift = PAGE_TAIL;
    }
    p->desc[start].shift = PAGE_RUN;
    p->desc[start].used = n;
    p->nfree -= n;
    return start + 1;
}

static void *
alloc_chunk(rx_shm_pool_t *p, unsigned shift)
{
    uint32_t *head = &p->partial[shift - MIN_SHIFT];
    uint32_t  idx = *head, off;
    page_t   *pg;
    char     *page;

    if (idx == 0) {
        idx = p->free_head;
        if (idx == 0) {
            return NULL;
        }
        list_unlink(p, &p->free_head, idx);
        p->nfree--;
        pg = &p->desc[idx - 1];
        memset(pg, 0, sizeof(*pg));
        pg->shift = (uint16_t) shift;
        list_push(p, head, idx);
    }
    pg = &p->desc[idx - 1];
    page = p->pages + (size_t) (idx - 1) * PAGE_SIZE;
    if (pg->free) {
        off = pg->free - 1;
        memcpy(&pg->free, page + off, sizeof(uint32_t));
    } else {
        off = pg->bump;
        pg->bump += 1u << shift;
    }
    if (++pg->used == PAGE_SIZE >> shift) {
        list_unlink(p, head, idx);          /* full: off the class list */
    }
    return page + off;
}

void *
rx_shm_pool_alloc(rx_shm_pool_t *p, size_t size)
{
    unsigned shift = MIN_SHIFT;
    uint32_t idx;

    if (size == 0) {
        size = 1;
    }
    if (size > PAGE_SIZE / 2) {
        if (size > (size_t) p->npages * PAGE_SIZE) {
            return NULL;
        }
        idx = take_run(p, (uint32_t) ((size + PAGE_SIZE - 1) >> PAGE_SHIFT));
        return idx ? p->pages + (size_t) (idx - 1) * PAGE_SIZE : NULL;
    }
    while (((size_t) 1 << shift) < size) {
        shift++;
    }
    return alloc_chunk(p, shift);
}

void
rx_shm_pool_free(rx_shm_pool_t *p, void *ptr)
{
    size_t    at = (size_t) ((char *) ptr - p->pages);
    uint32_t  idx = (uint32_t) (at >> PAGE_SHIFT) + 1, i, n, cap, off;
    page_t   *pg = &p->desc[idx - 1];
    uint32_t *head;

    if (pg->shift == PAGE_RUN) {
        n = pg->used;
        for (i = idx + n - 1; i >= idx; i--) {
            memset(&p->desc[i - 1], 0, sizeof(page_t));
            list_push(p, &p->free_head, i);
        }
        p->nfree += n;
        return;
    }
    cap = (uint32_t) (PAGE_SIZE >> pg->shift);
    head = &p->partial[pg->shift - MIN_SHIFT];
    off = (uint32_t) (at & (PAGE_SIZE - 1));
    memcpy((char *) ptr, &pg->free, sizeof(uint32_t));
    pg->free = off + 1;
    if (pg->used-- == cap && pg->used) {
        list_push(p, head, idx);            /* room again */
    }
    if (pg->used == 0) {
        list_unlink(p, head, idx);          /* cap >= 2: it had room */
        memset(pg, 0, sizeof(*pg));
        list_push(p, &p->free_head, idx);
        p->nfree++;
    }
}

/* ---- the zone's lock and root ------------------------------------------------- */

rx_int_t
rx_shm_zone_lock(rx_shm_zone_t *zone)
{
    rx_shm_pool_t *p = zone->pool;
    int            rc;

    rc = pthread_mutex_lock(&p->mutex);
    if (rc == EOWNERDEAD) {
        /* its holder died mid-update: nothing in it can be trusted */
        rx_shm_pool_reset(p);
        if (zone->init && zone->init(zone, NULL) != RX_OK) {
            p->root = NULL;
        }
        pthread_mutex_consistent(&p->mutex);
        rx_log_error(RX_LOG_ALERT, rx_cycle->log, 0, "shared memory zone "
            "\"%s\" was emptied: a process died holding its lock",
            zone->name.data);
        return RX_OK;
    }
    if (rc != 0) {
        rx_log_error(RX_LOG_ALERT, rx_cycle->log, rc, "pthread_mutex_lock() "
                     "of shared memory zone \"%s\" failed", zone->name.data);
        return RX_ERROR;
    }
    return RX_OK;
}

void
rx_shm_zone_unlock(rx_shm_zone_t *zone)
{
    pthread_mutex_unlock(&zone->pool->mutex);
}

void *
rx_shm_zone_root(rx_shm_zone_t *zone)
{
    return zone->pool->root;
}

void
rx_shm_zone_set_root(rx_shm_zone_t *zone, void *root)
{
    zone->pool->root = root;
}

uint64_t
rx_shm_zone_generation(rx_shm_zone_t *zone)
{
    return zone->pool->generation;
}

void *
rx_shm_zone_alloc_locked(rx_shm_zone_t *zone, size_t size)
{
    return rx_shm_pool_alloc(zone->pool, size);
}

void
rx_shm_zone_free_locked(rx_shm_zone_t *zone, void *ptr)
{
    rx_shm_pool_free(zone->pool, ptr);
}
