/*
 * shm.c: anonymous shared mappings, inherited by workers across fork.
 */
#include <sys/mman.h>
#include "core.h"
#include "shm.h"

rx_int_t
rx_shm_alloc(rx_shm_t *shm, size_t size, rx_log_t *log)
{
    shm->addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
                     MAP_ANONYMOUS | MAP_SHARED, -1, 0);
    if (shm->addr == MAP_FAILED) {
        rx_log_error(RX_LOG_EMERG, log, errno, "mmap(MAP_ANONYMOUS|MAP_SHARED, "
                     "%zu) failed", size);
        shm->addr = NULL;
        return RX_ERROR;
    }
    shm->size = size;
    return RX_OK;
}

void
rx_shm_free(rx_shm_t *shm)
{
    if (shm->addr) {
        munmap(shm->addr, shm->size);
        shm->addr = NULL;
    }
}
