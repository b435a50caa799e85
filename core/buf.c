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

rx_chain_t *
rx_chain_get_free_link(rx_pool_t *pool, rx_chain_t **free)
{
    rx_chain_t *cl = *free;

    if (cl) {
        *free = cl->next;
        cl->next = NULL;
        return cl;
    }
    return rx_alloc_chain_link(pool);
}

rx_int_t
rx_chain_take_links(rx_pool_t *pool, rx_chain_t **free, rx_chain_t *in,
    rx_chain_t ***tail)
{
    rx_chain_t *cl;

    for (; in; in = in->next) {
        if (in->buf->in_file && !in->buf->memory) {
            return RX_DECLINED;
        }
        cl = rx_chain_get_free_link(pool, free);
        if (cl == NULL) {
            return RX_ERROR;
        }
        cl->buf = in->buf;
        **tail = cl;
        *tail = &cl->next;
    }
    return RX_OK;
}

rx_buf_t *
rx_buf_get_free(rx_pool_t *pool, rx_buf_t ***bufs, rx_int_t *nbufs,
    rx_int_t num, size_t size)
{
    rx_int_t  i;
    rx_buf_t *b;

    for (i = 0; i < *nbufs; i++) {
        b = (*bufs)[i];
        if (b->pos == b->last) {
            b->pos = b->last = b->start;
            b->flush = b->last_buf = 0;
            return b;
        }
    }
    if (*nbufs == num) {
        return NULL;
    }
    if (*bufs == NULL) {
        *bufs = rx_palloc(pool, (size_t) num * sizeof(rx_buf_t *));
        if (*bufs == NULL) {
            return NULL;
        }
    }
    b = rx_create_temp_buf(pool, size);
    if (b) {
        (*bufs)[(*nbufs)++] = b;
    }
    return b;
}
