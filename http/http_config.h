/*
 * http_config.h: how HTTP modules plug into the configuration: the module
 * context (create/merge per level), the three-level conf context, and the
 * conf lookup macros.
 */
#ifndef RX_HTTP_CONFIG_H
#define RX_HTTP_CONFIG_H

#include "core.h"
#include "cycle.h"

/* The confs visible in a block: main, server and location levels, each an
 * array indexed by an HTTP module's ctx_index. */
typedef struct {
    void **main_conf;
    void **srv_conf;
    void **loc_conf;
} rx_http_conf_ctx_t;

/* The tops of the output filter chains while they are built. */
typedef struct rx_http_filters_s rx_http_filters_t;

typedef struct {
    rx_int_t    (*preconfiguration)(rx_conf_t *cf);
    rx_int_t    (*postconfiguration)(rx_conf_t *cf);
    void       *(*create_main_conf)(rx_conf_t *cf);
    const char *(*init_main_conf)(rx_conf_t *cf, void *conf);
    void       *(*create_srv_conf)(rx_conf_t *cf);
    const char *(*merge_srv_conf)(rx_conf_t *cf, void *prev, void *conf);
    void       *(*create_loc_conf)(rx_conf_t *cf);
    const char *(*merge_loc_conf)(rx_conf_t *cf, void *prev, void *conf);
    /* An output filter puts itself on top of the chains, keeping what was
     * there as its next. Called at each configuration load, from the last
     * module of core/modules.c to the first: a module listed earlier sees
     * the response earlier (the filter order is that list's). */
    void        (*init_filters)(rx_http_filters_t *top);
} rx_http_module_t;

#define RX_HTTP_MAIN_CONF_OFFSET  offsetof(rx_http_conf_ctx_t, main_conf)
#define RX_HTTP_SRV_CONF_OFFSET   offsetof(rx_http_conf_ctx_t, srv_conf)
#define RX_HTTP_LOC_CONF_OFFSET   offsetof(rx_http_conf_ctx_t, loc_conf)

#define rx_http_conf_get_module_main_conf(cf, module)                         \
    (((rx_http_conf_ctx_t *) (cf)->ctx)->main_conf[(module).ctx_index])
#define rx_http_conf_get_module_srv_conf(cf, module)                          \
    (((rx_http_conf_ctx_t *) (cf)->ctx)->srv_conf[(module).ctx_index])
#define rx_http_conf_get_module_loc_conf(cf, module)                          \
    (((rx_http_conf_ctx_t *) (cf)->ctx)->loc_conf[(module).ctx_index])

extern rx_module_t rx_http_module;
extern rx_module_t rx_http_core_module;

#endif /* RX_HTTP_CONFIG_H */
