/*
 * epoll.c: ring.h's completion API over an epoll readiness loop. An
 * operation is started at submit (as io_uring does): a socket operation
 * is tried at once without blocking and, on EAGAIN, waits in its fd's
 * list until epoll (edge-triggered) says the fd is ready; a file operation
 * is done at once when it needs no disk (epoll_file_try.c), else it goes
 * to the thread pool (epoll_files.c). Results are queued as the CQEs
 * io_uring would post (same res, F_MORE, F_BUFFER) and handed out by
 * rx_epoll_dispatch.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "core.h"
#include "slab.h"
#include "epoll.h"

#define HASH_SIZE  4096          /* user_data -> operations, for cancel */

enum { DIR_IN = 0, DIR_OUT = 1 };

/* An fd's waiting operations, oldest first, by direction. registered:
 * known to be in the epoll set. Its owner (a connection's slot and
 * generation, from user_data) keeps it registered while nothing waits:
 * a connection's fd is its own for its whole life, so the next operation
 * of the same owner needs no epoll_ctl; an fd closed behind our back (the
 * kernel drops its registration) and reused by another connection has
 * another owner. Without an owner (accept, DNS, signals) the mark is
 * reset whenever both lists empty. */
typedef struct {
    rx_eop_t *head[2];
    rx_eop_t *tail[2];
    uint64_t  owner;
    bool      registered;
} efd_t;


static int              epfd = -1;
static rx_log_t        *ep_log;
static efd_t           *fds;
static int              nfds;
static rx_eop_t        *hash[HASH_SIZE];
static rx_eop_t        *sq_head, *sq_tail, *last_prepped, *free_ops;
/* operations live as long as the worker (reused from free_ops): a slab
 * keeps them out of the heap, whose pages they would pin between the
 * freed buffers of requests (core/slab.h) */
static rx_slab_t        op_slab;
static rx_cqe_t        *cq;
static unsigned         ncq, cq_size;
static rx_eop_t        *linked;       /* operations in state LINKED */
static struct epoll_event kept[256];    /* readiness held for a turn */
static int                nkept;

static void start(rx_eop_t *op);
static void finish(rx_eop_t *op, int32_t res);
static void forget(int fd);

/* --- completions --------------------------------------------------------- */

void
rx_epoll_post(uint64_t ud, int32_t res, uint32_t flags)
{
    if (ncq == cq_size) {
        unsigned  size = cq_size ? cq_size * 2 : 256;
        rx_cqe_t *n = realloc(cq, size * sizeof(*cq));

        if (n == NULL) {
            /* a lost completion would hang a connection forever */
            rx_log_error(RX_LOG_EMERG, ep_log, errno, "realloc() of the "
                         "epoll completion queue failed");
            abort();
        }
        cq = n;
        cq_size = size;
    }
    cq[ncq].user_data = ud;
    cq[ncq].res = res;
    cq[ncq].flags = flags;
    ncq++;
}

static unsigned
hash_of(uint64_t ud)
{
    return (unsigned) ((ud ^ (ud >> 32) ^ (ud >> 56)) * 2654435761u)
           % HASH_SIZE;
}

static void
hash_del(rx_eop_t *op)
{
    rx_eop_t **pp;

    for (pp = &hash[hash_of(op->ud)]; *pp; pp = &(*pp)->hnext) {
        if (*pp == op) {
            *pp = op->hnext;
            return;
        }
    }
}

static void
sq_push(rx_eop_t *op)
{
    op->state = RX_EOP_SQ;
    op->next = NULL;
    if (sq_tail) {
        sq_tail->next = op;
    } else {
        sq_head = op;
    }
    sq_tail = op;
}

/* Takes op off the list of LINKED operations (a few: splices). */
static void
linked_del(rx_eop_t *op)
{
    rx_eop_t **pp;

    for (pp = &linked; *pp; pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    }
    op->pred = NULL;
}

/* The last completion of op: its CQE, then its linked successor starts
 * (when op moved its whole length) or is cancelled. */
