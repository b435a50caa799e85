/*
 * ring_buf.c: provided-buffer rings (one group of equal buffers the kernel
 * picks from for multishot receives), or the epoll backend's stand-in.
 * With ring.c the only liburing user (shared state in ring_int.h).
 */
#include <liburing.h>
#include <sys/mman.h>
#include "core.h"
#include "slab.h"
#include "ring.h"
#include "ring_int.h"
#include "epoll.h"

struct rx_buf_ring_s {
    rx_epoll_bufs_t          *ep;       /* the epoll backend's instead */
    struct io_uring_buf_ring *br;
    char                     *bufs;
    unsigned                  count;
    unsigned                  size;
    unsigned short            group;
    size_t                    ring_bytes;
};

rx_buf_ring_t *
rx_buf_ring_create(unsigned short group, unsigned count, unsigned size,
    rx_log_t *log)
{
#if (RX_HAVE_IO_URING_BUF_RING)
    struct io_uring_buf_reg reg;
    rx_buf_ring_t          *b = rx_calloc(sizeof(*b), log);
    unsigned                i;
    int                     rc;

    if (b == NULL) {
        return NULL;
    }
    if (rx_ring_epoll) {
        b->ep = rx_epoll_bufs_create(group, count, size, log);
        if (b->ep == NULL) {
            free(b);
            return NULL;
        }
        return b;
    }
    b->count = count;
    b->size = size;
    b->group = group;
    b->ring_bytes = count * sizeof(struct io_uring_buf);
    b->br = mmap(NULL, b->ring_bytes, PROT_READ | PROT_WRITE,
                 MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (b->br == MAP_FAILED) {
        rx_log_error(RX_LOG_EMERG, log, errno, "mmap(buffer ring) failed");
        free(b);
        return NULL;
    }
    b->bufs = rx_alloc((size_t) count * size, log);
    if (b->bufs == NULL) {
        goto failed;
    }
    memset(&reg, 0, sizeof(reg));
    reg.ring_addr = (unsigned long) b->br;
    reg.ring_entries = count;
    reg.bgid = group;
    rc = io_uring_register_buf_ring(rx_ring_uring(), &reg, 0);
    if (rc < 0) {
        rx_log_error(RX_LOG_EMERG, log, -rc, "io_uring_register_buf_ring() "
                     "failed");
        goto failed;
    }
    io_uring_buf_ring_init(b->br);
    for (i = 0; i < count; i++) {
        io_uring_buf_ring_add(b->br, b->bufs + (size_t) i * size, size,
                              (unsigned short) i,
                              io_uring_buf_ring_mask(count), (int) i);
    }
    io_uring_buf_ring_advance(b->br, (int) count);
    return b;

failed:
    free(b->bufs);
    munmap(b->br, b->ring_bytes);
    free(b);
    return NULL;
#else
    rx_log_error(RX_LOG_EMERG, log, 0, "liburing lacks io_uring_register_buf_ring");
    return NULL;
#endif
}

void *
rx_buf_ring_addr(rx_buf_ring_t *b, unsigned short bid)
{
    if (b->ep) {
        return rx_epoll_bufs_addr(b->ep, bid);
    }
    return b->bufs + (size_t) bid * b->size;
}

void
rx_buf_ring_recycle(rx_buf_ring_t *b, unsigned short bid)
{
    if (b->ep) {
        rx_epoll_bufs_recycle(b->ep, bid);
        return;
    }
    io_uring_buf_ring_add(b->br, rx_buf_ring_addr(b, bid), b->size, bid,
                          io_uring_buf_ring_mask(b->count), 0);
    io_uring_buf_ring_advance(b->br, 1);
}

/* Every buffer is given back while its CQE is handled, so none holds data
 * when no CQE waits; with DEFER_TASKRUN the kernel fills buffers only
 * inside io_uring_enter(GETEVENTS), never while we drop them. */
bool
rx_buf_ring_drop_pages(rx_buf_ring_t *b)
{
    if (b->ep) {
        return rx_epoll_bufs_drop_pages(b->ep);
    }
    if (!rx_ring_features.defer_taskrun
        || io_uring_cq_ready(rx_ring_uring()) != 0)
    {
        return false;
    }
    rx_drop_pages(b->bufs, (size_t) b->count * b->size);
    return true;
}

void
rx_buf_ring_destroy(rx_buf_ring_t *b)
{
    if (b == NULL) {
        return;
    }
    if (b->ep) {
        rx_epoll_bufs_destroy(b->ep);
        free(b);
        return;
    }
    if (rx_ring_uring() != NULL) {
        io_uring_unregister_buf_ring(rx_ring_uring(), b->group);
    }
    munmap(b->br, b->ring_bytes);
    free(b->bufs);
    free(b);
}
