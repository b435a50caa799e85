/*
 * mem_tidy.c: gives the heap a burst of requests freed back to the kernel
 * once the worker has gone quiet. The worker keeps up to 16 MiB of freed
 * heap on purpose (worker_loop.c: giving the top back after every burst
 * and faulting it in again cost a third of its CPU under load), so without
 * this the buffers of the most requests ever served at once stayed
 * resident for good, counted against every idle connection held after.
 *
 * Quiet means a whole tick (TIDY_TICK_MS) in which no pool was destroyed
 * (no request and no connection ended). Under steady load that never
 * happens and the only cost is a timer per tick; an idle worker arms no
 * timer at all, since nothing was freed since its last tidy.
 */
#include <malloc.h>
#include "event.h"

#define TIDY_TICK_MS   250
/* Less free heap than this is not worth the page faults of refilling it. */
#define TIDY_MIN_FREE  (256 * 1024)

static rx_timer_t  tidy_timer;
static rx_uint_t   seen;        /* rx_pool_destroyed() at the last tick */
static rx_uint_t   tidied;      /* rx_pool_destroyed() at the last tidy */

static void
tidy_handler(rx_timer_t *t)
{
    rx_worker_t     *w = t->data;
    rx_uint_t        now = rx_pool_destroyed();
    struct mallinfo2 mi;

    if (now != seen) {
        seen = now;                  /* still busy: look again later */
        rx_timer_add(&tidy_timer, TIDY_TICK_MS);
        return;
    }
    tidied = now;
    /* the receive buffers: every one the burst cycled through stayed
     * resident (kept when one holds data now: rare, timers run after the
     * completions are handled) */
    (void) rx_buf_ring_drop_pages(w->recv_bufs);
    (void) rx_pool_spares_release();  /* the requests' pools kept for reuse */
    mi = mallinfo2();
    if (mi.fordblks >= TIDY_MIN_FREE) {
        /* whole free pages inside the heap go (MADV_DONTNEED), and the
         * top down to its pad */
        (void) malloc_trim(0);
    }
}

void
rx_mem_tidy_init(rx_worker_t *w)
{
    tidy_timer.node.index = RX_HEAP_NONE;
    tidy_timer.data = w;
    tidy_timer.handler = tidy_handler;
    seen = tidied = rx_pool_destroyed();
}

/* Called at the end of every loop turn: arms the tick when pools were
 * destroyed since the last tidy. */
void
rx_mem_tidy_turn(rx_worker_t *w)
{
    if (rx_pool_destroyed() == tidied || rx_timer_is_set(&tidy_timer)
        || w->quit)
    {
        return;
    }
    seen = rx_pool_destroyed();
    rx_timer_add(&tidy_timer, TIDY_TICK_MS);
}
