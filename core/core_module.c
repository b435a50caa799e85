/*
 * core_module.c: the top-level directives (worker processes, limits, pid,
 * user, env, include) and the compatibility table of nginx directives that
 * have no meaning here.
 */
#include <grp.h>
#include <pwd.h>
#include "core.h"
#include "cycle.h"

static void *core_create_conf(rx_cycle_t *cycle);
static const char *core_init_conf(rx_cycle_t *cycle, void *conf);
static const char *set_worker_processes(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_cpu_affinity(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_user(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_env(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_priority(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

static const rx_conf_bounds_t rlimit_bounds = { 1, 1 << 30 };

static const rx_command_t core_commands[] = {
    { "daemon", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, 0, offsetof(rx_core_conf_t, daemon), NULL },
    { "master_process", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, 0, offsetof(rx_core_conf_t, master), NULL },
    { "worker_processes", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      set_worker_processes, 0, 0, NULL },
    { "worker_reuseport", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_FLAG,
      rx_conf_set_flag_slot, 0, offsetof(rx_core_conf_t, worker_reuseport), NULL },
    { "worker_cpu_affinity", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_1MORE,
      set_cpu_affinity, 0, 0, NULL },
    { "worker_rlimit_nofile", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_num_slot, 0, offsetof(rx_core_conf_t, rlimit_nofile),
      &rlimit_bounds },
    { "worker_shutdown_timeout", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_msec_slot, 0, offsetof(rx_core_conf_t, shutdown_timeout), NULL },
    { "worker_priority", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      set_priority, 0, 0, NULL },
    { "pid", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_str_slot, 0, offsetof(rx_core_conf_t, pid), NULL },
    { "user", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE12,
      set_user, 0, 0, NULL },
    { "env", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      set_env, 0, 0, NULL },
    { "include", RX_ANY_CONF | RX_CONF_TAKE1,
      rx_conf_include, 0, 0, NULL },
    /* nginx directives that mean nothing here: accepted so configs load */
    { "lock_file", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx has no accept mutex and no lock file" },
    { "pcre_jit", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_FLAG,
      rx_conf_set_ignored, 0, 0, "regular expressions are always JIT-compiled" },
    { "load_module", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx has no dynamic modules" },
    { "timer_resolution", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "time is cached once per event-loop turn" },
    { "worker_rlimit_core", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "not supported; use systemd's LimitCORE" },
    { "working_directory", RX_MAIN_CONF | RX_DIRECT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "not supported" },
    rx_null_command
};

static const rx_core_module_t core_ctx = {
    "core", core_create_conf, core_init_conf
};

rx_module_t rx_core_module = {
    "rx_core_module", 0, 0, RX_CORE_MODULE, &core_ctx, core_commands,
    NULL, NULL, NULL, NULL
};

static void *
core_create_conf(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = rx_pcalloc(cycle->pool, sizeof(rx_core_conf_t));

    if (ccf == NULL) {
        return NULL;
    }
    ccf->daemon = RX_CONF_UNSET;
    ccf->master = RX_CONF_UNSET;
    ccf->worker_processes = RX_CONF_UNSET;
    ccf->worker_reuseport = RX_CONF_UNSET;
    ccf->rlimit_nofile = RX_CONF_UNSET;
    ccf->shutdown_timeout = RX_CONF_UNSET_MSEC;
    ccf->priority_set = 0;
    ccf->user = (uid_t) RX_CONF_UNSET_UINT;
    ccf->group = (gid_t) RX_CONF_UNSET_UINT;
    if (rx_array_init(&ccf->cpu_affinity, cycle->pool, 4, sizeof(uint64_t)) != RX_OK
        || rx_array_init(&ccf->env, cycle->pool, 4, sizeof(rx_str_t)) != RX_OK) {
        return NULL;
    }
    return ccf;
}

static rx_int_t
online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (rx_int_t) n : 1;
}

static const char *
core_init_conf(rx_cycle_t *cycle, void *conf)
{
    rx_core_conf_t *ccf = conf;
    rx_str_t        pid;

    rx_conf_init_value(ccf->daemon, 1);
    rx_conf_init_value(ccf->master, 1);
    rx_conf_init_value(ccf->worker_processes, 1);
    rx_conf_init_value(ccf->worker_reuseport, 1);
    rx_conf_init_msec(ccf->shutdown_timeout, 0);

    if (ccf->pid.data == NULL) {
        rx_str_set(&ccf->pid, RX_PID_PATH);
    }
    pid = ccf->pid;
    if (rx_conf_full_name(cycle, &pid, false) != RX_OK) {
        return RX_CONF_ERROR;
    }
    ccf->pid = pid;

    if (ccf->user == (uid_t) RX_CONF_UNSET_UINT && geteuid() == 0) {
        struct passwd *pw = getpwnam(RX_USER);
        struct group  *gr = getgrnam(RX_GROUP);

        if (pw == NULL) {
            rx_log_error(RX_LOG_EMERG, cycle->log, errno,
                         "getpwnam(\"" RX_USER "\") failed");
            return RX_CONF_ERROR;
        }
        ccf->username.data = (char *) RX_USER;
        ccf->username.len = sizeof(RX_USER) - 1;
        ccf->user = pw->pw_uid;
        ccf->group = gr ? gr->gr_gid : pw->pw_gid;
    }
    if (ccf->cpu_affinity_auto && ccf->cpu_affinity_auto_mask == 0) {
        ccf->cpu_affinity_auto_mask = ~(uint64_t) 0;
    }
    return RX_CONF_OK;
}

static const char *
set_worker_processes(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_core_conf_t *ccf = conf;
    rx_str_t       *value = cf->args->elts;

    if (ccf->worker_processes != RX_CONF_UNSET) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "auto")) {
        ccf->worker_processes = online_cpus();
        return RX_CONF_OK;
    }
    ccf->worker_processes = rx_atoi(value[1].data, value[1].len);
    if (ccf->worker_processes < 1 || ccf->worker_processes > 1024) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0,
            "invalid value \"%s\" in \"%s\" directive, it must be \"auto\" "
            "or a number from 1 to 1024", value[1].data, value[0].data);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* A mask is a string of 0s and 1s, rightmost = CPU 0, at most 64 CPUs. */
static bool
parse_mask(const rx_str_t *s, uint64_t *mask)
{
    size_t i;

    if (s->len == 0 || s->len > 64) {
        return false;
    }
    *mask = 0;
    for (i = 0; i < s->len; i++) {
        if (s->data[i] != '0' && s->data[i] != '1') {
            return false;
        }
        *mask = (*mask << 1) | (uint64_t) (s->data[i] - '0');
    }
    return *mask != 0;
}

static const char *
set_cpu_affinity(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_core_conf_t *ccf = conf;
    rx_str_t       *value = cf->args->elts;
    rx_uint_t       i = 1;
    uint64_t       *mask;

    if (ccf->cpu_affinity.nelts || ccf->cpu_affinity_auto) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "auto")) {
        if (cf->args->nelts > 3) {
            return "has too many parameters";
        }
        ccf->cpu_affinity_auto = 1;
        if (cf->args->nelts == 3
            && !parse_mask(&value[2], &ccf->cpu_affinity_auto_mask)) {
            goto invalid;
        }
        return RX_CONF_OK;
    }
    for (i = 1; i < cf->args->nelts; i++) {
        mask = rx_array_push(&ccf->cpu_affinity);
        if (mask == NULL) {
            return RX_CONF_ERROR;
        }
        if (!parse_mask(&value[i], mask)) {
            goto invalid;
        }
    }
    return RX_CONF_OK;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0,
        "invalid value \"%s\" in \"%s\" directive, it must be \"auto\" or a "
        "CPU mask of 0 and 1 such as 0101", value[i == 1 && ccf->cpu_affinity_auto ? 2 : i].data,
        value[0].data);
    return RX_CONF_ERROR;
}

static const char *
set_priority(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_core_conf_t *ccf = conf;
    rx_str_t       *value = cf->args->elts;
    bool            minus = value[1].len && value[1].data[0] == '-';
    rx_int_t        n;

    if (ccf->priority_set) {
        return "is duplicate";
    }
    n = rx_atoi(value[1].data + (minus || value[1].data[0] == '+'),
                value[1].len - (minus || value[1].data[0] == '+'));
    if (n == -1 || n > 20) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in \"%s\" "
            "directive, it must be a number from -20 to 20", value[1].data,
            value[0].data);
        return RX_CONF_ERROR;
    }
    ccf->priority = minus ? -n : n;
    ccf->priority_set = 1;
    return RX_CONF_OK;
}

