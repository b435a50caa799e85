/*
 * limit_conn.c: limit_conn_zone, limit_conn and their settings: how many
 * requests with the same key are being processed at once, counted across
 * all workers in a shared memory zone. As nginx, a request counts from the
 * preaccess phase until its memory goes (a cleanup of its pool), and a
 * request over the limit is refused with limit_conn_status.
 */
#include "http.h"
#include "http_script.h"
#include "http_variables.h"
#include "limit_table.h"
#include "limit_common.h"
#include "http_stats.h"

#define LC_PASSED            1
#define LC_REJECTED          2
#define LC_REJECTED_DRY_RUN  3

#define MAX_KEY  255

typedef struct {
    rx_limit_node_t  node;
    uint32_t         conn;      /* requests counted now */
} lc_node_t;

/* zone->data: one limit_conn_zone of this cycle. */
typedef struct {
    rx_shm_zone_t           *zone;
    rx_http_complex_value_t  key;
    rx_log_limit_t           nomem;
} lc_ctx_t;

typedef struct {
    rx_shm_zone_t  *zone;
    rx_uint_t       conn;
} lc_limit_t;

typedef struct {
    rx_array_t  *limits;            /* lc_limit_t; NULL: none here */
    rx_uint_t    log_level;
    rx_int_t     status;
    rx_int_t     dry_run;
} lc_conf_t;

/* One count a request holds, given back when its pool goes. */
typedef struct {
    rx_shm_zone_t  *zone;
    lc_node_t      *node;           /* NULL: given back already */
    uint64_t        generation;
} lc_hold_t;

