/*
 * test_conn_quiet.c: quiet sends (event/ring_quiet.c, event/conn_quiet.c)
 * on a real ring and real socket pairs, through the worker's own
 * connection table, dispatch and sweep. A send the socket takes whole
 * posts nothing and its protocol hears on_sent(length) once, after the
 * enter that sent it, and before the answer to it; a short send, a full
 * socket and a closed peer each come back once, with the bytes that went
 * (exactly those at the peer), 0, or -errno, and turn quiet sends off for
 * that connection; a connection closed before the kernel took its send
 * sends nothing and is freed; a queue the kernel refuses, and a loop turn
 * that is not light, refuse them.
 */
#include <liburing.h>
#include <sys/socket.h>
#include "core.h"
#include "clock.h"
#include "cycle.h"
#include "event.h"
#include "ring.h"
#include "tap.h"

static rx_log_t   test_log = { .level = RX_LOG_EMERG, .file = &rx_stderr_file };
static rx_cycle_t test_cycle;

/* what the protocol heard, in order */
#define EVENTS 64
static struct { char what; ssize_t res; } events[EVENTS];
static int nevents, quiet_cqes;

static void
record(char what, ssize_t res)
{
    if (nevents < EVENTS) {
        events[nevents].what = what;
        events[nevents].res = res;
        nevents++;
    }
}

static void
on_read(rx_conn_t *c, const char *data, ssize_t len)
{
    (void) c;
    (void) data;
    record('r', len);
}

static void
on_sent(rx_conn_t *c, ssize_t res)
{
    (void) c;
    record('s', res);
}

static void
on_free(rx_conn_t *c)
{
    (void) c;
    record('f', 0);
}

static const rx_conn_ops_t ops = { on_read, on_sent, on_free, NULL };

static void
dispatch(const rx_cqe_t *cqe, void *data)
{
    if (rx_op_kind(cqe->user_data) == RX_OP_SEND_QUIET) {
        quiet_cqes++;
    }
    if (rx_op_kind(cqe->user_data) != RX_OP_NONE) {
        rx_conn_handle_cqe(data, cqe);
    }
}

/* One loop turn, as worker_loop.c makes it. */
static void
turn(rx_msec_t timeout)
{
    rx_worker_t *w = &rx_worker;

    rx_ring_wait(timeout);
    rx_ring_dispatch(dispatch, w);
    rx_conn_quiet_sweep(w);
    rx_conn_free_closed(w);
}

static rx_conn_t *
conn_pair(int *peer, int sndbuf)
{
    int        sv[2];
    rx_conn_t *c;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0) {
        return NULL;
    }
    if (sndbuf) {
        (void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf,
                          sizeof(sndbuf));
    }
    c = rx_conn_get(&rx_worker, sv[0], NULL);
    c->ops = &ops;
    *peer = sv[1];
    nevents = 0;
    quiet_cqes = 0;
    return c;
}

static ssize_t
drain(int fd, char *into, size_t size)
{
    ssize_t n, total = 0;
    char    scratch[16384];

    for ( ;; ) {
        n = recv(fd, into ? into + total : scratch,
                 into ? size - (size_t) total : sizeof(scratch), MSG_DONTWAIT);
        if (n <= 0) {
            return total;
        }
        total += n;
    }
}

static char          big[256 * 1024], got[256 * 1024];
static struct iovec  iov[16];
static struct msghdr msg;

static void
set_msg(size_t len)
{
    size_t i, each = len / 16;

    for (i = 0; i < 16; i++) {
        iov[i].iov_base = big + i * each;
        iov[i].iov_len = i == 15 ? len - 15 * each : each;
    }
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov;
    msg.msg_iovlen = 16;
}

static void
whole(void)
{
    int        peer;
    rx_conn_t *c = conn_pair(&peer, 0);

    set_msg(1000);
    ok(rx_conn_send_quiet(c, &msg), "whole: a quiet send starts");
    ok(c->sending, "whole: the connection is sending");
    is_int(nevents, 0, "whole: on_sent not from inside the call");
    ok(!rx_conn_send_quiet(c, &msg), "whole: no second send while one is out");
    turn(0);
    is_int(nevents, 1, "whole: one event after the turn");
    ok(nevents == 1 && events[0].what == 's' && events[0].res == 1000,
       "whole: on_sent(1000)");
    is_int(quiet_cqes, 0, "whole: no completion came");
    ok(!c->sending && c->inflight == 0, "whole: nothing is out any more");
    is_int(drain(peer, got, sizeof(got)), 1000, "whole: 1000 bytes at the peer");
    ok(memcmp(got, big, 1000) == 0, "whole: the same bytes");

    /* an answer that comes in the enter that sent: on_sent first */
    c->transport->start_read(c);
    turn(0);
    nevents = 0;
    set_msg(100);
    ok(rx_conn_send_quiet(c, &msg), "answer: a second quiet send starts");
    (void) send(peer, "pong", 4, 0);
    turn(100);
    ok(nevents >= 2 && events[0].what == 's' && events[0].res == 100
       && events[1].what == 'r' && events[1].res == 4,
       "answer: on_sent(100), then on_read(4)");
    rx_conn_close(c);
    turn(0);
    close(peer);
}

