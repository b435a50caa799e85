/*
 * limit_req.c: limit_req_zone, limit_req and their settings: a leaky
 * bucket per key in a shared memory zone, checked in the preaccess phase,
 * counted across all workers. A request over the rate waits on its own
 * timer (burst) or is refused (limit_req_status, with Retry-After).
 *
 * The bucket, in thousandths of a request: each request adds 1000, the
 * rate drains rate per second; the level after this request ("excess") is
 * compared with burst (refuse above it) and delay (wait above it, for
 * (excess - delay) / rate). As nginx: with several limits, each but the
 * last is only checked (its node pinned by count) until the last one has
 * decided, so a request refused by one zone is not counted by the others.
 * Nodes are kept in least recently used order; an idle one is dropped
 * when a new key needs room (after a minute, or at once when the zone is
 * full).
 */
#include "http.h"
#include "http_script.h"
#include "http_variables.h"
#include "clock.h"
#include "limit_table.h"
#include "limit_common.h"
#include "http_stats.h"

#define LR_PASSED            1
#define LR_DELAYED           2
#define LR_REJECTED          3
#define LR_DELAYED_DRY_RUN   4
#define LR_REJECTED_DRY_RUN  5

#define NODELAY   (INT64_MAX / 4)
#define MAX_KEY   65535
#define EVICT_MAX 4           /* the oldest nodes dropped to make room */

typedef struct lr_node_s lr_node_t;

struct lr_node_s {
    rx_limit_node_t  node;
    lr_node_t       *prev;      /* LRU: toward the most recent */
    lr_node_t       *next;      /* toward the oldest */
    int64_t          excess;    /* thousandths of a request */
    rx_msec_t        last;      /* when excess was last computed */
    uint32_t         count;     /* requests between check and account */
};

/* The zone's root, in shared memory. */
typedef struct {
    rx_limit_table_t *table;
    lr_node_t        *newest;
    lr_node_t        *oldest;
} lr_shared_t;

/* zone->data: one limit_req_zone of this cycle. */
typedef struct {
    rx_shm_zone_t           *zone;
    rx_http_complex_value_t  key;
    int64_t                  rate;       /* thousandths of a request / s */
    lr_node_t               *node;       /* pinned by this request */
    uint64_t                 generation; /* of the zone when pinned */
    rx_log_limit_t           nomem;      /* "could not allocate node" */
} lr_ctx_t;

typedef struct {
    rx_shm_zone_t  *zone;
    int64_t         burst;      /* thousandths */
    int64_t         delay;      /* thousandths; NODELAY */
} lr_limit_t;

typedef struct {
    rx_array_t  *limits;            /* lr_limit_t; NULL: none here */
    rx_uint_t    log_level;         /* limit_req_log_level */
    rx_uint_t    delay_log_level;   /* one level less important */
    rx_int_t     status;            /* limit_req_status */
    rx_int_t     dry_run;
} lr_conf_t;

typedef struct {
    rx_timer_t          timer;
    rx_http_request_t  *r;
} lr_delay_t;

