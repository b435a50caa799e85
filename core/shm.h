/*
 * shm.h: shared memory mapped by the master before it forks, so every
 * worker (of every generation) sees the same bytes. Counters live here in
 * per-worker slots; writers add to their own slot, readers sum.
 */
#ifndef RX_SHM_H
#define RX_SHM_H

typedef struct {
    void   *addr;
    size_t  size;
} rx_shm_t;

/* Maps size bytes of zeroed shared memory; RX_ERROR after logging. */
rx_int_t rx_shm_alloc(rx_shm_t *shm, size_t size, rx_log_t *log);
void rx_shm_free(rx_shm_t *shm);

#endif /* RX_SHM_H */
