/*
 * cycle.h: one loaded configuration and everything opened for it: module
 * confs, listening sockets, log files, paths. A reload builds a new cycle
 * next to the running one and frees the old one once the new workers run
 * (old workers keep their own copy, made by fork).
 */
#ifndef RX_CYCLE_H
#define RX_CYCLE_H

#include "module.h"
#include "conf.h"
#include "inet.h"

/* A listening socket the master opens and workers inherit. */
typedef struct {
    rx_sockaddr_t  addr;           /* bound address */
    rx_str_t       addr_text;      /* "127.0.0.1:8080", "[::1]:80", "unix:/p" */
    int            fd;
    int            backlog;
    int            rcvbuf;         /* -1 unset */
    int            sndbuf;         /* -1 unset */
    int            ipv6only;       /* -1 unset, else 0/1 */
    int            so_keepalive;   /* 0 unset, 1 on, 2 off */
    int            keepidle, keepintvl, keepcnt;
    bool           reuseport;      /* one socket per worker */
    bool           reuseport_auto; /* reuseport by worker_reuseport, not
                                      asked for on the listen line: bind
                                      must fail on an address in use */
    bool           deferred;       /* TCP_DEFER_ACCEPT */
    bool           nodelay;        /* TCP_NODELAY on it (else cleared):
                                      accepted sockets inherit it, so
                                      the protocol need not set it on
                                      each (HTTP: every server on it has
                                      tcp_nodelay on) */
    bool           inherited;      /* fd kept from the previous cycle */
    bool           remove;         /* closed when the new cycle starts */
    bool           draining;       /* a worker's graceful stop: its accept
                                      is being cancelled (event/accept.c) */
    rx_uint_t      worker;         /* with reuseport: which worker owns it */
    void          *servers;        /* protocol data (HTTP: address->servers) */
    void          *names;          /* HTTP: per-address server_name lookup
                                      (http_server.c) */
} rx_listening_t;

/* A directory the master makes at start for temporary files (a
 * *_temp_path), owned by the workers' user. */
typedef struct {
    rx_str_t      name;            /* absolute, NUL-terminated */
    const char   *directive;       /* the first directive that named it */
    unsigned      reported:1;      /* a worker logged that it cannot use
                                      it (each worker logs it once) */
} rx_path_t;

/* The core module's main conf: the top-level directives. */
typedef struct {
    rx_int_t     daemon;
    rx_int_t     master;
    rx_int_t     worker_processes;        /* resolved: auto -> CPUs */
    rx_int_t     worker_reuseport;        /* TCP listeners: a socket per
                                             worker (core/listening.c) */
    rx_array_t   cpu_affinity;            /* uint64_t masks, one per worker */
    rx_int_t     cpu_affinity_auto;
    uint64_t     cpu_affinity_auto_mask;
    rx_int_t     rlimit_nofile;           /* -1: leave the soft limit */
    rx_msec_t    shutdown_timeout;        /* 0: none */
    rx_int_t     priority;
    rx_int_t     priority_set;
    rx_str_t     pid;                     /* absolute */
    rx_str_t     username;
    uid_t        user;
    gid_t        group;
    rx_int_t     user_set;
    rx_array_t   env;                     /* rx_str_t "NAME" or "NAME=value" */
} rx_core_conf_t;

