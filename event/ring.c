/*
 * ring.c: the liburing wrapper: ring set-up with the best flags the kernel
 * accepts, operation preparation that flushes a full submission queue (and
 * keeps entries in a backlog while the kernel refuses them), one
 * submit-and-wait per loop turn, batched under load (provided-buffer
 * rings: ring_buf.c).
 */
#include <liburing.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "core.h"
#include "clock.h"
#include "ring.h"
#include "epoll.h"
#include "ring_int.h"

static struct io_uring      ring;
static bool                 ring_ready;
static rx_log_t            *ring_log;
/* entries prepared while the kernel refused the queue (see rx_ring_get_sqe) */
static struct io_uring_sqe *backlog;
static unsigned             backlog_n, backlog_size;
static rx_msec_t            refused_logged;

/* Batched waits. A worker whose last turn reaped BATCH_MIN completions or
 * more asks the kernel for as many again (at most BATCH_MAX) and takes what
 * has come after BATCH_WAIT_US: under load one sleep and its wake-up serve
 * several completions instead of one or two (with DEFER_TASKRUN the kernel
 * does not wake the worker until that many are pending). Under 50 proxied
 * clients ringx slept 0.14-0.49 times per request and nginx 0.002 (it is
 * always behind); on a VM a sleep and its wake-up are most of a request's
 * cost. A worker whose turns reap fewer (one client, a light load) waits
 * for the first completion as before: no latency is added where it would
 * show. Needs IORING_FEAT_MIN_TIMEOUT (6.12); without it, never. */
#define BATCH_MIN       8
#define BATCH_MAX       32
#define BATCH_WAIT_US   50
#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT  (1U << 15)
#endif
static bool                 batch_waits;
rx_ring_submit_pt           rx_ring_submit_hook;
rx_ring_features_t          rx_ring_features;
bool                        rx_ring_epoll;
unsigned                    rx_ring_turn_cqes;
uint64_t                    rx_ring_epoch;

/* Sets the ring up with the best flags the kernel takes: 0 or -errno. */
static int
ring_setup(unsigned entries)
{
    struct io_uring_params p;
    int                    rc;

    /* Prefer SINGLE_ISSUER|DEFER_TASKRUN: completions are processed only
     * when we wait, on our thread; fall back when the kernel says no. */
    memset(&p, 0, sizeof(p));
#if (RX_HAVE_SINGLE_ISSUER && RX_HAVE_DEFER_TASKRUN)
    p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN
              | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    rc = io_uring_queue_init_params(entries, &ring, &p);
    if (rc == 0) {
        rx_ring_features.single_issuer = true;
        rx_ring_features.defer_taskrun = true;
    } else
#endif
    {
        memset(&p, 0, sizeof(p));
        p.flags = IORING_SETUP_SUBMIT_ALL;
        rc = io_uring_queue_init_params(entries, &ring, &p);
        if (rc == -EINVAL) {
            memset(&p, 0, sizeof(p));
            rc = io_uring_queue_init_params(entries, &ring, &p);
        }
    }
    return rc;
}

/* The ring is ready: what it offers. */
static void
probe_features(rx_log_t *log)
{
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);

    ring_ready = true;
    ring_log = log;
    if (probe) {
        /* multishot variants exist from 5.19 on; the opcode probe cannot see
         * flags, so key them on an opcode of the same release */
        bool new_kernel = io_uring_opcode_supported(probe, IORING_OP_SOCKET);
        rx_ring_features.multishot_accept = new_kernel;
        rx_ring_features.recv_multishot = new_kernel;
        rx_ring_features.buf_ring = new_kernel;
        io_uring_free_probe(probe);
    }
    /* the batch counts pending task work: DEFER_TASKRUN only */
    batch_waits = rx_ring_features.defer_taskrun
                  && (ring.features & IORING_FEAT_MIN_TIMEOUT);
    rx_ring_features.quiet_send = rx_ring_quiet_probe(&ring);
    rx_log_error(RX_LOG_INFO, log, 0, "io_uring: %s, quiet sends %s",
                 rx_ring_features.defer_taskrun ? "DEFER_TASKRUN"
                                                : "without DEFER_TASKRUN",
                 rx_ring_features.quiet_send ? "on" : "off (this kernel does "
                 "not report their short sends)");
}

