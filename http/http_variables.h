/*
 * http_variables.h: $variables. Modules register variables at load time;
 * directives turn the names they use into indexes; a request reads a value
 * by index, computed on first use and cached in r->variables.
 */
#ifndef RX_HTTP_VARIABLES_H
#define RX_HTTP_VARIABLES_H

#include "http.h"

/* A variable's value for one request (r->variables[index]). */
struct rx_http_variable_value_s {
    size_t    len;
    char     *data;            /* not NUL-terminated; read-only for readers */
    unsigned  valid:1;         /* computed (or set) for this request */
    unsigned  not_found:1;     /* no value: the access log writes "-" */
    unsigned  no_cacheable:1;  /* recomputed by rx_http_get_flushed_variable */
    unsigned  escape:1;        /* reserved: the value needs URI escaping */
};

/*
 * A getter fills v->len/v->data, or sets v->not_found. The caller has set
 * valid=1, not_found=0 and no_cacheable from the variable's flags before
 * the call. Returns RX_OK, or RX_ERROR (logged) when the value could not be
 * computed; the variable then reads as "not found" for this call.
 * data is the variable's data: an offset, a pointer, or for a prefix
 * variable ($http_x) a pointer to the full name as an rx_str_t.
 */
typedef rx_int_t (*rx_http_get_variable_pt)(rx_http_request_t *r,
    rx_http_variable_value_t *v, uintptr_t data);

/* For changeable variables whose value lives in the request ($args): the
 * `set` directive calls it with the new value. */
typedef void (*rx_http_set_variable_pt)(rx_http_request_t *r,
    const rx_http_variable_value_t *v, uintptr_t data);

/* The value may be replaced by `set` (and the variable added again by
 * another module without "the duplicate" error). */
#define RX_HTTP_VAR_CHANGEABLE   0x0001
/* Depends on request state that changes ($uri, $status): recomputed each
 * time through rx_http_get_flushed_variable and complex values. */
#define RX_HTTP_VAR_NOCACHEABLE  0x0002
/* Referenced by some directive: has an index (set by the registry). */
#define RX_HTTP_VAR_INDEXED      0x0004
/* Matches every name that starts with its name ($http_, $arg_ ...). */
#define RX_HTTP_VAR_PREFIX       0x0008
/* Registered by `set`: a prefix variable that also matches the name still
 * gives the value until `set` runs (`set $arg_a ...` reads the argument
 * before), as nginx's NGX_HTTP_VAR_WEAK. */
#define RX_HTTP_VAR_WEAK         0x0010

typedef struct {
    rx_str_t                 name;    /* lower-cased, without '$' */
    rx_http_get_variable_pt  get;     /* NULL: reads as "not found" */
    rx_http_set_variable_pt  set;     /* NULL: `set` stores the value only */
    uintptr_t                data;
    unsigned                 flags;   /* RX_HTTP_VAR_* */
    rx_uint_t                index;   /* when RX_HTTP_VAR_INDEXED */
} rx_http_variable_t;

/*
 * Registers a variable (module preconfiguration hooks) and returns it for
 * the caller to set get/set/data. Names are case-insensitive, as in nginx.
 * Adding a name that exists returns the existing variable when that one is
 * changeable; otherwise logs `the duplicate "x" variable` and returns NULL.
 * With RX_HTTP_VAR_PREFIX the variable serves every name starting with
 * name; its getter receives the full name (an rx_str_t *) as data.
 */
rx_http_variable_t *rx_http_add_variable(rx_conf_t *cf, const rx_str_t *name,
    unsigned flags);

/*
 * The index of name for rx_http_get_indexed_variable. Used while the
 * configuration is parsed: names are resolved at the end of the http block
 * (prefix variables by their longest matching prefix); a name nothing
 * registered is then reported as `unknown "name" variable in file:line`
 * with the place of its first use, and the configuration fails. After that
 * point a new name is resolved at once. Returns RX_ERROR on failure.
 */
rx_int_t rx_http_get_variable_index(rx_conf_t *cf, const rx_str_t *name);

/*
 * The value of an indexed variable for r: cached in r->variables (allocated
 * from r->pool on first use; clearing r->variables resets the cache).
 * Returns NULL when the getter failed or index is out of range. A value with
 * not_found set has no meaning beyond "absent".
 */
rx_http_variable_value_t *rx_http_get_indexed_variable(rx_http_request_t *r,
    rx_uint_t index);

/* The same, but a cached value of a non-cacheable variable is recomputed. */
rx_http_variable_value_t *rx_http_get_flushed_variable(rx_http_request_t *r,
    rx_uint_t index);

/*
 * The value of the variable called name (without '$', any case), looked
 * up while running (ssi's echo, set, if): NULL when no module registers
 * that name, or out of memory; else a value whose not_found says whether
 * it has one.
 */
rx_http_variable_value_t *rx_http_get_variable(rx_http_request_t *r,
    const rx_str_t *name);

/*
 * Assigns a value for the rest of r (the `set` directive): through the
 * variable's set handler when it has one ($args), else into the cache,
 * where it stays until r->variables is cleared. value must live as long as
 * r (its pool or the configuration). Returns RX_OK or RX_ERROR.
 */
rx_int_t rx_http_set_indexed_variable(rx_http_request_t *r, rx_uint_t index,
    const rx_str_t *value);

/*
 * Configuration-time hooks. rx_http_variables_module (core/modules.c) runs
 * them itself: add_core_vars in its preconfiguration, init_vars in its
 * postconfiguration. They are exported for unit tests.
 */
rx_int_t rx_http_variables_add_core_vars(rx_conf_t *cf);
rx_int_t rx_http_variables_init_vars(rx_conf_t *cf);

extern rx_module_t rx_http_variables_module;

#endif /* RX_HTTP_VARIABLES_H */
