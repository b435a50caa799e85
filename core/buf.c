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

/* One of n buffers the writer has sent (only buffers with bytes are
 * passed on, so pos == last means sent), reset; NULL when none. */
static rx_buf_t *
find_spent(rx_buf_t **bufs, rx_uint_t n)
{
    rx_uint_t i;

    for (i = 0; i < n; i++) {
        if (bufs[i]->pos == bufs[i]->last) {
            bufs[i]->pos = bufs[i]->last = bufs[i]->start;
            bufs[i]->flush = bufs[i]->last_buf = 0;
            return bufs[i];
        }
    }
    return NULL;
}

rx_buf_t *
rx_buf_get_spent(rx_pool_t *pool, rx_array_t *bufs, size_t size)
{
    rx_buf_t *b = find_spent(bufs->elts, bufs->nelts), **slot;

    if (b) {
        return b;
    }
    b = rx_create_temp_buf(pool, size);
    slot = b ? rx_array_push(bufs) : NULL;
    if (slot == NULL) {
        return NULL;
    }
    *slot = b;
    return b;
}

rx_int_t
rx_chain_append_buf(rx_pool_t *pool, rx_chain_t **free, rx_chain_t ***last,
    rx_buf_t *b)
{
    rx_chain_t *cl = rx_chain_get_free_link(pool, free);

    if (cl == NULL) {
        return RX_ERROR;
    }
    cl->buf = b;
    cl->next = NULL;
    **last = cl;
    *last = &cl->next;
    return RX_OK;
}

rx_buf_t *
rx_buf_get_free(rx_pool_t *pool, rx_buf_t ***bufs, rx_int_t *nbufs,
    rx_int_t num, size_t size)
{
    rx_buf_t *b;

    if (*nbufs > 0 && (b = find_spent(*bufs, (rx_uint_t) *nbufs)) != NULL) {
        return b;
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