static const char *set_zone(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_limit(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static rx_int_t postconfiguration(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_conf_bounds_t status_bounds = { 400, 599 };

static const rx_command_t limit_req_commands[] = {
    { "limit_req_zone", RX_HTTP_MAIN_CONF | RX_CONF_TAKE3, set_zone,
      0, 0, NULL },
    { "limit_req", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE123, set_limit, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "limit_req_log_level", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_enum_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(lr_conf_t, log_level),
      rx_limit_log_levels },
    { "limit_req_status", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(lr_conf_t, status), &status_bounds },
    { "limit_req_dry_run", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(lr_conf_t, dry_run), NULL },
    rx_null_command
};

static const rx_http_module_t limit_req_ctx = {
    preconfiguration, postconfiguration, NULL, NULL, NULL, NULL,
    create_conf, merge_conf
};

rx_module_t rx_http_limit_req_module = {
    "rx_http_limit_req_module", 0, 0, RX_HTTP_MODULE, &limit_req_ctx,
    limit_req_commands, NULL, NULL, NULL, NULL
};

/* ---- the shared state ---------------------------------------------------------- */

static void
lru_unlink(lr_shared_t *sh, lr_node_t *n)
{
    if (n->prev) n->prev->next = n->next; else sh->newest = n->next;
    if (n->next) n->next->prev = n->prev; else sh->oldest = n->prev;
    n->prev = n->next = NULL;
}

static void
lru_push(lr_shared_t *sh, lr_node_t *n)
{
    n->prev = NULL;
    n->next = sh->newest;
    if (sh->newest) sh->newest->prev = n; else sh->oldest = n;
    sh->newest = n;
}

static void
drop(lr_ctx_t *ctx, lr_shared_t *sh, lr_node_t *n)
{
    lru_unlink(sh, n);
    rx_limit_table_delete(ctx->zone, sh->table, &n->node);
}

/* Elapsed ms since the node's last count; another worker's cached clock
 * may be a little ahead of ours. */
static int64_t
elapsed(const lr_node_t *n, rx_msec_t now)
{
    int64_t ms = (int64_t) (now - n->last);

    return ms < -60000 ? 1 : ms < 0 ? 0 : ms;
}

/* What the bucket lost in ms at rate (thousandths), without overflowing
 * for a key unseen for long at a high rate. */
static int64_t
drained(int64_t rate, int64_t ms)
{
    return ms > INT64_MAX / rate ? INT64_MAX / 2 : rate * ms / 1000;
}

/* Idle nodes at the old end go: up to two that have drained and were not
 * seen for a minute; with force, first the oldest whatever its state. */
static void
expire(lr_ctx_t *ctx, lr_shared_t *sh, bool force)
{
    rx_uint_t  i;
    lr_node_t *n;
    int64_t    ms;

    for (i = force ? 0 : 1; i < 3; i++) {
        n = sh->oldest;
        if (n == NULL || n->count) {
            return;         /* pinned: the ones before it were seen later */
        }
        if (i) {
            ms = (int64_t) (rx_current_msec - n->last);
            ms = ms < 0 ? -ms : ms;
            if (ms < 60000 || n->excess - drained(ctx->rate, ms) > 0) {
                return;
            }
        }
        drop(ctx, sh, n);
    }
}

static lr_node_t *
new_node(rx_http_request_t *r, lr_ctx_t *ctx, lr_shared_t *sh, uint32_t hash,
    const rx_str_t *key)
{
    rx_limit_node_t *node;
    rx_uint_t        i;

    expire(ctx, sh, false);
    node = rx_limit_table_insert(ctx->zone, sh->table, sizeof(lr_node_t),
                                 hash, key->data, key->len);
    /* full: the least recently used go, a few at most (a huge key must
     * not wipe everybody's state) */
    for (i = 0; node == NULL && i < EVICT_MAX && sh->oldest
                && sh->oldest->count == 0; i++) {
        expire(ctx, sh, true);
        node = rx_limit_table_insert(ctx->zone, sh->table, sizeof(lr_node_t),
                                     hash, key->data, key->len);
    }
    if (node == NULL) {
        if (rx_log_limit_allow(&ctx->nomem, 1000)) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "could not allocate "
                "node in limit_req zone \"%s\"", ctx->zone->name.data);
        }
        return NULL;
    }
    lru_push(sh, (lr_node_t *) node);
    return (lr_node_t *) node;
}

typedef enum { LR_SKIP, LR_OK, LR_PINNED, LR_BUSY, LR_NOMEM } lr_rc_t;

/*
 * The check of one limit for key: *excess is the level this request
 * brings the bucket to. With account (the last limit) a level within
 * burst is stored at once; otherwise the node is pinned for account().
 */
static lr_rc_t
lookup(rx_http_request_t *r, lr_limit_t *lim, const rx_str_t *key,
    int64_t *excess, bool account)
{
    lr_ctx_t    *ctx = lim->zone->data;
    lr_shared_t *sh;
    lr_node_t   *n;
    uint32_t     hash = rx_limit_hash(key->data, key->len);
    int64_t      ms, e;
    lr_rc_t      rc;

    if (rx_shm_zone_lock(lim->zone) != RX_OK) {
        return LR_SKIP;
    }
    sh = rx_shm_zone_root(lim->zone);
    if (sh == NULL) {
        rc = LR_SKIP;
        goto done;
    }
    n = (lr_node_t *) rx_limit_table_find(sh->table, hash, key->data,
                                          key->len);
    if (n == NULL) {
        *excess = 0;
        n = new_node(r, ctx, sh, hash, key);
        if (n == NULL) {
            rc = LR_NOMEM;
            goto done;
        }
        e = 0;
        ms = 0;
        n->last = rx_current_msec;
        /* pinned, its first count comes in release(), which adds 1000:
         * a new key starts from an empty bucket there too */
        n->excess = account ? 0 : -1000;
    } else {
        lru_unlink(sh, n);
        lru_push(sh, n);
        ms = elapsed(n, rx_current_msec);
        e = n->excess - drained(ctx->rate, ms) + 1000;
        e = e < 0 ? 0 : e;
        *excess = e;
        if (e > lim->burst) {
            rc = LR_BUSY;
            goto done;
        }
    }
    if (account) {
        n->excess = e;
        if (ms) {
            n->last = rx_current_msec;
        }
        rc = LR_OK;
        goto done;
    }
    n->count++;
    ctx->node = n;
    ctx->generation = rx_shm_zone_generation(lim->zone);
    rc = LR_PINNED;

done:
    rx_shm_zone_unlock(lim->zone);
    return rc;
}

/* Releases the nodes pinned by limits[0 .. n-1]; with count, counts the
 * request in each and returns the longest delay they ask for (its limit
 * and level in *which, *excess). */
static rx_msec_t
release(lr_limit_t *limits, rx_uint_t n, bool count, lr_limit_t **which,
    int64_t *excess)
{
    rx_msec_t  delay, max = 0;
    lr_ctx_t  *ctx;
    lr_node_t *node;
    int64_t    ms, e;

    if (count && *which && *excess > (*which)->delay) {
        ctx = (*which)->zone->data;
        max = (rx_msec_t) ((*excess - (*which)->delay) * 1000 / ctx->rate);
    }
    while (n--) {
        ctx = limits[n].zone->data;
        node = ctx->node;
        if (node == NULL) {
            continue;
        }
        ctx->node = NULL;
        if (rx_shm_zone_lock(ctx->zone) != RX_OK) {
            continue;
        }
        if (ctx->generation != rx_shm_zone_generation(ctx->zone)) {
            rx_shm_zone_unlock(ctx->zone);
            continue;                 /* emptied meanwhile */
        }
        node->count--;
        e = 0;
        if (count) {
            ms = elapsed(node, rx_current_msec);
            e = node->excess - drained(ctx->rate, ms) + 1000;
            e = e < 0 ? 0 : e;
            node->excess = e;
            if (ms) {
                node->last = rx_current_msec;
            }
        }
        rx_shm_zone_unlock(ctx->zone);
        if (!count || e <= limits[n].delay) {
            continue;
        }
        delay = (rx_msec_t) ((e - limits[n].delay) * 1000 / ctx->rate);
        if (delay > max) {
            max = delay;
            *which = &limits[n];
            *excess = e;
        }
    }
    return max;
}

/* ---- the phase handler ---------------------------------------------------------- */

static void
delay_done(rx_timer_t *t)
{
    lr_delay_t        *d = t->data;
    rx_http_request_t *r = d->r;

    r->watch_client = 0;
    r->abort_handler = NULL;
    r->ctx = NULL;
    rx_http_phase_again(r);     /* we decline now; limit_conn follows */
}

static void
delay_abort(rx_http_request_t *r)
{
    lr_delay_t *d = r->ctx;

    if (d) {
        rx_timer_del(&d->timer);
    }
    r->ctx = NULL;
}

static rx_int_t
start_delay(rx_http_request_t *r, rx_msec_t ms)
{
    lr_delay_t *d = rx_pcalloc(r->pool, sizeof(*d));

    if (d == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    d->r = r;
    rx_heap_node_init(&d->timer.node);
    d->timer.handler = delay_done;
    d->timer.data = d;
    r->ctx = d;                 /* nobody else's yet: before content */
    r->abort_handler = delay_abort;
    r->watch_client = 1;
    rx_timer_add(&d->timer, ms);
    return RX_AGAIN;
}

/* Retry-After (beyond nginx): when the bucket will have room again. */
static void
retry_after(rx_http_request_t *r, const lr_limit_t *lim, int64_t excess)
{
    lr_ctx_t *ctx = lim->zone->data;
    int64_t   ms = (excess - lim->burst) * 1000 / ctx->rate;
    int64_t   s = (ms + 999) / 1000;
    rx_str_t  v;

    v.data = rx_pnalloc(r->pool, 24);
    if (v.data == NULL) {
        return;
    }
    v.len = (size_t) snprintf(v.data, 24, "%" PRId64, s < 1 ? 1 : s);
    (void) rx_http_add_header_out(r, "Retry-After", &v);
}

static rx_int_t
refuse(rx_http_request_t *r, lr_conf_t *lrcf, lr_limit_t *lim, lr_rc_t rc,
    int64_t excess)
{
    if (rc == LR_BUSY) {
        rx_http_request_log_error(r, (unsigned) lrcf->log_level, 0,
            "limiting requests%s, excess: %" PRId64 ".%03" PRId64 " by zone "
            "\"%s\"", lrcf->dry_run ? ", dry run" : "", excess / 1000,
            excess % 1000, lim->zone->name.data);
    }
    if (lrcf->dry_run) {
        r->limit_req_status = LR_REJECTED_DRY_RUN;
        return RX_DECLINED;
    }
    r->limit_req_status = LR_REJECTED;
    rx_http_stat_limit_rejected(true);
    if (rc == LR_BUSY) {
        retry_after(r, lim, excess);
    }
    return lrcf->status;
}

static rx_int_t
limit_req_handler(rx_http_request_t *r)
{
    lr_conf_t  *lrcf = rx_http_get_module_loc_conf(r, rx_http_limit_req_module);
    lr_limit_t *limits, *lim = NULL;
    lr_ctx_t   *ctx;
    rx_str_t    key;
    rx_uint_t   n, nelts;
    int64_t     excess = 0;
    rx_msec_t   delay;
    lr_rc_t     rc = LR_SKIP;
    bool        counted = false;

    if (r->limit_req_status || lrcf->limits == NULL) {
        return RX_DECLINED;
    }
    limits = lrcf->limits->elts;
    nelts = lrcf->limits->nelts;
    for (n = 0; n < nelts; n++) {
        lim = &limits[n];
        ctx = lim->zone->data;
        if (rx_http_complex_value(r, &ctx->key, &key) != RX_OK) {
            release(limits, n, false, NULL, NULL);
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (key.len == 0) {
            continue;                   /* not accounted */
        }
        if (key.len > MAX_KEY) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "the value of the "
                "\"%.*s\" key is more than %d bytes: \"%.*s\"",
                (int) ctx->key.value.len, ctx->key.value.data, MAX_KEY,
                (int) key.len, key.data);
            continue;
        }
        rc = lookup(r, lim, &key, &excess, n == nelts - 1);
        counted = counted || rc == LR_PINNED || rc == LR_OK;
        if (rc == LR_BUSY || rc == LR_NOMEM || rc == LR_OK) {
            break;
        }
    }
    if (rc == LR_BUSY || rc == LR_NOMEM) {
        release(limits, n, false, NULL, NULL);
        return refuse(r, lrcf, lim, rc, excess);
    }
    if (!counted) {
        return RX_DECLINED;             /* no key: $limit_req_status empty */
    }
    if (rc != LR_OK) {
        excess = 0;                     /* the last key was empty */
        lim = NULL;
    }
    delay = release(limits, n, true, &lim, &excess);
    if (delay == 0) {
        r->limit_req_status = LR_PASSED;
        return RX_DECLINED;
    }
    rx_http_request_log_error(r, (unsigned) lrcf->delay_log_level, 0,
        "delaying request%s, excess: %" PRId64 ".%03" PRId64 ", by zone "
        "\"%s\"", lrcf->dry_run ? ", dry run" : "", excess / 1000,
        excess % 1000, lim->zone->name.data);
    if (lrcf->dry_run) {
        r->limit_req_status = LR_DELAYED_DRY_RUN;
        return RX_DECLINED;
    }
    r->limit_req_status = LR_DELAYED;
    return start_delay(r, delay);
}

/* ---- $limit_req_status ------------------------------------------------------------ */

static const rx_str_t status_names[] = {
    rx_string("PASSED"), rx_string("DELAYED"), rx_string("REJECTED"),
    rx_string("DELAYED_DRY_RUN"), rx_string("REJECTED_DRY_RUN")
};

static const rx_limit_status_var_t status_var = {
    status_names, rx_nelems(status_names),
    offsetof(rx_http_request_t, limit_req_status)
};

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    return rx_limit_add_status_variable(cf, "limit_req_status", &status_var);
}