static const char *set_zone(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_limit(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static rx_int_t postconfiguration(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_conf_bounds_t status_bounds = { 400, 599 };

static const rx_command_t limit_conn_commands[] = {
    { "limit_conn_zone", RX_HTTP_MAIN_CONF | RX_CONF_TAKE2, set_zone,
      0, 0, NULL },
    { "limit_conn", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE2, set_limit, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "limit_conn_log_level", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_enum_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(lc_conf_t, log_level),
      rx_limit_log_levels },
    { "limit_conn_status", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(lc_conf_t, status), &status_bounds },
    { "limit_conn_dry_run", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(lc_conf_t, dry_run), NULL },
    rx_null_command
};

static const rx_http_module_t limit_conn_ctx = {
    preconfiguration, postconfiguration, NULL, NULL, NULL, NULL,
    create_conf, merge_conf
};

rx_module_t rx_http_limit_conn_module = {
    "rx_http_limit_conn_module", 0, 0, RX_HTTP_MODULE, &limit_conn_ctx,
    limit_conn_commands, NULL, NULL, NULL, NULL
};

/* ---- counting ------------------------------------------------------------------- */

static void
give_back(void *data)
{
    lc_hold_t        *h = data;
    rx_limit_table_t *t;

    if (h->node == NULL || rx_shm_zone_lock(h->zone) != RX_OK) {
        return;
    }
    /* a zone emptied meanwhile (a process died holding its lock) has
     * other nodes where this one was */
    t = rx_shm_zone_root(h->zone);
    if (t && h->generation == rx_shm_zone_generation(h->zone)
        && --h->node->conn == 0) {
        rx_limit_table_delete(h->zone, t, &h->node->node);
    }
    rx_shm_zone_unlock(h->zone);
    h->node = NULL;
}

/* Gives back the counts this request took in this call (the holds at
 * the head of its pool's cleanups, newest first). */
static void
give_back_all(lc_hold_t **holds, rx_uint_t n)
{
    while (n--) {
        give_back(holds[n]);
    }
}

typedef enum { LC_SKIP, LC_COUNTED, LC_OVER, LC_NOMEM } lc_rc_t;

/* One count of key in lim's zone, recorded in h. */
static lc_rc_t
count(rx_http_request_t *r, lc_limit_t *lim, const rx_str_t *key,
    lc_hold_t *h)
{
    lc_ctx_t         *ctx = lim->zone->data;
    rx_limit_table_t *t;
    lc_node_t        *n;
    uint32_t          hash = rx_limit_hash(key->data, key->len);
    lc_rc_t           rc = LC_COUNTED;

    if (rx_shm_zone_lock(lim->zone) != RX_OK) {
        return LC_SKIP;
    }
    t = rx_shm_zone_root(lim->zone);
    if (t == NULL) {
        rc = LC_SKIP;
        goto done;
    }
    n = (lc_node_t *) rx_limit_table_find(t, hash, key->data, key->len);
    if (n == NULL) {
        n = (lc_node_t *) rx_limit_table_insert(lim->zone, t, sizeof(*n),
                                                hash, key->data, key->len);
        if (n == NULL) {
            rc = LC_NOMEM;
            goto done;
        }
    } else if (n->conn >= lim->conn) {
        rc = LC_OVER;
        goto done;
    }
    n->conn++;
    h->zone = lim->zone;
    h->node = n;
    h->generation = rx_shm_zone_generation(lim->zone);

done:
    rx_shm_zone_unlock(lim->zone);
    if (rc == LC_NOMEM && rx_log_limit_allow(&ctx->nomem, 1000)) {
        rx_http_request_log_error(r, RX_LOG_CRIT, 0, "could not allocate node "
            "in limit_conn zone \"%s\"", lim->zone->name.data);
    }
    return rc;
}

static rx_int_t
limit_conn_handler(rx_http_request_t *r)
{
    lc_conf_t         *lccf = rx_http_get_module_loc_conf(r,
                                  rx_http_limit_conn_module);
    lc_limit_t        *limits;
    lc_ctx_t          *ctx;
    lc_hold_t         *h, *few[8], **taken = few;
    rx_pool_cleanup_t *cln;
    rx_str_t           key;
    rx_uint_t          i, ntaken = 0;
    lc_rc_t            rc;

    if (r->limit_conn_status || lccf->limits == NULL) {
        return RX_DECLINED;
    }
    limits = lccf->limits->elts;
    if (lccf->limits->nelts > rx_nelems(few)) {
        taken = rx_palloc(r->pool, lccf->limits->nelts * sizeof(void *));
        if (taken == NULL) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    for (i = 0; i < lccf->limits->nelts; i++) {
        ctx = limits[i].zone->data;
        if (rx_http_complex_value(r, &ctx->key, &key) != RX_OK) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (key.len == 0) {
            continue;                   /* not counted */
        }
        if (key.len > MAX_KEY) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "the value of the "
                "\"%.*s\" key is more than %d bytes: \"%.*s\"",
                (int) ctx->key.value.len, ctx->key.value.data, MAX_KEY,
                (int) key.len, key.data);
            continue;
        }
        r->limit_conn_status = LC_PASSED;
        /* the hold first: once counted, the count must be given back */
        cln = rx_pool_cleanup_add(r->pool, sizeof(lc_hold_t));
        if (cln == NULL) {
            give_back_all(taken, ntaken);
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        h = cln->data;
        h->node = NULL;
        cln->handler = give_back;
        rc = count(r, &limits[i], &key, h);
        if (rc == LC_SKIP) {
            continue;
        }
        if (rc != LC_COUNTED) {
            if (rc == LC_OVER) {
                rx_http_request_log_error(r, (unsigned) lccf->log_level, 0,
                    "limiting connections%s by zone \"%s\"",
                    lccf->dry_run ? ", dry run," : "",
                    limits[i].zone->name.data);
            }
            give_back_all(taken, ntaken);
            if (lccf->dry_run) {
                r->limit_conn_status = LC_REJECTED_DRY_RUN;
                return RX_DECLINED;
            }
            r->limit_conn_status = LC_REJECTED;
            rx_http_stat_limit_rejected(false);
            return lccf->status;
        }
        taken[ntaken++] = h;
    }
    return RX_DECLINED;
}

/* ---- $limit_conn_status ------------------------------------------------------------ */

static const rx_str_t status_names[] = {
    rx_string("PASSED"), rx_string("REJECTED"), rx_string("REJECTED_DRY_RUN")
};

static const rx_limit_status_var_t status_var = {
    status_names, rx_nelems(status_names),
    offsetof(rx_http_request_t, limit_conn_status)
};

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    return rx_limit_add_status_variable(cf, "limit_conn_status", &status_var);
}

static rx_int_t
postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_PREACCESS_PHASE,
                                     limit_conn_handler);
}

