/*
 * status.c: connection and request counters in shared memory, and the
 * stub_status handler that prints them in nginx's exact format.
 *
 * Each worker index owns a cache-line slot; a worker only adds to its own
 * slot (an old and a new worker of the same index may overlap during a
 * reload, hence atomic adds), and the handler sums all slots. The mapping
 * is made once by the master and survives reloads, as nginx's counters do.
 */
#include "http.h"
#include "shm.h"

#define STAT_SLOTS  64

typedef struct {
    int64_t  accepted;
    int64_t  handled;
    int64_t  requests;
    int64_t  active;
    int64_t  reading;
    int64_t  writing;
    char     pad[16];
} __attribute__((aligned(64))) rx_http_stat_slot_t;

static rx_shm_t             stat_shm;
static rx_http_stat_slot_t *my_slot;

static const char *set_stub_status(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static rx_int_t status_init_module(rx_cycle_t *cycle);
static rx_int_t status_init_process(rx_cycle_t *cycle);

static const rx_command_t status_commands[] = {
    { "stub_status", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_NOARGS
      | RX_CONF_TAKE1, set_stub_status, 0, 0, NULL },
    rx_null_command
};

static const rx_http_module_t status_ctx = { NULL };

rx_module_t rx_http_stub_status_module = {
    "rx_http_stub_status_module", 0, 0, RX_HTTP_MODULE, &status_ctx,
    status_commands, status_init_module, status_init_process, NULL, NULL
};

static rx_int_t
status_init_module(rx_cycle_t *cycle)
{
    if (stat_shm.addr) {
        return RX_OK;                  /* kept across reloads */
    }
    return rx_shm_alloc(&stat_shm, STAT_SLOTS * sizeof(rx_http_stat_slot_t),
                        cycle->log);
}

void rx_http_stat_worker_slot(rx_uint_t worker);

void
rx_http_stat_worker_slot(rx_uint_t worker)
{
    my_slot = stat_shm.addr
              ? (rx_http_stat_slot_t *) stat_shm.addr + worker % STAT_SLOTS
              : NULL;
}

static rx_int_t
status_init_process(rx_cycle_t *cycle)
{
    return RX_OK;
}

static inline void
add(int64_t *counter, int64_t delta)
{
    __atomic_fetch_add(counter, delta, __ATOMIC_RELAXED);
}

void
rx_http_stat_accepted(int delta)
{
    if (my_slot) {
        add(&my_slot->accepted, delta > 0 ? 1 : 0);
        add(&my_slot->handled, delta > 0 ? 1 : 0);
        add(&my_slot->active, delta);
    }
}

void
rx_http_stat_reading(int delta)
{
    if (my_slot) add(&my_slot->reading, delta);
}

void
rx_http_stat_writing(int delta)
{
    if (my_slot) add(&my_slot->writing, delta);
}

void
rx_http_stat_request(void)
{
    if (my_slot) add(&my_slot->requests, 1);
}

static rx_int_t
stub_status_handler(void *data)
{
    rx_http_request_t   *r = data;
    rx_http_stat_slot_t *s = stat_shm.addr;
    int64_t              sum[6] = { 0 };
    char                 text[512];
    rx_str_t             body, type = rx_string("text/plain");
    rx_uint_t            i;

    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD))) {
        return RX_HTTP_NOT_ALLOWED;
    }
    for (i = 0; s && i < STAT_SLOTS; i++) {
        sum[0] += __atomic_load_n(&s[i].active, __ATOMIC_RELAXED);
        sum[1] += __atomic_load_n(&s[i].accepted, __ATOMIC_RELAXED);
        sum[2] += __atomic_load_n(&s[i].handled, __ATOMIC_RELAXED);
        sum[3] += __atomic_load_n(&s[i].requests, __ATOMIC_RELAXED);
        sum[4] += __atomic_load_n(&s[i].reading, __ATOMIC_RELAXED);
        sum[5] += __atomic_load_n(&s[i].writing, __ATOMIC_RELAXED);
    }
    body.data = text;
    body.len = (size_t) snprintf(text, sizeof(text),
        "Active connections: %" PRId64 " \n"
        "server accepts handled requests\n"
        " %" PRId64 " %" PRId64 " %" PRId64 " \n"
        "Reading: %" PRId64 " Writing: %" PRId64 " Waiting: %" PRId64 " \n",
        sum[0], sum[1], sum[2], sum[3], sum[4], sum[5],
        rx_max(sum[0] - sum[4] - sum[5], (int64_t) 0));
    return rx_http_send_response(r, RX_HTTP_OK, &type, &body);
}

static const char *
set_stub_status(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = rx_http_conf_get_module_loc_conf(cf,
                                       rx_http_core_module);

    clcf->handler = stub_status_handler;
    return RX_CONF_OK;
}
