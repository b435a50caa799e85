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
    bool                      ssl;           /* the address speaks TLS */
    bool                      proxy_protocol; /* connections start with a
                                                 PROXY protocol header */
    bool                      http2;         /* deprecated listen ... http2 */
    bool                      set;           /* any socket option given */
    rx_str_t                  file;          /* where, for conflict errors */
    rx_uint_t                 line;
} rx_http_listen_opt_t;

typedef struct {
    rx_array_t   servers;     /* rx_http_core_srv_conf_t * */
    rx_array_t   listens;     /* rx_http_listen_opt_t */
    bool         upstreams;   /* a location proxies: one more fd per request */
    /* the phase engine: handlers per phase, in module order (modules.c) */
    rx_array_t   phases[9];   /* rx_http_handler_pt, by rx_http_phase_t */
} rx_http_core_main_conf_t;

typedef struct rx_regex_s rx_regex_t;     /* core/regex.h */

typedef struct {
    rx_str_t     name;        /* as written, lower-cased unless a regex */
    bool         regex;
    rx_regex_t  *re;          /* compiled when regex */
    void        *capture_vars; /* rx_http_capture_vars_t: named groups */
} rx_http_server_name_t;

struct rx_http_core_srv_conf_s {
    rx_array_t               server_names;   /* rx_http_server_name_t */
    rx_http_conf_ctx_t      *ctx;            /* the server block's confs */
    bool                     listen;         /* has a listen line */
    rx_str_t                 file;
    rx_uint_t                line;

    size_t                   client_header_buffer_size;
    size_t                   large_client_header_buffers_size;
    rx_int_t                 large_client_header_buffers_num;
    rx_msec_t                client_header_timeout;
    rx_int_t                 ignore_invalid_headers;
    rx_int_t                 underscores_in_headers;
    rx_int_t                 merge_slashes;
};

/* error_page codes [=code] uri */
typedef struct {
    rx_uint_t    status;
    rx_int_t     overwrite;     /* -1: keep; 0: "=" alone (from target) */
    rx_str_t     uri;           /* "/x", "@name" or "http://..." */
    void        *value;         /* rx_http_complex_value_t when it has $ */
} rx_http_err_page_t;

