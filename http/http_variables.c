/*
 * http_variables.c: the $variable registry: names registered by modules,
 * references resolved to indexes at the end of the http block, values
 * cached per request, and the helpers getters fill values with. The core
 * variables themselves are in http_core_variables.c.
 */
#include <ctype.h>
#include <limits.h>
#include "http.h"
#include "http_variables.h"
#include "http_variables_int.h"

/* Where a name was first used, for the "unknown variable" error. */
typedef struct {
    rx_str_t   file;
    rx_uint_t  line;
} var_where_t;

typedef struct {
    rx_array_t  keys;       /* rx_http_variable_t *: everything registered */
    rx_array_t  variables;  /* rx_http_variable_t: the referenced names */
    rx_array_t  where;      /* var_where_t, parallel to variables */
    bool        resolved;   /* init_vars ran: new references resolve at once */
    rx_str_t    hostname;   /* $hostname, read at load */
} var_main_conf_t;

static void *create_main_conf(rx_conf_t *cf);

static const rx_http_module_t variables_ctx = {
    rx_http_variables_add_core_vars, rx_http_variables_init_vars,
    create_main_conf, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_variables_module = {
    "rx_http_variables_module", 0, 0, RX_HTTP_MODULE, &variables_ctx, NULL,
    NULL, rx_http_var_init_process, NULL, NULL
};

/* ---- registry (configuration time) ---- */

static void *
create_main_conf(rx_conf_t *cf)
{
    var_main_conf_t *vmcf = rx_pcalloc(cf->pool, sizeof(*vmcf));
    char             host[HOST_NAME_MAX + 1];
    size_t           i;

    if (vmcf == NULL
        || rx_array_init(&vmcf->keys, cf->pool, 64, sizeof(void *)) != RX_OK
        || rx_array_init(&vmcf->variables, cf->pool, 32,
                         sizeof(rx_http_variable_t)) != RX_OK
        || rx_array_init(&vmcf->where, cf->pool, 32, sizeof(var_where_t))
           != RX_OK) {
        return NULL;
    }
    if (gethostname(host, sizeof(host)) == -1) {
        rx_log_error(RX_LOG_EMERG, cf->log, errno, "gethostname() failed");
        return NULL;
    }
    host[HOST_NAME_MAX] = '\0';
    for (i = 0; host[i]; i++) {
        host[i] = (char) tolower((unsigned char) host[i]);
    }
    vmcf->hostname.len = i;
    vmcf->hostname.data = rx_pstrdup_c(cf->pool, host, i);
    return vmcf->hostname.data ? vmcf : NULL;
}

static var_main_conf_t *
conf_vmcf(rx_conf_t *cf)
{
    return rx_http_conf_get_module_main_conf(cf, rx_http_variables_module);
}

static bool
name_eq(const rx_str_t *a, const rx_str_t *b)
{
    return a->len == b->len && strncasecmp(a->data, b->data, a->len) == 0;
}

/* A lower-cased, NUL-terminated copy from the configuration's pool. */
static rx_int_t
copy_name(rx_conf_t *cf, rx_str_t *dst, const rx_str_t *src)
{
    size_t i;

    dst->data = rx_pnalloc(cf->pool, src->len + 1);
    if (dst->data == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < src->len; i++) {
        dst->data[i] = (char) tolower((unsigned char) src->data[i]);
    }
    dst->data[src->len] = '\0';
    dst->len = src->len;
    return RX_OK;
}

rx_http_variable_t *
rx_http_add_variable(rx_conf_t *cf, const rx_str_t *name, unsigned flags)
{
    var_main_conf_t     *vmcf = conf_vmcf(cf);
    rx_http_variable_t **keys = vmcf->keys.elts, *v, **slot;
    rx_uint_t            i;

    if (name->len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"$\"");
        return NULL;
    }
    for (i = 0; i < vmcf->keys.nelts; i++) {
        if ((keys[i]->flags & RX_HTTP_VAR_PREFIX) != (flags & RX_HTTP_VAR_PREFIX)
            || !name_eq(name, &keys[i]->name)) {
            continue;
        }
        if (!(keys[i]->flags & RX_HTTP_VAR_CHANGEABLE)) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                              "the duplicate \"%.*s\" variable",
                              (int) name->len, name->data);
            return NULL;
        }
        return keys[i];
    }
    v = rx_pcalloc(cf->pool, sizeof(*v));
    slot = rx_array_push(&vmcf->keys);
    if (v == NULL || slot == NULL || copy_name(cf, &v->name, name) != RX_OK) {
        return NULL;
    }
    v->flags = flags & ~RX_HTTP_VAR_INDEXED;
    *slot = v;
    return v;
}

