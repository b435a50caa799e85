/*
 * test_slab.c: the slab of fixed-size chunks (core/slab.c), pools made in
 * it (rx_pool_create_in), and rx_drop_pages. Every chunk is written whole
 * and checked after the others were handed out, so that overlaps show;
 * segments must be mapped only as needed and unmapped once empty (one
 * kept), so that a slab holds what its chunks need and no more.
 */
#include <sys/mman.h>
#include "core.h"
#include "slab.h"
#include "tap.h"

#define N      1000
#define SIZE   352

static char *chunk[N];

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static bool
intact(char *p, size_t size, int i)
{
    size_t k;

    for (k = 0; k < size; k++) {
        if (p[k] != (char) (i + k)) {
            return false;
        }
    }
    return true;
}

static void
fill(char *p, size_t size, int i)
{
    size_t k;

    for (k = 0; k < size; k++) {
        p[k] = (char) (i + k);
    }
}

static void
test_chunks(void)
{
    rx_slab_t  slab;
    rx_uint_t  per_seg, want;
    int        i, j, bad = 0, unaligned = 0;

    rx_slab_init(&slab, 350);
    is_int(slab.size, SIZE, "a chunk's size is rounded up to 16");
    is_int(slab.nsegs, 0, "nothing is mapped before the first chunk");
    for (i = 0; i < N; i++) {
        chunk[i] = rx_slab_alloc(&slab, NULL);
        if (chunk[i] == NULL) {
            break;
        }
        unaligned += ((uintptr_t) chunk[i] & 15) != 0;
        fill(chunk[i], SIZE, i);
    }
    is_int(i, N, "%d chunks", N);
    is_int(unaligned, 0, "every chunk aligned to 16");
    for (i = 0; i < N; i++) {
        bad += !intact(chunk[i], SIZE, i);
    }
    is_int(bad, 0, "every chunk still holds what was written to it");
    per_seg = (RX_SLAB_SEG_SIZE - 64) / SIZE;
    want = (N + per_seg - 1) / per_seg;
    ok(slab.nsegs >= want && slab.nsegs <= want + 1,
       "%lu segments for %d chunks (%lu a segment)",
       (unsigned long) slab.nsegs, N, (unsigned long) per_seg);

    /* free in a random order, then take half back: no chunk is handed out
     * twice */
    for (i = N - 1; i > 0; i--) {
        j = (int) (next_rand() % (uint64_t) (i + 1));
        char *t = chunk[i]; chunk[i] = chunk[j]; chunk[j] = t;
    }
    for (i = 0; i < N; i++) {
        fill(chunk[i], SIZE, i);
    }
    for (i = 0; i < N / 2; i++) {
        rx_slab_free(chunk[i]);
    }
    for (i = 0; i < N / 2; i++) {
        chunk[i] = rx_slab_alloc(&slab, NULL);
        fill(chunk[i], SIZE, i);
    }
    for (i = 0; i < N; i++) {
        bad += !intact(chunk[i], SIZE, i);
    }
    is_int(bad, 0, "chunks given back and taken again do not overlap others");

    for (i = 0; i < N; i++) {
        rx_slab_free(chunk[i]);
    }
    is_int(slab.nsegs, 1, "all freed: every segment unmapped but a spare");
    chunk[0] = rx_slab_alloc(&slab, NULL);
    is_int(slab.nsegs, 1, "the next chunk comes from the spare");
    rx_slab_free(chunk[0]);
    rx_slab_release(&slab);
    is_int(slab.nsegs, 0, "release unmaps the spare");
}

static void
cleanup_count(void *data)
{
    (*(int *) data)++;
}

static void
test_pools(void)
{
    rx_slab_t          slab;
    rx_pool_t         *pool[64];
    rx_pool_cleanup_t *cln;
    int                i, cleaned = 0, bad = 0;
    char              *small, *big;

    rx_slab_init(&slab, RX_POOL_HEAD + 256);
    for (i = 0; i < 64; i++) {
        pool[i] = rx_pool_create_in(&slab, NULL);
        if (pool[i] == NULL) {
            break;
        }
        small = rx_pnalloc(pool[i], 200);        /* in the slab's chunk */
        big = rx_palloc(pool[i], 10000);         /* a large allocation */
        fill(small, 200, i);
        fill(big, 10000, i);
        bad += (char *) small < (char *) pool[i]
               || (char *) small + 200 > (char *) pool[i] + slab.size;
        cln = rx_pool_cleanup_add(pool[i], 0);
        cln->handler = cleanup_count;
        cln->data = &cleaned;
        /* beyond the chunk: the pool grows a block from malloc */
        fill(rx_palloc(pool[i], 200), 200, i);
    }
    is_int(i, 64, "64 pools in a slab");
    is_int(bad, 0, "a pool's first allocations are in its own chunk");
    for (i = 0; i < 64; i++) {
        rx_pool_destroy(pool[i]);
    }
    is_int(cleaned, 64, "destroying them runs their cleanups");
    is_int(slab.nsegs, 1, "and gives every chunk back");
    rx_slab_release(&slab);
}

static void
test_drop_pages(void)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    char  *m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t k;
    int    zeros = 0;

    if (!ok(m != MAP_FAILED, "mmap")) {
        return;
    }
    memset(m, 'x', 4 * page);
    /* [m + 100, m + 3 pages + 100): only pages 1 and 2 are whole */
    rx_drop_pages(m + 100, 3 * page);
    for (k = 0; k < 4 * page; k++) {
        zeros += m[k] == 0;
    }
    is_int(zeros, (int64_t) (2 * page), "only the whole pages inside read "
           "as zeros after rx_drop_pages");
    ok(m[page - 1] == 'x' && m[3 * page] == 'x',
       "the partial pages at both ends are kept");
    munmap(m, 4 * page);
}

int
main(void)
{
    test_chunks();
    test_pools();
    test_drop_pages();
    return done();
}