static rx_int_t
postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_PREACCESS_PHASE,
                                     limit_req_handler);
}

/* ---- configuration ----------------------------------------------------------------- */

static void *
create_conf(rx_conf_t *cf)
{
    lr_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->log_level = RX_CONF_UNSET_UINT;
    c->status = RX_CONF_UNSET;
    c->dry_run = RX_CONF_UNSET;
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    lr_conf_t *p = prev, *c = conf;

    (void) cf;
    if (c->limits == NULL) {
        c->limits = p->limits;          /* a level with its own replaces */
    }
    rx_conf_merge_uint(c->log_level, p->log_level, RX_LOG_ERR);
    c->delay_log_level = c->log_level == RX_LOG_INFO ? RX_LOG_INFO
                         : c->log_level + 1;
    rx_conf_merge_value(c->status, p->status, RX_HTTP_SERVICE_UNAVAILABLE);
    rx_conf_merge_value(c->dry_run, p->dry_run, 0);
    return RX_CONF_OK;
}

/* The zone's root: made in an empty zone, kept in a zone taken over. */
static rx_int_t
init_zone(rx_shm_zone_t *zone, void *old)
{
    lr_ctx_t    *ctx = zone->data, *octx = old;
    lr_shared_t *sh;

    if (octx) {
        if (ctx->key.value.len != octx->key.value.len
            || memcmp(ctx->key.value.data, octx->key.value.data,
                      ctx->key.value.len) != 0) {
            rx_log_error(RX_LOG_EMERG, zone->log, 0, "limit_req \"%s\" uses "
                "the \"%.*s\" key while previously it used the \"%.*s\" key",
                zone->name.data, (int) ctx->key.value.len, ctx->key.value.data,
                (int) octx->key.value.len, octx->key.value.data);
            return RX_ERROR;
        }
        return RX_OK;
    }
    sh = rx_shm_zone_alloc_locked(zone, sizeof(*sh));
    if (sh == NULL) {
        return RX_ERROR;
    }
    memset(sh, 0, sizeof(*sh));
    /* a node with a short key takes 64 bytes */
    sh->table = rx_limit_table_create(zone, 256);
    if (sh->table == NULL) {
        return RX_ERROR;
    }
    rx_shm_zone_set_root(zone, sh);
    return RX_OK;
}

