/*
 * slab.c: fixed-size chunks in aligned 64 KiB segments mapped apart from
 * malloc's heap (slab.h says why). A chunk finds its segment by masking
 * its address; a segment carves its chunks lazily, so that pages no chunk
 * ever used are never touched.
 */
#include <sys/mman.h>
#include "core.h"
#include "slab.h"

struct rx_slab_seg_s {
    rx_slab_t      *slab;
    rx_slab_seg_t  *prev;      /* on slab->partial */
    rx_slab_seg_t  *next;
    void           *free;      /* freed chunks, linked through their start */
    uint32_t        used;      /* chunks handed out */
    uint32_t        carved;    /* chunks ever handed out from the front */
    uint32_t        nchunks;
    bool            listed;    /* on slab->partial */
};

#define SEG_HEAD  rx_align(sizeof(rx_slab_seg_t), RX_POOL_ALIGNMENT)

void
rx_slab_init(rx_slab_t *slab, size_t size)
{
    slab->size = rx_align(rx_max(size, sizeof(void *)), RX_POOL_ALIGNMENT);
    slab->partial = NULL;
    slab->spare = NULL;
    slab->nsegs = 0;
}

static void
list_add(rx_slab_t *slab, rx_slab_seg_t *s)
{
    s->prev = NULL;
    s->next = slab->partial;
    if (s->next) {
        s->next->prev = s;
    }
    slab->partial = s;
    s->listed = true;
}

static void
list_remove(rx_slab_t *slab, rx_slab_seg_t *s)
{
    if (s->prev) {
        s->prev->next = s->next;
    } else {
        slab->partial = s->next;
    }
    if (s->next) {
        s->next->prev = s->prev;
    }
    s->prev = s->next = NULL;
    s->listed = false;
}

/* mmap aligns to pages only: map twice the size and cut the ends off. */
static rx_slab_seg_t *
seg_map(rx_slab_t *slab, rx_log_t *log)
{
    char      *m, *a;
    uintptr_t  mask = RX_SLAB_SEG_SIZE - 1;

    m = mmap(NULL, 2 * RX_SLAB_SEG_SIZE, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        rx_log_error(RX_LOG_EMERG, log, errno, "mmap(%d) failed",
                     2 * RX_SLAB_SEG_SIZE);
        return NULL;
    }
    a = (char *) (((uintptr_t) m + mask) & ~mask);
    if (a > m) {
        (void) munmap(m, (size_t) (a - m));
    }
    if (a + RX_SLAB_SEG_SIZE < m + 2 * RX_SLAB_SEG_SIZE) {
        (void) munmap(a + RX_SLAB_SEG_SIZE,
                      (size_t) (m + 2 * RX_SLAB_SEG_SIZE
                                - (a + RX_SLAB_SEG_SIZE)));
    }
    slab->nsegs++;
    return (rx_slab_seg_t *) a;
}

static void
seg_reset(rx_slab_t *slab, rx_slab_seg_t *s)
{
    s->slab = slab;
    s->free = NULL;
    s->used = 0;
    s->carved = 0;
    s->nchunks = (uint32_t) ((RX_SLAB_SEG_SIZE - SEG_HEAD) / slab->size);
    list_add(slab, s);
}

void *
rx_slab_alloc(rx_slab_t *slab, rx_log_t *log)
{
    rx_slab_seg_t *s = slab->partial;
    void          *p;

    if (s == NULL) {
        s = slab->spare;
        slab->spare = NULL;
        if (s == NULL && (s = seg_map(slab, log)) == NULL) {
            return NULL;
        }
        seg_reset(slab, s);
    }
    if (s->free) {
        p = s->free;
        s->free = *(void **) p;
    } else {
        p = (char *) s + SEG_HEAD + (size_t) s->carved++ * slab->size;
    }
    if (++s->used == s->nchunks) {
        list_remove(slab, s);
    }
    return p;
}

void
rx_slab_free(void *p)
{
    rx_slab_seg_t *s = (rx_slab_seg_t *) ((uintptr_t) p
                                          & ~(uintptr_t) (RX_SLAB_SEG_SIZE - 1));
    rx_slab_t     *slab = s->slab;

    *(void **) p = s->free;
    s->free = p;
    if (!s->listed) {
        list_add(slab, s);
    }
    if (--s->used > 0) {
        return;
    }
    list_remove(slab, s);
    if (slab->spare == NULL) {
        slab->spare = s;
        return;
    }
    (void) munmap(s, RX_SLAB_SEG_SIZE);
    slab->nsegs--;
}

void
rx_slab_release(rx_slab_t *slab)
{
    if (slab->spare) {
        (void) munmap(slab->spare, RX_SLAB_SEG_SIZE);
        slab->spare = NULL;
        slab->nsegs--;
    }
}

void
rx_drop_pages(void *p, size_t len)
{
    uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t) p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t) p + len) & ~(page - 1);

    if (end > start) {
        (void) madvise((void *) start, end - start, MADV_DONTNEED);
    }
}
