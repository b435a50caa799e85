/*
 * test_heap.c: the timer min-heap (event/heap.c): edge cases, then 10,000
 * random insert/remove/update/pop operations checked against a sorted
 * reference, with the heap invariants verified after every operation.
 */
#include "core.h"
#include "heap.h"
#include "tap.h"

/* ---- an owner embedding its node, as a connection would ---- */

typedef struct {
    int             id;
    rx_heap_node_t  timer;
} owner_t;

/* ---- edge cases ---- */

static void
test_empty(void)
{
    rx_heap_t h;

    ok(rx_heap_init(&h, 0) == RX_OK, "init with capacity 0");
    ok(rx_heap_min(&h) == NULL && rx_heap_pop_min(&h) == NULL
       && rx_heap_count(&h) == 0 && rx_heap_verify(&h),
       "empty heap: min and pop_min are NULL");
    rx_heap_free(&h);
    ok(h.nodes == NULL && h.n == 0, "free of an empty heap");
}

static void
test_single(void)
{
    rx_heap_t  h;
    owner_t    a = { 1, { 0, 0 } };

    rx_heap_init(&h, 1);
    rx_heap_node_init(&a.timer);
    ok(!rx_heap_is_queued(&a.timer), "a fresh node is not queued");

    a.timer.key = 42;
    ok(rx_heap_insert(&h, &a.timer) == RX_OK && rx_heap_is_queued(&a.timer)
       && rx_heap_min(&h) == &a.timer && rx_heap_count(&h) == 1,
       "single node: inserted and is the min");
    ok(rx_heap_data(rx_heap_min(&h), owner_t, timer) == &a,
       "rx_heap_data finds the owner");
    ok(rx_heap_pop_min(&h) == &a.timer && !rx_heap_is_queued(&a.timer)
       && rx_heap_count(&h) == 0, "single node: pop_min empties the heap");

    rx_heap_remove(&h, &a.timer);
    ok(rx_heap_count(&h) == 0 && rx_heap_verify(&h),
       "removing a node that is not queued is a no-op");

    ok(rx_heap_update(&h, &a.timer, 7) == RX_OK && rx_heap_is_queued(&a.timer)
       && a.timer.key == 7, "update of a node not queued inserts it");
    rx_heap_remove(&h, &a.timer);
    ok(!rx_heap_is_queued(&a.timer) && rx_heap_count(&h) == 0,
       "remove of the only node");
    rx_heap_free(&h);
}

static void
test_positions(void)
{
    rx_heap_t  h;
    owner_t    o[8];
    int        i;
    bool       good;

    rx_heap_init(&h, 2);   /* small: the inserts below must grow it */
    for (i = 0; i < 8; i++) {
        o[i].id = i;
        rx_heap_node_init(&o[i].timer);
        o[i].timer.key = (i * 5) % 8;      /* 0 5 2 7 4 1 6 3 */
        rx_heap_insert(&h, &o[i].timer);
    }
    ok(rx_heap_count(&h) == 8 && h.cap >= 8 && rx_heap_verify(&h),
       "insert past the initial capacity grows the heap");

    rx_heap_remove(&h, rx_heap_min(&h));
    ok(rx_heap_min(&h)->key == 1 && rx_heap_verify(&h), "remove the min");

    /* the node in the last slot: removal must not disturb anything */
    rx_heap_remove(&h, h.nodes[h.n - 1]);
    ok(rx_heap_count(&h) == 6 && rx_heap_verify(&h), "remove the last slot");

    /* update to the same key: nothing moves */
    {
        rx_heap_node_t *m = rx_heap_min(&h);
        rx_uint_t       idx[8];

        for (i = 0; i < (int) h.n; i++) {
            idx[i] = h.nodes[i]->index;
        }
        rx_heap_update(&h, m, m->key);
        good = rx_heap_min(&h) == m && rx_heap_verify(&h);
        for (i = 0; i < (int) h.n; i++) {
            good = good && h.nodes[i]->index == idx[i];
        }
        ok(good, "update to the same key moves nothing");
    }

    /* push the min to the back, pull a leaf to the front */
    {
        rx_heap_node_t *m = rx_heap_min(&h), *leaf = h.nodes[h.n - 1];

        rx_heap_update(&h, m, 100);
        ok(rx_heap_min(&h) != m && h.nodes[m->index] == m
           && rx_heap_verify(&h), "update the min to a larger key sifts down");
        rx_heap_update(&h, leaf, -5);
        ok(rx_heap_min(&h) == leaf && rx_heap_verify(&h),
           "update a leaf to a smaller key (negative) sifts up");
    }

    /* equal keys: all come out, in some order */
    for (i = 0; i < 8; i++) {
        rx_heap_update(&h, &o[i].timer, 9);
    }
    good = rx_heap_count(&h) == 8 && rx_heap_verify(&h);
    for (i = 0; i < 8; i++) {
        rx_heap_node_t *m = rx_heap_pop_min(&h);
        good = good && m && m->key == 9 && !rx_heap_is_queued(m);
    }
    ok(good && rx_heap_pop_min(&h) == NULL, "eight equal keys all pop");

    rx_heap_free(&h);
}