struct rx_cycle_s {
    void           **conf_ctx;     /* per-module main confs, by module index */
    rx_pool_t       *pool;
    rx_log_t        *log;          /* the first error_log target */
    rx_log_t         new_log;      /* head of the error_log chain */
    rx_array_t       open_files;   /* rx_open_file_t *, reopened on USR1 */
    rx_array_t       listening;    /* rx_listening_t */
    rx_array_t       config_dump;  /* rx_conf_dump_t, for -T */
    rx_array_t       paths;        /* rx_path_t directories to create */
    rx_array_t       shm_zones;    /* rx_shm_zone_t *, declared by directives
                                      (core/shm_zone.h) */
    rx_str_t         conf_file;    /* absolute */
    rx_str_t         conf_prefix;  /* directory of conf_file, with '/' */
    rx_str_t         prefix;       /* with '/' */
    rx_str_t         error_log;    /* -e, or the compiled-in default */
    rx_str_t         conf_param;   /* -g */
    rx_str_t         hostname;
    rx_uint_t        upstream_fds_per_conn; /* 1 when the config proxies */
    rx_uint_t        worker_connections;    /* set by the events module */
    /* What the http layer tells -t's descriptor budget (conf_check.c), for
     * one worker: upstream connections at most (0: no max_conns bounds
     * them), idle ones the keepalive pools keep, and descriptors that
     * open_file_cache may hold. */
    rx_uint_t        budget_upstream_max;
    rx_uint_t        budget_upstream_idle;
    rx_uint_t        budget_cached_files;
    rx_cycle_t      *old_cycle;
    /* One flag per entry of rx_modules: this configuration names one of
     * the module's directives (core/conf.c sets it; rx_module_active). */
    uint8_t         *modules_used;
};

typedef struct {
    rx_str_t  name;
    rx_str_t  content;
} rx_conf_dump_t;

/* The running cycle; the worker's loop is the only other global. */
extern rx_cycle_t *rx_cycle;
/* Command-line state kept process-wide. */
extern bool rx_test_config, rx_dump_config, rx_quiet_mode;
extern rx_uint_t rx_process;   /* RX_PROCESS_SINGLE/MASTER/WORKER/SIGNALLER */

#define RX_PROCESS_SINGLE    0
#define RX_PROCESS_MASTER    1
#define RX_PROCESS_SIGNALLER 2
#define RX_PROCESS_WORKER    3

/*
 * Builds a cycle from old's paths and the config file: parses, runs the
 * modules' init_conf/init_module, opens log files and listening sockets
 * (reusing old's where the address is unchanged). Returns NULL after
 * logging why; the old cycle is untouched then.
 */
rx_cycle_t *rx_init_cycle(rx_cycle_t *old);
void rx_free_cycle(rx_cycle_t *cycle);
/* -t (path_check.c): warns about each of cycle->paths the workers' user
 * will not be able to write. */
void rx_conf_check_paths(rx_cycle_t *cycle);
/* The entry of cycle->paths named name (NUL-terminated), or NULL. */
rx_path_t *rx_cycle_path(rx_cycle_t *cycle, const char *name);

/* Module conf lookup. */
#define rx_get_conf(conf_ctx, module)  ((conf_ctx)[(module).index])

extern rx_module_t rx_core_module;
extern rx_module_t rx_events_module;
extern rx_module_t rx_errlog_module;

rx_int_t rx_create_pidfile(rx_str_t *name, rx_log_t *log);
void rx_delete_pidfile(rx_cycle_t *cycle);
rx_int_t rx_signal_process(rx_cycle_t *cycle, const char *sig);
void rx_reopen_files(rx_cycle_t *cycle);
rx_int_t rx_open_listening_sockets(rx_cycle_t *cycle);
void rx_close_listening_sockets(rx_cycle_t *cycle);
/* The reuseport groups pick among this cycle's workers' sockets again (a
 * master that starts its workers again after an upgrade's WINCH: the new
 * binary had set the group's selector to its own worker count). */
void rx_listening_select_workers(rx_cycle_t *cycle);
rx_open_file_t *rx_conf_open_file(rx_cycle_t *cycle, const rx_str_t *name);
rx_int_t rx_log_open_default(rx_cycle_t *cycle);
const char *rx_log_set_log(rx_conf_t *cf, rx_log_t **head);

/* -t arithmetic (conf_check.c): warns when connections can exceed fds. */
void rx_conf_check_limits(rx_cycle_t *cycle, bool print_capacity);

#endif /* RX_CYCLE_H */