static const char *
set_user(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_core_conf_t *ccf = conf;
    rx_str_t       *value = cf->args->elts;
    struct passwd  *pw;
    struct group   *gr;
    const char     *group;

    if (ccf->user != (uid_t) RX_CONF_UNSET_UINT || ccf->user_set) {
        return "is duplicate";
    }
    ccf->user_set = 1;
    if (geteuid() != 0) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"user\" directive makes "
            "sense only if the master process runs with super-user "
            "privileges, ignored");
        return RX_CONF_OK;
    }
    errno = 0;
    pw = getpwnam(value[1].data);
    if (pw == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "getpwnam(\"%s\") failed",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    group = cf->args->nelts == 2 ? value[1].data : value[2].data;
    errno = 0;
    gr = getgrnam(group);
    if (gr == NULL && cf->args->nelts == 3) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "getgrnam(\"%s\") failed",
                          group);
        return RX_CONF_ERROR;
    }
    ccf->username = value[1];
    ccf->user = pw->pw_uid;
    ccf->group = gr ? gr->gr_gid : pw->pw_gid;
    return RX_CONF_OK;
}

static const char *
set_env(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_core_conf_t *ccf = conf;
    rx_str_t       *value = cf->args->elts, *var;

    var = rx_array_push(&ccf->env);
    if (var == NULL) {
        return RX_CONF_ERROR;
    }
    *var = value[1];
    return RX_CONF_OK;
}
