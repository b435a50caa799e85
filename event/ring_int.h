/*
 * ring_int.h: what ring.c shares with ring_buf.c, the other liburing user.
 */
#ifndef RX_RING_INT_H
#define RX_RING_INT_H

struct io_uring;

/* The worker's ring; NULL before rx_ring_init() and after rx_ring_exit(). */
struct io_uring *rx_ring_uring(void);

#endif /* RX_RING_INT_H */
