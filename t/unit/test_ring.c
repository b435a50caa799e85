/*
 * test_ring.c: event/ring.c when the kernel refuses a submission. A small
 * ring (4 entries) gets 200 operations while a stand-in for
 * io_uring_submit refuses with -EBUSY or -EAGAIN for a while: preparing
 * must go on without spinning, every operation must complete exactly once
 * and in the order prepared, and the worker's wait must neither spin nor
 * sleep long while the backlog waits.
 */
#include <liburing.h>
#include "core.h"
#include "clock.h"
#include "ring.h"
#include "tap.h"

#define OPS  200

static rx_log_t test_log = { .level = RX_LOG_EMERG, .file = &rx_stderr_file };
static int      refuse_left, refuse_errno, submit_calls;
static int      seen[OPS], order[OPS], nseen;

static int
refusing_submit(void *ring)
{
    submit_calls++;
    if (refuse_left > 0) {
        refuse_left--;
        return -refuse_errno;
    }
    return io_uring_submit(ring);
}

static void
on_cqe(const rx_cqe_t *cqe, void *data)
{
    uint64_t i = cqe->user_data;

    if (i < OPS) {
        seen[i]++;
        order[nseen++] = (int) i;
    }
}

static void
run(int err, int refusals)
{
    int      i, turns = 0, in_order = 1, once = 1;

    memset(seen, 0, sizeof(seen));
    nseen = 0;
    submit_calls = 0;
    refuse_left = refusals;
    refuse_errno = err;
    rx_ring_submit_hook = refusing_submit;

    /* a cancel of nothing completes at once with -ENOENT */
    for (i = 0; i < OPS; i++) {
        rx_ring_cancel(0xdead0000ULL + (uint64_t) i, (uint64_t) i);
    }
    ok(submit_calls <= OPS, "%s: preparing %d operations made %d submit "
       "calls (no spin)", strerror(err), OPS, submit_calls);
    if (refusals) {
        ok(rx_ring_backlog() > 0, "%s: operations wait in the backlog (%u)",
           strerror(err), rx_ring_backlog());
    } else {
        is_int(rx_ring_backlog(), 0, "accepted: no backlog");
    }

    while (nseen < OPS && turns < 10000) {
        rx_ring_wait(100);
        rx_ring_dispatch(on_cqe, NULL);
        turns++;
    }
    for (i = 0; i < OPS; i++) {
        if (seen[i] != 1) once = 0;
        if (i < nseen && order[i] != i) in_order = 0;
    }
    is_int(nseen, OPS, "%s: every operation completed", strerror(err));
    ok(once, "%s: each exactly once", strerror(err));
    ok(in_order, "%s: in the order prepared", strerror(err));
    is_int(rx_ring_backlog(), 0, "%s: the backlog is empty again", strerror(err));
    ok(turns < 1000, "%s: %d loop turns (no spin)", strerror(err), turns);
    rx_ring_submit_hook = NULL;
}

int
main(void)
{
    rx_time_update();
    if (rx_ring_init(4, &test_log) != RX_OK) {
        skip_all("no io_uring here");
        return 0;
    }
    run(EBUSY, 30);
    run(EAGAIN, 30);
    run(EBUSY, 0);        /* the kernel takes everything: no backlog */
    rx_ring_exit();
    return done();
}