typedef struct {
    rx_str_t     name;          /* "text/html" */
    rx_str_t     exten;         /* "html", lower-cased */
} rx_http_type_t;

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
    bool                      noname;       /* an `if` block: name and match
                                               are its parent's; never
                                               matched by a URI */
    rx_array_t               *locations;    /* nested, rx_http_core_loc_conf_t * */
    rx_http_core_loc_conf_t  *parent;
    void                    **loc_conf;     /* this location's confs */
    /* limit_except: the methods its block applies to (0: none) and the
     * block's confs, which a request of such a method runs with */
    uint32_t                  limit_except;
    void                    **limit_except_loc_conf;
    rx_regex_t               *regex;        /* ~ and ~* locations */
    void                     *capture_vars; /* rx_http_capture_vars_t */
    /* Lookup structures built at load time by http_location.c from
     * `locations`: prefix/exact ones in a static tree, regexes in order. */
    void                     *static_tree;
    rx_array_t               *regex_locations;  /* rx_http_core_loc_conf_t * */
    rx_array_t               *named_locations;  /* server level only */
    rx_str_t                  root;
    bool                      alias;
    void                     *root_cv;      /* complex value when root has $ */

    /* the content handler a directive (stub_status, ...) installed */
    rx_int_t                (*handler)(void *r);
    /* set by proxy_pass and fastcgi_pass in a location whose name ends in
     * '/': the name without it is answered with a 301 to the name (nginx's
     * auto_redirect, see http_location.c) */
    bool                      auto_redirect;

    int64_t                   client_max_body_size;
    size_t                    client_body_buffer_size;
    rx_str_t                  client_body_temp_path; /* NUL-terminated */
    rx_msec_t                 client_body_timeout;
    rx_uint_t                 client_body_in_file_only; /* RX_HTTP_BODY_FILE_* */
    rx_int_t                  client_body_in_single_buffer; /* accepted */
    size_t                    connection_pool_size; /* accepted: sizing hints */
    size_t                    request_pool_size;    /* ringx's pools grow */
    rx_msec_t                 send_timeout;
    rx_msec_t                 keepalive_timeout;
    rx_msec_t                 keepalive_header;     /* "Keep-Alive: timeout=" */
    rx_int_t                  keepalive_requests;
    rx_msec_t                 keepalive_time;
    rx_uint_t                 keepalive_disable;    /* bitmask */
    rx_uint_t                 lingering_close;      /* off/on/always */
    rx_msec_t                 lingering_time;
    rx_msec_t                 lingering_timeout;
    struct rx_resolver_s     *resolver;             /* NULL: none */
    rx_msec_t                 resolver_timeout;
    rx_int_t                  reset_timedout_connection;
    rx_uint_t                 server_tokens;        /* off/on/build */
    rx_str_t                  default_type;
    rx_array_t               *types;                /* rx_http_type_t */
    rx_array_t               *error_pages;          /* rx_http_err_page_t */
    rx_int_t                  recursive_error_pages;
    rx_int_t                  chunked_transfer_encoding;
    rx_int_t                  absolute_redirect;
    rx_int_t                  server_name_in_redirect;
    rx_int_t                  port_in_redirect;
    rx_int_t                  log_not_found;
    rx_int_t                  internal;
    rx_int_t                  sendfile;
    rx_int_t                  tcp_nopush;
    rx_int_t                  tcp_nodelay;
    size_t                    sendfile_max_chunk;
    void                     *limit_rate;           /* complex values (sizes), */
    void                     *limit_rate_after;     /* NULL: none */
    rx_uint_t                 if_modified_since;    /* off/exact/before */
    rx_log_t                 *error_log;            /* NULL: the main one */
    rx_int_t                  etag;
    rx_uint_t                 satisfy;              /* all/any */
    rx_str_t                  file;                 /* where it was defined */
    rx_uint_t                 line;
};

#define RX_HTTP_BODY_FILE_OFF    0
#define RX_HTTP_BODY_FILE_ON     1     /* the file stays after the request */
#define RX_HTTP_BODY_FILE_CLEAN  2     /* ... is removed with it */

#define RX_HTTP_LINGERING_OFF     0
#define RX_HTTP_LINGERING_ON      1
#define RX_HTTP_LINGERING_ALWAYS  2

#define RX_HTTP_KEEPALIVE_DISABLE_NONE   0x0002
#define RX_HTTP_KEEPALIVE_DISABLE_MSIE6  0x0004
#define RX_HTTP_KEEPALIVE_DISABLE_SAFARI 0x0008

/* satisfy: how the access phase combines its handlers' answers */
#define RX_HTTP_SATISFY_ALL  0
#define RX_HTTP_SATISFY_ANY  1

#define RX_HTTP_IMS_OFF     0
#define RX_HTTP_IMS_EXACT   1
#define RX_HTTP_IMS_BEFORE  2

/* directives with their own grammar (http_core_setters.c) */
const char *rx_http_core_set_large_buffers(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_core_set_keepalive_timeout(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_core_types_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_core_set_error_page(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_core_set_internal(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_core_set_error_log(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/* limit_except (http_limit_except.c): the block, and the switch of a
 * request to its confs when the method is not one of those listed */
const char *rx_http_core_limit_except(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/* http_core_blocks.c: the server and location blocks' directives */
const char *rx_http_core_server_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_core_location_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/* listen (http_listen.c) */
const char *rx_http_core_listen(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
rx_int_t rx_http_add_listening(rx_conf_t *cf, rx_http_core_main_conf_t *cmcf);
rx_int_t rx_http_create_confs(rx_conf_t *cf, rx_http_conf_ctx_t *ctx, bool main,
    bool srv);
/* http_block.c: a block's confs inside the current location (`if`,
 * `limit_except`): a nameless location under it. */
rx_http_conf_ctx_t *rx_http_nameless_location(rx_conf_t *cf);

#endif /* RX_HTTP_CORE_H */
