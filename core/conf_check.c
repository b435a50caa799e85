/*
 * conf_check.c: the arithmetic nginx leaves to the operator. Each worker
 * needs a descriptor per connection (two when it proxies), plus listening
 * sockets, log files and its ring; this compares that with the fd limit a
 * worker will get and says what to change.
 */
#include <sys/resource.h>
#include "core.h"
#include "cycle.h"

/* Descriptors a worker holds besides connections: listeners, logs, its
 * io_uring, signalfd, stdio. */
static rx_uint_t
fixed_fds(rx_cycle_t *cycle)
{
    return cycle->listening.nelts + cycle->open_files.nelts + 2 + 3;
}

static long
read_nr_open(void)
{
    FILE *f = fopen("/proc/sys/fs/nr_open", "r");
    long  n = -1;

    if (f) {
        if (fscanf(f, "%ld", &n) != 1) n = -1;
        fclose(f);
    }
    return n;
}

void
rx_conf_check_limits(rx_cycle_t *cycle, bool print_capacity)
{
    rx_core_conf_t  *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    struct rlimit    rl;
    rx_uint_t        per_conn = 1 + cycle->upstream_fds_per_conn;
    rx_uint_t        need, conns = cycle->worker_connections;
    long             limit, nr_open = read_nr_open();
    bool             from_config = ccf->rlimit_nofile != RX_CONF_UNSET;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
        return;
    }
    limit = from_config ? (long) ccf->rlimit_nofile : (long) rl.rlim_cur;
    need = conns * per_conn + fixed_fds(cycle);

    if (conns > (rx_uint_t) limit) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "%lu worker_connections "
                     "exceed open file resource limit: %ld",
                     (unsigned long) conns, limit);
    }
    if ((long) need > limit) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "each worker needs up to %lu "
            "file descriptors (%lu connections%s, plus %lu for listeners, logs "
            "and the ring) but will get %ld: set \"worker_rlimit_nofile %lu;\" "
            "or lower worker_connections to %lu",
            (unsigned long) need, (unsigned long) conns,
            per_conn > 1 ? " x 2 because the configuration proxies" : "",
            (unsigned long) fixed_fds(cycle), limit, (unsigned long) need,
            (unsigned long) ((limit > (long) fixed_fds(cycle)
                              ? (rx_uint_t) limit - fixed_fds(cycle) : 0) / per_conn));
    }
    if (from_config && geteuid() != 0 && (rlim_t) ccf->rlimit_nofile > rl.rlim_max) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "worker_rlimit_nofile %ld is "
            "above the hard limit %ld, and only root may raise it: workers "
            "will keep %ld", (long) ccf->rlimit_nofile, (long) rl.rlim_max,
            (long) rl.rlim_cur);
    }
    if (from_config && nr_open > 0 && ccf->rlimit_nofile > nr_open) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "worker_rlimit_nofile %ld is "
            "above fs.nr_open %ld: raise fs.nr_open (sysctl) or lower it",
            (long) ccf->rlimit_nofile, nr_open);
    }
    if (print_capacity) {
        rx_log_stderr(0, "capacity: %ld worker%s x %lu worker_connections = "
            "%lu connections; fds per worker: %lu needed, limit %ld",
            (long) ccf->worker_processes, ccf->worker_processes == 1 ? "" : "s",
            (unsigned long) conns,
            (unsigned long) (conns * (rx_uint_t) ccf->worker_processes),
            (unsigned long) need, limit);
    }
}