/* Binds referenced variable i to what registered its name: an exact name
 * first, else the longest prefix variable that starts it, else a weak
 * exact name (RX_HTTP_VAR_WEAK). */
static rx_int_t
resolve(rx_conf_t *cf, var_main_conf_t *vmcf, rx_uint_t i)
{
    rx_http_variable_t **keys = vmcf->keys.elts, *best = NULL, *k, *weak = NULL;
    rx_http_variable_t  *v = (rx_http_variable_t *) vmcf->variables.elts + i;
    var_where_t         *w = (var_where_t *) vmcf->where.elts + i;
    rx_str_t            *full;
    rx_uint_t            n;

    for (n = 0; n < vmcf->keys.nelts; n++) {
        k = keys[n];
        if (!(k->flags & RX_HTTP_VAR_PREFIX)) {
            if (name_eq(&v->name, &k->name) && (k->flags & RX_HTTP_VAR_WEAK)) {
                weak = k;           /* unless a prefix variable serves it */
            } else if (name_eq(&v->name, &k->name)) {
                v->get = k->get;
                v->set = k->set;
                v->data = k->data;
                v->flags = k->flags | RX_HTTP_VAR_INDEXED;
                k->flags |= RX_HTTP_VAR_INDEXED;
                k->index = i;
                return RX_OK;
            }
        } else if (v->name.len >= k->name.len
                   && memcmp(v->name.data, k->name.data, k->name.len) == 0
                   && (best == NULL || k->name.len > best->name.len)) {
            best = k;
        }
    }
    if (best) {
        /* the getter gets the full name; not a pointer into the array,
         * which may still grow */
        full = rx_palloc(cf->pool, sizeof(rx_str_t));
        if (full == NULL) {
            return RX_ERROR;
        }
        *full = v->name;
        v->get = best->get;
        v->set = best->set;
        v->data = (uintptr_t) full;
        v->flags = (best->flags & ~RX_HTTP_VAR_PREFIX) | RX_HTTP_VAR_INDEXED;
        return RX_OK;
    }
    if (weak) {
        v->get = weak->get;
        v->set = weak->set;
        v->data = weak->data;
        v->flags = weak->flags | RX_HTTP_VAR_INDEXED;
        weak->flags |= RX_HTTP_VAR_INDEXED;
        weak->index = i;
        return RX_OK;
    }
    if (w->file.data == NULL) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "unknown \"%s\" variable",
                     v->name.data);
    } else if (w->file.len == 0) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "unknown \"%s\" variable in "
                     "command line", v->name.data);
    } else {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "unknown \"%s\" variable in "
                     "%s:%lu", v->name.data, w->file.data,
                     (unsigned long) w->line);
    }
    return RX_ERROR;
}

rx_int_t
rx_http_get_variable_index(rx_conf_t *cf, const rx_str_t *name)
{
    var_main_conf_t    *vmcf = conf_vmcf(cf);
    rx_http_variable_t *vars = vmcf->variables.elts, *v;
    var_where_t        *w;
    rx_uint_t           i;

    if (name->len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"$\"");
        return RX_ERROR;
    }
    for (i = 0; i < vmcf->variables.nelts; i++) {
        if (name_eq(name, &vars[i].name)) {
            return (rx_int_t) i;
        }
    }
    v = rx_array_push(&vmcf->variables);
    w = rx_array_push(&vmcf->where);
    if (v == NULL || w == NULL) {
        return RX_ERROR;
    }
    memset(v, 0, sizeof(*v));
    memset(w, 0, sizeof(*w));
    if (copy_name(cf, &v->name, name) != RX_OK) {
        return RX_ERROR;
    }
    v->index = i;
    if (cf->conf_file) {
        w->file.len = cf->conf_file->name.len;
        w->file.data = w->file.len ? rx_pstrdup(cf->pool, &cf->conf_file->name)
                                   : (char *) "";
        w->line = cf->conf_file->line;
        if (w->file.data == NULL) {
            return RX_ERROR;
        }
    }
    if (vmcf->resolved && resolve(cf, vmcf, i) != RX_OK) {
        return RX_ERROR;
    }
    return (rx_int_t) i;
}