rx_int_t
rx_ring_init(unsigned entries, rx_log_t *log)
{
    int rc = ring_setup(entries);

    if (rc < 0) {
        rx_log_error(RX_LOG_EMERG, log, -rc, "io_uring_queue_init(%u) failed",
                     entries);
        return RX_ERROR;
    }
    probe_features(log);
    return RX_OK;
}

rx_int_t
rx_ring_start(unsigned entries, bool want_epoll, rx_log_t *log)
{
    int rc;

    if (!want_epoll) {
        rc = ring_setup(entries);
        if (rc == 0) {
            probe_features(log);
            return RX_OK;
        }
        rx_log_error(RX_LOG_NOTICE, log, -rc, "io_uring_setup() failed, the "
                     "worker uses epoll instead; %s, or say \"use epoll;\" "
                     "in events {}", rx_epoll_refusal_hint(-rc));
    }
    rx_ring_epoll = true;
    rx_ring_features = (rx_ring_features_t) { .multishot_accept = true,
        .recv_multishot = true, .buf_ring = true };
    return rx_epoll_init(log);
}

int
rx_ring_probe(const char **hint)
{
    struct io_uring probe_ring;
    int             rc = io_uring_queue_init(4, &probe_ring, 0);

    if (rc == 0) {
        io_uring_queue_exit(&probe_ring);
    }
    *hint = rc ? rx_epoll_refusal_hint(-rc) : "";
    return rc;
}

void
rx_ring_exit(void)
{
    if (rx_ring_epoll) {
        rx_epoll_exit();
        rx_ring_epoll = false;
    }
    if (ring_ready) {
        io_uring_queue_exit(&ring);
        ring_ready = false;
    }
    free(backlog);
    backlog = NULL;
    backlog_n = backlog_size = 0;
}

/*
 * When the submission queue is full it is submitted; the kernel may refuse
 * (-EBUSY: completions must be reaped first; -EAGAIN: no memory for now).
 * Entries prepared meanwhile wait in the backlog, in order, and go into the
 * queue at the next rx_ring_wait(), ahead of anything prepared after them:
 * preparing still never fails, nothing is lost, and nothing spins.
 */

static int
submit(void)
{
    int rc = rx_ring_submit_hook ? rx_ring_submit_hook(&ring)
                                 : io_uring_submit(&ring);

    rx_ring_epoch++;                  /* input may have come (ring.h) */

    if (rc < 0 && ring_log && rx_current_msec - refused_logged >= 1000) {
        refused_logged = rx_current_msec;
        rx_log_error(RX_LOG_ALERT, ring_log, -rc, "io_uring_submit() refused "
                     "the queue: %u operations wait in memory until the kernel "
                     "takes them", backlog_n + 1);
    }
    return rc;
}

static struct io_uring_sqe *
backlog_push(void)
{
    struct io_uring_sqe *sqe;

    if (backlog_n == backlog_size) {
        unsigned size = backlog_size ? backlog_size * 2 : 64;

        sqe = realloc(backlog, size * sizeof(*sqe));
        if (sqe == NULL) {
            /* a worker that can neither submit nor remember cannot go on */
            rx_log_error(RX_LOG_EMERG, ring_log, errno, "realloc() of the "
                         "io_uring backlog failed");
            abort();
        }
        backlog = sqe;
        backlog_size = size;
    }
    sqe = &backlog[backlog_n++];
    memset(sqe, 0, sizeof(*sqe));
    return sqe;
}

/* Moves the backlog into the queue, oldest first, as far as the kernel
 * takes it; true when it is empty. */
