/*
 * epoll_files.c: the epoll backend's thread pool for file operations
 * (read, write, open, statx, rename, unlink, mkdir, link, splice from a
 * file) that would wait for a disk, as nginx's aio threads: what needs
 * none is done on the loop's thread first (epoll_file_try.c). Results
 * come back to the loop through an eventfd in its epoll set.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "core.h"
#include "epoll.h"

/* Few threads: the machine's cores are the workers'; these wait for the
 * disk, they do not compute. */
#define RX_EPOLL_THREADS  4

static pthread_mutex_t  lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t   cond = PTHREAD_COND_INITIALIZER;
static rx_eop_t        *queue_head, *queue_tail;   /* POOLQ, oldest first */
static rx_eop_t        *done_head;                 /* DONE, any order */
static pthread_t        threads[RX_EPOLL_THREADS];
static unsigned         nthreads;
static bool             stopping;
static int              event_fd = -1;

static int32_t
result(long rc)
{
    return rc == -1 ? -errno : (int32_t) rc;
}

static int32_t
run_rw(rx_eop_t *op)
{
    ssize_t n;

    if (op->type == RX_EOP_READ) {
        n = op->off == -1 ? read(op->fd, op->buf, op->len)
                          : pread(op->fd, op->buf, op->len, (off_t) op->off);
    } else {
        n = op->off == -1 ? write(op->fd, op->buf, op->len)
                          : pwrite(op->fd, op->buf, op->len, (off_t) op->off);
    }
    return result(n);
}

int32_t
rx_epoll_file_run(rx_eop_t *op)
{
    loff_t off = (loff_t) op->off;

    switch (op->type) {
    case RX_EOP_READ:
    case RX_EOP_WRITE:
        return run_rw(op);
    case RX_EOP_OPENAT:
        return result(openat(op->fd2, op->buf, op->flags, op->mode));
    case RX_EOP_OPENAT2:
        return result(syscall(SYS_openat2, op->fd2, op->buf, op->arg,
                              sizeof(struct open_how)));
    case RX_EOP_STATX:
        return result(statx(op->fd2, op->buf, op->flags, op->len,
                            (struct statx *) op->arg));
    case RX_EOP_RENAME:
        return result(renameat2(op->fd2, op->buf, op->fd3, op->arg,
                                (unsigned) op->flags));
    case RX_EOP_UNLINK:
        return result(unlinkat(op->fd2, op->buf, op->flags));
    case RX_EOP_MKDIR:
        return result(mkdirat(op->fd2, op->buf, (mode_t) op->mode));
    case RX_EOP_LINK:
        return result(linkat(op->fd2, op->buf, op->fd3, op->arg, op->flags));
    case RX_EOP_SPLICE:
        return result(splice(op->fd2, &off, op->fd, NULL, op->len,
                             op->more ? SPLICE_F_MORE : 0));
    default:
        return -EINVAL;
    }
}

static void *
pool_thread(void *arg)
{
    rx_eop_t *op;
    uint64_t  one = 1;

    (void) arg;
    pthread_mutex_lock(&lock);
    for ( ;; ) {
        while (queue_head == NULL && !stopping) {
            pthread_cond_wait(&cond, &lock);
        }
        if (stopping) {
            break;
        }
        op = queue_head;
        queue_head = op->next;
        if (queue_head == NULL) {
            queue_tail = NULL;
        }
        op->state = RX_EOP_RUN;
        pthread_mutex_unlock(&lock);

        op->res = rx_epoll_file_run(op);

        pthread_mutex_lock(&lock);
        op->state = RX_EOP_DONE;
        op->next = done_head;
        done_head = op;
        /* the loop reads the counter and takes the whole list */
        (void) !write(event_fd, &one, sizeof(one));
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

rx_int_t
rx_epoll_files_init(int epfd, rx_log_t *log)
{
    struct epoll_event ev;
    sigset_t           all, old;
    int                rc;

    event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (event_fd == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "eventfd() failed");
        return RX_ERROR;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = event_fd;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, event_fd, &ev) == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "epoll_ctl(eventfd) failed");
        return RX_ERROR;
    }
    stopping = false;
    /* the threads take no signal: the worker reads its own signalfd */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (nthreads = 0; nthreads < RX_EPOLL_THREADS; nthreads++) {
        rc = pthread_create(&threads[nthreads], NULL, pool_thread, NULL);
        if (rc != 0) {
            rx_log_error(RX_LOG_EMERG, log, rc, "pthread_create() failed");
            break;
        }
        /* top -H and the tests tell them from the loop's thread */
        (void) pthread_setname_np(threads[nthreads], "ringx-files");
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return nthreads ? RX_OK : RX_ERROR;
}

/* Threads finish the operation they run (a disk read) and stop; queued
 * ones are forgotten with the worker. */
void
rx_epoll_files_exit(void)
{
    unsigned i;

    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (i = 0; i < nthreads; i++) {
        pthread_join(threads[i], NULL);
    }
    nthreads = 0;
    queue_head = queue_tail = done_head = NULL;
    if (event_fd != -1) {
        close(event_fd);
        event_fd = -1;
    }
}

int
rx_epoll_files_fd(void)
{
    return event_fd;
}

void
rx_epoll_files_push(rx_eop_t *op)
{
    op->next = NULL;
    pthread_mutex_lock(&lock);
    op->state = RX_EOP_POOLQ;
    if (queue_tail) {
        queue_tail->next = op;
    } else {
        queue_head = op;
    }
    queue_tail = op;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
}

bool
rx_epoll_files_unqueue(rx_eop_t *op)
{
    rx_eop_t **pp, *prev = NULL;
    bool       found = false;

    pthread_mutex_lock(&lock);
    for (pp = &queue_head; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            if (queue_tail == op) {
                queue_tail = prev;
            }
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void
rx_epoll_files_drain(void (*done)(rx_eop_t *op))
{
    rx_eop_t *list, *next;
    uint64_t  n;

    (void) !read(event_fd, &n, sizeof(n));
    pthread_mutex_lock(&lock);
    list = done_head;
    done_head = NULL;
    pthread_mutex_unlock(&lock);
    for ( ; list; list = next) {
        next = list->next;
        done(list);
    }
}