rx_int_t
rx_http_variables_init_vars(rx_conf_t *cf)
{
    var_main_conf_t *vmcf = conf_vmcf(cf);
    rx_uint_t        i;
    rx_int_t         rc = RX_OK;

    /* every unknown name is reported, not only the first */
    for (i = 0; i < vmcf->variables.nelts; i++) {
        if (resolve(cf, vmcf, i) != RX_OK) {
            rc = RX_ERROR;
        }
    }
    vmcf->resolved = true;
    return rc;
}

/* ---- values (request time) ---- */

static var_main_conf_t *
request_vmcf(rx_http_request_t *r)
{
    return r->main_conf ? r->main_conf[rx_http_variables_module.ctx_index]
                        : NULL;
}

/* lookup's first call in a request (or a bad index): allocates the
 * values; out of line, so that lookup stays a few instructions (tens of
 * calls per request: every fastcgi_param and log variable). */
static __attribute__((noinline)) rx_http_variable_t *
lookup_first(rx_http_request_t *r, rx_uint_t index)
{
    var_main_conf_t *vmcf = request_vmcf(r);

    if (vmcf == NULL || index >= vmcf->variables.nelts) {
        rx_log_error(RX_LOG_ALERT, r->pool->log, 0, "unknown variable index: "
                     "%lu", (unsigned long) index);
        return NULL;
    }
    if (r->variables == NULL) {
        /* a subrequest shares its main request's values (nginx) */
        rx_http_request_t *owner = r->main ? r->main : r;

        if (owner->variables == NULL) {
            owner->variables = rx_pcalloc(owner->pool, vmcf->variables.nelts
                                          * sizeof(rx_http_variable_value_t));
            if (owner->variables == NULL) {
                return NULL;
            }
        }
        r->variables = owner->variables;
    }
    return (rx_http_variable_t *) vmcf->variables.elts + index;
}

/* The variable of index, with r->variables allocated; NULL when either
 * fails. */
static inline rx_http_variable_t *
lookup(rx_http_request_t *r, rx_uint_t index)
{
    var_main_conf_t *vmcf;

    if (r->variables == NULL || r->main_conf == NULL) {
        return lookup_first(r, index);
    }
    vmcf = r->main_conf[rx_http_variables_module.ctx_index];
    if (vmcf == NULL || index >= vmcf->variables.nelts) {
        return lookup_first(r, index);
    }
    return (rx_http_variable_t *) vmcf->variables.elts + index;
}

rx_http_variable_value_t *
rx_http_get_indexed_variable(rx_http_request_t *r, rx_uint_t index)
{
    rx_http_variable_t       *var = lookup(r, index);
    rx_http_variable_value_t *v;

    if (var == NULL) {
        return NULL;
    }
    v = &r->variables[index];
    if (v->valid || v->not_found) {
        return v;
    }
    v->len = 0;
    v->data = (char *) "";
    v->valid = 1;
    v->not_found = 0;
    v->no_cacheable = (var->flags & RX_HTTP_VAR_NOCACHEABLE) != 0;
    v->escape = 0;
    if (var->get == NULL) {
        v->valid = 0;
        v->not_found = 1;
        return v;
    }
    if (var->get(r, v, var->data) != RX_OK) {
        v->valid = 0;
        v->not_found = 1;
        return NULL;
    }
    if (v->not_found) {
        v->valid = 0;
    }
    return v;
}

rx_http_variable_value_t *
rx_http_get_flushed_variable(rx_http_request_t *r, rx_uint_t index)
{
    rx_http_variable_value_t *v;

    if (lookup(r, index) == NULL) {
        return NULL;
    }
    v = &r->variables[index];
    if ((v->valid || v->not_found) && v->no_cacheable) {
        v->valid = 0;
        v->not_found = 0;
    }
    return rx_http_get_indexed_variable(r, index);
}

rx_int_t
rx_http_set_indexed_variable(rx_http_request_t *r, rx_uint_t index,
    const rx_str_t *value)
{
    rx_http_variable_t       *var = lookup(r, index);
    rx_http_variable_value_t *v, nv;

    if (var == NULL) {
        return RX_ERROR;
    }
    v = &r->variables[index];
    if (var->set) {
        memset(&nv, 0, sizeof(nv));
        nv.len = value->len;
        nv.data = value->data;
        nv.valid = 1;
        var->set(r, &nv, var->data);
        v->valid = 0;           /* the next read computes from the request */
        v->not_found = 0;
        return RX_OK;
    }
    v->len = value->len;
    v->data = value->data;
    v->valid = 1;
    v->not_found = 0;
    v->no_cacheable = 0;
    v->escape = 0;
    return RX_OK;
}
/* ---- values: helpers for getters (http_variables_int.h) ---- */