static bool
backlog_flush(void)
{
    struct io_uring_sqe *sqe;
    unsigned             done = 0;

    while (done < backlog_n) {
        sqe = io_uring_get_sqe(&ring);
        if (sqe == NULL && submit() >= 0) {
            sqe = io_uring_get_sqe(&ring);
        }
        if (sqe == NULL) {
            break;
        }
        *sqe = backlog[done++];
    }
    memmove(backlog, backlog + done, (backlog_n - done) * sizeof(*backlog));
    backlog_n -= done;
    return backlog_n == 0;
}

/* An entry in the queue itself (flushed once if full), or NULL while the
 * kernel refuses it (ring_int.h). */
struct io_uring_sqe *
rx_ring_sqe(void)
{
    struct io_uring_sqe *sqe = NULL;

    if (backlog_n == 0) {
        sqe = io_uring_get_sqe(&ring);
        if (sqe == NULL && submit() >= 0) {
            sqe = io_uring_get_sqe(&ring);
        }
    }
    return sqe;
}

/* An entry to prepare: in the queue, or in the backlog (ring_int.h). */
struct io_uring_sqe *
rx_ring_get_sqe(void)
{
    struct io_uring_sqe *sqe = rx_ring_sqe();

    return sqe ? sqe : backlog_push();
}

unsigned
rx_ring_backlog(void)
{
    return backlog_n;
}

/* Completions posted and not dispatched yet. */
unsigned
rx_ring_cq_ready(void)
{
    if (rx_ring_epoll) {
        return rx_epoll_cq_ready();     /* no ring was set up */
    }
    return io_uring_cq_ready(&ring);
}

void
rx_ring_read(int fd, void *buf, unsigned len, uint64_t offset, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_READ, fd, ud);
        op->buf = buf;
        op->len = len;
        op->off = (int64_t) offset;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_read(sqe, fd, buf, len, offset);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_write(int fd, const void *buf, unsigned len, uint64_t offset, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_WRITE, fd, ud);
        op->buf = (void *) buf;
        op->len = len;
        op->off = (int64_t) offset;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_write(sqe, fd, buf, len, offset);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_accept(int fd, bool multishot, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_ACCEPT, fd, ud)->multishot = multishot;
        return;
    }
    sqe = rx_ring_get_sqe();

#if (RX_HAVE_MULTISHOT_ACCEPT)
    if (multishot) {
        io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_CLOEXEC);
    } else
#endif
    {
        io_uring_prep_accept(sqe, fd, NULL, NULL, SOCK_CLOEXEC);
    }
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_recv(int fd, void *buf, unsigned len, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_RECV, fd, ud);
        op->buf = buf;
        op->len = len;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_recv(sqe, fd, buf, len, 0);
    io_uring_sqe_set_data64(sqe, ud);
}

/* A receive into a buffer of the group: multishot (armed until cancelled
 * or the kernel ends it), or a single one that leaves nothing armed once
 * it completes. The epoll backend's is always the standing kind. */
void
rx_ring_recv_select(int fd, unsigned short group, bool multishot,
    uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_RECV_MS, fd, ud)->group = group;
        return;
    }
    sqe = rx_ring_get_sqe();

#if (RX_HAVE_RECV_MULTISHOT)
    if (multishot) {
        io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
    } else
#endif
    {
        io_uring_prep_recv(sqe, fd, NULL, 0, 0);
    }
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = group;
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_send(int fd, const void *buf, unsigned len, int flags, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_SEND, fd, ud);
        op->buf = (void *) buf;
        op->len = len;
        op->flags = flags;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_send(sqe, fd, buf, len, flags);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_writev(int fd, const struct iovec *iov, unsigned n, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_WRITEV, fd, ud);
        op->buf = (void *) iov;
        op->len = n;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_writev(sqe, fd, iov, n, 0);      /* a socket: no offset */
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_sendmsg(int fd, const struct msghdr *msg, int flags, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_SENDMSG, fd, ud);
        op->buf = (void *) msg;
        op->flags = flags;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_sendmsg(sqe, fd, msg, (unsigned) flags);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_close(int fd, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_CLOSE, fd, ud);
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_close(sqe, fd);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_close_quiet(int fd)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll || !ring_ready) {
        /* at once: the epoll backend's close would cancel and unregister
         * what has nothing in flight; no ring (any more) */
        (void) close(fd);
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_close(sqe, fd);
    io_uring_sqe_set_data64(sqe, rx_op_pack(RX_OP_NONE, 0, 0));
#ifdef IORING_FEAT_CQE_SKIP
    if (ring.features & IORING_FEAT_CQE_SKIP) {
        sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;  /* a failure still posts one */
    }
#endif
}

