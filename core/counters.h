/*
 * counters.h: process-level counters in shared memory, for the metrics
 * module: the master's (reloads, respawns) and each worker's event-level
 * ones (TLS handshakes, accept errors, its connection table and fds).
 *
 * They live in core so that the event layer can count without knowing who
 * reads. The mapping is made once by the master before the first fork and
 * kept across reloads (as stub_status's counters). Each worker index owns
 * a cache-line-aligned slot and only adds to it (an old and a new worker
 * of the same index may overlap during a reload: relaxed atomic adds);
 * readers sum the slots. Nothing here locks.
 */
#ifndef RX_COUNTERS_H
#define RX_COUNTERS_H

#define RX_COUNTERS_SLOTS  64     /* worker indexes beyond share slots */

/* TLS protocol versions counted: TLSv1 .. TLSv1.3, then anything else. */
#define RX_COUNTERS_TLS_PROTOS  5

typedef struct {
    int64_t  tls_new;            /* server handshakes, full */
    int64_t  tls_resumed;        /* ... with a session resumed */
    int64_t  tls_failed;         /* ... that failed */
    int64_t  tls_proto[RX_COUNTERS_TLS_PROTOS];  /* done, by version */
    int64_t  accept_emfile;      /* accept4() said EMFILE */
    int64_t  accept_enfile;      /* ... ENFILE */
    int64_t  accept_dropped;     /* accepted fds closed unserved */
    /* gauges, written by the worker's metrics tick */
    int64_t  pid;                /* 0: no worker has used the slot */
    int64_t  conns_used;         /* connection table slots in use */
    int64_t  conns_max;          /* worker_connections */
    int64_t  fds_used;           /* open descriptors */
    int64_t  fds_max;            /* RLIMIT_NOFILE (soft) */
    int64_t  generation;         /* reload generation it belongs to */
} __attribute__((aligned(64))) rx_counters_worker_t;

typedef struct {
    int64_t  reloads;            /* HUPs that loaded a configuration */
    int64_t  reload_failures;    /* ... that kept the old one */
    int64_t  respawns;           /* workers started after an unasked death */
    int64_t  worker_crashes;     /* workers that died unasked */
} __attribute__((aligned(64))) rx_counters_master_t;

/* In the master, before the first fork (once; later calls do nothing).
 * RX_OK, or RX_ERROR after logging. */
rx_int_t rx_counters_init(rx_log_t *log);
/* In a worker: the slot it counts in (its index). */
void rx_counters_worker_slot(rx_uint_t worker);

/* This worker's slot (NULL without the mapping), slot i, the master's. */
rx_counters_worker_t *rx_counters_mine(void);
const rx_counters_worker_t *rx_counters_slot(rx_uint_t i);
rx_counters_master_t *rx_counters_master(void);

/* Counting points: one call where the event happens. */
void rx_counters_tls_handshake(bool server, bool resumed, int version);
void rx_counters_tls_failed(bool server);
void rx_counters_accept_error(int err);      /* err: EMFILE, ENFILE */
void rx_counters_accept_dropped(void);
void rx_counters_add(int64_t *counter, int64_t n);

#endif /* RX_COUNTERS_H */