/* ---- random operations against a sorted reference ---- */

#define N_OWNERS  600
#define N_OPS     10000

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
    /* xorshift64*: fixed seed, so a failure reproduces */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

/* the reference: the queued keys, kept sorted */
static rx_msec_t ref[N_OWNERS];
static size_t    nref;

static void
ref_add(rx_msec_t k)
{
    size_t i = nref;

    while (i > 0 && ref[i - 1] > k) {
        ref[i] = ref[i - 1];
        i--;
    }
    ref[i] = k;
    nref++;
}

static bool
ref_del(rx_msec_t k)
{
    size_t i;

    for (i = 0; i < nref; i++) {
        if (ref[i] == k) {
            memmove(&ref[i], &ref[i + 1], (nref - i - 1) * sizeof(ref[0]));
            nref--;
            return true;
        }
    }
    return false;
}

static rx_msec_t
random_key(void)
{
    /* a narrow range makes ties common; some keys are negative */
    return (rx_msec_t) (rng() % 2000) - 200;
}

static void
test_random(void)
{
    static owner_t  o[N_OWNERS];
    rx_heap_t       h;
    int             i, op, counts[4] = { 0, 0, 0, 0 };
    const char     *fail = NULL;

    rx_heap_init(&h, 64);
    for (i = 0; i < N_OWNERS; i++) {
        o[i].id = i;
        rx_heap_node_init(&o[i].timer);
    }

    for (op = 0; op < N_OPS && fail == NULL; op++) {
        int       kind = (int) (rng() % 4);
        owner_t  *x = &o[rng() % N_OWNERS];

        counts[kind]++;
        switch (kind) {

        case 0:                                      /* insert */
            if (rx_heap_is_queued(&x->timer)) {
                break;
            }
            x->timer.key = random_key();
            if (rx_heap_insert(&h, &x->timer) != RX_OK) {
                fail = "insert failed";
                break;
            }
            ref_add(x->timer.key);
            break;

        case 1:                                      /* remove, any state */
            if (rx_heap_is_queued(&x->timer) && !ref_del(x->timer.key)) {
                fail = "removed key not in the reference";
                break;
            }
            rx_heap_remove(&h, &x->timer);
            if (rx_heap_is_queued(&x->timer)) {
                fail = "removed node still queued";
            }
            break;

        case 2: {                                    /* update, any state */
            rx_msec_t k = random_key();

            if (rx_heap_is_queued(&x->timer) && !ref_del(x->timer.key)) {
                fail = "updated key not in the reference";
                break;
            }
            if (rx_heap_update(&h, &x->timer, k) != RX_OK) {
                fail = "update failed";
                break;
            }
            ref_add(k);
            break;
        }

        default: {                                   /* pop_min */
            rx_heap_node_t *m = rx_heap_pop_min(&h);

            if (nref == 0) {
                if (m != NULL) {
                    fail = "pop_min of an empty heap returned a node";
                }
                break;
            }
            if (m == NULL || m->key != ref[0] || rx_heap_is_queued(m)) {
                fail = "pop_min did not return the smallest key";
                break;
            }
            ref_del(m->key);
            break;
        }
        }

        if (fail == NULL && !rx_heap_verify(&h)) {
            fail = "heap invariants broken";
        }
        if (fail == NULL && rx_heap_count(&h) != nref) {
            fail = "count differs from the reference";
        }
        if (fail == NULL && nref && rx_heap_min(&h)->key != ref[0]) {
            fail = "min differs from the reference";
        }
    }
    if (!ok(fail == NULL, "%d random operations match the reference", N_OPS)) {
        diag("operation %d: %s", op, fail);
    }
    diag("inserts %d, removes %d, updates %d, pops %d; %zu queued at the end",
         counts[0], counts[1], counts[2], counts[3], nref);

    /* drain: keys come out in the reference's (sorted) order */
    {
        size_t  k = 0, total = nref;
        bool    good = true;

        for (k = 0; k < total; k++) {
            rx_heap_node_t *m = rx_heap_pop_min(&h);
            good = good && m && m->key == ref[k];
        }
        ok(good && rx_heap_count(&h) == 0 && rx_heap_pop_min(&h) == NULL,
           "draining yields the %zu remaining keys in sorted order", total);
    }

    for (i = 0; i < N_OWNERS; i++) {
        if (rx_heap_is_queued(&o[i].timer)) {
            break;
        }
    }
    ok(i == N_OWNERS, "no node is left marked queued after draining");

    rx_heap_free(&h);
}

int
main(void)
{
    test_empty();
    test_single();
    test_positions();
    test_random();

    return done();
}
