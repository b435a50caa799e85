/*
 * event_conf.c: the events { } block and its directives, and the choice
 * of the workers' backend (`use io_uring | epoll`, which -t reports).
 * Several of nginx's event directives have no meaning here; they are
 * accepted so that nginx configurations load, and a notice says so once
 * per load.
 */
#include "core.h"
#include "cycle.h"
#include "event.h"

typedef struct {
    void **conf;     /* event modules' confs, by ctx_index */
} rx_event_conf_ctx_t;

static const char *events_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_use(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_meaningless(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

static const rx_command_t events_commands[] = {
    { "events", RX_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_NOARGS,
      events_block, 0, 0, NULL },
    rx_null_command
};

static const char *events_init_conf(rx_cycle_t *cycle, void *conf);

static const rx_core_module_t events_ctx = { "events", NULL, events_init_conf };

rx_module_t rx_events_module = {
    "rx_events_module", 0, 0, RX_CORE_MODULE, &events_ctx, events_commands,
    NULL, NULL, NULL, NULL
};

static const rx_conf_bounds_t connections_bounds = { 1, 1 << 24 };

static const rx_command_t event_core_commands[] = {
    { "worker_connections", RX_EVENT_CONF | RX_CONF_TAKE1,
      rx_conf_set_num_slot, 0, offsetof(rx_event_conf_t, connections),
      &connections_bounds },
    { "use", RX_EVENT_CONF | RX_CONF_TAKE1, set_use, 0, 0, NULL },
    { "multi_accept", RX_EVENT_CONF | RX_CONF_FLAG,
      set_meaningless, 0, offsetof(rx_event_conf_t, multi_accept),
      "multishot accept takes every pending connection" },
    { "accept_mutex", RX_EVENT_CONF | RX_CONF_FLAG,
      set_meaningless, 0, offsetof(rx_event_conf_t, accept_mutex),
      "workers share listening sockets without a mutex (or use reuseport)" },
    { "accept_mutex_delay", RX_EVENT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "ringx has no accept mutex" },
    { "worker_aio_requests", RX_EVENT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "file I/O goes through the worker's io_uring" },
    { "debug_connection", RX_EVENT_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, 0, 0, "not supported" },
    rx_null_command
};

static void *event_core_create_conf(rx_cycle_t *cycle);

rx_module_t rx_event_core_module = {
    "rx_event_core_module", 0, 0, RX_EVENT_MODULE, NULL, event_core_commands,
    NULL, NULL, NULL, NULL
};

static void *
event_core_create_conf(rx_cycle_t *cycle)
{
    rx_event_conf_t *ecf = rx_pcalloc(cycle->pool, sizeof(rx_event_conf_t));

    if (ecf == NULL) {
        return NULL;
    }
    ecf->connections = RX_CONF_UNSET_UINT;
    ecf->multi_accept = RX_CONF_UNSET;
    ecf->accept_mutex = RX_CONF_UNSET;
    return ecf;
}

/* The events conf: the parsed one, or defaults when there was no block. */
rx_event_conf_t *
rx_event_get_conf(rx_cycle_t *cycle)
{
    void **ctx = cycle->conf_ctx[rx_events_module.index];
    return ctx ? ctx[rx_event_core_module.ctx_index] : NULL;
}

static const char *
events_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    void               ***slot = conf;
    rx_event_conf_ctx_t   ctx;
    rx_conf_t             saved;
    const char           *rv;

    if (*slot) {
        return "is duplicate";
    }
    ctx.conf = rx_pcalloc(cf->pool, sizeof(void *) * rx_modules_count(RX_EVENT_MODULE));
    if (ctx.conf == NULL) {
        return RX_CONF_ERROR;
    }
    ctx.conf[rx_event_core_module.ctx_index] = event_core_create_conf(cf->cycle);
    if (ctx.conf[rx_event_core_module.ctx_index] == NULL) {
        return RX_CONF_ERROR;
    }
    *slot = ctx.conf;

    saved = *cf;
    cf->ctx = &ctx;
    cf->module_type = RX_EVENT_MODULE;
    cf->cmd_type = RX_EVENT_CONF;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    return rv;
}

/* -t says which backend the workers will run: the one `use` names, else
 * io_uring if this process may set up a ring. */
static void
report_backend(rx_event_conf_t *ecf)
{
    const char *hint = "";
    int         rc;

    if (ecf->use_epoll) {
        rx_log_stderr(0, "the workers will use epoll (\"use epoll\")");
        return;
    }
    rc = rx_ring_probe(&hint);
    if (rc == 0) {
        rx_log_stderr(0, "the workers will use io_uring");
        return;
    }
    rx_log_stderr(-rc, "the workers will use epoll: io_uring_setup() failed; "
                  "%s", hint);
}

/* Fills defaults (the core modules' init loop calls it after parsing);
 * an absent events block is an error as in nginx. The cycle learns
 * worker_connections for -t's arithmetic (core/conf_check.c). */
static const char *
events_init_conf(rx_cycle_t *cycle, void *conf)
{
    rx_event_conf_t *ecf;

    if (conf == NULL) {
        rx_log_error(RX_LOG_EMERG, cycle->log, 0,
                     "no \"events\" section in configuration");
        return RX_CONF_ERROR;
    }
    ecf = rx_event_get_conf(cycle);
    rx_conf_init_uint(ecf->connections, 512);
    rx_conf_init_value(ecf->multi_accept, 0);
    rx_conf_init_value(ecf->accept_mutex, 0);
    cycle->worker_connections = ecf->connections;
    ecf->use_epoll = rx_str_eq(&ecf->use, "epoll");
    if (rx_test_config && !rx_quiet_mode) {
        report_backend(ecf);
    }
    return RX_CONF_OK;
}

static const char *
set_use(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_event_conf_t *ecf = conf;
    rx_str_t        *value = cf->args->elts;

    if (ecf->use.data) {
        return "is duplicate";
    }
    ecf->use = value[1];
    if (rx_str_eq(&value[1], "io_uring") || rx_str_eq(&value[1], "epoll")) {
        return RX_CONF_OK;
    }
    /* nginx's poll, select, kqueue...: refused, as nginx refuses a method
     * its build lacks */
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid event type \"%s\": ringx "
                      "supports \"io_uring\" and \"epoll\"", value[1].data);
    return RX_CONF_ERROR;
}

static const char *
set_meaningless(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    const char *rv = rx_conf_set_flag_slot(cf, cmd, conf);

    if (rv == RX_CONF_OK) {
        rx_conf_log_error(RX_LOG_NOTICE, cf, 0, "\"%s\" is ignored: %s",
                          cmd->name, (const char *) cmd->post);
    }
    return rv;
}
