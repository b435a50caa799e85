/*
 * buf.h: buffers and chains. A buffer is a memory range [pos, last) inside
 * [start, end), or a file range [file_pos, file_last) of an open fd, or
 * both views of the same bytes. Chains link buffers in output order.
 *
 * Invariants: start <= pos <= last <= end for memory buffers;
 * file_pos <= file_last for file buffers; a buffer with last_buf set ends
 * the response body, one with flush asks the writer to send now; a chain
 * link and its buffer live in the pool of their request.
 */
#ifndef RX_BUF_H
#define RX_BUF_H

typedef struct rx_buf_s   rx_buf_t;
typedef struct rx_chain_s rx_chain_t;

struct rx_buf_s {
    char      *pos;
    char      *last;
    char      *start;
    char      *end;
    int64_t    file_pos;
    int64_t    file_last;
    int        fd;            /* -1 when not a file buffer */
    unsigned   memory:1;      /* pos..last holds the bytes */
    unsigned   in_file:1;     /* file_pos..file_last holds the bytes */
    unsigned   last_buf:1;
    unsigned   flush:1;
    unsigned   sync:1;        /* no data, only a flag carrier */
};

struct rx_chain_s {
    rx_buf_t    *buf;
    rx_chain_t  *next;
};

#define rx_buf_size(b)                                                        \
    ((b)->in_file && !(b)->memory ? (size_t) ((b)->file_last - (b)->file_pos)  \
                                  : (size_t) ((b)->last - (b)->pos))
#define rx_buf_special(b)  (rx_buf_size(b) == 0)

rx_buf_t *rx_create_temp_buf(rx_pool_t *pool, size_t size);
rx_buf_t *rx_calloc_buf(rx_pool_t *pool);
rx_chain_t *rx_alloc_chain_link(rx_pool_t *pool);

/* For a filter that keeps its spare links in *free: one of them, else a
 * new one from pool. NULL when out of memory. */
rx_chain_t *rx_chain_get_free_link(rx_pool_t *pool, rx_chain_t **free);
/* A filter's queue of input: a link (from *free) for each buffer of in
 * appended at **tail, the buffers staying the producer's. RX_DECLINED
 * when a buffer is a file range (the producer ignored
 * filter_need_in_memory: the caller logs it), RX_ERROR out of memory. */
rx_int_t rx_chain_take_links(rx_pool_t *pool, rx_chain_t **free,
    rx_chain_t *in, rx_chain_t ***tail);
/* A filter's output buffers, at most num of size bytes in (*bufs)[0..
 * *nbufs): one the writer has sent (pos == last), reset, else a new one.
 * NULL when all num are in flight, or out of memory. */
/* The same without a bound: bufs is an array of rx_buf_t * that grows
 * (a filter whose output waits for the client: sub_filter, charset).
 * NULL out of memory. */
rx_buf_t *rx_buf_get_spent(rx_pool_t *pool, rx_array_t *bufs, size_t size);
/* Appends b to an output chain at **last, its link from *free. RX_OK or
 * RX_ERROR. */
rx_int_t rx_chain_append_buf(rx_pool_t *pool, rx_chain_t **free,
    rx_chain_t ***last, rx_buf_t *b);
rx_buf_t *rx_buf_get_free(rx_pool_t *pool, rx_buf_t ***bufs, rx_int_t *nbufs,
    rx_int_t num, size_t size);
/* A chain of one memory buffer holding a copy of text. */
rx_chain_t *rx_chain_from_text(rx_pool_t *pool, const char *text, size_t len,
    bool last_buf);
/* Total bytes in a chain. */
size_t rx_chain_size(const rx_chain_t *cl);

#endif /* RX_BUF_H */
