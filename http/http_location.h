/*
 * http_location.h: choosing a location for a URI the way nginx does, from
 * lookup structures built once at load time.
 */
#ifndef RX_HTTP_LOCATION_H
#define RX_HTTP_LOCATION_H

#include "http_core.h"
#include "regex.h"

/*
 * Called by the `location` block handler once the modifier and name of
 * clcf are set: records where the block opens (for "duplicate location"
 * errors) and compiles the regex of a `~`/`~*` location, logging nginx's
 * "pcre2_compile() failed: ... in FILE:LINE" on error. RX_OK or RX_ERROR.
 */
rx_int_t rx_http_location_init_conf(rx_conf_t *cf, rx_http_core_loc_conf_t *clcf);

/*
 * Builds the lookup structures of a server's location tree, every level:
 * the sorted table of prefix/exact names, the regexes in config order and
 * the server's named locations. Called once per server after parsing;
 * `locations` is left as parsed (merges walk it). Logs
 *   duplicate location "/x" in FILE:LINE
 * and returns RX_ERROR when two `=` or two prefix (plain or ^~) locations
 * of one level share a name.
 */
rx_int_t rx_http_init_locations(rx_conf_t *cf, rx_http_core_srv_conf_t *cscf,
    rx_http_core_loc_conf_t *server_clcf);

/*
 * Selects the location for uri (the decoded, normalised URI), nginx's
 * ngx_http_core_find_location: exact match wins; else the longest prefix,
 * then its nested locations; unless that prefix is ^~, the regexes of the
 * level (config order, first match wins, then its nested locations).
 * Returns the server-level conf when nothing matches, or NULL when a regex
 * failed to run (the caller answers 500).
 *
 * captures (room for ncaptures pairs, may be NULL) receives the offsets of
 * the last matching regex that has groups, as nginx keeps $1..$9; then
 * *ncaptured is the number of pairs set there ($0 included) and *matched
 * that regex (for its named groups); else 0 and NULL. ncaptured and
 * matched may be NULL.
 */
rx_http_core_loc_conf_t *rx_http_find_location(
    rx_http_core_loc_conf_t *server_clcf, const rx_str_t *uri, int *captures,
    rx_uint_t ncaptures, rx_int_t *ncaptured, rx_regex_t **matched);

/* Whether the location found for uri is nginx's auto_redirect (the URI is
 * its name without the final '/', see http_location.c): the request is
 * answered with a 301 to the name. */
bool rx_http_location_redirects(const rx_http_core_loc_conf_t *clcf,
    const rx_str_t *uri);

/* The named location "@name" (name includes the '@') of a server, or NULL.
 * With two of one name, the first in the config wins, as in nginx. */
rx_http_core_loc_conf_t *rx_http_find_named_location(
    rx_http_core_loc_conf_t *server_clcf, const rx_str_t *name);

#endif /* RX_HTTP_LOCATION_H */