/* "rate=Nr/s" or "rate=Nr/m" (N alone: per second), in thousandths. */
static int64_t
parse_rate(const rx_str_t *v)
{
    size_t   len = v->len;
    int64_t  scale = 1;
    rx_int_t n;

    if (len > 8 && memcmp(v->data + len - 3, "r/s", 3) == 0) {
        len -= 3;
    } else if (len > 8 && memcmp(v->data + len - 3, "r/m", 3) == 0) {
        len -= 3;
        scale = 60;
    }
    n = rx_atoi(v->data + 5, len - 5);
    if (n <= 0 || n > INT32_MAX) {
        return -1;
    }
    return (int64_t) n * 1000 / scale;
}

/* limit_req_zone KEY zone=NAME:SIZE rate=RATE */
static const char *
set_zone(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t      *value = cf->args->elts, name = rx_null_string;
    size_t         size = 0;
    int64_t        rate = 1000;
    lr_ctx_t      *ctx;
    rx_shm_zone_t *zone;
    rx_uint_t      i;

    (void) conf;
    ctx = rx_pcalloc(cf->pool, sizeof(*ctx));
    if (ctx == NULL
        || rx_http_compile_complex_value(cf, &value[1], &ctx->key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    for (i = 2; i < cf->args->nelts; i++) {
        if (strncmp(value[i].data, "zone=", 5) == 0) {
            if (rx_shm_zone_parse(cf, &value[i], 5, &name, &size) != RX_OK) {
                return RX_CONF_ERROR;
            }
        } else if (strncmp(value[i].data, "rate=", 5) == 0) {
            rate = parse_rate(&value[i]);
            if (rate <= 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid rate \"%s\"",
                                  value[i].data);
                return RX_CONF_ERROR;
            }
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
    }
    if (name.len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" must have \"zone\" "
                          "parameter", cmd->name);
        return RX_CONF_ERROR;
    }
    zone = rx_shm_zone_add(cf, &name, size, &rx_http_limit_req_module);
    if (zone == NULL) {
        return RX_CONF_ERROR;
    }
    if (zone->data) {
        ctx = zone->data;
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s \"%s\" is already bound to "
            "key \"%.*s\"", cmd->name, name.data, (int) ctx->key.value.len,
            ctx->key.value.data);
        return RX_CONF_ERROR;
    }
    ctx->zone = zone;
    ctx->rate = rate;
    zone->init = init_zone;
    zone->data = ctx;
    return RX_CONF_OK;
}

