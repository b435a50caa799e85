/*
 * buf.c: creating buffers and chain links from pools.
 */
#include "core.h"
#include "buf.h"

rx_buf_t *
rx_calloc_buf(rx_pool_t *pool)
{
    rx_buf_t *b = rx_pcalloc(pool, sizeof(rx_buf_t));

    if (b) {
        b->fd = -1;
    }
    return b;
}

rx_buf_t *
rx_create_temp_buf(rx_pool_t *pool, size_t size)
{
    rx_buf_t *b = rx_calloc_buf(pool);

    if (b == NULL) {
        return NULL;
    }
    b->start = rx_pnalloc(pool, size ? size : 1);
    if (b->start == NULL) {
        return NULL;
    }
    b->pos = b->last = b->start;
    b->end = b->start + size;
    b->memory = 1;
    return b;
}

rx_chain_t *
rx_alloc_chain_link(rx_pool_t *pool)
{
    /* two fields: set here rather than by memset (a dozen links a
     * response) */
    rx_chain_t *cl = rx_palloc(pool, sizeof(rx_chain_t));

    if (cl) {
        cl->buf = NULL;
        cl->next = NULL;
    }
    return cl;
}

rx_chain_t *
rx_chain_from_text(rx_pool_t *pool, const char *text, size_t len, bool last_buf)
{
    rx_chain_t *cl = rx_alloc_chain_link(pool);
    rx_buf_t   *b = rx_create_temp_buf(pool, len);

    if (cl == NULL || b == NULL) {
        return NULL;
    }
    memcpy(b->last, text, len);
    b->last += len;
    b->last_buf = last_buf;
    cl->buf = b;
    return cl;
}

size_t
rx_chain_size(const rx_chain_t *cl)
{
    size_t n = 0;

    for (; cl; cl = cl->next) {
        n += rx_buf_size(cl->buf);
    }
    return n;
}
