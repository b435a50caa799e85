/*
 * counters.c: the process-level counters of counters.h in one shared
 * mapping (the master's slot, then a slot per worker index).
 */
#include "core.h"
#include "shm.h"
#include "counters.h"

typedef struct {
    rx_counters_master_t  master;
    rx_counters_worker_t  worker[RX_COUNTERS_SLOTS];
} counters_map_t;

static rx_shm_t               counters_shm;
static rx_counters_worker_t  *my_slot;

rx_int_t
rx_counters_init(rx_log_t *log)
{
    if (counters_shm.addr) {
        return RX_OK;                   /* kept across reloads */
    }
    return rx_shm_alloc(&counters_shm, sizeof(counters_map_t), log);
}

void
rx_counters_worker_slot(rx_uint_t worker)
{
    counters_map_t *m = counters_shm.addr;

    my_slot = m ? &m->worker[worker % RX_COUNTERS_SLOTS] : NULL;
}

rx_counters_worker_t *
rx_counters_mine(void)
{
    return my_slot;
}

const rx_counters_worker_t *
rx_counters_slot(rx_uint_t i)
{
    counters_map_t *m = counters_shm.addr;

    return m && i < RX_COUNTERS_SLOTS ? &m->worker[i] : NULL;
}

rx_counters_master_t *
rx_counters_master(void)
{
    counters_map_t *m = counters_shm.addr;

    return m ? &m->master : NULL;
}

void
rx_counters_add(int64_t *counter, int64_t n)
{
    __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

void
rx_counters_tls_handshake(bool server, bool resumed, int version)
{
    int i = version - 0x0301;           /* TLS1_VERSION .. TLS1_3_VERSION */

    if (my_slot == NULL || !server) {
        return;
    }
    rx_counters_add(resumed ? &my_slot->tls_resumed : &my_slot->tls_new, 1);
    if (i < 0 || i >= RX_COUNTERS_TLS_PROTOS - 1) {
        i = RX_COUNTERS_TLS_PROTOS - 1;
    }
    rx_counters_add(&my_slot->tls_proto[i], 1);
}

void
rx_counters_tls_failed(bool server)
{
    if (my_slot && server) {
        rx_counters_add(&my_slot->tls_failed, 1);
    }
}

void
rx_counters_accept_error(int err)
{
    if (my_slot) {
        rx_counters_add(err == ENFILE ? &my_slot->accept_enfile
                                      : &my_slot->accept_emfile, 1);
    }
}

void
rx_counters_accept_dropped(void)
{
    if (my_slot) {
        rx_counters_add(&my_slot->accept_dropped, 1);
    }
}