static void
finish(rx_eop_t *op, int32_t res)
{
    rx_eop_t *link = op->link;

    rx_epoll_post(op->ud, res, 0);
    if (op->type == RX_EOP_ACCEPT && !op->multishot && res >= 0) {
        /* one-shot accepts on a shared socket take turns, as io_uring's
         * do: our registration goes, and the next accept's comes after
         * the other workers' in the socket's wait queue */
        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, op->fd, NULL);
        forget(op->fd);
    }
    hash_del(op);
    op->next = free_ops;
    free_ops = op;
    if (link) {
        linked_del(link);
        if (res >= 0 && (unsigned) res == op->len) {
            sq_push(link);          /* started by the next submit */
        } else {
            finish(link, -ECANCELED);
        }
    }
}

/* --- operations ---------------------------------------------------------- */

rx_eop_t *
rx_epoll_prep(rx_eop_type_e type, int fd, uint64_t ud)
{
    rx_eop_t *op = free_ops;
    unsigned  h = hash_of(ud);

    if (op) {
        free_ops = op->next;
    } else {
        op = rx_slab_alloc(&op_slab, ep_log);
        if (op == NULL) {
            rx_log_error(RX_LOG_EMERG, ep_log, errno, "allocation of an epoll "
                         "operation failed");
            abort();
        }
    }
    memset(op, 0, sizeof(*op));
    op->type = (uint8_t) type;
    op->state = RX_EOP_SQ;
    op->fd = fd;
    op->fd2 = op->fd3 = -1;
    op->off = -1;
    op->ud = ud;
    op->hnext = hash[h];
    hash[h] = op;
    sq_push(op);
    last_prepped = op;
    return op;
}

rx_eop_t *
rx_epoll_prep_path(rx_eop_type_e type, int dfd, const char *path,
    uint64_t ud)
{
    rx_eop_t *op = rx_epoll_prep(type, -1, ud);

    op->fd2 = dfd;
    op->buf = (void *) path;
    return op;
}

void
rx_epoll_link_last(void)
{
    if (last_prepped) {
        last_prepped->multishot = false;
        last_prepped->connecting = false;
        last_prepped->link = last_prepped;   /* marks: the next links here */
    }
}

static efd_t *
efd(int fd)
{
    if (fd >= nfds) {
        int    n = nfds ? nfds : 1024;
        efd_t *t;

        while (n <= fd) {
            n *= 2;
        }
        t = realloc(fds, (size_t) n * sizeof(*t));
        if (t == NULL) {
            rx_log_error(RX_LOG_EMERG, ep_log, errno, "realloc() of the "
                         "epoll fd table failed");
            abort();
        }
        memset(t + nfds, 0, (size_t) (n - nfds) * sizeof(*t));
        fds = t;
        nfds = n;
    }
    return &fds[fd];
}

static int
direction(const rx_eop_t *op)
{
    switch (op->type) {
    case RX_EOP_RECV:
    case RX_EOP_RECV_MS:
    case RX_EOP_ACCEPT:
    case RX_EOP_READ:
        return DIR_IN;
    case RX_EOP_POLL:
        return (op->len & POLLOUT) ? DIR_OUT : DIR_IN;
    default:
        return DIR_OUT;
    }
}

static void
set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl != -1 && !(fl & O_NONBLOCK)) {
        (void) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }
}

/* Tries every operation waiting on fd in one direction, oldest first; a
 * data operation that cannot go on keeps those after it waiting (sends
 * stay in order). ev: the epoll events, 0 when nothing is known. */
static void
run_list(int fd, int dir, uint32_t ev)
{
    rx_eop_t **pp = &efd(fd)->head[dir], *op, *prev = NULL;
    bool       blocked = false;
    int32_t    res;

    while ((op = *pp) != NULL) {
        if (blocked && op->type != RX_EOP_POLL) {
            prev = op;
            pp = &op->next;
            continue;
        }
        if (!rx_epoll_try(op, ev, &res)) {
            blocked = blocked || op->type != RX_EOP_POLL;
            prev = op;
            pp = &op->next;
            continue;
        }
        *pp = op->next;
        if (fds[fd].tail[dir] == op) {
            fds[fd].tail[dir] = prev;
        }
        finish(op, res);
        pp = prev ? &prev->next : &fds[fd].head[dir];
    }
    if (fds[fd].head[DIR_IN] == NULL && fds[fd].head[DIR_OUT] == NULL
        && fds[fd].owner == 0) {
        fds[fd].registered = false;
    }
}

