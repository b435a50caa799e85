/*
 * errlog.c: the error_log directive and the open-file list behind every
 * log: files are opened once per cycle, shared by name, and reopened on
 * USR1. Syslog targets are core/syslog.c's.
 */
#include "core.h"
#include "cycle.h"
#include "syslog.h"

static const char *set_error_log(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

static const rx_command_t errlog_commands[] = {
    { "error_log", RX_MAIN_CONF | RX_CONF_1MORE,
      set_error_log, 0, 0, NULL },
    rx_null_command
};

static const rx_core_module_t errlog_ctx = { "errlog", NULL, NULL };

rx_module_t rx_errlog_module = {
    "rx_errlog_module", 0, 0, RX_CORE_MODULE, &errlog_ctx, errlog_commands,
    NULL, NULL, NULL, NULL
};

rx_open_file_t *
rx_conf_open_file(rx_cycle_t *cycle, const rx_str_t *name)
{
    rx_open_file_t **files = cycle->open_files.elts, *file, **slot;
    rx_str_t         full = *name;
    rx_uint_t        i;

    if (rx_str_eq(name, "stderr")) {
        return &rx_stderr_file;
    }
    if (rx_conf_full_name(cycle, &full, false) != RX_OK) {
        return NULL;
    }
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->name.len == full.len
            && memcmp(files[i]->name.data, full.data, full.len) == 0) {
            return files[i];
        }
    }
    file = rx_pcalloc(cycle->pool, sizeof(rx_open_file_t));
    slot = rx_array_push(&cycle->open_files);
    if (file == NULL || slot == NULL) {
        return NULL;
    }
    file->fd = -1;
    file->name = full;
    *slot = file;
    return file;
}

/* Parses "error_log file|stderr|syslog:... [level]" into a new target
 * appended to *head's chain (the cycle's new_log for the main context). */
const char *
rx_log_set_log(rx_conf_t *cf, rx_log_t **head)
{
    rx_str_t  *value = cf->args->elts;
    rx_log_t  *log, *last;
    rx_int_t   level = RX_LOG_ERR;

    if (cf->args->nelts > 3) {
        return "has too many parameters";
    }
    if (cf->args->nelts == 3) {
        level = rx_log_level_by_name(&value[2]);
        if (level == RX_ERROR) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid log level \"%s\", "
                "it must be one of debug, info, notice, warn, error, crit, "
                "alert, emerg", value[2].data);
            return RX_CONF_ERROR;
        }
    }
    if (strncmp(value[1].data, "memory:", 7) == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" error logs are not "
            "supported by ringx; log to a file, stderr or syslog",
            value[1].data);
        return RX_CONF_ERROR;
    }

    if (*head == NULL || ((*head)->file == NULL && (*head)->syslog == NULL)) {
        log = *head ? *head : rx_pcalloc(cf->pool, sizeof(rx_log_t));
        if (log == NULL) {
            return RX_CONF_ERROR;
        }
        *head = log;
    } else {
        log = rx_pcalloc(cf->pool, sizeof(rx_log_t));
        if (log == NULL) {
            return RX_CONF_ERROR;
        }
        /* targets are kept in the order written; each filters by level */
        for (last = *head; last->next; last = last->next) { }
        last->next = log;
    }
    log->level = (unsigned) level;
    if (strncmp(value[1].data, "syslog:", 7) == 0) {
        log->syslog = rx_syslog_process_conf(cf, &value[1]);
        return log->syslog ? RX_CONF_OK : RX_CONF_ERROR;
    }
    log->file = rx_conf_open_file(cf->cycle, &value[1]);
    return log->file ? RX_CONF_OK : RX_CONF_ERROR;
}

static const char *
set_error_log(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_log_t *head = &cf->cycle->new_log;
    return rx_log_set_log(cf, &head);
}

/* Opens every file of the cycle; logs and fails on the first that won't. */
static rx_int_t
open_one(rx_cycle_t *cycle, rx_open_file_t *file)
{
    int fd = open(file->name.data, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                  0644);

    if (fd == -1) {
        rx_log_error(RX_LOG_EMERG, cycle->log, errno, "open() \"%s\" failed",
                     file->name.data);
        return RX_ERROR;
    }
    file->fd = fd;
    return RX_OK;
}

rx_int_t
rx_log_open_default(rx_cycle_t *cycle)
{
    rx_open_file_t **files;
    rx_log_t        *log, *last;
    rx_uint_t        i;

    if (rx_log_get_file_log(&cycle->new_log) == NULL) {
        /* no error_log file in the config: the -e file or the built-in
         * default, also next to syslog targets, as nginx does */
        log = &cycle->new_log;
        if (log->syslog) {
            log = rx_pcalloc(cycle->pool, sizeof(rx_log_t));
            if (log == NULL) {
                return RX_ERROR;
            }
            for (last = &cycle->new_log; last->next; last = last->next) { }
            last->next = log;
        }
        log->file = rx_conf_open_file(cycle, &cycle->error_log);
        log->level = RX_LOG_ERR;
        if (log->file == NULL) {
            return RX_ERROR;
        }
    }
    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->fd == -1 && open_one(cycle, files[i]) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

void
rx_reopen_files(rx_cycle_t *cycle)
{
    rx_open_file_t **files = cycle->open_files.elts;
    rx_core_conf_t  *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_uint_t        i;
    int              fd;

    for (i = 0; i < cycle->open_files.nelts; i++) {
        fd = open(files[i]->name.data, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                  0644);
        if (fd == -1) {
            rx_log_error(RX_LOG_EMERG, cycle->log, errno,
                         "open() \"%s\" failed", files[i]->name.data);
            continue;
        }
        /* The master runs first and, as root, hands a file it just created
         * to the workers' user so that their own reopen succeeds. */
        if (rx_process == RX_PROCESS_MASTER && geteuid() == 0
            && ccf->user != (uid_t) RX_CONF_UNSET_UINT
            && fchown(fd, ccf->user, (gid_t) -1) == -1) {
            rx_log_error(RX_LOG_EMERG, cycle->log, errno,
                         "chown(\"%s\", %d) failed", files[i]->name.data,
                         (int) ccf->user);
        }
        if (files[i]->fd != -1) {
            /* keep the descriptor number: others may have copied it */
            if (dup2(fd, files[i]->fd) == -1) {
                rx_log_error(RX_LOG_ALERT, cycle->log, errno, "dup2() failed");
            }
            close(fd);
        } else {
            files[i]->fd = fd;
        }
    }
}