/* ---- configuration ----------------------------------------------------------------- */

static void *
create_conf(rx_conf_t *cf)
{
    lc_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

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
    lc_conf_t *p = prev, *c = conf;

    (void) cf;
    if (c->limits == NULL) {
        c->limits = p->limits;          /* a level with its own replaces */
    }
    rx_conf_merge_uint(c->log_level, p->log_level, RX_LOG_ERR);
    rx_conf_merge_value(c->status, p->status, RX_HTTP_SERVICE_UNAVAILABLE);
    rx_conf_merge_value(c->dry_run, p->dry_run, 0);
    return RX_CONF_OK;
}

static rx_int_t
init_zone(rx_shm_zone_t *zone, void *old)
{
    lc_ctx_t         *ctx = zone->data, *octx = old;
    rx_limit_table_t *t;

    if (octx) {
        if (ctx->key.value.len != octx->key.value.len
            || memcmp(ctx->key.value.data, octx->key.value.data,
                      ctx->key.value.len) != 0) {
            rx_log_error(RX_LOG_EMERG, zone->log, 0, "limit_conn_zone \"%s\" "
                "uses the \"%.*s\" key while previously it used the \"%.*s\" "
                "key", zone->name.data, (int) ctx->key.value.len,
                ctx->key.value.data, (int) octx->key.value.len,
                octx->key.value.data);
            return RX_ERROR;
        }
        return RX_OK;
    }
    /* a node with a short key takes 48 bytes */
    t = rx_limit_table_create(zone, 256);
    if (t == NULL) {
        return RX_ERROR;
    }
    rx_shm_zone_set_root(zone, t);
    return RX_OK;
}

/* limit_conn_zone KEY zone=NAME:SIZE */
static const char *
set_zone(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t      *value = cf->args->elts, name = rx_null_string;
    size_t         size = 0;
    lc_ctx_t      *ctx;
    rx_shm_zone_t *zone;

    (void) conf;
    ctx = rx_pcalloc(cf->pool, sizeof(*ctx));
    if (ctx == NULL
        || rx_http_compile_complex_value(cf, &value[1], &ctx->key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (strncmp(value[2].data, "zone=", 5) != 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          value[2].data);
        return RX_CONF_ERROR;
    }
    if (rx_shm_zone_parse(cf, &value[2], 5, &name, &size) != RX_OK) {
        return RX_CONF_ERROR;
    }
    zone = rx_shm_zone_add(cf, &name, size, &rx_http_limit_conn_module);
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
    zone->init = init_zone;
    zone->data = ctx;
    return RX_CONF_OK;
}

/* limit_conn ZONE NUMBER */
static const char *
set_limit(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    lc_conf_t     *lccf = conf;
    rx_str_t      *value = cf->args->elts;
    rx_shm_zone_t *zone;
    lc_limit_t    *lim;
    rx_int_t       n;
    rx_uint_t      i;

    (void) cmd;
    zone = rx_shm_zone_add(cf, &value[1], 0, &rx_http_limit_conn_module);
    if (zone == NULL) {
        return RX_CONF_ERROR;
    }
    if (lccf->limits == NULL) {
        lccf->limits = rx_array_create(cf->pool, 1, sizeof(lc_limit_t));
        if (lccf->limits == NULL) {
            return RX_CONF_ERROR;
        }
    }
    lim = lccf->limits->elts;
    for (i = 0; i < lccf->limits->nelts; i++) {
        if (lim[i].zone == zone) {
            return "is duplicate";
        }
    }
    n = rx_atoi(value[2].data, value[2].len);
    if (n <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid number of connections "
                          "\"%s\"", value[2].data);
        return RX_CONF_ERROR;
    }
    if (n > 65535) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "connection limit must be less "
                          "65536");
        return RX_CONF_ERROR;
    }
    lim = rx_array_push(lccf->limits);
    if (lim == NULL) {
        return RX_CONF_ERROR;
    }
    lim->zone = zone;
    lim->conn = (rx_uint_t) n;
    return RX_CONF_OK;
}
