/*
 * http_core.h: the core HTTP confs: main (servers, listen addresses),
 * server (names, its locations) and location (match rule, nesting, and
 * the directives every request consults).
 */
#ifndef RX_HTTP_CORE_H
#define RX_HTTP_CORE_H

#include "http_config.h"

typedef struct rx_http_core_srv_conf_s rx_http_core_srv_conf_t;
typedef struct rx_http_core_loc_conf_s rx_http_core_loc_conf_t;

/* One `listen` line: an address and its socket options. */
typedef struct {
    rx_sockaddr_t             addr;
    rx_str_t                  addr_text;
    rx_http_core_srv_conf_t  *server;
    int                       backlog;
    int                       rcvbuf;
    int                       sndbuf;
    int                       ipv6only;      /* -1 unset */
    int                       so_keepalive;  /* 0 unset, 1 on, 2 off */
    int                       keepidle, keepintvl, keepcnt;
    bool                      default_server;
    bool                      reuseport;
    bool                      deferred;
    bool                      bind;
    bool                      set;           /* any socket option given */
    rx_str_t                  file;          /* where, for conflict errors */
    rx_uint_t                 line;
} rx_http_listen_opt_t;

typedef struct {
    rx_array_t   servers;     /* rx_http_core_srv_conf_t * */
    rx_array_t   listens;     /* rx_http_listen_opt_t */
    bool         upstreams;   /* a location proxies: one more fd per request */
} rx_http_core_main_conf_t;

typedef struct rx_regex_s rx_regex_t;     /* core/regex.h */

typedef struct {
    rx_str_t     name;        /* as written, lower-cased unless a regex */
    bool         regex;
    rx_regex_t  *re;          /* compiled when regex */
} rx_http_server_name_t;

struct rx_http_core_srv_conf_s {
    rx_array_t               server_names;   /* rx_http_server_name_t */
    rx_http_conf_ctx_t      *ctx;            /* the server block's confs */
    bool                     listen;         /* has a listen line */
    rx_str_t                 file;
    rx_uint_t                line;
};

/* How a location matches (nginx's modifiers). */
typedef enum {
    RX_LOC_PREFIX = 0,
    RX_LOC_EXACT,        /* = */
    RX_LOC_NOREGEX,      /* ^~ */
    RX_LOC_REGEX,        /* ~ */
    RX_LOC_REGEX_CASELESS, /* ~* */
    RX_LOC_NAMED         /* @name */
} rx_http_loc_match_t;

struct rx_http_core_loc_conf_s {
    rx_str_t                  name;
    rx_http_loc_match_t       match;
    rx_array_t               *locations;    /* nested, rx_http_core_loc_conf_t * */
    rx_http_core_loc_conf_t  *parent;
    void                    **loc_conf;     /* this location's confs */
    rx_regex_t               *regex;        /* ~ and ~* locations */
    /* Lookup structures built at load time by http_location.c from
     * `locations`: prefix/exact ones in a static tree, regexes in order. */
    void                     *static_tree;
    rx_array_t               *regex_locations;  /* rx_http_core_loc_conf_t * */
    rx_array_t               *named_locations;  /* server level only */
    rx_str_t                  root;
    bool                      alias;
};

/* listen (http_listen.c) */
const char *rx_http_core_listen(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
rx_int_t rx_http_add_listening(rx_conf_t *cf, rx_http_core_main_conf_t *cmcf);
rx_int_t rx_http_create_confs(rx_conf_t *cf, rx_http_conf_ctx_t *ctx, bool main,
    bool srv);

#endif /* RX_HTTP_CORE_H */
