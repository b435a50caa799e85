/*
 * worker.c: turning a freshly forked child into a worker: fd limit,
 * priority, CPU affinity, environment and privileges, then the modules'
 * init_process hooks. The loop itself is event/worker_loop.c.
 */
#include <grp.h>
#include <sched.h>
#include <sys/resource.h>
#include "core.h"
#include "cycle.h"
#include "process.h"
#include "counters.h"

extern char **environ;

rx_uint_t rx_worker_index;

static rx_int_t
set_nofile(rx_cycle_t *cycle, rx_core_conf_t *ccf)
{
    struct rlimit rl;

    if (ccf->rlimit_nofile == RX_CONF_UNSET) {
        return RX_OK;
    }
    rl.rlim_cur = (rlim_t) ccf->rlimit_nofile;
    rl.rlim_max = (rlim_t) ccf->rlimit_nofile;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
        return RX_OK;
    }
    {
        int err = errno;
        struct rlimit cur;

        getrlimit(RLIMIT_NOFILE, &cur);
        rx_log_error(RX_LOG_ALERT, cycle->log, err, "setrlimit(RLIMIT_NOFILE, "
            "%ld) failed; the hard limit is %ld (raise it, e.g. LimitNOFILE= in "
            "the systemd unit, or run the master as root)",
            (long) ccf->rlimit_nofile, (long) cur.rlim_max);
    }
    return RX_OK;       /* nginx goes on with the old limit too */
}

static void
set_affinity(rx_cycle_t *cycle, rx_core_conf_t *ccf, rx_uint_t worker)
{
    cpu_set_t set;
    uint64_t  mask = 0;
    int       cpu, nth = 0;

    if (ccf->cpu_affinity_auto) {
        /* worker N takes the N-th allowed CPU, wrapping around */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int  allowed = 0;

        for (cpu = 0; cpu < 64 && cpu < ncpu; cpu++) {
            allowed += (ccf->cpu_affinity_auto_mask >> cpu) & 1;
        }
        if (allowed == 0) {
            return;
        }
        nth = (int) (worker % (rx_uint_t) allowed);
        for (cpu = 0; cpu < 64 && cpu < ncpu; cpu++) {
            if (((ccf->cpu_affinity_auto_mask >> cpu) & 1) && nth-- == 0) {
                mask = (uint64_t) 1 << cpu;
                break;
            }
        }
    } else if (ccf->cpu_affinity.nelts) {
        uint64_t *masks = ccf->cpu_affinity.elts;
        mask = masks[rx_min(worker, ccf->cpu_affinity.nelts - 1)];
    }
    if (mask == 0) {
        return;
    }
    CPU_ZERO(&set);
    for (cpu = 0; cpu < 64; cpu++) {
        if ((mask >> cpu) & 1) {
            CPU_SET(cpu, &set);
        }
    }
    if (sched_setaffinity(0, sizeof(set), &set) == -1) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno,
                     "sched_setaffinity(0x%" PRIx64 ") failed", mask);
    }
}

/* Workers see only TZ and what `env` lists, as in nginx. */
static rx_int_t
set_environment(rx_cycle_t *cycle, rx_core_conf_t *ccf)
{
    rx_str_t  *vars = ccf->env.elts;
    char     **env, *tz = getenv("TZ");
    rx_uint_t  i, n = 0;

    env = rx_palloc(cycle->pool, (ccf->env.nelts + 2) * sizeof(char *));
    if (env == NULL) {
        return RX_ERROR;
    }
    if (tz) {
        env[n] = rx_pnalloc(cycle->pool, strlen(tz) + 4);
        if (env[n] == NULL) return RX_ERROR;
        sprintf(env[n++], "TZ=%s", tz);
    }
    for (i = 0; i < ccf->env.nelts; i++) {
        if (memchr(vars[i].data, '=', vars[i].len)) {
            env[n++] = vars[i].data;
        } else {
            char *value = getenv(vars[i].data);
            if (value == NULL || strcmp(vars[i].data, "TZ") == 0) {
                continue;
            }
            env[n] = rx_pnalloc(cycle->pool, vars[i].len + strlen(value) + 2);
            if (env[n] == NULL) return RX_ERROR;
            sprintf(env[n++], "%s=%s", vars[i].data, value);
        }
    }
    env[n] = NULL;
    environ = env;
    return RX_OK;
}

static rx_int_t
drop_privileges(rx_cycle_t *cycle, rx_core_conf_t *ccf)
{
    if (geteuid() != 0 || ccf->user == (uid_t) RX_CONF_UNSET_UINT) {
        return RX_OK;
    }
    if (setgid(ccf->group) == -1) {
        rx_log_error(RX_LOG_EMERG, cycle->log, errno, "setgid(%d) failed",
                     (int) ccf->group);
        return RX_ERROR;
    }
    if (initgroups(ccf->username.data, ccf->group) == -1) {
        rx_log_error(RX_LOG_EMERG, cycle->log, errno, "initgroups(%s, %d) failed",
                     ccf->username.data, (int) ccf->group);
        return RX_ERROR;
    }
    if (setuid(ccf->user) == -1) {
        rx_log_error(RX_LOG_EMERG, cycle->log, errno, "setuid(%d) failed",
                     (int) ccf->user);
        return RX_ERROR;
    }
    return RX_OK;
}

/* With reuseport each worker keeps only its own copy of the socket. */
static void
close_foreign_sockets(rx_cycle_t *cycle, rx_uint_t worker)
{
    rx_listening_t *ls = cycle->listening.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (ls[i].reuseport && ls[i].worker != worker && ls[i].fd != -1) {
            close(ls[i].fd);
            ls[i].fd = -1;
        }
    }
}

rx_int_t
rx_worker_init(rx_cycle_t *cycle, rx_uint_t worker, bool drop_user)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_uint_t       i;

    rx_worker_index = worker;
    rx_counters_worker_slot(worker);
    if (set_environment(cycle, ccf) != RX_OK) {
        return RX_ERROR;
    }
    if (ccf->priority_set && setpriority(PRIO_PROCESS, 0, (int) ccf->priority) == -1) {
        rx_log_error(RX_LOG_ALERT, cycle->log, errno, "setpriority(%d) failed",
                     (int) ccf->priority);
    }
    set_nofile(cycle, ccf);
    if (drop_user && drop_privileges(cycle, ccf) != RX_OK) {
        return RX_ERROR;
    }
    set_affinity(cycle, ccf, worker);
    close_foreign_sockets(cycle, worker);
    for (i = 0; i < rx_modules_n; i++) {
        if (rx_modules[i]->init_process
            && rx_modules[i]->init_process(cycle) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}
