/*
 * test_pool.c: pools (core/pool.c), arrays (core/array.c), buffers and
 * chains (core/buf.c). Every allocation is written whole and checked
 * later, so that overlaps show here and overruns past a block or a large
 * allocation show under `make SANITIZE=1` (ASan); leaks show as LSan
 * reports at exit.
 */
#include "core.h"
#include "buf.h"
#include "tap.h"

static bool
aligned(const void *p)
{
    return ((uintptr_t) p & (RX_POOL_ALIGNMENT - 1)) == 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- allocation ---- */

static void
test_alignment(void)
{
    rx_pool_t *pool = rx_pool_create(4096, NULL);
    size_t     size;
    bool       all = true;
    char      *p, *q;

    if (!ok(pool != NULL, "rx_pool_create(4096)")) {
        return;
    }
    for (size = 1; size <= 300; size++) {
        p = rx_palloc(pool, size);
        memset(p, 0xab, size);
        all = all && p != NULL && aligned(p);
        p = rx_pnalloc(pool, 1);       /* unalign the next one on purpose */
        *p = 'x';
    }
    ok(all, "rx_palloc of 1..300 bytes, after odd rx_pnalloc: %d-aligned",
       RX_POOL_ALIGNMENT);

    p = rx_pcalloc(pool, 77);
    ok(p && aligned(p), "rx_pcalloc is aligned");
    for (size = 0; size < 77 && p[size] == 0; size++) { }
    is_int(size, 77, "rx_pcalloc zeroes");

    /* rx_pnalloc packs: the second string starts where the first ended */
    p = rx_pnalloc(pool, 3);
    q = rx_pnalloc(pool, 5);
    ok(p && q == p + 3, "rx_pnalloc is not aligned: 3 bytes then 5 are adjacent");
    p = rx_pnalloc(pool, 1);
    q = rx_palloc(pool, 1);
    ok(q > p && aligned(q) && q - p <= RX_POOL_ALIGNMENT,
       "rx_palloc after rx_pnalloc skips only to the next boundary");

    p = rx_palloc(pool, 0);
    ok(p != NULL && aligned(p), "rx_palloc(0) gives an aligned pointer");

    rx_pool_destroy(pool);
    rx_pool_destroy(NULL);
    ok(true, "rx_pool_destroy(NULL) is harmless");

    pool = rx_pool_create(0, NULL);
    ok(pool != NULL && pool->max > 0, "rx_pool_create(0) makes a usable pool");
    if (pool) {
        p = rx_palloc(pool, pool->max);
        if (p) memset(p, 1, pool->max);
        ok(p != NULL && aligned(p), "it gives its own max (%zu bytes)", pool->max);
        rx_pool_destroy(pool);
    }
}

/* Many allocations of random sizes: no two overlap, each keeps its bytes,
 * and all are aligned (palloc) or packed (pnalloc). */
#define NALLOC 20000

static void
test_many_small(void)
{
    static struct { unsigned char *p; size_t size; } a[NALLOC];
    rx_pool_t *pool = rx_pool_create(4096, NULL);
    rx_uint_t  i, bad_align = 0, bad_bytes = 0;
    size_t     j, total = 0, max = pool->max;

    for (i = 0; i < NALLOC; i++) {
        size_t size = (size_t) (next_rand() % (i % 100 == 0 ? max : 200)) + 1;
        a[i].size = size;
        a[i].p = i % 3 ? rx_palloc(pool, size) : rx_pnalloc(pool, size);
        if (a[i].p == NULL) {
            break;
        }
        if (i % 3 && !aligned(a[i].p)) {
            bad_align++;
        }
        memset(a[i].p, (int) (i & 0xff), size);
        total += size;
    }
    ok(i == NALLOC, "%d allocations (%zu bytes) from a 4096-byte pool", NALLOC,
       total);
    for (i = 0; i < NALLOC && a[i].p; i++) {
        for (j = 0; j < a[i].size; j++) {
            if (a[i].p[j] != (unsigned char) (i & 0xff)) {
                if (bad_bytes++ < 3) diag("allocation %lu byte %zu overwritten",
                                          (unsigned long) i, j);
                break;
            }
        }
    }
    is_int(bad_align, 0, "every rx_palloc among them is aligned");
    is_int(bad_bytes, 0, "every allocation kept its bytes (no overlaps)");
    rx_pool_destroy(pool);
}

static void
test_large(void)
{
    rx_pool_t *pool = rx_pool_create(16384, NULL);
    char      *small, *big, *l[4];
    size_t     max;
    int        i;

    ok(pool->max <= 4096, "pool max is at most 4096 (%zu)", pool->max);
    max = pool->max;

    small = rx_palloc(pool, max);
    memset(small, 's', max);
    is_int(rx_pfree(pool, small), RX_DECLINED, "an allocation of max is small: "
           "rx_pfree declines");

    big = rx_palloc(pool, max + 1);
    ok(big != NULL && aligned(big), "max + 1 bytes: aligned");
    memset(big, 'b', max + 1);
    is_int(rx_pfree(pool, big), RX_OK, "max + 1 bytes is large: rx_pfree frees it");
    is_int(rx_pfree(pool, big), RX_DECLINED, "a second rx_pfree declines");

    big = rx_palloc(pool, 1 << 20);
    ok(big != NULL && aligned(big), "1 MB: aligned");
    memset(big, 'm', 1 << 20);
    big = rx_pnalloc(pool, 100000);
    ok(big != NULL, "rx_pnalloc of 100000 bytes");
    memset(big, 'n', 100000);
    big = rx_pcalloc(pool, 70000);
    for (i = 0; big && i < 70000 && big[i] == 0; i++) { }
    ok(big && i == 70000, "rx_pcalloc of 70000 bytes is zeroed");
    is_int(rx_pfree(pool, big), RX_OK, "and rx_pfree frees it");

    /* freed slots are reused; the others stay valid */
    for (i = 0; i < 4; i++) {
        l[i] = rx_palloc(pool, 5000 + (size_t) i);
        memset(l[i], 'a' + i, 5000 + (size_t) i);
    }
    is_int(rx_pfree(pool, l[1]), RX_OK, "rx_pfree of one of four");
    l[1] = rx_palloc(pool, 6000);
    memset(l[1], 'z', 6000);
    ok(l[0][4999] == 'a' && l[2][5001] == 'c' && l[3][5002] == 'd'
       && l[1][5999] == 'z', "the other large allocations keep their bytes");
    is_int(rx_pfree(pool, small + 1), RX_DECLINED, "rx_pfree of an inner pointer");
    is_int(rx_pfree(pool, NULL), RX_DECLINED, "rx_pfree(NULL) declines");
    /* the rest go with the pool (LSan checks) */
    rx_pool_destroy(pool);
}

/* ---- cleanups ---- */

static char cleanup_log[64];

static void
log_cleanup(void *data)
{
    size_t n = strlen(cleanup_log);

    if (n + 1 < sizeof(cleanup_log)) {
        cleanup_log[n] = *(char *) data;
        cleanup_log[n + 1] = '\0';
    }
}

/* reads memory of the pool: must run before the pool's memory goes */
static void
check_cleanup(void *data)
{
    char **pp = data;
    size_t n = strlen(cleanup_log);

    if (n + 1 < sizeof(cleanup_log)) {
        cleanup_log[n] = (*pp)[0] == 'L' && (*pp)[9999] == 'L' ? 'L' : '?';
        cleanup_log[n + 1] = '\0';
    }
}

static void
add_logger(rx_pool_t *pool, char id)
{
    rx_pool_cleanup_t *c = rx_pool_cleanup_add(pool, 1);

    *(char *) c->data = id;
    c->handler = log_cleanup;
}

static void
test_cleanups(void)
{
    rx_pool_t         *pool = rx_pool_create(4096, NULL);
    rx_pool_cleanup_t *c;
    char              *large;

    c = rx_pool_cleanup_add(pool, 24);
    ok(c && c->data && aligned(c->data) && c->handler == NULL,
       "rx_pool_cleanup_add with data: aligned data, no handler yet");
    c = rx_pool_cleanup_add(pool, 0);
    ok(c && c->data == NULL, "rx_pool_cleanup_add(0): no data");
    add_logger(pool, '1');
    add_logger(pool, '2');
    add_logger(pool, '3');
    cleanup_log[0] = '\0';
    rx_pool_destroy(pool);
    is_str(cleanup_log, "321", "at destroy, handlers run in reverse order "
           "(and NULL handlers are skipped)");

    pool = rx_pool_create(4096, NULL);
    add_logger(pool, 'a');
    add_logger(pool, 'b');
    cleanup_log[0] = '\0';
    rx_pool_reset(pool);
    is_str(cleanup_log, "ba", "at reset, handlers run in reverse order");
    add_logger(pool, 'c');
    cleanup_log[0] = '\0';
    rx_pool_destroy(pool);
    is_str(cleanup_log, "c", "at destroy after reset, only the newer ones run");

    /* a handler may read pool memory, small and large: it runs first */
    pool = rx_pool_create(4096, NULL);
    large = rx_palloc(pool, 10000);
    memset(large, 'L', 10000);
    c = rx_pool_cleanup_add(pool, sizeof(char *));
    *(char **) c->data = large;
    c->handler = check_cleanup;
    cleanup_log[0] = '\0';
    rx_pool_destroy(pool);
    is_str(cleanup_log, "L", "handlers run before large allocations are freed");

    /* many handlers, across blocks */
    pool = rx_pool_create(512, NULL);
    {
        int  i;
        char want[64];

        for (i = 0; i < 40; i++) {
            rx_palloc(pool, 90);
            add_logger(pool, (char) ('0' + i));
        }
        for (i = 0; i < 40; i++) {
            want[i] = (char) ('0' + 39 - i);
        }
        want[40] = '\0';
        cleanup_log[0] = '\0';
        rx_pool_destroy(pool);
        is_str(cleanup_log, want, "40 handlers over several blocks, in reverse");
    }
}

/* ---- reset ---- */

/* Bytes the process has allocated from the heap right now. */
#if defined(__SANITIZE_ADDRESS__)
/* from libasan (sanitizer/allocator_interface.h, which gcc does not ship) */
size_t __sanitizer_get_current_allocated_bytes(void);

static size_t
heap_in_use(void)
{
    return __sanitizer_get_current_allocated_bytes();
}
#else
#include <malloc.h>
static size_t
heap_in_use(void)
{
    return mallinfo2().uordblks;
}
#endif

#define NRESET 3000

/* A fixed workload: many small allocations over several blocks and two
 * large ones, all written. */
static bool
workload(rx_pool_t *pool)
{
    uint64_t  r = 12345;
    rx_uint_t i;
    void     *p;

    for (i = 0; i < NRESET; i++) {
        size_t size;
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        size = (size_t) (r % 300) + 1;
        p = i % 2 ? rx_palloc(pool, size) : rx_pnalloc(pool, size);
        if (p == NULL) return false;
        memset(p, 0x11, size);
    }
    for (i = 0; i < 2; i++) {
        p = rx_palloc(pool, 50000 + i);
        if (p == NULL) return false;
        memset(p, 0x22, 50000 + i);
    }
    return true;
}

static void
test_reset(void)
{
    rx_pool_t   *pool = rx_pool_create(2048, NULL);
    rx_uint_t    i;
    char        *p, *q, *big;
    size_t       before, after_first, after_reset, after_again;
    bool         good = true;

    p = rx_palloc(pool, 64);
    rx_pool_reset(pool);
    q = rx_palloc(pool, 64);
    ok(p == q, "after reset the first allocation is at the same place");
    rx_pool_reset(pool);

    before = heap_in_use();
    good = workload(pool);
    after_first = heap_in_use();
    rx_pool_reset(pool);
    after_reset = heap_in_use();
    good = good && workload(pool);
    after_again = heap_in_use();
    ok(good && after_first > before + 100000,
       "a workload of %d allocations grows the heap by %zu bytes", NRESET,
       after_first - before);
    ok(after_reset < after_first && after_first - after_reset >= 100000,
       "reset frees the large allocations (%zu bytes)",
       after_first - after_reset);
    is_int(after_again, after_first,
           "the same workload after reset takes no new memory");
    for (i = 0; i < 50; i++) {
        rx_pool_reset(pool);
        good = good && workload(pool);
    }
    is_int(heap_in_use(), after_first,
           "50 more reset + workload rounds: the heap does not grow");

    rx_pool_reset(pool);
    p = rx_pnalloc(pool, 1000);
    memset(p, 0x77, 1000);
    rx_pool_reset(pool);
    p = rx_pcalloc(pool, 1000);
    for (i = 0; p && i < 1000 && p[i] == 0; i++) { }
    is_int(i, 1000, "rx_pcalloc on reused memory is zeroed");

    big = rx_palloc(pool, 60000);
    memset(big, 0x44, 60000);
    ok(big != NULL && rx_pfree(pool, big) == RX_OK,
       "large allocations work after reset");
    rx_pool_destroy(pool);
}

/* ---- arrays ---- */

typedef struct {
    uint64_t  a;
    char      s[32];
} item_t;

static void
test_array(void)
{
    rx_pool_t  *pool = rx_pool_create(1024, NULL);
    rx_array_t *a, b;
    rx_uint_t   i, bad = 0;
    int        *ip;
    item_t     *it;

    a = rx_array_create(pool, 2, sizeof(int));
    ok(a && a->nelts == 0 && a->nalloc == 2 && a->size == sizeof(int),
       "rx_array_create(2, int)");
    for (i = 0; i < 5000; i++) {
        ip = rx_array_push(a);
        if (ip == NULL) break;
        *ip = (int) i * 7;
    }
    is_int(a->nelts, 5000, "5000 pushes");
    ok(a->nalloc >= a->nelts, "nalloc %lu >= nelts", (unsigned long) a->nalloc);
    for (i = 0, ip = a->elts; i < a->nelts; i++) {
        bad += ip[i] != (int) i * 7;
    }
    is_int(bad, 0, "growing kept every element");

    ip = rx_array_push_n(a, 3000);
    ok(ip == (int *) a->elts + 5000, "push_n returns the first new slot");
    for (i = 0; i < 3000; i++) {
        ip[i] = -(int) i;
    }
    for (i = 0, bad = 0, ip = a->elts; i < 5000; i++) {
        bad += ip[i] != (int) i * 7;
    }
    for (; i < 8000; i++) {
        bad += ip[i] != -(int) (i - 5000);
    }
    ok(a->nelts == 8000 && bad == 0, "push_n of 3000 grows and keeps all 8000");

    ok(rx_array_init(&b, pool, 0, sizeof(item_t)) == RX_OK && b.nalloc >= 1,
       "rx_array_init with n 0 makes room for one");
    for (i = 0; i < 1000; i++) {
        it = rx_array_push(&b);
        it->a = i * 0x0101010101010101ULL;
        snprintf(it->s, sizeof(it->s), "item%lu", (unsigned long) i);
    }
    for (i = 0, bad = 0, it = b.elts; i < b.nelts; i++) {
        char s[32];
        snprintf(s, sizeof(s), "item%lu", (unsigned long) i);
        bad += it[i].a != i * 0x0101010101010101ULL || strcmp(it[i].s, s) != 0;
    }
    ok(b.nelts == 1000 && bad == 0, "an array of 1000 structs of %zu bytes",
       sizeof(item_t));

    /* an array with elements larger than the pool's max */
    a = rx_array_create(pool, 1, 3000);
    for (i = 0; a && i < 10; i++) {
        char *e = rx_array_push(a);
        memset(e, 'A' + (int) i, 3000);
    }
    for (i = 0, bad = 0; a && i < 10; i++) {
        bad += ((char *) a->elts)[i * 3000 + 2999] != 'A' + (int) i;
    }
    ok(a && a->nelts == 10 && bad == 0, "ten elements of 3000 bytes");

    /* the elements are aligned for any type */
    a = rx_array_create(pool, 3, 8);
    ok(a && aligned(a->elts), "elts are aligned");
    rx_pool_destroy(pool);
}

/* ---- buffers and chains ---- */

static void
test_bufs(void)
{
    rx_pool_t  *pool = rx_pool_create(1024, NULL);
    rx_chain_t *cl, *c2, *c3, *c4;
    rx_buf_t   *b;
    char       *s;
    rx_str_t    src = rx_string("hello");

    b = rx_create_temp_buf(pool, 100);
    ok(b && b->memory && !b->in_file && b->fd == -1 && b->pos == b->start
       && b->last == b->start && b->end == b->start + 100,
       "rx_create_temp_buf(100): empty memory buffer of 100 bytes");
    memset(b->start, 'x', 100);
    is_int(rx_buf_size(b), 0, "an empty buffer has size 0");
    b->last += 60;
    b->pos += 10;
    is_int(rx_buf_size(b), 50, "pos..last is the size");

    b = rx_create_temp_buf(pool, 0);
    ok(b && b->start && b->end == b->start && rx_buf_size(b) == 0,
       "rx_create_temp_buf(0)");
    b = rx_calloc_buf(pool);
    ok(b && b->fd == -1 && !b->memory && !b->last_buf && b->pos == NULL,
       "rx_calloc_buf: zeroed, fd -1");

    cl = rx_chain_from_text(pool, "hello, world", 12, true);
    ok(cl && cl->next == NULL && cl->buf && cl->buf->memory
       && cl->buf->last_buf && cl->buf->fd == -1,
       "rx_chain_from_text: one link, memory, last_buf as asked");
    ok(cl && cl->buf->last - cl->buf->pos == 12
       && memcmp(cl->buf->pos, "hello, world", 12) == 0
       && cl->buf->end == cl->buf->last,
       "it holds a copy of the text, exactly");
    is_int(rx_chain_size(cl), 12, "rx_chain_size of it is 12");

    c2 = rx_chain_from_text(pool, "", 0, false);
    ok(c2 && c2->buf && !c2->buf->last_buf && rx_buf_size(c2->buf) == 0,
       "rx_chain_from_text of 0 bytes");

    /* a file buffer: its size is the file range */
    c3 = rx_alloc_chain_link(pool);
    c3->buf = rx_calloc_buf(pool);
    c3->buf->in_file = 1;
    c3->buf->fd = 5;
    c3->buf->file_pos = 1000;
    c3->buf->file_last = 5096;
    /* both views of the same bytes: the memory one counts */
    c4 = rx_chain_from_text(pool, "abcdef", 6, false);
    c4->buf->in_file = 1;
    c4->buf->file_pos = 0;
    c4->buf->file_last = 6;

    cl->next = c2;
    c2->next = c3;
    c3->next = c4;
    is_int(rx_chain_size(cl), 12 + 0 + 4096 + 6,
           "rx_chain_size: memory + empty + file range + both views");
    is_int(rx_chain_size(NULL), 0, "rx_chain_size(NULL) is 0");
    c2->buf->sync = 1;
    ok(rx_buf_special(c2->buf) && !rx_buf_special(c3->buf),
       "rx_buf_special: an empty buffer is special, a file range is not");

    s = rx_pstrdup(pool, &src);
    ok(s && strcmp(s, "hello") == 0 && s != src.data, "rx_pstrdup copies with a NUL");
    s = rx_pstrdup_c(pool, "abcdef", 3);
    is_str(s, "abc", "rx_pstrdup_c cuts at len");
    rx_pool_destroy(pool);
}

static int spare_cleanups;

static void
count_cleanup(void *data)
{
    (void) data;
    spare_cleanups++;
}

/* rx_pool_create_spare: a destroyed pool comes back reset, its cleanups
 * run and its large allocations freed; one of more than two blocks is
 * freed instead (ASan keeps none: it must see each pool freed). */
static void
test_spares(void)
{
    rx_pool_t         *a, *b, *c;
    rx_pool_cleanup_t *cln;
    char              *p = NULL, *first;
    int                i;

    /* the blocks of the large allocations above (4 KiB and less) are
     * spare blocks now: counted apart from the pools below */
    rx_pool_spares_release();
    a = rx_pool_create_spare(NULL);
    if (!ok(a != NULL, "rx_pool_create_spare")) {
        return;
    }
    first = rx_palloc(a, 16);
    for (i = 0; i < 6; i++) {           /* into a second block */
        (void) rx_palloc(a, 1000);
    }
    ok(rx_palloc(a, 100000) != NULL, "a large allocation in a spare pool");
    cln = rx_pool_cleanup_add(a, 0);
    cln->handler = count_cleanup;
    rx_pool_destroy(a);
    is_int(spare_cleanups, 1, "destroying a spare pool runs its cleanups");
    b = rx_pool_create_spare(NULL);
#ifdef __SANITIZE_ADDRESS__
    ok(b != NULL, "under ASan a spare pool is a new one");
#else
    ok(b == a, "the next spare pool is the one destroyed");
    p = rx_palloc(b, 16);
    ok(p == first && b->large == NULL && b->cleanup == NULL,
       "it comes back reset: the first allocation at the same place, no "
       "large allocation, no cleanup");
#endif
    for (i = 0; i < 12; i++) {          /* into a third block */
        (void) rx_palloc(b, 1000);
    }
    rx_pool_destroy(b);
    is_int(rx_pool_spares_release(), 0,
           "a pool of three blocks is freed, not kept");
    c = rx_pool_create_spare(NULL);
    rx_pool_destroy(c);
#ifdef __SANITIZE_ADDRESS__
    is_int(rx_pool_spares_release(), 0, "under ASan none is kept");
#else
    is_int(rx_pool_spares_release(), 1, "a pool of one block is kept");
#endif
    (void) p;
    (void) first;
}

/* rx_spare_block_get/put: a block put back is the next one got of its
 * size, never one of another size; at most four sizes are kept at once,
 * blocks over 4 KiB never; rx_pool_spares_release frees them all. */
static void
test_spare_blocks(void)
{
    char *a, *b, *c;

    a = rx_spare_block_get(1024, NULL);
    b = rx_spare_block_get(608, NULL);
    if (!ok(a && b, "rx_spare_block_get")) {
        return;
    }
    memset(a, 'a', 1024);
    memset(b, 'b', 608);
    rx_spare_block_put(a, 1024);
    rx_spare_block_put(b, 608);
    c = rx_spare_block_get(512, NULL);
#ifdef __SANITIZE_ADDRESS__
    ok(c != NULL, "under ASan a block is a new one");
    rx_spare_block_put(c, 512);
    is_int(rx_pool_spares_release(), 0, "under ASan none is kept");
#else
    ok(c != a && c != b, "a block of another size is not a spare one");
    ok(rx_spare_block_get(1024, NULL) == a, "the 1024 B block comes back");
    ok(rx_spare_block_get(608, NULL) == b, "the 608 B block comes back");
    rx_spare_block_put(a, 1024);
    rx_spare_block_put(b, 608);
    rx_spare_block_put(c, 512);
    rx_spare_block_put(malloc(8192), 8192);   /* freed: over 4 KiB */
    for (int i = 0; i < 3; i++) {             /* a fifth size: freed */
        rx_spare_block_put(malloc(100 + i), (size_t) (100 + i));
    }
    is_int(rx_pool_spares_release(), 4,
           "kept: the three blocks and one of a fourth size, then freed");
    is_int(rx_pool_spares_release(), 0, "none is left after the release");
#endif
}

/* A pool's large allocation of up to 4 KiB is a spare block: freed with
 * its pool (or rx_pfree) it is the next one of its size, whole; a larger
 * one is freed. ASan keeps none. */
static void
test_large_spare(void)
{
    rx_pool_t *a = rx_pool_create(4096, NULL), *b = rx_pool_create(4096, NULL);
    char      *x, *y, *z, *big;

    if (!ok(a && b, "two pools")) {
        return;
    }
    rx_pool_spares_release();
    x = rx_palloc(a, 4096);
    big = rx_palloc(a, 4097);
    memset(x, 'x', 4096);
    memset(big, 'g', 4097);
    rx_pool_destroy(a);
    y = rx_palloc(b, 4096);
    z = rx_palloc(b, 4096);
#ifdef __SANITIZE_ADDRESS__
    ok(y != NULL && z != NULL, "under ASan a large allocation is a new one");
#else
    ok(y == x, "a pool's 4 KiB large allocation, freed with it, is the "
       "next pool's");
#endif
    ok(z != y, "the second one is another block");
    memset(y, 'y', 4096);
    memset(z, 'z', 4096);
    ok(y[0] == 'y' && y[4095] == 'y' && z[0] == 'z' && z[4095] == 'z',
       "both hold 4096 bytes of their own");
    is_int(rx_pfree(b, z), RX_OK, "rx_pfree gives one back");
#ifndef __SANITIZE_ADDRESS__
    ok(rx_palloc(b, 4096) == z, "and it is the next one");
#endif
    rx_pool_destroy(b);
#ifdef __SANITIZE_ADDRESS__
    is_int(rx_pool_spares_release(), 0, "under ASan none is kept");
#else
    is_int(rx_pool_spares_release(), 2,
           "the two 4 KiB blocks were kept, not the 4097-byte one");
#endif
}

/* Which block small allocations try first: a block that missed with
 * room for most allocations stays first; one that missed with less than
 * 256 bytes left does not (palloc_slow). The first block ends 4096 bytes
 * after the pool; rx_pnalloc's pieces are contiguous. */
static bool
in_first(rx_pool_t *pool, const char *p)
{
    return p >= (char *) pool && p < (char *) pool + 4096;
}

static void
test_full_block(void)
{
    rx_pool_t  *pool = rx_pool_create(4096, NULL);
    void       *first;
    char       *p;

    if (!ok(pool != NULL, "pool for the full-block rule")) {
        return;
    }
    first = pool->current;
    p = rx_pnalloc(pool, 1);
    rx_pnalloc(pool, (size_t) ((char *) pool + 4096 - (p + 1)) - 600);
    p = rx_pnalloc(pool, 1000);
    ok(p && !in_first(pool, p) && pool->current == first,
       "a miss with 600 bytes left: a new block, the first still tried first");
    p = rx_pnalloc(pool, 100);
    ok(p && in_first(pool, p), "a 100-byte allocation still comes from it");
    rx_pnalloc(pool, (size_t) ((char *) pool + 4096 - (p + 100)) - 100);
    p = rx_pnalloc(pool, 200);
    ok(p && !in_first(pool, p) && pool->current != first,
       "a miss with 100 bytes left: the next block is tried first");
    p = rx_pnalloc(pool, 50);
    ok(p && !in_first(pool, p),
       "then a 50-byte allocation comes from the next block at once");
    rx_pool_destroy(pool);
}

int
main(void)
{
    test_alignment();
    test_many_small();
    test_large();
    test_cleanups();
    test_reset();
    test_array();
    test_bufs();
    test_spares();
    test_spare_blocks();
    test_large_spare();
    test_full_block();
    return done();
}
