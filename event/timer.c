/*
 * timer.c: deadlines in the worker's min-heap. The loop sleeps at most
 * until the nearest one, then runs every handler whose time has come.
 */
#include "event.h"
#include "clock.h"

bool
rx_timer_is_set(const rx_timer_t *t)
{
    return t->node.index != RX_HEAP_NONE;
}

void
rx_timer_add(rx_timer_t *t, rx_msec_t after)
{
    rx_msec_t key = rx_current_msec + after;

    if (rx_timer_is_set(t)) {
        rx_heap_update(&rx_worker.timers, &t->node, key);
    } else {
        t->node.key = key;
        rx_heap_insert(&rx_worker.timers, &t->node);
    }
}

void
rx_timer_del(rx_timer_t *t)
{
    if (rx_timer_is_set(t)) {
        rx_heap_remove(&rx_worker.timers, &t->node);
    }
}

/* Milliseconds until the nearest deadline, -1 when there is none. */
rx_msec_t
rx_timers_next_wait(rx_worker_t *w)
{
    rx_heap_node_t *min = rx_heap_min(&w->timers);

    if (min == NULL) {
        return -1;
    }
    return min->key > rx_current_msec ? min->key - rx_current_msec : 0;
}

void
rx_timers_expire(rx_worker_t *w)
{
    rx_heap_node_t *min;

    while ((min = rx_heap_min(&w->timers)) && min->key <= rx_current_msec) {
        rx_timer_t *t = (rx_timer_t *) ((char *) min - offsetof(rx_timer_t, node));

        rx_heap_remove(&w->timers, min);
        t->handler(t);
    }
}
