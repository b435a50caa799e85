/*
 * http_upstream_random.c: the `random [two [least_conn]]` balancer. Plain
 * `random` picks a server at random with probability proportional to its
 * weight; `two` picks two different servers that way and sends the request
 * to the one with fewer active connections relative to its weight (this
 * worker's counts). Servers that are out or already tried by the request
 * are drawn again; after 20 draws the request falls back to round robin,
 * as nginx. `backup` servers are refused.
 *
 * The generator is xorshift64*, seeded per worker on first use (pid, time
 * and an address), so that workers do not draw the same sequence.
 */
#include <unistd.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"

#define RANDOM_TRIES  20

typedef struct {
    bool  two;
} random_conf_t;

static const char *set_random(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_http_upstream_peer_t *get_peer(rx_http_upstream_t *u);

static const rx_command_t random_commands[] = {
    { "random", RX_HTTP_UPS_CONF | RX_CONF_NOARGS | RX_CONF_TAKE12, set_random,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t random_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_upstream_random_module = {
    "rx_http_upstream_random_module", 0, 0, RX_HTTP_MODULE, &random_ctx,
    random_commands, NULL, NULL, NULL, NULL
};

static const rx_http_upstream_balancer_t random_balancer = {
    "random", false, NULL, get_peer
};

/* random [two [least_conn]]: least_conn is the only method of `two` (and
 * its default); nginx's least_time is of its commercial version. */
static const char *
set_random(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t      *value = cf->args->elts;
    random_conf_t *rc = rx_pcalloc(cf->pool, sizeof(*rc));
    rx_uint_t      i;

    if (rc == NULL) {
        return RX_CONF_ERROR;
    }
    for (i = 1; i < cf->args->nelts; i++) {
        if (i == 1 && rx_str_eq(&value[i], "two")) {
            rc->two = true;
        } else if (i == 2 && rx_str_eq(&value[i], "least_conn")) {
            /* the default */
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
    }
    return rx_http_upstream_set_balancer(cf, &random_balancer, rc);
}

static uint64_t
next_random(void)
{
    static uint64_t state;
    static pid_t    seeded_for;
    uint64_t        x;

    if (state == 0 || seeded_for != getpid()) {
        seeded_for = getpid();
        state = ((uint64_t) seeded_for << 32) ^ (uint64_t) rx_current_msec
                ^ (uint64_t) (uintptr_t) &x ^ 0x9e3779b97f4a7c15ULL;
        if (state == 0) {
            state = 1;
        }
    }
    x = state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* A primary peer drawn by weight: its index. */
static rx_uint_t
draw(const rx_http_upstream_peers_t *peers)
{
    /* the high bits are the better ones of xorshift64* */
    rx_uint_t w = (rx_uint_t) ((next_random() >> 11)
                               % (uint64_t) peers->total_weight);
    rx_uint_t i;

    for (i = 0; w >= (rx_uint_t) peers->peer[i].weight; i++) {
        w -= (rx_uint_t) peers->peer[i].weight;
    }
    return i;
}

static bool
usable(rx_http_upstream_t *u, rx_uint_t index)
{
    return !rx_http_upstream_tried(u, index)
           && rx_http_upstream_peer_available(u->us, &u->us->primary.peer[index]);
}

/* Draws until a usable peer other than not comes out; tries counts draws
 * across calls. Returns the index, or -1 when the draws ran out. */
static rx_int_t
draw_usable(rx_http_upstream_t *u, rx_int_t not, rx_uint_t *tries)
{
    while (*tries < RANDOM_TRIES) {
        rx_uint_t i = draw(&u->us->primary);

        (*tries)++;
        if ((rx_int_t) i != not && usable(u, i)) {
            return (rx_int_t) i;
        }
    }
    return -1;
}

static rx_http_upstream_peer_t *
get_peer(rx_http_upstream_t *u)
{
    random_conf_t           *rc = u->us->balancer_conf;
    rx_http_upstream_peer_t *peer = u->us->primary.peer;
    rx_uint_t                tries = 0;
    rx_int_t                 a, b;

    if (u->us->primary.n == 1) {
        goto rr;
    }
    a = draw_usable(u, -1, &tries);
    if (a < 0) {
        goto rr;
    }
    if (rc->two) {
        /* with no second one left, the first is the choice */
        b = draw_usable(u, a, &tries);
        if (b >= 0
            && (uint64_t) peer[b].conns * (uint64_t) peer[a].weight
               < (uint64_t) peer[a].conns * (uint64_t) peer[b].weight) {
            a = b;
        }
    }
    rx_http_upstream_mark_tried(u, (rx_uint_t) a);
    rx_http_upstream_take_peer(&peer[a]);
    return &peer[a];

rr:
    return rx_http_upstream_get_peer(u->us, u->tried);
}
