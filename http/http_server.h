/*
 * http_server.h: choosing the virtual server of a request by its Host, per
 * listening address, with nginx's server_name rules; tables built once at
 * load time.
 */
#ifndef RX_HTTP_SERVER_H
#define RX_HTTP_SERVER_H

#include "http_core.h"
#include "regex.h"

/* The names of the servers of one address (ip:port). */
typedef struct rx_http_server_names_s rx_http_server_names_t;

/*
 * Called by the server_name directive for every name it adds (already
 * lower-cased unless a regex), as nginx's ngx_http_core_server_name:
 * rejects `server name "*" is invalid` (a '*' not followed by '.', "*."
 * or "."), warns on a '/' ("has suspicious symbols"), replaces $hostname
 * by the machine's name, and compiles a "~regex" (caseless when it holds
 * an upper-case letter; "empty regex in server name"). RX_OK or RX_ERROR.
 */
rx_int_t rx_http_server_name_init(rx_conf_t *cf, rx_http_server_name_t *sn);

/*
 * Builds the lookup of one address from listen_opts, an array of
 * rx_http_listen_opt_t * that all name that address, in config order. The
 * default server is the one marked default_server, else the first. Logs
 * as nginx: an emerg "invalid server name or wildcard "x" on ADDR" (NULL
 * returned) and a warn "conflicting server name "x" on ADDR, ignored"
 * (the first server keeps the name). Memory comes from cf->pool; only
 * cf->pool and cf->log are used.
 */
rx_http_server_names_t *rx_http_build_server_names(rx_conf_t *cf,
    rx_array_t *listen_opts);

/*
 * For every listening socket of cf->cycle whose `servers` is set and
 * `names` is not: groups its listen lines by exact address (a specific
 * address without `bind` shares the wildcard socket of its port but keeps
 * its own servers, as in nginx) and stores the result in ls->names. Run
 * once after rx_http_add_listening(); running it again is harmless.
 */
rx_int_t rx_http_init_server_names(rx_conf_t *cf);

/* How many addresses share ls: above 1 the connection's local address
 * (getsockname) picks the one to use. */
rx_uint_t rx_http_listening_naddrs(const rx_listening_t *ls);

/* The names of the address a connection arrived on: the entry of local
 * when one matches exactly, else the socket's own address (local may be
 * NULL when rx_http_listening_naddrs() is 1). NULL when ls has no names. */
rx_http_server_names_t *rx_http_listening_names(const rx_listening_t *ls,
    const rx_sockaddr_t *local);

/*
 * The server for host, as nginx's ngx_http_find_virtual_server: exact
 * name, longest "*.x"/".x" wildcard, longest "x.*" wildcard, first matching
 * regex in config order, else the default server. Exact names and
 * wildcards compare case-insensitively and ignore a ":port" and a trailing
 * dot; regexes see host as given minus those, so pass the host as
 * rx_http_validate_host() leaves it (lower-cased). An empty host (no Host
 * header) matches `server_name ""` only. Returns NULL only when a regex
 * failed to run (nginx answers 500 then).
 *
 * captures/ncaptures/ncaptured/matched: as rx_http_find_location(), set
 * when a regex with groups chose the server (0 and NULL otherwise).
 */
rx_http_core_srv_conf_t *rx_http_find_server(rx_http_server_names_t *names,
    const rx_str_t *host, int *captures, rx_uint_t ncaptures,
    rx_int_t *ncaptured, rx_regex_t **matched);

rx_http_core_srv_conf_t *rx_http_default_server(
    const rx_http_server_names_t *names);

/* Whether the address speaks TLS (`ssl` on any of its listen lines). */
bool rx_http_server_names_ssl(const rx_http_server_names_t *names);

/* Whether its connections start with a PROXY protocol header
 * (`proxy_protocol` on any of its listen lines, as nginx). */
bool rx_http_server_names_proxy_protocol(const rx_http_server_names_t *names);

/* The address text ("127.0.0.1:80") the names belong to. */
const rx_str_t *rx_http_server_names_addr(const rx_http_server_names_t *names);

#endif /* RX_HTTP_SERVER_H */
