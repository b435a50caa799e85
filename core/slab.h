/*
 * slab.h: fixed-size chunks for small objects that live long (a
 * connection's pool), packed in aligned 64 KiB mappings of their own, away
 * from malloc's heap, where the short-lived buffers of requests would
 * interleave with them and keep freed pages resident between them.
 */
#ifndef RX_SLAB_H
#define RX_SLAB_H

#define RX_SLAB_SEG_SIZE  (64 * 1024)

typedef struct rx_slab_seg_s rx_slab_seg_t;

struct rx_slab_s {
    size_t          size;      /* of a chunk: a multiple of 16 */
    rx_slab_seg_t  *partial;   /* segments with a free chunk, list */
    rx_slab_seg_t  *spare;     /* one empty segment kept for the next */
    rx_uint_t       nsegs;     /* mapped, the spare included */
};

/* size: the chunk size (rounded up to 16, at most 4 KiB). */
void rx_slab_init(rx_slab_t *slab, size_t size);

/* A chunk of slab->size bytes, aligned to 16, not zeroed; NULL (logged at
 * emerg) when no memory could be mapped. */
void *rx_slab_alloc(rx_slab_t *slab, rx_log_t *log);

/* Gives a chunk back; its segment is unmapped once empty (one empty
 * segment is kept, so that a connection coming and going does not map
 * and unmap one each time). */
void rx_slab_free(void *p);

/* Unmaps the spare segment (the others hold chunks still in use). */
void rx_slab_release(rx_slab_t *slab);

/* Gives the whole pages inside [p, p + len) back to the kernel
 * (MADV_DONTNEED): they read as zeros when touched again. For memory that
 * holds nothing worth keeping and that nobody writes meanwhile. */
void rx_drop_pages(void *p, size_t len);

#endif /* RX_SLAB_H */
