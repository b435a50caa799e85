/*
 * http_stats.c: connection and request counters in shared memory, for
 * stub_status (modules/status.c) and later metrics.
 *
 * Each worker index owns a cache-line slot; a worker only adds to its own
 * slot (an old and a new worker of the same index may overlap during a
 * reload, hence atomic adds), and readers sum all slots. The mapping is
 * made once by the master and survives reloads, as nginx's counters do.
 */
#include "http.h"
#include "shm.h"
#include "http_stats.h"

#define STAT_SLOTS  64

static rx_shm_t             stat_shm;
static rx_http_stat_slot_t *my_slot;

rx_int_t
rx_http_stats_init(rx_cycle_t *cycle)
{
    if (stat_shm.addr) {
        return RX_OK;                  /* kept across reloads */
    }
    return rx_shm_alloc(&stat_shm, STAT_SLOTS * sizeof(rx_http_stat_slot_t),
                        cycle->log);
}

void
rx_http_stat_worker_slot(rx_uint_t worker)
{
    my_slot = stat_shm.addr
              ? (rx_http_stat_slot_t *) stat_shm.addr + worker % STAT_SLOTS
              : NULL;
}

static inline void
add(int64_t *counter, int64_t delta)
{
    __atomic_fetch_add(counter, delta, __ATOMIC_RELAXED);
}

void
rx_http_stat_accepted(int delta)
{
    if (my_slot) {
        if (delta > 0) {
            add(&my_slot->accepted, 1);
            add(&my_slot->handled, 1);
        }
        add(&my_slot->active, delta);
    }
}

void
rx_http_stat_reading(int delta)
{
    if (my_slot) add(&my_slot->reading, delta);
}

void
rx_http_stat_writing(int delta)
{
    if (my_slot) add(&my_slot->writing, delta);
}

void
rx_http_stat_request(void)
{
    if (my_slot) add(&my_slot->requests, 1);
}

void
rx_http_stat_limit_rejected(bool limit_req)
{
    if (my_slot) {
        add(limit_req ? &my_slot->limit_req_rejected
                      : &my_slot->limit_conn_rejected, 1);
    }
}

const rx_http_stat_slot_t *
rx_http_stats_slot(rx_uint_t i)
{
    return stat_shm.addr && i < STAT_SLOTS
           ? (rx_http_stat_slot_t *) stat_shm.addr + i : NULL;
}

void
rx_http_stats_sum(rx_http_stat_slot_t *sum)
{
    rx_http_stat_slot_t *s = stat_shm.addr;
    rx_uint_t            i;

    memset(sum, 0, sizeof(*sum));
    for (i = 0; s && i < STAT_SLOTS; i++) {
        sum->active += __atomic_load_n(&s[i].active, __ATOMIC_RELAXED);
        sum->accepted += __atomic_load_n(&s[i].accepted, __ATOMIC_RELAXED);
        sum->handled += __atomic_load_n(&s[i].handled, __ATOMIC_RELAXED);
        sum->requests += __atomic_load_n(&s[i].requests, __ATOMIC_RELAXED);
        sum->reading += __atomic_load_n(&s[i].reading, __ATOMIC_RELAXED);
        sum->writing += __atomic_load_n(&s[i].writing, __ATOMIC_RELAXED);
        sum->limit_req_rejected += __atomic_load_n(&s[i].limit_req_rejected,
                                                   __ATOMIC_RELAXED);
        sum->limit_conn_rejected += __atomic_load_n(&s[i].limit_conn_rejected,
                                                    __ATOMIC_RELAXED);
    }
}