/* Who owns the fd op waits on: a connection's slot and generation (its
 * kind and tag masked: a request's tag is not the fd's owner) for the
 * kinds that wait only on the connection's own socket, or 0 (a READ may
 * wait on a pipe the connection opened, closed and opened again). */
static uint64_t
owner_of(const rx_eop_t *op)
{
    switch (rx_op_kind(op->ud)) {
    case RX_OP_RECV: case RX_OP_SEND: case RX_OP_CONNECT: case RX_OP_SPLICE:
    case RX_OP_POLL:
        return (op->ud & 0x00ffffff00ffffffull) | (1ull << 63);
    default:
        return 0;
    }
}

static void
wait_on(rx_eop_t *op)
{
    int                dir = direction(op), fd = op->fd;
    efd_t             *e = efd(fd);
    uint64_t           owner;
    bool               shared_accept;
    struct epoll_event ev;

    /* taken before the first try, which may finish op */
    owner = owner_of(op);
    shared_accept = op->type == RX_EOP_ACCEPT && !op->multishot;
    op->state = RX_EOP_WAIT;
    op->next = NULL;
    if (e->tail[dir]) {
        e->tail[dir]->next = op;
    } else {
        e->head[dir] = op;
    }
    e->tail[dir] = op;
    run_list(fd, dir, 0);
    e = &fds[fd];
    if ((e->head[0] || e->head[1])
        && (!e->registered || e->owner != owner)) {
        /* edge-triggered, both ways, once: what is waiting decides what
         * an event means; EEXIST: it already is in the set */
        memset(&ev, 0, sizeof(ev));
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
        if (shared_accept) {
            /* a socket the workers share: one of them is woken, the one
             * registered longest (see finish) */
            ev.events = EPOLLIN | EPOLLET | EPOLLEXCLUSIVE;
        }
        ev.data.fd = fd;
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == -1
            && errno != EEXIST) {
            int err = errno;

            /* nothing will ever wake these: fail them now */
            while ((op = fds[fd].head[dir]) != NULL) {
                fds[fd].head[dir] = op->next;
                if (fds[fd].head[dir] == NULL) {
                    fds[fd].tail[dir] = NULL;
                }
                finish(op, -err);
            }
            return;
        }
        e->registered = true;
        e->owner = owner;
    }
}

/* Removes op from its fd's list (it is cancelled). */
static void
unwait(rx_eop_t *op)
{
    int        dir = direction(op);
    efd_t     *e = efd(op->fd);
    rx_eop_t **pp, *prev = NULL;

    for (pp = &e->head[dir]; *pp; prev = *pp, pp = &(*pp)->next) {
        if (*pp == op) {
            *pp = op->next;
            if (e->tail[dir] == op) {
                e->tail[dir] = prev;
            }
            break;
        }
    }
    if (e->head[DIR_IN] == NULL && e->head[DIR_OUT] == NULL
        && e->owner == 0) {
        e->registered = false;
    }
}

/* The fd left the epoll set (or was closed) on our side. */
static void
forget(int fd)
{
    if (fd >= 0 && fd < nfds) {
        fds[fd].registered = false;
        fds[fd].owner = 0;
    }
}

/* --- inline operations, cancel ------------------------------------------- */

/* Cancels one operation that was started: the cancel's own result. */
static int32_t
cancel_op(rx_eop_t *op)
{
    switch (op->state) {
    case RX_EOP_WAIT:
        unwait(op);
        if (op->type == RX_EOP_ACCEPT) {
            /* a listening socket is shared with other processes: its
             * registration would outlive our close() */
            (void) epoll_ctl(epfd, EPOLL_CTL_DEL, op->fd, NULL);
            forget(op->fd);
        }
        finish(op, -ECANCELED);
        return 0;
    case RX_EOP_LINKED:
        if (op->pred) {
            op->pred->link = NULL;
        }
        linked_del(op);
        finish(op, -ECANCELED);
        return 0;
    case RX_EOP_POOLQ:
        if (rx_epoll_files_unqueue(op)) {
            finish(op, -ECANCELED);
            return 0;
        }
        return -EALREADY;
    default:
        return -EALREADY;
    }
}

