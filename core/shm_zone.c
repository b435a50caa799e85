/*
 * shm_zone.c: shared memory zones of a cycle (API in shm_zone.h):
 * declared by directives, checked after parsing, mapped or taken over from
 * the previous cycle at load, unmapped with the cycle that owns them last.
 */
#include "core.h"
#include "cycle.h"
#include "shm_zone.h"

static bool
same_name(const rx_str_t *a, const rx_str_t *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* Unmaps a zone unless a newer cycle uses its mapping, or it was taken
 * from the old cycle by a load that failed (the old one still uses it). */
static void
zone_cleanup(void *data)
{
    rx_shm_zone_t *z = data;

    if (z->passed || (z->reused && !z->committed)) {
        return;
    }
    rx_shm_free(&z->shm);
}

rx_shm_zone_t *
rx_shm_zone_add(rx_conf_t *cf, const rx_str_t *name, size_t size,
    const void *tag)
{
    rx_array_t        *zones = &cf->cycle->shm_zones;
    rx_shm_zone_t    **all = zones->elts, *z, **slot;
    rx_pool_cleanup_t *cln;
    rx_uint_t          i;

    for (i = 0; i < zones->nelts; i++) {
        z = all[i];
        if (!same_name(&z->name, name)) {
            continue;
        }
        if (z->tag != tag) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the shared memory zone "
                "\"%s\" is already declared for a different use",
                z->name.data);
            return NULL;
        }
        if (z->size == 0) {
            z->size = size;
        }
        if (size && size != z->size) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the size %zu of shared "
                "memory zone \"%s\" conflicts with already declared size %zu",
                size, z->name.data, z->size);
            return NULL;
        }
        return z;
    }
    z = rx_pcalloc(cf->pool, sizeof(*z));
    slot = rx_array_push(zones);
    cln = rx_pool_cleanup_add(cf->cycle->pool, 0);
    if (z == NULL || slot == NULL || cln == NULL) {
        return NULL;
    }
    z->name.len = name->len;
    z->name.data = rx_pstrdup_c(cf->pool, name->data, name->len);
    if (z->name.data == NULL) {
        return NULL;
    }
    z->size = size;
    z->tag = tag;
    if (cf->conf_file && cf->conf_file->name.len) {
        z->file = cf->conf_file->name.data;
        z->line = cf->conf_file->line;
    }
    cln->handler = zone_cleanup;
    cln->data = z;
    *slot = z;
    return z;
}

rx_int_t
rx_shm_zone_parse(rx_conf_t *cf, const rx_str_t *arg, size_t skip,
    rx_str_t *name, size_t *size)
{
    const char *colon;
    rx_str_t    s;
    ssize_t     n;

    colon = memchr(arg->data + skip, ':', arg->len - skip);
    if (colon == NULL || colon == arg->data + skip) {
        goto invalid;
    }
    s.data = (char *) colon + 1;
    s.len = (size_t) (arg->data + arg->len - s.data);
    n = rx_parse_size(&s);
    if (n == -1) {
        goto invalid;
    }
    if (n < RX_SHM_ZONE_MIN) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "zone \"%s\" is too small",
                          arg->data);
        return RX_ERROR;
    }
    name->len = (size_t) (colon - arg->data) - skip;
    name->data = rx_pstrdup_c(cf->pool, arg->data + skip, name->len);
    if (name->data == NULL) {
        return RX_ERROR;
    }
    *size = (size_t) n;
    return RX_OK;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid zone size \"%s\"",
                      arg->data);
    return RX_ERROR;
}

rx_int_t
rx_shm_zones_check(rx_cycle_t *cycle)
{
    rx_shm_zone_t **all = cycle->shm_zones.elts, *z;
    rx_uint_t       i;

    for (i = 0; i < cycle->shm_zones.nelts; i++) {
        z = all[i];
        if (z->size) {
            continue;
        }
        /* nginx says it without a place; the place helps */
        if (z->file) {
            rx_log_error(RX_LOG_EMERG, cycle->log, 0, "zero size shared memory "
                         "zone \"%s\" in %s:%lu", z->name.data, z->file,
                         (unsigned long) z->line);
        } else {
            rx_log_error(RX_LOG_EMERG, cycle->log, 0, "zero size shared memory "
                         "zone \"%s\"", z->name.data);
        }
        return RX_ERROR;
    }
    return RX_OK;
}

/* The old cycle's zone of the same name, tag and size, if any. */
static rx_shm_zone_t *
find_old(rx_cycle_t *cycle, const rx_shm_zone_t *z)
{
    rx_cycle_t     *old = cycle->old_cycle;
    rx_shm_zone_t **all, *o;
    rx_uint_t       i;

    if (old == NULL || old->shm_zones.elts == NULL) {
        return NULL;
    }
    all = old->shm_zones.elts;
    for (i = 0; i < old->shm_zones.nelts; i++) {
        o = all[i];
        if (same_name(&o->name, &z->name)) {
            return o->tag == z->tag && o->size == z->size && o->shm.addr
                   && !o->passed ? o : NULL;
        }
    }
    return NULL;
}

rx_int_t
rx_shm_zones_init(rx_cycle_t *cycle)
{
    rx_shm_zone_t **all = cycle->shm_zones.elts, *z, *o;
    rx_uint_t       i;

    for (i = 0; i < cycle->shm_zones.nelts; i++) {
        z = all[i];
        z->log = cycle->log;
        o = find_old(cycle, z);
        if (o) {
            z->shm = o->shm;
            z->pool = o->pool;
            z->reused = 1;
            if (z->init && z->init(z, o->data) != RX_OK) {
                return RX_ERROR;
            }
            continue;
        }
        if (rx_shm_alloc(&z->shm, z->size, cycle->log) != RX_OK) {
            return RX_ERROR;
        }
        if (rx_shm_pool_init(z->shm.addr, z->size) != RX_OK) {
            rx_log_error(RX_LOG_EMERG, cycle->log, 0, "shared memory zone "
                         "\"%s\" could not be set up", z->name.data);
            return RX_ERROR;
        }
        z->pool = z->shm.addr;
        if (z->init && z->init(z, NULL) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

void
rx_shm_zones_commit(rx_cycle_t *cycle)
{
    rx_shm_zone_t **all = cycle->shm_zones.elts, *z, *o;
    rx_uint_t       i;

    for (i = 0; i < cycle->shm_zones.nelts; i++) {
        z = all[i];
        if (!z->reused) {
            continue;
        }
        o = find_old(cycle, z);
        if (o) {
            o->passed = 1;
        }
        z->committed = 1;
    }
}
