/*
 * http_limit_rate.c: limit_rate, limit_rate_after and $limit_rate: how many
 * response bytes a request may send by now, and the worker timer that
 * brings http_send.c back when it may send again (never a sleep).
 */
#include "http.h"
#include "http_script.h"
#include "http_variables.h"
#include "http_variables_int.h"
#include "clock.h"

/* A delayed send waits until at least this share of a second's worth of
 * bytes may go, so that a limited response leaves in a few sends a second
 * rather than in one tiny send per millisecond. */
#define RATE_MIN_SHARE  8

/* The value of a size directive with variables; bad values are logged and
 * read as 0 (no limit), as nginx reads them. */
static size_t
eval_size(rx_http_request_t *r, const rx_http_complex_value_t *cv,
    const char *directive)
{
    rx_str_t text;
    ssize_t  n;

    if (cv == NULL || rx_http_complex_value(r, cv, &text) != RX_OK) {
        return 0;
    }
    n = rx_parse_size(&text);
    if (n < 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0,
                                  "invalid \"%s\" value \"%.*s\"", directive,
                                  (int) text.len, text.data);
        return 0;
    }
    return (size_t) n;
}

void
rx_http_limit_rate_start(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    if (!r->limit_rate_set) {
        r->limit_rate = eval_size(r, clcf->limit_rate, "limit_rate");
        r->limit_rate_set = 1;
    }
    if (!r->limit_rate_after_set) {
        r->limit_rate_after = eval_size(r, clcf->limit_rate_after,
                                        "limit_rate_after");
        r->limit_rate_after_set = 1;
    }
    if (r->limit_rate) {
        /* every byte must pass http_send.c's pacing: no sendfile/splice */
        r->filter_need_in_memory = 1;
    }
}

static void
rate_timer_expired(rx_timer_t *t)
{
    rx_http_request_t *r = t->data;

    if (r->freed || r->hc == NULL || r->hc->r != r) {
        return;                 /* the request ended while it waited */
    }
    rx_http_connection_send(r->hc);
}

static void
rate_timer_cleanup(void *data)
{
    rx_timer_del(data);
}

/* Arms r's rate timer (made on first use, removed with r's pool). */
static bool
rate_delay(rx_http_request_t *r, rx_msec_t ms)
{
    if (r->rate_timer == NULL) {
        rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);
        rx_timer_t        *t = rx_pcalloc(r->pool, sizeof(*t));

        if (cln == NULL || t == NULL) {
            return false;
        }
        rx_heap_node_init(&t->node);
        t->handler = rate_timer_expired;
        t->data = r;
        cln->handler = rate_timer_cleanup;
        cln->data = t;
        r->rate_timer = t;
    }
    rx_timer_add(r->rate_timer, ms);
    return true;
}

size_t
rx_http_limit_rate_allow(rx_http_request_t *r, size_t want)
{
    double    rate = (double) r->limit_rate;
    double    elapsed, budget, floor_;
    rx_msec_t ms;

    if (r->rate_timer && rx_timer_is_set(r->rate_timer)) {
        return 0;               /* a delay runs: its timer sends */
    }
    /* as nginx: a second's worth at once, then the rate since the start */
    elapsed = (double) (rx_current_msec - r->start_msec) / 1000.0;
    budget = rate * (elapsed + 1.0)
             - (double) (r->bytes_sent - (int64_t) r->limit_rate_after);
    if (budget >= (double) want) {
        return want;
    }
    floor_ = rate / RATE_MIN_SHARE;
    if (floor_ > (double) want) {
        floor_ = (double) want;
    }
    if (floor_ < 1.0) {
        floor_ = 1.0;
    }
    if (budget >= floor_) {
        return (size_t) budget;
    }
    ms = (rx_msec_t) ((floor_ - budget) * 1000.0 / rate) + 1;
    if (!rate_delay(r, ms)) {
        return want;            /* out of memory: unpaced beats stuck */
    }
    return 0;
}

/* ---- $limit_rate ---- */

static rx_int_t
var_limit_rate(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    return rx_http_var_printf(r, v, 24, "%zu", r->limit_rate);
}

/* `set $limit_rate 10k;` replaces the directive's value, as nginx. */
static void
set_limit_rate(rx_http_request_t *r, const rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_str_t text = { v->len, v->data };
    ssize_t  n = rx_parse_size(&text);

    if (n < 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid size \"%.*s\"",
                                  (int) text.len, text.data);
        return;
    }
    r->limit_rate = (size_t) n;
    r->limit_rate_set = 1;
}

rx_int_t
rx_http_limit_rate_add_variables(rx_conf_t *cf)
{
    rx_str_t            name = rx_string("limit_rate");
    rx_http_variable_t *v;

    v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_CHANGEABLE
                                        | RX_HTTP_VAR_NOCACHEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = var_limit_rate;
    v->set = set_limit_rate;
    return RX_OK;
}