static int32_t
cancel_ud(const rx_eop_t *self, uint64_t target)
{
    rx_eop_t *op;

    for (op = hash[hash_of(target)]; op; op = op->hnext) {
        if (op != self && op->ud == target && op->state != RX_EOP_SQ) {
            return cancel_op(op);
        }
    }
    return -ENOENT;
}

/* Every operation waiting on fd (or linked to wait on it): how many. */
static int32_t
cancel_fd(int fd)
{
    rx_eop_t *op;
    int32_t   n = 0;
    int       dir;

    for (dir = 0; dir < 2 && fd < nfds; dir++) {
        while ((op = fds[fd].head[dir]) != NULL) {
            cancel_op(op);
            n++;
        }
    }
again:
    for (op = linked; op; op = op->next) {
        if (op->fd == fd) {
            cancel_op(op);
            n++;
            goto again;
        }
    }
    return n;
}

static int32_t
run_inline(rx_eop_t *op)
{
    int32_t n;

    switch (op->type) {
    case RX_EOP_SHUTDOWN:
        return shutdown(op->fd, op->flags) == -1 ? -errno : 0;
    case RX_EOP_CLOSE:
        cancel_fd(op->fd);
        (void) epoll_ctl(epfd, EPOLL_CTL_DEL, op->fd, NULL);
        forget(op->fd);
        return close(op->fd) == -1 ? -errno : 0;
    case RX_EOP_CANCEL:
        return cancel_ud(op, (uint64_t) op->off);
    default:                                    /* RX_EOP_CANCEL_FD */
        n = cancel_fd(op->fd);
        return n ? n : -ENOENT;
    }
}

static void
start(rx_eop_t *op)
{
    int32_t res = 0;

    switch (op->type) {
    case RX_EOP_CANCEL:
    case RX_EOP_CANCEL_FD:
    case RX_EOP_CLOSE:
    case RX_EOP_SHUTDOWN:
        finish(op, run_inline(op));
        return;
    default:
        break;
    }
    switch (rx_epoll_file_try(op, &res)) {
    case RX_EFILE_DONE:
        finish(op, res);        /* its CQE goes out at the next dispatch */
        return;
    case RX_EFILE_POOL:
        rx_epoll_files_push(op);
        return;
    default:
        break;
    }
    if (op->type == RX_EOP_CONNECT || op->type == RX_EOP_ACCEPT
        || op->type == RX_EOP_READ) {
        set_nonblocking(op->fd);
    }
    wait_on(op);
}

/* Starts what was prepared, in order; a linked operation waits for the
 * one before it. */
void
rx_epoll_submit(void)
{
    rx_eop_t *op, *next;

    op = sq_head;
    sq_head = sq_tail = NULL;
    last_prepped = NULL;
    for ( ; op; op = next) {
        next = op->next;
        if (op->link == op) {
            /* the link is made before the head starts: it may finish at
             * once */
            op->link = next;
            if (next) {
                rx_eop_t *l = next;

                next = next->next;
                l->state = RX_EOP_LINKED;
                l->link = NULL;
                l->pred = op;
                l->next = linked;
                linked = l;
            }
        }
        start(op);
    }
}

static void
pool_done(rx_eop_t *op)
{
    finish(op, op->res);
}

/* Readiness epoll reported: what waits on each fd is tried. */
static void
run_events(const struct epoll_event *events, int n)
{
    int i, fd;

    for (i = 0; i < n; i++) {
        fd = events[i].data.fd;
        if (fd == rx_epoll_files_fd()) {
            rx_epoll_files_drain(pool_done);
            continue;
        }
        if (fd >= nfds) {
            continue;
        }
        if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) {
            run_list(fd, DIR_IN, events[i].events);
        }
        if (events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
            run_list(fd, DIR_OUT, events[i].events);
        }
    }
}

