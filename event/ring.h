/*
 * ring.h: the worker's io_uring, behind a small API so that liburing is
 * included only by ring.c. One ring per worker, created after fork.
 * Preparing an operation never fails: when the submission queue is full
 * the pending entries are submitted first, and when the kernel refuses
 * them (-EBUSY, -EAGAIN) new entries wait in a backlog, in order, until
 * rx_ring_wait() can hand them over (it then waits at most 1 ms, so that
 * completions are reaped and nothing spins).
 */
#ifndef RX_RING_H
#define RX_RING_H

#include "op.h"

struct iovec;
struct msghdr;
struct sockaddr;

typedef struct {
    uint64_t  user_data;
    int32_t   res;
    uint32_t  flags;
} rx_cqe_t;

#define RX_CQE_F_MORE    (1U << 1)   /* multishot: more completions follow */
#define RX_CQE_F_BUFFER  (1U << 0)   /* a provided buffer was used */
#define RX_CQE_BUFFER_SHIFT 16

/* What the kernel offers, probed at rx_ring_init. */
typedef struct {
    bool  single_issuer;
    bool  defer_taskrun;
    bool  multishot_accept;
    bool  recv_multishot;
    bool  buf_ring;
    bool  quiet_send;        /* ring_quiet.c's promises hold (probed) */
} rx_ring_features_t;

extern rx_ring_features_t rx_ring_features;

rx_int_t rx_ring_init(unsigned entries, rx_log_t *log);
/*
 * The worker's backend: an io_uring of entries, or the epoll backend
 * (epoll.c: the same operations and completions over a readiness loop)
 * when want_epoll (`use epoll;`) or when the kernel refuses the ring,
 * with a notice saying why and how to allow io_uring.
 */
rx_int_t rx_ring_start(unsigned entries, bool want_epoll, rx_log_t *log);
/* True once the worker runs the epoll backend. */
extern bool rx_ring_epoll;
/* Completions the loop turn being dispatched began with (the ring's; 0 on
 * epoll): a turn of one or two is a light load, where a send made at once
 * on the worker's thread spares the wait that would return only for its
 * completion (event/conn.c). */
extern unsigned rx_ring_turn_cqes;
/* Advances whenever the kernel may have handed the worker new input: each
 * io_uring_enter, each operation the epoll backend tries. Any input the
 * worker holds in an epoch was there before the epoch began, so a check
 * made within the epoch saw whatever that input followed: one check an
 * epoch serves every request of it (http_file_content.c). */
extern uint64_t rx_ring_epoch;
/* Whether a ring can be set up here (for -t): 0, or -errno and in *hint
 * what would allow it. */
int rx_ring_probe(const char **hint);
void rx_ring_exit(void);
/* Entries waiting in the backlog (see above). */
unsigned rx_ring_backlog(void);
unsigned rx_ring_cq_ready(void);
/* Tests only (t/unit/test_ring.c): stands in for io_uring_submit(ring),
 * to make the kernel's refusals happen on demand. NULL: the real one. */
typedef int (*rx_ring_submit_pt)(void *ring);
extern rx_ring_submit_pt rx_ring_submit_hook;

void rx_ring_read(int fd, void *buf, unsigned len, uint64_t offset, uint64_t ud);
void rx_ring_write(int fd, const void *buf, unsigned len, uint64_t offset, uint64_t ud);
void rx_ring_accept(int fd, bool multishot, uint64_t ud);
void rx_ring_recv(int fd, void *buf, unsigned len, uint64_t ud);
void rx_ring_recv_select(int fd, unsigned short group, bool multishot,
    uint64_t ud);
void rx_ring_send(int fd, const void *buf, unsigned len, int flags, uint64_t ud);
void rx_ring_sendmsg(int fd, const struct msghdr *msg, int flags, uint64_t ud);

/* ring_quiet.c: a sendmsg whose success posts nothing, tried once when the
 * kernel takes it from the queue (at the loop's next submit), never
 * waiting for room. false: not on this worker (epoll, a kernel without
 * the promises, a queue the kernel refuses); send otherwise. *ticket
 * tells when the kernel has taken it (the msghdr, the iovecs and the
 * bytes are free again then). A completion comes only for a failure:
 * the bytes that went (fewer than asked), -EAGAIN (none), or -errno. */
bool rx_ring_sendmsg_quiet(int fd, const struct msghdr *msg, uint64_t ud,
    uint32_t *ticket);
/* Marks the queue's head now (rx_ring_dispatch does, as it starts): every
 * completion posted by then is to be dispatched before the next mark. */
void rx_ring_quiet_mark(void);
/* Taken by the kernel as of the last mark: with no failure dispatched
 * since that mark, the send went whole. */
bool rx_ring_quiet_taken(uint32_t ticket);
/* A quiet send the kernel has not taken yet becomes a no-op that posts
 * nothing: true. false: taken already (it ran). */
