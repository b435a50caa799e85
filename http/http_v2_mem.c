/*
 * http_v2_mem.c: the memory of HTTP/2 sessions and their streams. The
 * session allocates a block per stream, and the streams here their own;
 * with hundreds of streams in flight glibc's per-size caches (7 chunks
 * each) overflow and every malloc and free took its slow path (bins,
 * unlink, consolidation: ~10 % of a worker's CPU under h2load -m 10).
 * Small blocks come from free lists per size class instead, kept per
 * worker (a worker is one thread), each list bounded so a burst does not
 * stay held. Large blocks are mapped on their own.
 */
#include <sys/mman.h>
#include "http_v2_int.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)    ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n)  ASAN_UNPOISON_MEMORY_REGION(p, n)
#define MAP_BLOCKS      0   /* ASan does not see into mappings: malloc */
#else
#define POISON(p, n)    ((void) (p), (void) (n))
#define UNPOISON(p, n)  ((void) (p), (void) (n))
#define MAP_BLOCKS      1
#endif

/* Classes of block sizes, this header included: the per-stream blocks
 * (the session's stream, a header block, the streams' own) are mostly
 * below 1 KiB. Steps of a half keep the waste of a class
 * below a third. Larger blocks are a session's, made once: malloc'd at
 * their size, or mapped from MAP_MIN. */
static const size_t class_size[] = { 64, 128, 192, 256, 384, 512, 768, 1024 };

#define NCLASSES      8
#define CLASS_MAX     1024
#define CLASS_MALLOC  NCLASSES              /* above CLASS_MAX, below MAP_MIN */
#define CLASS_MAP     (NCLASSES + 1)        /* mapped on its own */
#define MAP_MIN       ((size_t) 16 * 1024)
#define CACHE_BYTES   ((size_t) 1024 * 1024) /* kept per class at most */

/* Ahead of every block; 16 bytes keep the block 16-byte aligned. */
typedef struct {
    size_t    size;      /* bytes the block holds, this header included */
    uint32_t  cls;       /* a class index, CLASS_MALLOC or CLASS_MAP */
    uint32_t  pad;
} hdr_t;

typedef struct free_s free_t;
struct free_s {
    free_t   *next;
};

/* The worker's free lists: one per process, as glibc's arena is. */
static struct {
    free_t   *list[NCLASSES];
    size_t    bytes[NCLASSES];
} cache;

/* The class of a block of total bytes (at most CLASS_MAX), by 64ths. */
static unsigned
class_of(size_t total)
{
    static const unsigned char by64[16] = { 0, 1, 2, 3, 4, 4, 5, 5,
                                            6, 6, 6, 6, 7, 7, 7, 7 };

    return by64[(total - 1) / 64];
}

static hdr_t *
block_new(size_t n)
{
    size_t    total = n + sizeof(hdr_t);
    hdr_t    *h;
    unsigned  c;

    if (n > ((size_t) -1) / 2) {
        return NULL;
    }
    if (total <= CLASS_MAX) {
        c = class_of(total);
        if (cache.list[c]) {
            h = (hdr_t *) cache.list[c];
            UNPOISON(h, class_size[c]);
            cache.list[c] = ((free_t *) h)->next;
            total = class_size[c];
            cache.bytes[c] -= total;
        } else {
            total = class_size[c];
            h = malloc(total);
        }
    } else if (MAP_BLOCKS && total >= MAP_MIN) {
        c = CLASS_MAP;
        total = (total + 4095) & ~(size_t) 4095;
        h = mmap(NULL, total, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        h = h == MAP_FAILED ? NULL : h;
    } else {
        c = CLASS_MALLOC;
        h = malloc(total);
    }
    if (h) {
        h->size = total;
        h->cls = c;
    }
    return h;
}

void *
rx_http_v2_alloc(size_t n)
{
    hdr_t *h = block_new(n);

    return h ? h + 1 : NULL;
}

void
rx_http_v2_free(void *p)
{
    hdr_t    *h;
    size_t    size;
    uint32_t  c;

    if (p == NULL) {
        return;
    }
    h = (hdr_t *) p - 1;
    size = h->size;
    c = h->cls;
    if (c < NCLASSES && cache.bytes[c] + size <= CACHE_BYTES) {
        /* the link overwrites the header: block_new writes it again */
        ((free_t *) h)->next = cache.list[c];
        cache.list[c] = (free_t *) h;
        cache.bytes[c] += size;
        /* ASan: a use after this free is still caught */
        POISON((char *) h + sizeof(free_t), size - sizeof(free_t));
    } else if (c == CLASS_MAP) {
        munmap(h, size);
    } else {
        free(h);
    }
}

void *
rx_http_v2_calloc(size_t n, size_t size)
{
    void *p;

    if (size && n > ((size_t) -1) / size) {
        return NULL;
    }
    p = rx_http_v2_alloc(n * size);
    if (p) {
        memset(p, 0, n * size);
    }
    return p;
}

void *
rx_http_v2_realloc(void *p, size_t n)
{
    hdr_t  *h;
    void   *q;
    size_t  have;

    if (p == NULL) {
        return rx_http_v2_alloc(n);
    }
    h = (hdr_t *) p - 1;
    have = h->size - sizeof(hdr_t);
    if (n <= have && n > have / 4) {
        return p;                        /* it still fits, not too loosely */
    }
    q = rx_http_v2_alloc(n);
    if (q == NULL) {
        return NULL;                     /* p stays valid, as realloc's */
    }
    memcpy(q, p, rx_min(n, have));
    rx_http_v2_free(p);
    return q;
}

/* ---- connections' send buffers ------------------------------------------ */

/* A connection frees its send buffer whenever it has no stream left, so
 * an idle connection holds none; under h2load -m 10 that is every ten
 * requests, and an 80 KiB chunk malloc'd and freed that often splits and
 * merges the heap's free chunks (unlink_chunk: ~4 % of a worker's CPU,
 * and it slows every other malloc). A few spare buffers kept per worker
 * serve the connections that come back, without holding one per idle
 * connection. */
#define SPARE_OUT     16

static struct {
    void     *buf[SPARE_OUT];
    size_t    size[SPARE_OUT];
    unsigned  n;
} spare;

void *
rx_http_v2_out_alloc(size_t size)
{
    unsigned i;

    for (i = spare.n; i-- > 0; ) {
        if (spare.size[i] == size) {
            void *p = spare.buf[i];

            spare.n--;
            spare.buf[i] = spare.buf[spare.n];
            spare.size[i] = spare.size[spare.n];
            UNPOISON(p, size);
            return p;
        }
    }
    return malloc(size);
}

void
rx_http_v2_out_free(void *p, size_t size)
{
    if (p == NULL) {
        return;
    }
    if (spare.n == SPARE_OUT) {
        free(p);
        return;
    }
    POISON(p, size);                     /* ASan: a use after it is caught */
    spare.buf[spare.n] = p;
    spare.size[spare.n] = size;
    spare.n++;
}

/* ---- the session's allocator ----------------------------------------- */

static void *
session_alloc(size_t size, void *mud)
{
    (void) mud;
    return rx_http_v2_alloc(size);
}

static void
session_free(void *p, size_t size, void *mud)
{
    (void) size; (void) mud;
    rx_http_v2_free(p);
}

const rx_h2_mem_t rx_http_v2_session_mem = { session_alloc, session_free,
                                             NULL };