void
rx_ring_cancel(uint64_t target_ud, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_CANCEL, -1, ud)->off = (int64_t) target_ud;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_cancel64(sqe, target_ud, 0);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_cancel_fd(int fd, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_CANCEL_FD, fd, ud);
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_connect(int fd, const struct sockaddr *sa, unsigned len, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_CONNECT, fd, ud);
        op->buf = (void *) sa;
        op->len = len;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_connect(sqe, fd, sa, len);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_shutdown(int fd, int how, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_SHUTDOWN, fd, ud)->flags = how;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_shutdown(sqe, fd, how);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_openat(int dfd, const char *path, int flags, unsigned mode, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_OPENAT, dfd, path, ud);
        op->flags = flags;
        op->mode = mode;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_openat(sqe, dfd, path, flags, mode);
    io_uring_sqe_set_data64(sqe, ud);
}

/* openat2(2): how (resolve flags) is read when the SQE is submitted, so it
 * must live until then (the caller's request memory). */
void
rx_ring_openat2(int dfd, const char *path, struct open_how *how, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_OPENAT2, dfd, path, ud);
        op->arg = how;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_openat2(sqe, dfd, path, how);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_statx(int dfd, const char *path, int flags, unsigned mask,
    struct statx *st, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_STATX, dfd, path, ud);
        op->flags = flags;
        op->len = mask;
        op->arg = st;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_statx(sqe, dfd, path, flags, mask, st);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_splice(int fd_in, int64_t off_in, int fd_out, int64_t off_out,
    unsigned len, bool link, bool more, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep(RX_EOP_SPLICE, fd_out, ud);
        op->fd2 = fd_in;
        op->off = off_in;
        op->len = len;
        op->more = more;
        if (link) {
            rx_epoll_link_last();
        }
        return;
    }
    sqe = rx_ring_get_sqe();
    /* SPLICE_F_MORE: more follows, so TCP builds full segments (as
     * MSG_MORE / TCP_CORK do for nginx's sendfile with tcp_nopush) */
    io_uring_prep_splice(sqe, fd_in, off_in, fd_out, off_out, len,
                         more ? SPLICE_F_MORE : 0);
    if (link) {
        sqe->flags |= IOSQE_IO_LINK;
    }
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_poll_add(int fd, unsigned events, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_epoll_prep(RX_EOP_POLL, fd, ud)->len = events;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_poll_add(sqe, fd, events);
    io_uring_sqe_set_data64(sqe, ud);
}

static struct __kernel_timespec
ms_to_ts(rx_msec_t ms)
{
    return (struct __kernel_timespec) { ms / 1000, (ms % 1000) * 1000000 };
}

/* The submit and a batched wait in one io_uring_enter (liburing before 2.8
 * has no call that passes min_wait_usec): what io_uring_submit() would
 * submit, then wait for want completions for at most BATCH_WAIT_US, and
 * for the first one up to timeout_ms (-1: none) if none came by then.
 * Returns as liburing's calls: >= 0, or -errno. */
