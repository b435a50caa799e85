/*
 * ring_int.h: what ring.c shares with the other liburing users of the
 * event layer: ring_buf.c (provided buffers), ring_fs.c (operations on
 * paths), ring_quiet.c (sends whose success posts nothing).
 */
#ifndef RX_RING_INT_H
#define RX_RING_INT_H

struct io_uring;
struct io_uring_sqe;

/* The worker's ring; NULL before rx_ring_init() and after rx_ring_exit(). */
struct io_uring *rx_ring_uring(void);

/* An entry to prepare: in the submission queue, or while the kernel
 * refuses the queue in ring.c's backlog (prepared all the same, submitted
 * later in order). */
struct io_uring_sqe *rx_ring_get_sqe(void);

/* An entry in the submission queue itself, or NULL while the backlog holds
 * any: ring_quiet.c counts positions in the queue. */
struct io_uring_sqe *rx_ring_sqe(void);

/* ring_quiet.c: whether this kernel's sends keep the promises quiet sends
 * rely on (tried once on the ring, before it carries anything else). */
bool rx_ring_quiet_probe(struct io_uring *ring);

#endif /* RX_RING_INT_H */