bool rx_ring_quiet_drop(uint32_t ticket);
/* The iovecs (not only the array's contents) must stay valid until the
 * completion; SIGPIPE is ignored by the process, so a closed peer is
 * -EPIPE. */
void rx_ring_writev(int fd, const struct iovec *iov, unsigned n, uint64_t ud);
void rx_ring_close(int fd, uint64_t ud);
/* Closes fd, which nothing has in flight any more, with the ring's next
 * submission: no completion comes back (the loop drops RX_OP_NONE's),
 * and the fd's number stays taken until then. A syscall less per static
 * response and per connection than close(2) from the worker. The epoll
 * backend (or no ring) closes at once. */
void rx_ring_close_quiet(int fd);
void rx_ring_cancel(uint64_t target_ud, uint64_t ud);
void rx_ring_cancel_fd(int fd, uint64_t ud);
void rx_ring_connect(int fd, const struct sockaddr *sa, unsigned len, uint64_t ud);
void rx_ring_shutdown(int fd, int how, uint64_t ud);
void rx_ring_openat(int dfd, const char *path, int flags, unsigned mode,
    uint64_t ud);
struct open_how;
void rx_ring_openat2(int dfd, const char *path, struct open_how *how,
    uint64_t ud);
struct statx;
void rx_ring_statx(int dfd, const char *path, int flags, unsigned mask,
    struct statx *st, uint64_t ud);
/* Metadata operations on paths (the WebDAV module): the paths must stay
 * valid until the completion (the kernel may read them late). */
void rx_ring_renameat(int olddfd, const char *oldpath, int newdfd,
    const char *newpath, unsigned flags, uint64_t ud);
void rx_ring_unlinkat(int dfd, const char *path, int flags, uint64_t ud);
void rx_ring_mkdirat(int dfd, const char *path, unsigned mode, uint64_t ud);
void rx_ring_linkat(int olddfd, const char *oldpath, int newdfd,
    const char *newpath, int flags, uint64_t ud);
void rx_ring_splice(int fd_in, int64_t off_in, int fd_out, int64_t off_out,
    unsigned len, bool link, bool more, uint64_t ud);
/*
 * The same work on the worker's thread when it needs no disk, answered at
 * once (ring_try.c), for a caller written to take the answer there and so
 * save a loop turn; when it would wait, the caller submits the operation
 * above instead. rx_ring_try_openat2: the fd, -errno from the path, or
 * -EAGAIN (would wait; also when the kernel cannot tell: no
 * RESOLVE_CACHED, or a creating or O_PATH open). The fd is O_NONBLOCK
 * (a FIFO must not hold the loop): io_uring's reads and splices of an
 * O_NONBLOCK file answer -EAGAIN instead of waiting for the disk, so
 * rx_ring_file_blocking(fd, how->flags) must clear it before any.
 * rx_ring_try_read: len bytes at off (fewer only at the end of the file)
 * from the page cache, or -1 when not all are there (or on any error,
 * which the ring's read then reports).
 */
int rx_ring_try_openat2(int dfd, const char *path, const struct open_how *how);
int rx_ring_file_blocking(int fd, int flags);
ssize_t rx_ring_try_read(int fd, void *buf, size_t len, int64_t off);
/* openat2 knows RESOLVE_CACHED here (probed once). */
bool rx_ring_cached_lookups(void);
/* One-shot poll: completes with the ready events (POLLOUT...) in res. */
void rx_ring_poll_add(int fd, unsigned events, uint64_t ud);

/*
 * Submits what is pending and waits for at least one completion or until
 * timeout_ms (-1: no timeout) passes. RX_ERROR with errno on failure.
 */
rx_int_t rx_ring_wait(rx_msec_t timeout_ms);
/* Calls handler for every completion available; returns how many. */
typedef void (*rx_cqe_handler_pt)(const rx_cqe_t *cqe, void *data);
rx_uint_t rx_ring_dispatch(rx_cqe_handler_pt handler, void *data);
void rx_ring_submit(void);

/* Provided-buffer ring for multishot recv: count buffers of size bytes. */
typedef struct rx_buf_ring_s rx_buf_ring_t;
rx_buf_ring_t *rx_buf_ring_create(unsigned short group, unsigned count,
    unsigned size, rx_log_t *log);
void *rx_buf_ring_addr(rx_buf_ring_t *br, unsigned short bid);
void rx_buf_ring_recycle(rx_buf_ring_t *br, unsigned short bid);
void rx_buf_ring_destroy(rx_buf_ring_t *br);
/* Gives the pages of the buffers back to the kernel (they come back
 * zeroed when next written), for a worker gone quiet; only while no
 * buffer holds data. False when some did, or the kernel may write into
 * them outside our ring calls (no DEFER_TASKRUN): nothing was dropped. */
bool rx_buf_ring_drop_pages(rx_buf_ring_t *br);

#endif /* RX_RING_H */