/* Starts what was prepared and waits for readiness. When the start itself
 * completed operations, their CQEs go out first and the readiness seen now
 * waits for the next turn (after that turn's submit), as io_uring's
 * submit-and-wait returns with the completions of what it submitted: a
 * peer woken by our send may run on this CPU at once and answer before
 * the send's completion is handled; its answer handed out in the same
 * batch made the request look still in flight when the response ended
 * (a pooled FastCGI connection was dropped, nothing logged: the empty
 * STDIN that ends a request goes in a send of its own, started by the
 * completion of the one before it). Events kept a turn may name an fd
 * closed (and reused) meanwhile: they only make its operations try again. */
rx_int_t
rx_epoll_wait(rx_msec_t timeout_ms)
{
    int n;

    rx_epoll_submit();
    if (nkept) {
        run_events(kept, nkept);
        nkept = 0;
    }
    n = epoll_wait(epfd, kept, (int) rx_nelems(kept),
                   ncq ? 0 : timeout_ms < 0 ? -1 : (int) timeout_ms);
    if (n == -1) {
        return errno == EINTR ? RX_OK : RX_ERROR;
    }
    if (ncq) {
        nkept = n;
    } else {
        run_events(kept, n);
    }
    return RX_OK;
}

unsigned
rx_epoll_cq_ready(void)
{
    return ncq;
}

rx_uint_t
rx_epoll_dispatch(rx_cqe_handler_pt handler, void *data)
{
    unsigned i, n = ncq;

    /* handlers only prepare (operations start at the next submit), so
     * the queue does not grow under us; copies all the same */
    for (i = 0; i < n; i++) {
        rx_cqe_t c = cq[i];
        handler(&c, data);
    }
    if (ncq > n) {
        /* not with nothing left: cq is NULL before the first post */
        memmove(cq, cq + n, (ncq - n) * sizeof(*cq));
    }
    ncq -= n;
    return n;
}

rx_int_t
rx_epoll_init(rx_log_t *log)
{
    ep_log = log;
    rx_slab_init(&op_slab, sizeof(rx_eop_t));
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd == -1) {
        rx_log_error(RX_LOG_EMERG, log, errno, "epoll_create1() failed");
        return RX_ERROR;
    }
    rx_epoll_file_try_init(log);
    return rx_epoll_files_init(epfd, log);
}

void
rx_epoll_exit(void)
{
    rx_eop_t *op;
    unsigned  i;

    rx_epoll_files_exit();
    if (epfd != -1) {
        close(epfd);
        epfd = -1;
    }
    /* operations still waiting are in the hash; the pool's are too */
    for (i = 0; i < HASH_SIZE; i++) {
        while ((op = hash[i]) != NULL) {
            hash[i] = op->hnext;
            rx_slab_free(op);
        }
    }
    while ((op = free_ops) != NULL) {
        free_ops = op->next;
        rx_slab_free(op);
    }
    rx_slab_release(&op_slab);
    free(fds);
    free(cq);
    fds = NULL;
    cq = NULL;
    nfds = 0;
    ncq = cq_size = 0;
    nkept = 0;
    linked = NULL;
    sq_head = sq_tail = last_prepped = NULL;
}

/* What to do about a refused ring, for the log: err is io_uring_setup's. */
const char *
rx_epoll_refusal_hint(int err)
{
    FILE *f;
    int   disabled = 0;

    f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
    if (f) {
        if (fscanf(f, "%d", &disabled) != 1) {
            disabled = 0;
        }
        fclose(f);
    }
    if (disabled == 2 || (disabled == 1 && err == EPERM)) {
        return "the sysctl kernel.io_uring_disabled is set: set it to 0 to "
               "allow io_uring";
    }
    switch (err) {
    case EPERM:
    case EACCES:
        return "a seccomp profile refuses io_uring (Docker's, containerd's "
               "and Kubernetes' RuntimeDefault do): allow the io_uring_setup, "
               "io_uring_enter and io_uring_register system calls in it, "
               "and check the sysctl kernel.io_uring_disabled is 0";
    case ENOSYS:
        return "the kernel has no io_uring (or a seccomp profile hides it): "
               "a kernel built with CONFIG_IO_URING";
    case ENOMEM:
        return "the ring's memory is locked: raise RLIMIT_MEMLOCK "
               "(ulimit -l, LimitMEMLOCK=) or use a kernel from 5.12 on";
    default:
        return "see io_uring_setup(2)";
    }
}
