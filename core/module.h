/*
 * module.h: what a module is. A module has a directive table, a typed
 * context (per module type) and lifecycle hooks; core/modules.c lists every
 * module in the order that matters (practice 6).
 */
#ifndef RX_MODULE_H
#define RX_MODULE_H

#define RX_CORE_MODULE   0x45524f43  /* "CORE" */
#define RX_EVENT_MODULE  0x544e5645  /* "EVNT" */
#define RX_HTTP_MODULE   0x50545448  /* "HTTP" */

struct rx_module_s {
    const char          *name;        /* rx_http_core_module etc. */
    rx_uint_t            index;       /* position in rx_modules, set at start */
    rx_uint_t            ctx_index;   /* position among modules of its type */
    unsigned             type;
    const void          *ctx;         /* rx_core_module_t, rx_http_module_t ... */
    const rx_command_t  *commands;

    /* In the master after a config loaded (also for -t). */
    rx_int_t (*init_module)(rx_cycle_t *cycle);
    /* In each worker after fork, before its loop. */
    rx_int_t (*init_process)(rx_cycle_t *cycle);
    /* In each worker when it leaves. */
    void (*exit_process)(rx_cycle_t *cycle);
    /* In the master when it leaves. */
    void (*exit_master)(rx_cycle_t *cycle);
    /* In each worker on USR1, before the log files are reopened: what a
     * module buffers for a file goes to the old one. */
    void (*reopen)(rx_cycle_t *cycle);
    /* Set by rx_modules_preinit from core/modules.c's on-demand list: the
     * module acts only through its directives, so a cycle whose
     * configuration names none of them leaves its phase handlers and
     * filters out (rx_module_active). */
    bool on_demand;
};

/* Context of core modules: a main conf created before parsing and checked
 * (defaults filled in) after it. */
typedef struct {
    const char  *name;
    void       *(*create_conf)(rx_cycle_t *cycle);
    const char *(*init_conf)(rx_cycle_t *cycle, void *conf);
} rx_core_module_t;

/* Optional modules compiled in or left out, for -V ("--with-"/"--without-"). */
typedef struct {
    const char *configure_name;   /* e.g. "http_gzip_module" */
    bool        compiled;
    bool        standard;         /* nginx builds it unless told --without */
} rx_module_flag_t;

/* For -V: the TLS library the build links with and the one it runs with
 * (event/tls.c knows them; core/modules.c, the registry, names them). */
typedef struct {
    const char *(*built_with)(void);
    const char *(*running_with)(void);
} rx_build_tls_t;

extern const rx_build_tls_t rx_build_tls;
extern rx_module_t *const rx_modules[];
extern const rx_uint_t rx_modules_n;
extern const rx_module_flag_t rx_module_flags[];

/* Calls every module's reopen hook (USR1 in a worker). */
void rx_modules_reopen(rx_cycle_t *cycle);
/* Sets index/ctx_index of every module once at start-up. */
void rx_modules_preinit(void);
rx_uint_t rx_modules_count(unsigned type);
/* Whether m registers its phase handlers and filters in cycle: always,
 * unless it is on demand and cycle's configuration names none of its
 * directives (core/conf.c marks cycle->modules_used as it dispatches). */
bool rx_module_active(const rx_cycle_t *cycle, const rx_module_t *m);

#endif /* RX_MODULE_H */
