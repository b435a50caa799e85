/*
 * epoll_bufs.c: the epoll backend's provided buffers (what io_uring's
 * buffer rings are to multishot recv): per group, a stack of free buffer
 * ids that epoll_try.c takes from and the CQE's consumer gives back to.
 */
#include <sys/mman.h>
#include "core.h"
#include "slab.h"
#include "epoll.h"

#define MAX_GROUPS 16

static rx_epoll_bufs_t *groups[MAX_GROUPS];

rx_epoll_bufs_t *
rx_epoll_group(unsigned short group)
{
    return group < MAX_GROUPS ? groups[group] : NULL;
}

rx_epoll_bufs_t *
rx_epoll_bufs_create(unsigned short group, unsigned count, unsigned size,
    rx_log_t *log)
{
    rx_epoll_bufs_t *b;
    unsigned         i;

    if (group >= MAX_GROUPS) {
        rx_log_error(RX_LOG_EMERG, log, 0, "buffer group %u out of range",
                     (unsigned) group);
        return NULL;
    }
    b = rx_calloc(sizeof(*b), log);
    if (b == NULL) {
        return NULL;
    }
    b->bufs = rx_alloc((size_t) count * size, log);
    b->free = rx_alloc(count * sizeof(*b->free), log);
    if (b->bufs == NULL || b->free == NULL) {
        free(b->bufs);
        free(b->free);
        free(b);
        return NULL;
    }
    for (i = 0; i < count; i++) {
        b->free[i] = (unsigned short) (count - 1 - i);
    }
    b->nfree = b->count = count;
    b->size = size;
    b->group = group;
    groups[group] = b;
    return b;
}

void *
rx_epoll_bufs_addr(rx_epoll_bufs_t *b, unsigned short bid)
{
    return b->bufs + (size_t) bid * b->size;
}

void
rx_epoll_bufs_recycle(rx_epoll_bufs_t *b, unsigned short bid)
{
    if (b->nfree < b->count) {
        b->free[b->nfree++] = bid;
    }
}

void
rx_epoll_bufs_destroy(rx_epoll_bufs_t *b)
{
    if (b == NULL) {
        return;
    }
    groups[b->group] = NULL;
    free(b->bufs);
    free(b->free);
    free(b);
}

/* A buffer not on the free stack holds bytes a queued CQE will deliver. */
bool
rx_epoll_bufs_drop_pages(rx_epoll_bufs_t *b)
{
    if (b->nfree != b->count) {
        return false;
    }
    rx_drop_pages(b->bufs, (size_t) b->count * b->size);
    return true;
}
