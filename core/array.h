/*
 * array.h: a growable array of fixed-size elements allocated from a pool.
 * Growing copies the elements, so never keep a pointer into an array that
 * may still grow.
 */
#ifndef RX_ARRAY_H
#define RX_ARRAY_H

struct rx_array_s {
    void       *elts;
    rx_uint_t   nelts;
    size_t      size;     /* bytes per element */
    rx_uint_t   nalloc;
    rx_pool_t  *pool;
};

rx_array_t *rx_array_create(rx_pool_t *p, rx_uint_t n, size_t size);
rx_int_t rx_array_init(rx_array_t *a, rx_pool_t *p, rx_uint_t n, size_t size);
void *rx_array_push(rx_array_t *a);
void *rx_array_push_n(rx_array_t *a, rx_uint_t n);

#endif /* RX_ARRAY_H */
