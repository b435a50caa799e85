/*
 * epoll.h: the epoll backend of ring.h's completion API (epoll.c), for
 * workers where io_uring is refused or `use epoll;` asks for it, and its
 * thread pool of file operations (epoll_files.c). Only ring.c calls the
 * rx_epoll_* operations; the types below are private to epoll*.c
 * (epoll_try.c: the attempts on sockets; epoll_file_try.c: the file
 * operations done at once when they need no disk).
 */
#ifndef RX_EPOLL_H
#define RX_EPOLL_H

#include "ring.h"

/* An operation as ring.h's callers submitted it. */
typedef enum {
    RX_EOP_READ = 1, RX_EOP_WRITE, RX_EOP_ACCEPT, RX_EOP_RECV, RX_EOP_RECV_MS,
    RX_EOP_SEND, RX_EOP_SENDMSG, RX_EOP_WRITEV, RX_EOP_CLOSE, RX_EOP_CANCEL,
    RX_EOP_CANCEL_FD, RX_EOP_CONNECT, RX_EOP_SHUTDOWN, RX_EOP_OPENAT,
    RX_EOP_OPENAT2, RX_EOP_STATX, RX_EOP_RENAME, RX_EOP_UNLINK, RX_EOP_MKDIR,
    RX_EOP_LINK, RX_EOP_SPLICE, RX_EOP_POLL
} rx_eop_type_e;

/* Where an operation is; every change is made by the loop's thread except
 * POOLQ -> RUN -> DONE, which the pool's threads make under its mutex. */
typedef enum {
    RX_EOP_SQ = 1,      /* prepared, started at the next submit */
    RX_EOP_LINKED,      /* waits for the operation linked before it */
    RX_EOP_WAIT,        /* in its fd's list, waiting for readiness */
    RX_EOP_POOLQ,       /* queued for the file thread pool */
    RX_EOP_RUN,         /* a pool thread runs it */
    RX_EOP_DONE         /* the pool finished it; res holds the result */
} rx_eop_state_e;

typedef struct rx_eop_s rx_eop_t;

struct rx_eop_s {
    rx_eop_t     *next;     /* the list the state implies (LINKED: all
                               of them, for cancel by fd) */
    rx_eop_t     *hnext;    /* the user_data hash chain (cancel) */
    rx_eop_t     *link;     /* started once this one moved all of len */
    rx_eop_t     *pred;     /* LINKED: the operation it waits for */
    uint64_t      ud;       /* the caller's user_data */
    int64_t       off;      /* file offset (splice: fd_in's), -1: none */
    size_t        done;     /* bytes sent so far (sends finish whole) */
    int32_t       res;      /* the pool's result */
    int           fd;       /* the fd waited on (splice: fd_out), or -1 */
    int           fd2;      /* dfd, olddfd, splice fd_in */
    int           fd3;      /* newdfd */
    int           flags;    /* send/open/statx/at flags */
    unsigned      len;      /* bytes, iov count, statx mask, mode */
    unsigned      mode;     /* creation mode */
    unsigned short group;   /* provided-buffer group */
    uint8_t       type;     /* rx_eop_type_e */
    uint8_t       state;    /* rx_eop_state_e */
    bool          multishot;
    bool          more;     /* splice: SPLICE_F_MORE */
    bool          connecting;
    void         *buf;      /* buffer, iovecs, msghdr, sockaddr, path */
    const void   *arg;      /* newpath, open_how, struct statx */
};

rx_int_t rx_epoll_init(rx_log_t *log);
/* What would allow io_uring, for a log line: err is io_uring_setup's. */
const char *rx_epoll_refusal_hint(int err);
void rx_epoll_exit(void);
/* Queues a prepared operation (op.h's user_data in ud); never fails. */
rx_eop_t *rx_epoll_prep(rx_eop_type_e type, int fd, uint64_t ud);
/* The same for an operation on a path at dfd. */
rx_eop_t *rx_epoll_prep_path(rx_eop_type_e type, int dfd, const char *path,
    uint64_t ud);
/* The next prepared operation starts only when the last one moved its
 * whole length (IOSQE_IO_LINK). */
void rx_epoll_link_last(void);
void rx_epoll_submit(void);
rx_int_t rx_epoll_wait(rx_msec_t timeout_ms);
rx_uint_t rx_epoll_dispatch(rx_cqe_handler_pt handler, void *data);
/* Completions queued and not dispatched yet. */
unsigned rx_epoll_cq_ready(void);
/* Queues a CQE for the next dispatch. */
void rx_epoll_post(uint64_t ud, int32_t res, uint32_t flags);
/* Tries a socket operation without blocking (epoll_try.c): true when it
 * completed, its last result in res (multishot ones post the others);
 * ev: the epoll events that woke it, 0 at submit. */
bool rx_epoll_try(rx_eop_t *op, uint32_t ev, int32_t *res);

/* Provided buffers (a stack of free buffer ids per group). */
typedef struct rx_epoll_bufs_s rx_epoll_bufs_t;
struct rx_epoll_bufs_s {
    char           *bufs;      /* count buffers of size bytes */
    unsigned short *free;      /* a stack of free buffer ids */
    unsigned        nfree, count, size;
    unsigned short  group;
};
/* The group's buffers, or NULL. */
rx_epoll_bufs_t *rx_epoll_group(unsigned short group);
rx_epoll_bufs_t *rx_epoll_bufs_create(unsigned short group, unsigned count,
    unsigned size, rx_log_t *log);
void *rx_epoll_bufs_addr(rx_epoll_bufs_t *b, unsigned short bid);
void rx_epoll_bufs_recycle(rx_epoll_bufs_t *b, unsigned short bid);
void rx_epoll_bufs_destroy(rx_epoll_bufs_t *b);
/* MADV_DONTNEED on the buffers when all are free (ring.h's
 * rx_buf_ring_drop_pages); false when one holds data. */
bool rx_epoll_bufs_drop_pages(rx_epoll_bufs_t *b);

/* The file thread pool (epoll_files.c): results come back through an
 * eventfd in the epoll set. */
rx_int_t rx_epoll_files_init(int epfd, rx_log_t *log);
void rx_epoll_files_exit(void);
int rx_epoll_files_fd(void);
void rx_epoll_files_push(rx_eop_t *op);
/* True when op was taken off the queue before a thread started it. */
bool rx_epoll_files_unqueue(rx_eop_t *op);
/* Calls done for every finished operation (the eventfd was readable). */
void rx_epoll_files_drain(void (*done)(rx_eop_t *op));
/* Runs a file operation on the calling thread: a result or -errno. */
int32_t rx_epoll_file_run(rx_eop_t *op);

/* File operations tried on the loop's thread first (epoll_file_try.c). */
typedef enum {
    RX_EFILE_NOT = 0,   /* not a file's operation: the socket path */
    RX_EFILE_DONE,      /* done without waiting for a disk: res set */
    RX_EFILE_POOL       /* it would wait (or may): the pool's */
} rx_efile_e;

/* Probes what the kernel offers (openat2's RESOLVE_CACHED). */
void rx_epoll_file_try_init(rx_log_t *log);
rx_efile_e rx_epoll_file_try(rx_eop_t *op, int32_t *res);

#endif /* RX_EPOLL_H */
