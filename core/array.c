/*
 * array.c: growable arrays in pools.
 */
#include "core.h"

rx_int_t
rx_array_init(rx_array_t *a, rx_pool_t *p, rx_uint_t n, size_t size)
{
    a->nelts = 0;
    a->size = size;
    a->nalloc = n ? n : 1;
    a->pool = p;
    a->elts = rx_palloc(p, a->nalloc * size);
    return a->elts ? RX_OK : RX_ERROR;
}

rx_array_t *
rx_array_create(rx_pool_t *p, rx_uint_t n, size_t size)
{
    rx_array_t *a = rx_palloc(p, sizeof(rx_array_t));
    if (a == NULL || rx_array_init(a, p, n, size) != RX_OK) {
        return NULL;
    }
    return a;
}

void *
rx_array_push_n(rx_array_t *a, rx_uint_t n)
{
    void *elt;

    if (a->nelts + n > a->nalloc) {
        rx_uint_t nalloc = 2 * rx_max(n, a->nalloc);
        void *grown = rx_palloc(a->pool, nalloc * a->size);
        if (grown == NULL) {
            return NULL;
        }
        memcpy(grown, a->elts, a->nelts * a->size);
        a->elts = grown;
        a->nalloc = nalloc;
    }
    elt = (char *) a->elts + a->size * a->nelts;
    a->nelts += n;
    return elt;
}

void *
rx_array_push(rx_array_t *a)
{
    return rx_array_push_n(a, 1);
}
