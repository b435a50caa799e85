/*
 * status.c: stub_status: the shared counters (http/http_stats.c) in
 * nginx's exact format.
 */
#include "http.h"
#include "http_stats.h"

static const char *set_stub_status(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

static const rx_command_t status_commands[] = {
    { "stub_status", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_NOARGS
      | RX_CONF_TAKE1, set_stub_status, 0, 0, NULL },
    rx_null_command
};

static const rx_http_module_t status_ctx = { NULL };

rx_module_t rx_http_stub_status_module = {
    "rx_http_stub_status_module", 0, 0, RX_HTTP_MODULE, &status_ctx,
    status_commands, NULL, NULL, NULL, NULL
};

static rx_int_t
stub_status_handler(void *data)
{
    rx_http_request_t   *r = data;
    rx_http_stat_slot_t  sum;
    char                 text[512];
    rx_str_t             body, type = rx_string("text/plain");

    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD))) {
        return RX_HTTP_NOT_ALLOWED;
    }
    rx_http_stats_sum(&sum);
    body.data = text;
    body.len = (size_t) snprintf(text, sizeof(text),
        "Active connections: %" PRId64 " \n"
        "server accepts handled requests\n"
        " %" PRId64 " %" PRId64 " %" PRId64 " \n"
        "Reading: %" PRId64 " Writing: %" PRId64 " Waiting: %" PRId64 " \n",
        sum.active, sum.accepted, sum.handled, sum.requests, sum.reading,
        sum.writing,
        rx_max(sum.active - sum.reading - sum.writing, (int64_t) 0));
    return rx_http_send_response(r, RX_HTTP_OK, &type, &body);
}

/* nginx before 1.7.5 required an argument ("stub_status on"); any is
 * accepted and means the same. */
static const char *
set_stub_status(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_loc_conf_t *clcf = rx_http_conf_get_module_loc_conf(cf,
                                       rx_http_core_module);

    clcf->handler = stub_status_handler;
    return RX_CONF_OK;
}