const rx_str_t *
rx_http_var_hostname(rx_http_request_t *r)
{
    return &request_vmcf(r)->hostname;
}

rx_int_t
rx_http_var_copy(rx_http_request_t *r, rx_http_variable_value_t *v,
    const char *data, size_t len)
{
    char *p = rx_pnalloc(r->pool, len ? len : 1);

    if (p == NULL) {
        return RX_ERROR;
    }
    memcpy(p, data, len);
    rx_http_var_str(v, p, len);
    return RX_OK;
}

rx_int_t
rx_http_var_printf(rx_http_request_t *r, rx_http_variable_value_t *v,
    size_t max, const char *fmt, ...)
{
    char    *p = rx_pnalloc(r->pool, max);
    va_list  args;
    int      n;

    if (p == NULL) {
        return RX_ERROR;
    }
    va_start(args, fmt);
    n = vsnprintf(p, max, fmt, args);
    va_end(args);
    rx_http_var_str(v, p, n < 0 ? 0 : rx_min((size_t) n, max - 1));
    return RX_OK;
}

rx_int_t
rx_http_var_uint(rx_http_request_t *r, rx_http_variable_value_t *v, uint64_t n)
{
    char *p = rx_pnalloc(r->pool, RX_UINT_LEN);

    if (p == NULL) {
        return RX_ERROR;
    }
    rx_http_var_str(v, p, (size_t) (rx_put_uint(p, n, 1) - p));
    return RX_OK;
}

rx_int_t
rx_http_var_msec(rx_http_request_t *r, rx_http_variable_value_t *v, uint64_t ms)
{
    char *p = rx_pnalloc(r->pool, RX_UINT_LEN + 4), *end;

    if (p == NULL) {
        return RX_ERROR;
    }
    end = rx_put_uint(p, ms / 1000, 1);
    *end++ = '.';
    end = rx_put_uint(end, ms % 1000, 3);
    rx_http_var_str(v, p, (size_t) (end - p));
    return RX_OK;
}

/* ---- by name, while running (ssi's echo, set and if) ---- */

/* A registered variable's value for a name met only at run time: its
 * getter is called each time, nothing is cached. */
static rx_http_variable_value_t *
get_unindexed(rx_http_request_t *r, rx_http_variable_t *k, const rx_str_t *name)
{
    rx_http_variable_value_t *v = rx_pcalloc(r->pool, sizeof(*v));
    rx_str_t                 *full;
    uintptr_t                 data = k->data;

    if (v == NULL) {
        return NULL;
    }
    if (k->flags & RX_HTTP_VAR_PREFIX) {
        full = rx_palloc(r->pool, sizeof(*full));
        if (full == NULL) {
            return NULL;
        }
        *full = *name;
        data = (uintptr_t) full;
    }
    v->valid = 1;
    v->data = (char *) "";
    if (k->get == NULL || k->get(r, v, data) != RX_OK) {
        v->valid = 0;
        v->not_found = 1;
    }
    return v;
}

rx_http_variable_value_t *
rx_http_get_variable(rx_http_request_t *r, const rx_str_t *name)
{
    var_main_conf_t      *vmcf = rx_http_get_module_main_conf(r,
                                    rx_http_variables_module);
    rx_http_variable_t   *vars = vmcf->variables.elts, **keys = vmcf->keys.elts;
    rx_http_variable_t   *best = NULL;
    rx_uint_t             i;

    /* a name the configuration refers to has an index: its cached value,
     * which `set` may have given */
    for (i = 0; i < vmcf->variables.nelts; i++) {
        if (name_eq(name, &vars[i].name)) {
            return rx_http_get_flushed_variable(r, i);
        }
    }
    for (i = 0; i < vmcf->keys.nelts; i++) {
        rx_http_variable_t *k = keys[i];

        if (!(k->flags & RX_HTTP_VAR_PREFIX)) {
            if (name_eq(name, &k->name)) {
                return get_unindexed(r, k, name);
            }
        } else if (name->len >= k->name.len
                   && strncasecmp(name->data, k->name.data, k->name.len) == 0
                   && (best == NULL || k->name.len > best->name.len)) {
            best = k;
        }
    }
    return best ? get_unindexed(r, best, name) : NULL;
}