static int
wait_batched(unsigned want, rx_msec_t timeout_ms)
{
    struct io_uring_getevents_arg arg;
    struct __kernel_timespec      ts;
    unsigned                      tail = ring.sq.sqe_tail;
    int                           rc;

    if (ring.sq.sqe_head != tail) {
        ring.sq.sqe_head = tail;
        io_uring_smp_store_release(ring.sq.ktail, tail);
    }
    memset(&arg, 0, sizeof(arg));
    arg.sigmask_sz = _NSIG / 8;
    arg.pad = BATCH_WAIT_US;          /* min_wait_usec since 6.12 */
    if (timeout_ms >= 0) {
        ts = ms_to_ts(timeout_ms);
        arg.ts = (uint64_t) (uintptr_t) &ts;
    }
    rc = (int) syscall(__NR_io_uring_enter, ring.ring_fd,
                       tail - *ring.sq.khead, want,
                       IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
                       &arg, sizeof(arg));
    return rc < 0 ? -errno : rc;
}

/* Submit, and wait for the first completion up to timeout_ms (-1: none). */
static int
wait_one(rx_msec_t timeout_ms)
{
    struct io_uring_cqe     *cqe;
    struct __kernel_timespec ts;

    if (timeout_ms < 0) {
        return io_uring_submit_and_wait_timeout(&ring, &cqe, 1, NULL, NULL);
    }
    ts = ms_to_ts(timeout_ms);
    return io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, NULL);
}

rx_int_t
rx_ring_wait(rx_msec_t timeout_ms)
{
    int  rc;
    bool refused;

    if (rx_ring_epoll) {
        return rx_epoll_wait(timeout_ms);
    }
    refused = backlog_n && !backlog_flush();

    if (refused && (timeout_ms < 0 || timeout_ms > 1)) {
        timeout_ms = 1;         /* reap what completed, then try again */
    }
    if (batch_waits && rx_ring_turn_cqes >= BATCH_MIN && timeout_ms != 0
        && !refused && io_uring_cq_ready(&ring) == 0) {
        rc = wait_batched(rx_min(rx_ring_turn_cqes, BATCH_MAX), timeout_ms);
        if (rc == -EINVAL) {
            batch_waits = false;      /* refused after all: never again */
            rc = wait_one(timeout_ms);
        }
    } else {
        rc = wait_one(timeout_ms);
    }
    rx_ring_epoch++;
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN
        && rc != -EBUSY) {
        errno = -rc;
        return RX_ERROR;
    }
    if ((rc == -EAGAIN || rc == -EBUSY) && (refused || backlog_n)
        && io_uring_cq_ready(&ring) == 0) {
        /* refused without waiting and nothing to reap: a pause instead of
         * a spin (a 1 ms wait, only while the kernel refuses) */
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
    }
    return RX_OK;
}

rx_uint_t
rx_ring_dispatch(rx_cqe_handler_pt handler, void *data)
{
    struct io_uring_cqe *cqe;
    unsigned             head, n = 0, total = 0;

    if (rx_ring_epoll) {
        return rx_epoll_dispatch(handler, data);
    }
    /* handlers may queue new operations; completions that arrive while we
     * dispatch wait for the next turn (with DEFER_TASKRUN none arrive
     * outside io_uring_enter: the turn reaps what it began with, which
     * the next wait's batch and conn.c's direct send both ask) */
    rx_ring_turn_cqes = io_uring_cq_ready(&ring);
    rx_ring_quiet_mark();
    io_uring_for_each_cqe(&ring, head, cqe) {
        rx_cqe_t c = { cqe->user_data, cqe->res, cqe->flags };
        handler(&c, data);
        n++;
        if (n == 256) {
            io_uring_cq_advance(&ring, n);
            total += n;
            n = 0;
        }
    }
    io_uring_cq_advance(&ring, n);
    return total + n;
}

void
rx_ring_submit(void)
{
    if (rx_ring_epoll) {
        rx_epoll_submit();
    } else if (backlog_flush()) {
        submit();
    }
}

/* The ring for ring_buf.c; NULL before rx_ring_init or after exit. */
struct io_uring *
rx_ring_uring(void)
{
    return ring_ready ? &ring : NULL;
}
