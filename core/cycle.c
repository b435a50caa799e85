/*
 * cycle.c: building a cycle from a configuration file (parse, check,
 * open files and sockets) and freeing one that is no longer used.
 */
#include "core.h"
#include <ctype.h>
#include <sys/stat.h>
#include "cycle.h"
#include "clock.h"
#include "shm_zone.h"
#include "counters.h"

rx_cycle_t *rx_cycle;
bool rx_test_config, rx_dump_config, rx_quiet_mode;
rx_uint_t rx_process = RX_PROCESS_SINGLE;

static rx_int_t
copy_str(rx_pool_t *pool, rx_str_t *dst, const rx_str_t *src)
{
    if (src->data == NULL) {
        dst->len = 0;
        dst->data = NULL;
        return RX_OK;
    }
    dst->len = src->len;
    dst->data = rx_pstrdup(pool, src);
    return dst->data ? RX_OK : RX_ERROR;
}

/* The host's name, lower-cased as nginx keeps it, read for each cycle (a
 * reload sees a new one): syslog headers, server_name $hostname. */
static rx_int_t
get_hostname(rx_cycle_t *cycle)
{
    char   host[256];
    size_t i;

    if (gethostname(host, sizeof(host) - 1) == -1) {
        rx_log_error(RX_LOG_EMERG, cycle->log, errno, "gethostname() failed");
        return RX_ERROR;
    }
    host[sizeof(host) - 1] = '\0';
    for (i = 0; host[i]; i++) {
        host[i] = (char) tolower((unsigned char) host[i]);
    }
    cycle->hostname.len = i;
    cycle->hostname.data = rx_pstrdup_c(cycle->pool, host, i);
    return cycle->hostname.data ? RX_OK : RX_ERROR;
}

static rx_cycle_t *
create_cycle(rx_cycle_t *old)
{
    rx_pool_t  *pool;
    rx_cycle_t *cycle;

    pool = rx_pool_create(16384, old->log);
    if (pool == NULL) {
        return NULL;
    }
    cycle = rx_pcalloc(pool, sizeof(rx_cycle_t));
    if (cycle == NULL) {
        goto failed;
    }
    cycle->pool = pool;
    cycle->log = old->log;
    cycle->old_cycle = old;
    if (copy_str(pool, &cycle->conf_file, &old->conf_file) != RX_OK
        || copy_str(pool, &cycle->conf_prefix, &old->conf_prefix) != RX_OK
        || copy_str(pool, &cycle->prefix, &old->prefix) != RX_OK
        || copy_str(pool, &cycle->error_log, &old->error_log) != RX_OK
        || copy_str(pool, &cycle->conf_param, &old->conf_param) != RX_OK
        || get_hostname(cycle) != RX_OK) {
        goto failed;
    }
    if (rx_array_init(&cycle->open_files, pool, 8, sizeof(void *)) != RX_OK
        || rx_array_init(&cycle->listening, pool, 8, sizeof(rx_listening_t)) != RX_OK
        || rx_array_init(&cycle->config_dump, pool, 4, sizeof(rx_conf_dump_t)) != RX_OK
        || rx_array_init(&cycle->paths, pool, 4, sizeof(rx_path_t)) != RX_OK
        || rx_array_init(&cycle->shm_zones, pool, 4, sizeof(void *)) != RX_OK) {
        goto failed;
    }
    cycle->conf_ctx = rx_pcalloc(pool, rx_modules_n * sizeof(void *));
    cycle->modules_used = rx_pcalloc(pool, rx_modules_n);
    if (cycle->conf_ctx == NULL || cycle->modules_used == NULL) {
        goto failed;
    }
    return cycle;

failed:
    rx_pool_destroy(pool);
    return NULL;
}

