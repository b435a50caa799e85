/*
 * proxy_rewrite.h: the proxy module's rewriting of upstream response
 * headers: proxy_redirect (Location, Refresh) and proxy_cookie_domain,
 * proxy_cookie_path, proxy_cookie_flags (Set-Cookie). The rules are
 * compiled at load (variables, regexes) and applied per response from
 * the upstream engine's rewrite_redirect / rewrite_cookie callbacks.
 * Private to modules/proxy.c and modules/proxy_rewrite.c.
 */
#ifndef RX_PROXY_REWRITE_H
#define RX_PROXY_REWRITE_H

#include "http.h"
#include "http_script.h"

/* The settings of a location, each an rx_array_t of rules in the order
 * written: RX_CONF_UNSET_PTR while no directive gave one at this level
 * (inherited at merge), NULL after `off`. */
typedef struct {
    rx_array_t  *redirects;        /* rx_http_proxy_rewrite_t */
    rx_array_t  *cookie_domains;   /* rx_http_proxy_rewrite_t */
    rx_array_t  *cookie_paths;     /* rx_http_proxy_rewrite_t */
    rx_array_t  *cookie_flags;     /* rx_http_proxy_cookie_flags_t */
} rx_http_proxy_rewrite_conf_t;

/* What the location's proxy_pass said, for proxy_redirect default. */
typedef struct {
    rx_str_t  url;          /* as written; empty: no proxy_pass here */
    rx_str_t  location;     /* the location's name */
    bool      has_uri;      /* the URL has a URI part */
    bool      variables;    /* the URL has variables */
} rx_http_proxy_target_t;

void rx_http_proxy_rewrite_init_conf(rx_http_proxy_rewrite_conf_t *rc);

/* Inherits what this level did not set; a level with proxy_pass and no
 * proxy_redirect anywhere above gets the `default` rule. Returns
 * RX_CONF_OK or RX_CONF_ERROR. */
const char *rx_http_proxy_rewrite_merge(rx_conf_t *cf,
    rx_http_proxy_rewrite_conf_t *conf, const rx_http_proxy_rewrite_conf_t *prev,
    const rx_http_proxy_target_t *target);

/* proxy_redirect, given the rewrite conf and this level's proxy_pass. */
const char *rx_http_proxy_set_redirect(rx_conf_t *cf,
    rx_http_proxy_rewrite_conf_t *rc, const rx_http_proxy_target_t *target);

/* Directive-table setters; cmd->offset is that of the rx_array_t * field
 * (cookie_domains, cookie_paths, cookie_flags) in the location conf. */
const char *rx_http_proxy_set_cookie_domain(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_proxy_set_cookie_path(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_proxy_set_cookie_flags(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);

/* Whether a response needs the callbacks below at all. */
bool rx_http_proxy_rewrites_redirects(const rx_http_proxy_rewrite_conf_t *rc);
bool rx_http_proxy_rewrites_cookies(const rx_http_proxy_rewrite_conf_t *rc);

/*
 * Per response header. h is a Location or Refresh header (only its part
 * after "url=" is rewritten, as nginx), or a Set-Cookie header; its value
 * is replaced by a copy in r->pool when a rule applies. Returns RX_OK
 * (rewritten), RX_DECLINED (no rule applied) or RX_ERROR.
 */
rx_int_t rx_http_proxy_rewrite_redirect(rx_http_request_t *r,
    const rx_http_proxy_rewrite_conf_t *rc, rx_table_elt_t *h);
rx_int_t rx_http_proxy_rewrite_cookie(rx_http_request_t *r,
    const rx_http_proxy_rewrite_conf_t *rc, rx_table_elt_t *h);

#endif /* RX_PROXY_REWRITE_H */