static void
short_send(void)
{
    int        peer;
    rx_conn_t *c = conn_pair(&peer, 4096);
    ssize_t    went;

    set_msg(sizeof(big));
    ok(rx_conn_send_quiet(c, &msg), "short: a quiet send of 256 KiB starts");
    turn(0);
    is_int(quiet_cqes, 1, "short: one completion came");
    went = nevents == 1 && events[0].what == 's' ? events[0].res : -1;
    ok(went > 0 && went < (ssize_t) sizeof(big),
       "short: on_sent with the bytes that went (%zd)", went);
    ok(c->quiet_off, "short: quiet sends are off for this connection");
    ok(!rx_conn_send_quiet(c, &msg), "short: ... so the next one is refused");
    is_int(drain(peer, got, sizeof(got)), went, "short: exactly those bytes "
           "at the peer");
    ok(went > 0 && memcmp(got, big, (size_t) went) == 0, "short: the same");
    rx_conn_close(c);
    turn(0);
    close(peer);
}

static void
full(void)
{
    int        peer;
    rx_conn_t *c = conn_pair(&peer, 4096);

    while (send(c->fd, big, sizeof(big), MSG_DONTWAIT) > 0) {
        /* fill it */
    }
    set_msg(160);
    ok(rx_conn_send_quiet(c, &msg), "full: a quiet send into a full socket");
    turn(0);
    ok(nevents == 1 && events[0].what == 's' && events[0].res == 0,
       "full: on_sent(0): nothing went, at once");
    ok(c->quiet_off, "full: quiet sends are off for this connection");
    rx_conn_close(c);
    turn(0);
    close(peer);
}

static void
closed_peer(void)
{
    int        peer;
    rx_conn_t *c = conn_pair(&peer, 0);

    close(peer);
    set_msg(160);
    ok(rx_conn_send_quiet(c, &msg), "closed peer: a quiet send starts");
    turn(0);
    ok(nevents == 1 && events[0].what == 's' && events[0].res == -EPIPE,
       "closed peer: on_sent(-EPIPE)");
    rx_conn_close(c);
    turn(0);
}

static void
closed_before(void)
{
    int        peer;
    rx_conn_t *c = conn_pair(&peer, 0);
    uint32_t   slot = c->slot;

    set_msg(1000);
    ok(rx_conn_send_quiet(c, &msg), "closed before: a quiet send starts");
    rx_conn_close(c);
    memset(big, 'x', 1000);          /* the protocol's bytes, freed: reused */
    turn(0);
    turn(10);
    ok(nevents == 1 && events[0].what == 'f', "closed before: on_free, and "
       "no on_sent");
    is_int(quiet_cqes, 0, "closed before: no completion");
    ok(rx_worker.conns[slot].state == RX_CONN_FREE, "closed before: the slot "
       "is free (nothing left in flight)");
    is_int(drain(peer, got, sizeof(got)), 0, "closed before: nothing went");
    close(peer);
    memset(big, 0, 1000);
}

static int
refusing_submit(void *ring)
{
    (void) ring;
    return -EBUSY;
}

static void
refused(void)
{
    int        peer, i;
    rx_conn_t *c = conn_pair(&peer, 0);

    rx_ring_submit_hook = refusing_submit;
    for (i = 0; i < 80; i++) {          /* more than the queue holds */
        rx_ring_cancel(0xdead0000ULL + (uint64_t) i, 0);
    }
    ok(rx_ring_backlog() > 0, "refused: entries wait in the backlog");
    set_msg(100);
    ok(!rx_conn_send_quiet(c, &msg), "refused: no quiet send then");
    ok(!c->sending, "refused: the connection is free to send otherwise");
    rx_ring_submit_hook = NULL;
    for (i = 0; i < 20 && rx_ring_backlog() > 0; i++) {
        turn(0);
    }
    turn(0);                            /* a light one again */
    ok(rx_conn_send_quiet(c, &msg), "refused: quiet sends again once the "
       "kernel takes the queue");
    turn(0);
    is_int(drain(peer, NULL, 0), 100, "refused: that one went");
    rx_conn_close(c);
    turn(0);
    close(peer);
}

/* A loop turn that began with more than RX_CONN_LIGHT_TURN completions
 * sends at once instead: a quiet send would wait for the turn's end. */
static void
heavy_turn(void)
{
    int        peer, i;
    rx_conn_t *c = conn_pair(&peer, 0);

    for (i = 0; i < RX_CONN_LIGHT_TURN + 1; i++) {
        rx_ring_cancel(0xbeef0000ULL + (uint64_t) i, 0);
    }
    turn(0);
    set_msg(100);
    ok(!rx_conn_send_quiet(c, &msg), "heavy turn: no quiet send");
    turn(0);
    ok(rx_conn_send_quiet(c, &msg), "light turn: a quiet send");
    turn(0);
    is_int(drain(peer, NULL, 0), 100, "light turn: it went");
    rx_conn_close(c);
    turn(0);
    close(peer);
}

int
main(void)
{
    rx_time_update();
    test_cycle.log = &test_log;
    rx_worker.cycle = &test_cycle;
    if (rx_ring_init(64, &test_log) != RX_OK) {
        skip_all("no io_uring here");
        return 0;
    }
    if (!rx_ring_features.quiet_send) {
        rx_ring_exit();
        skip_all("this kernel does not report a quiet send's short sends "
                 "(ringx sends otherwise there)");
        return 0;
    }
    if (rx_conn_table_init(&rx_worker, 16) != RX_OK) {
        bail_out("rx_conn_table_init");
        return 1;
    }
    whole();
    short_send();
    full();
    closed_peer();
    closed_before();
    refused();
    heavy_turn();
    rx_conn_table_free(&rx_worker);
    rx_ring_exit();
    return done();
}
