/*
 * http_v2_mem.c: the memory of HTTP/2 sessions and their streams. nghttp2
 * allocates several small blocks per stream (the stream, its frames, its
 * outbound items, HPACK strings) and so do the streams here; with
 * hundreds of streams in flight glibc's per-size caches (7 chunks each)
 * overflow and every malloc and free took its slow path (bins, unlink,
 * consolidation: ~10 % of a worker's CPU under h2load -m 10). Small
 * blocks come from free lists per size class instead, kept per worker (a
 * worker is one thread, and nghttp2 runs only there), each list bounded
 * so a burst does not stay held. Large blocks (a session's 16 KiB frame
 * buffer) are mapped on their own: the pages an idle connection never
 * wrote cost it no memory, where a recycled heap chunk is resident whole.
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
 * (nghttp2's stream, frame, outbound item and HPACK strings; the streams'
 * own) are all below 1 KiB. Steps of a half keep the waste of a class
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

/* ---- nghttp2's allocator (nghttp2_mem) --------------------------------- */

/*
 * nghttp2's memory is a session's (its user data is the connection), so
 * that the session's large blocks, its 16 KiB frame buffer above all, are
 * known to the connection: mapped at a page boundary with no header in
 * them, and given back to the kernel while the connection is idle
 * (rx_http_v2_mem_idle). An idle connection otherwise kept the buffer's
 * first page, where every frame it sent began: 4 KiB of its ~31.
 */

static rx_http_v2_map_t *
map_of(rx_http_v2_conn_t *h2, const void *p)
{
    rx_uint_t i;

    for (i = 0; p != NULL && i < RX_HTTP_V2_MAPS; i++) {
        if (h2->maps[i].p == p) {
            return &h2->maps[i];
        }
    }
    return NULL;
}

static void *
map_new(rx_http_v2_conn_t *h2, size_t size)
{
    rx_http_v2_map_t *m = map_of(h2, NULL);
    rx_uint_t         i;
    void             *p;

    if (!MAP_BLOCKS || size < MAP_MIN || size > ((size_t) -1) / 2) {
        return NULL;
    }
    for (i = 0; m == NULL && i < RX_HTTP_V2_MAPS; i++) {
        if (h2->maps[i].p == NULL) {
            m = &h2->maps[i];
        }
    }
    if (m == NULL) {
        return NULL;                 /* the blocks with a header take it */
    }
    size = (size + 4095) & ~(size_t) 4095;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    m->p = p;
    m->size = size;
    return p;
}

void
rx_http_v2_mem_idle(rx_http_v2_conn_t *h2)
{
    rx_uint_t i;

    /* nothing waits in them: the session has sent every frame */
    for (i = 0; i < RX_HTTP_V2_MAPS; i++) {
        if (h2->maps[i].p) {
            (void) madvise(h2->maps[i].p, h2->maps[i].size, MADV_DONTNEED);
        }
    }
}

static void *
mem_malloc(size_t size, void *ud)
{
    void *p = map_new(ud, size);

    return p ? p : rx_http_v2_alloc(size);
}

static void
mem_free(void *p, void *ud)
{
    rx_http_v2_map_t *m = map_of(ud, p);

    if (m) {
        munmap(m->p, m->size);
        m->p = NULL;
        m->size = 0;
        return;
    }
    rx_http_v2_free(p);
}

static void *
mem_calloc(size_t n, size_t size, void *ud)
{
    void *p;

    if (size && n > ((size_t) -1) / size) {
        return NULL;
    }
    p = map_new(ud, n * size);           /* mapped pages come zeroed */
    return p ? p : rx_http_v2_calloc(n, size);
}

static void *
mem_realloc(void *p, size_t size, void *ud)
{
    rx_http_v2_map_t *m = map_of(ud, p);
    void             *q;

    if (size == 0) {
        mem_free(p, ud);
        return NULL;
    }
    if (p == NULL) {
        return mem_malloc(size, ud);     /* nghttp2's buffers start so */
    }
    if (m == NULL) {
        return rx_http_v2_realloc(p, size);
    }
    if (size <= m->size && size > m->size / 4) {
        return p;
    }
    q = mem_malloc(size, ud);
    if (q == NULL) {
        return NULL;                     /* p stays valid, as realloc's */
    }
    memcpy(q, p, rx_min(size, m->size));
    mem_free(p, ud);
    return q;
}

void
rx_http_v2_mem_init(rx_http_v2_conn_t *h2)
{
    h2->mem.mem_user_data = h2;
    h2->mem.malloc = mem_malloc;
    h2->mem.free = mem_free;
    h2->mem.calloc = mem_calloc;
    h2->mem.realloc = mem_realloc;
}
