/*
 * conf_check.c: the arithmetic nginx leaves to the operator. Each worker
 * needs a descriptor per connection (clients and upstream connections
 * share the table), one per file being sent or buffered, what
 * open_file_cache keeps, plus listening sockets, log files and its ring;
 * this compares that with the fd limit a worker will get (and the limit
 * with the hard limit and fs.nr_open, the listen backlogs with
 * net.core.somaxconn), says what to change, and with -t prints the budget.
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
read_proc_long(const char *path)
{
    FILE *f = fopen(path, "r");
    long  n = -1;

    if (f) {
        if (fscanf(f, "%ld", &n) != 1) n = -1;
        fclose(f);
    }
    return n;
}

/* The kernel caps a listen backlog at net.core.somaxconn: a larger one
 * is silently shortened, and a burst overflows where the config said it
 * would not. */
static void
check_backlogs(rx_cycle_t *cycle)
{
    rx_listening_t *ls = cycle->listening.elts;
    long            somaxconn = read_proc_long("/proc/sys/net/core/somaxconn");
    rx_uint_t       i;

    for (i = 0; somaxconn > 0 && i < cycle->listening.nelts; i++) {
        if (ls[i].backlog > somaxconn) {
            rx_log_error(RX_LOG_WARN, cycle->log, 0, "listen %s backlog=%d is "
                "above net.core.somaxconn %ld: the kernel keeps %ld (raise "
                "net.core.somaxconn with sysctl, or lower backlog=)",
                ls[i].addr_text.data, ls[i].backlog, somaxconn, somaxconn);
        }
    }
}

/* What one worker may hold at once (each part an upper bound):
 *   conns     the connection table: clients and their upstream
 *             connections share it (worker_connections)
 *   files     a file per request: a static file being sent, or the
 *             temporary files of a proxied request (its response and its
 *             body), at most one request per client connection
 *   cached    what open_file_cache keeps open
 *   fixed     listeners, log files, the ring, signalfd, stdio */
typedef struct {
    rx_uint_t conns, files, cached, fixed, total;
} budget_t;

static void
make_budget(rx_cycle_t *cycle, budget_t *b)
{
    b->conns = cycle->worker_connections;
    /* a proxied request takes two slots (client and upstream) and holds
     * up to two temporary files; any other one a file at most */
    b->files = cycle->worker_connections;
    b->cached = cycle->budget_cached_files;
    b->fixed = fixed_fds(cycle);
    b->total = b->conns + b->files + b->cached + b->fixed;
}

void
rx_conf_check_limits(rx_cycle_t *cycle, bool print_capacity)
{
    rx_core_conf_t  *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    struct rlimit    rl;
    budget_t         b;
    rx_uint_t        conns = cycle->worker_connections;
    long             limit, nr_open = read_proc_long("/proc/sys/fs/nr_open");
    bool             from_config = ccf->rlimit_nofile != RX_CONF_UNSET;
    char             ups[128];

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
        return;
    }
    limit = from_config ? (long) ccf->rlimit_nofile : (long) rl.rlim_cur;
    make_budget(cycle, &b);

    if (conns > (rx_uint_t) limit) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "%lu worker_connections "
                     "exceed open file resource limit: %ld",
                     (unsigned long) conns, limit);
    }
    if ((long) b.total > limit) {
        /* what fits: each connection may bring a file */
        rx_uint_t room = limit > (long) (b.fixed + b.cached)
                         ? (rx_uint_t) limit - b.fixed - b.cached : 0;

        rx_log_error(RX_LOG_WARN, cycle->log, 0, "each worker may need %lu "
            "file descriptors (%lu connections, %lu files being sent or "
            "buffered, %lu in open_file_cache, %lu for listeners, logs and the "
            "ring) but will get %ld: set \"worker_rlimit_nofile %lu;\" or "
            "lower worker_connections to %lu",
            (unsigned long) b.total, (unsigned long) b.conns,
            (unsigned long) b.files, (unsigned long) b.cached,
            (unsigned long) b.fixed, limit, (unsigned long) b.total,
            (unsigned long) (room / 2));
    }
    if (cycle->budget_upstream_idle > conns / 2 && conns > 0) {
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "the keepalive pools may keep "
            "%lu idle upstream connections per worker, more than half of the "
            "%lu worker_connections they share with clients: lower keepalive "
            "or raise worker_connections",
            (unsigned long) cycle->budget_upstream_idle, (unsigned long) conns);
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
    check_backlogs(cycle);
    if (print_capacity) {
        if (cycle->upstream_fds_per_conn == 0) {
            snprintf(ups, sizeof(ups), "no upstreams");
        } else if (cycle->budget_upstream_max) {
            snprintf(ups, sizeof(ups), "upstream connections at most %lu "
                     "(max_conns), %lu kept idle",
                     (unsigned long) rx_min(cycle->budget_upstream_max, conns),
                     (unsigned long) cycle->budget_upstream_idle);
        } else {
            snprintf(ups, sizeof(ups), "upstream connections as many as "
                     "clients (no max_conns), %lu kept idle",
                     (unsigned long) cycle->budget_upstream_idle);
        }
        rx_log_stderr(0, "capacity: %ld worker%s x %lu worker_connections = "
            "%lu connections; %s; fds per worker: %lu needed, limit %ld",
            (long) ccf->worker_processes, ccf->worker_processes == 1 ? "" : "s",
            (unsigned long) conns,
            (unsigned long) (conns * (rx_uint_t) ccf->worker_processes),
            ups, (unsigned long) b.total, limit);
    }
}
