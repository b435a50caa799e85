/*
 * test_shm_pool.c: the allocator inside a shared memory zone
 * (core/shm_pool.c): layout, size classes, page runs, pages given back
 * when empty, exhaustion, and 20,000 random allocations and frees whose
 * bytes are checked for overlap against a shadow list.
 */
#include <stdlib.h>
#include "core.h"
#include "shm_zone.h"
#include "tap.h"

#define ZONE  (64 * 1024)

static void *
new_pool(size_t size)
{
    void *mem = NULL;

    if (posix_memalign(&mem, 4096, size) != 0) {
        return NULL;
    }
    if (rx_shm_pool_init(mem, size) != RX_OK) {
        free(mem);
        return NULL;
    }
    return mem;
}

static void
test_layout(void)
{
    char   small[4096 * 2];
    void  *mem = new_pool(ZONE);
    size_t pages;

    ok(rx_shm_pool_init(small, sizeof(small)) == RX_ERROR,
       "two pages leave no room for the header: refused");
    ok(mem != NULL, "a 64k pool");
    pages = rx_shm_pool_free_pages(mem);
    ok(pages >= 14 && pages <= 15, "64k: %zu free pages (one for the header)",
       pages);
    free(mem);
}

static void
test_classes(void)
{
    void   *mem = new_pool(ZONE);
    size_t  pages = rx_shm_pool_free_pages(mem);
    size_t  sizes[] = { 1, 16, 17, 100, 512, 2048, 2049, 4096, 10000 };
    char   *p[9];
    size_t  i;
    bool    aligned = true, inside = true;

    for (i = 0; i < 9; i++) {
        p[i] = rx_shm_pool_alloc(mem, sizes[i]);
        if (p[i] == NULL) {
            break;
        }
        memset(p[i], (int) i + 1, sizes[i]);
        aligned = aligned && ((uintptr_t) p[i] & 15) == 0;
        inside = inside && p[i] > (char *) mem
                 && p[i] + sizes[i] <= (char *) mem + ZONE;
    }
    ok(i == 9, "every size from 1 to 10000 bytes allocated");
    ok(aligned, "16-byte aligned");
    ok(inside, "inside the pool");
    for (i = 0; i < 9; i++) {
        size_t j;
        bool   same = true;

        for (j = 0; j < sizes[i]; j++) {
            same = same && p[i][j] == (char) (i + 1);
        }
        ok(same, "%zu bytes kept their contents", sizes[i]);
    }
    ok(((uintptr_t) p[8] & 4095) == 0 && ((uintptr_t) p[7] & 4095) == 0,
       "beyond 2048 bytes: whole pages");
    for (i = 0; i < 9; i++) {
        rx_shm_pool_free(mem, p[i]);
    }
    is_int((int64_t) rx_shm_pool_free_pages(mem), (int64_t) pages,
           "every page is free again");
    free(mem);
}

static void
test_exhaustion(void)
{
    void  *mem = new_pool(ZONE);
    size_t pages = rx_shm_pool_free_pages(mem), n = 0, i;
    void **all = calloc(4096, sizeof(void *));
    void  *run;

    while (n < 4096 && (all[n] = rx_shm_pool_alloc(mem, 64)) != NULL) {
        n++;
    }
    is_int((int64_t) n, (int64_t) (pages * 64), "64-byte chunks until full: "
           "64 a page");
    ok(rx_shm_pool_alloc(mem, 16) == NULL, "then nothing, even 16 bytes");
    ok(rx_shm_pool_alloc(mem, 5000) == NULL, "nor a run");
    rx_shm_pool_free(mem, all[0]);
    ok(rx_shm_pool_alloc(mem, 64) == all[0], "a freed chunk is reused");
    ok(rx_shm_pool_alloc(mem, 128) == NULL, "but not for another class");
    /* empty two neighbouring pages: a two-page run fits there */
    for (i = 0; i < 128; i++) {
        rx_shm_pool_free(mem, all[i]);
    }
    is_int((int64_t) rx_shm_pool_free_pages(mem), 2, "two pages emptied "
           "chunk by chunk go back");
    run = rx_shm_pool_alloc(mem, 8000);
    ok(run == all[0], "and make a two-page run");
    rx_shm_pool_free(mem, run);
    for (i = 128; i < n; i++) {
        rx_shm_pool_free(mem, all[i]);
    }
    is_int((int64_t) rx_shm_pool_free_pages(mem), (int64_t) pages,
           "all free at the end");
    rx_shm_pool_reset(mem);
    is_int((int64_t) rx_shm_pool_free_pages(mem), (int64_t) pages,
           "reset: all free");
    free(all);
    free(mem);
}

typedef struct {
    unsigned char *p;
    size_t         size;
    unsigned char  fill;
} shadow_t;

static void
test_random(void)
{
    enum { SLOTS = 200, OPS = 20000 };
    size_t    zone = 1024 * 1024;
    void     *mem = new_pool(zone);
    size_t    pages = rx_shm_pool_free_pages(mem), i, j;
    shadow_t  s[SLOTS];
    bool      intact = true;
    unsigned  seed = 12345, fails = 0;

    memset(s, 0, sizeof(s));
    for (i = 0; i < OPS; i++) {
        j = (size_t) rand_r(&seed) % SLOTS;
        if (s[j].p) {
            size_t k;

            for (k = 0; k < s[j].size; k++) {
                intact = intact && s[j].p[k] == s[j].fill;
            }
            rx_shm_pool_free(mem, s[j].p);
            s[j].p = NULL;
            continue;
        }
        s[j].size = 1 + (size_t) rand_r(&seed)
                        % (rand_r(&seed) % 8 ? 300 : 12000);
        s[j].fill = (unsigned char) (i & 0xff);
        s[j].p = rx_shm_pool_alloc(mem, s[j].size);
        if (s[j].p == NULL) {
            fails++;
            continue;
        }
        memset(s[j].p, s[j].fill, s[j].size);
    }
    ok(intact, "20000 random operations: no allocation overlapped another");
    ok(fails < OPS / 100, "%u allocations failed in a 1m pool", fails);
    for (j = 0; j < SLOTS; j++) {
        if (s[j].p) {
            rx_shm_pool_free(mem, s[j].p);
        }
    }
    is_int((int64_t) rx_shm_pool_free_pages(mem), (int64_t) pages,
           "every page back at the end");
    free(mem);
}

int
main(void)
{
    test_layout();
    test_classes();
    test_exhaustion();
    test_random();
    return done();
}