static rx_int_t
parse_config(rx_cycle_t *cycle)
{
    rx_conf_t  cf;
    rx_uint_t  i;
    rx_int_t   rc = RX_ERROR;

    memset(&cf, 0, sizeof(cf));
    cf.args = rx_array_create(cycle->pool, 10, sizeof(rx_str_t));
    cf.temp_pool = rx_pool_create(16384, cycle->log);
    if (cf.args == NULL || cf.temp_pool == NULL) {
        goto done;
    }
    cf.cycle = cycle;
    cf.pool = cycle->pool;
    cf.log = cycle->log;
    cf.ctx = cycle->conf_ctx;
    cf.module_type = RX_CORE_MODULE;
    cf.cmd_type = RX_MAIN_CONF;
    cf.dump = rx_dump_config;

    for (i = 0; i < rx_modules_n; i++) {
        const rx_core_module_t *m = rx_modules[i]->ctx;

        if (rx_modules[i]->type != RX_CORE_MODULE || m->create_conf == NULL) {
            continue;
        }
        cycle->conf_ctx[i] = m->create_conf(cycle);
        if (cycle->conf_ctx[i] == NULL) {
            goto done;
        }
    }
    if (cycle->conf_param.len
        && rx_conf_parse_param(&cf, &cycle->conf_param) != RX_CONF_OK) {
        goto done;
    }
    if (rx_conf_parse(&cf, &cycle->conf_file) != RX_CONF_OK) {
        goto done;
    }
    if (rx_test_config && !rx_quiet_mode) {
        rx_log_stderr(0, "the configuration file %s syntax is ok",
                      cycle->conf_file.data);
    }
    for (i = 0; i < rx_modules_n; i++) {
        const rx_core_module_t *m = rx_modules[i]->ctx;

        if (rx_modules[i]->type != RX_CORE_MODULE || m->init_conf == NULL) {
            continue;
        }
        if (m->init_conf(cycle, cycle->conf_ctx[i]) != RX_CONF_OK) {
            goto done;
        }
    }
    rc = RX_OK;

done:
    rx_pool_destroy(cf.temp_pool);
    return rc;
}

/* Temporary-file directories (proxy_temp_path ...): made by the master,
 * owned by the workers' user so that they can write there. */
static rx_int_t
create_paths(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = cycle->conf_ctx[rx_core_module.index];
    rx_path_t      *path = cycle->paths.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->paths.nelts; i++) {
        if (mkdir(path[i].name.data, 0700) == -1 && errno != EEXIST) {
            rx_log_error(RX_LOG_EMERG, cycle->log, errno, "mkdir() \"%s\" failed",
                         path[i].name.data);
            return RX_ERROR;
        }
        if (geteuid() == 0 && ccf->user != (uid_t) RX_CONF_UNSET_UINT
            && chown(path[i].name.data, ccf->user, (gid_t) -1) == -1) {
            rx_log_error(RX_LOG_EMERG, cycle->log, errno, "chown(\"%s\", %ld) "
                         "failed", path[i].name.data, (long) ccf->user);
            return RX_ERROR;
        }
    }
    return RX_OK;
}

rx_cycle_t *
rx_init_cycle(rx_cycle_t *old)
{
    rx_cycle_t *cycle;
    rx_uint_t   i;

    rx_time_update();
    cycle = create_cycle(old);
    if (cycle == NULL) {
        return NULL;
    }
    if (parse_config(cycle) != RX_OK) {
        goto failed;
    }
    if (rx_process == RX_PROCESS_SIGNALLER) {
        return cycle;
    }
    if (rx_shm_zones_check(cycle) != RX_OK) {
        goto failed;
    }
    if (rx_test_config) {
        /* -t checks the configuration and the fd arithmetic only: it opens
         * no log and binds no socket (nginx -t opens its logs) */
        return cycle;
    }
    if (rx_log_open_default(cycle) != RX_OK) {
        goto failed;
    }
    if (create_paths(cycle) != RX_OK) {
        goto failed;
    }
    if (rx_open_listening_sockets(cycle) != RX_OK) {
        goto failed;
    }
    /* zones before init_module, as nginx: a module may look at them */
    if (rx_counters_init(cycle->log) != RX_OK
        || rx_shm_zones_init(cycle) != RX_OK) {
        goto failed;
    }
    for (i = 0; i < rx_modules_n; i++) {
        if (rx_modules[i]->init_module
            && rx_modules[i]->init_module(cycle) != RX_OK) {
            goto failed;
        }
    }
    rx_shm_zones_commit(cycle);
    /* from here on the new logs are the ones */
    cycle->log = &cycle->new_log;
    cycle->pool->log = cycle->log;
    return cycle;

failed:
    rx_free_cycle(cycle);
    return NULL;
}

rx_path_t *
rx_cycle_path(rx_cycle_t *cycle, const char *name)
{
    rx_path_t *p = cycle->paths.elts;
    rx_uint_t  i;

    for (i = 0; i < cycle->paths.nelts; i++) {
        if (strcmp(p[i].name.data, name) == 0) {
            return &p[i];
        }
    }
    return NULL;
}

/* Closes what the cycle opened and frees its memory. Listening sockets
 * taken over by a newer cycle (inherited) were marked and are left open. */
void
rx_free_cycle(rx_cycle_t *cycle)
{
    rx_open_file_t **files;
    rx_uint_t        i;

    if (cycle == NULL) {
        return;
    }
    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->fd > STDERR_FILENO) {
            close(files[i]->fd);
            files[i]->fd = -1;
        }
    }
    rx_close_listening_sockets(cycle);
    rx_pool_destroy(cycle->pool);
}