/* A count in "burst=N" / "delay=N": a positive number. */
static rx_int_t
parse_count(const rx_str_t *v, size_t skip)
{
    rx_int_t n = rx_atoi(v->data + skip, v->len - skip);

    return n > 0 && n <= INT32_MAX ? n : -1;
}

/* limit_req zone=NAME [burst=N] [nodelay | delay=N] */
static const char *
set_limit(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    lr_conf_t     *lrcf = conf;
    rx_str_t      *value = cf->args->elts, s;
    rx_shm_zone_t *zone = NULL;
    rx_int_t       burst = 0, delay = 0;
    lr_limit_t    *lim;
    rx_uint_t      i;

    for (i = 1; i < cf->args->nelts; i++) {
        if (strncmp(value[i].data, "zone=", 5) == 0) {
            s.data = value[i].data + 5;
            s.len = value[i].len - 5;
            zone = rx_shm_zone_add(cf, &s, 0, &rx_http_limit_req_module);
            if (zone == NULL) {
                return RX_CONF_ERROR;
            }
        } else if (strncmp(value[i].data, "burst=", 6) == 0) {
            burst = parse_count(&value[i], 6);
            if (burst < 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid burst value "
                                  "\"%s\"", value[i].data);
                return RX_CONF_ERROR;
            }
        } else if (strncmp(value[i].data, "delay=", 6) == 0) {
            delay = parse_count(&value[i], 6);
            if (delay < 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid delay value "
                                  "\"%s\"", value[i].data);
                return RX_CONF_ERROR;
            }
        } else if (rx_str_eq(&value[i], "nodelay")) {
            delay = -2;
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
    }
    if (zone == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" must have \"zone\" "
                          "parameter", cmd->name);
        return RX_CONF_ERROR;
    }
    if (lrcf->limits == NULL) {
        lrcf->limits = rx_array_create(cf->pool, 1, sizeof(lr_limit_t));
        if (lrcf->limits == NULL) {
            return RX_CONF_ERROR;
        }
    }
    lim = lrcf->limits->elts;
    for (i = 0; i < lrcf->limits->nelts; i++) {
        if (lim[i].zone == zone) {
            return "is duplicate";
        }
    }
    lim = rx_array_push(lrcf->limits);
    if (lim == NULL) {
        return RX_CONF_ERROR;
    }
    lim->zone = zone;
    lim->burst = (int64_t) burst * 1000;
    lim->delay = delay == -2 ? NODELAY : (int64_t) delay * 1000;
    return RX_CONF_OK;
}
