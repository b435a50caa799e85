/*
 * posted.c: work deferred to the end of the loop turn. A layer that must
 * call its protocol back outside of the protocol's own call (TLS handing
 * over plaintext it already decrypted when reading resumes) posts it
 * here; the loop runs the list after the completions and the timers, and
 * does not sleep while it is not empty.
 */
#include "event.h"

void
rx_post(rx_posted_t *p)
{
    rx_worker_t *w = &rx_worker;

    if (p->queued) {
        return;
    }
    p->queued = true;
    p->next = NULL;
    p->prev = w->posted_tail;
    if (w->posted_tail) w->posted_tail->next = p; else w->posted_head = p;
    w->posted_tail = p;
}

void
rx_post_cancel(rx_posted_t *p)
{
    rx_worker_t *w = &rx_worker;

    if (!p->queued) {
        return;
    }
    if (p->prev) p->prev->next = p->next; else w->posted_head = p->next;
    if (p->next) p->next->prev = p->prev; else w->posted_tail = p->prev;
    p->prev = p->next = NULL;
    p->queued = false;
}

/* Runs what is posted now; what the handlers post runs next turn, so a
 * handler that re-posts itself cannot starve the ring. */
void
rx_posted_run(rx_worker_t *w)
{
    rx_posted_t *p, *last = w->posted_tail;

    while ((p = w->posted_head) != NULL) {
        rx_post_cancel(p);
        p->handler(p);
        if (p == last) {
            break;
        }
    }
}
