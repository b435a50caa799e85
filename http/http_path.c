/*
 * http_path.c: mapping a request's URI to a file path through the
 * location's root or alias. The URI is already normalised (no "..", no
 * NUL), so the path cannot climb out of root or alias; the one way left,
 * a prefix and an alias that meet as ".." (/files../ with alias
 * /srv/files/), is refused by find config (http_phases.c).
 */
#include "http.h"
#include "http_script.h"

/*
 * Fills path (NUL-terminated, from r->pool) with root + uri, or alias +
 * the part of the URI after the location's prefix; reserve extra bytes
 * at the end for callers that append (an index file name).
 */
/* The location's root (or alias) for r: as configured, or evaluated and
 * made absolute against the prefix when it holds variables. */
rx_int_t
rx_http_document_root(rx_http_request_t *r, rx_str_t *root)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_str_t                 v;
    char                    *p;

    if (clcf->root_cv == NULL) {
        *root = clcf->root;
        return RX_OK;
    }
    if (rx_http_complex_value(r, clcf->root_cv, &v) != RX_OK) {
        return RX_ERROR;
    }
    if (v.len && v.data[0] == '/') {
        *root = v;
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, rx_cycle->prefix.len + v.len + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    memcpy(p, rx_cycle->prefix.data, rx_cycle->prefix.len);
    memcpy(p + rx_cycle->prefix.len, v.data, v.len);
    p[rx_cycle->prefix.len + v.len] = '\0';
    root->data = p;
    root->len = rx_cycle->prefix.len + v.len;
    return RX_OK;
}

/*
 * Fills path (NUL-terminated, from r->pool) with root + URI; with alias,
 * alias + the part of the URI after the location's prefix, or, in a regex
 * location, the alias alone (it names the file through captures, as in
 * nginx). reserve: extra bytes at the end for callers that append.
 */
rx_int_t
rx_http_map_uri_to_path(rx_http_request_t *r, rx_str_t *path, size_t reserve)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_str_t                 uri = r->uri, root;
    char                    *p;

    if (rx_http_document_root(r, &root) != RX_OK) {
        return RX_ERROR;
    }
    if (clcf->alias && r->uri_rewritten) {
        /* the alias replaces the location's part of a URI that is no
         * longer the one the location matched (nginx's rule) */
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "\"alias\" cannot be "
            "used in location \"%.*s\" where URI was rewritten",
            (int) clcf->name.len, clcf->name.data);
        return RX_ERROR;
    }
    if (clcf->alias) {
        if (clcf->match == RX_LOC_REGEX || clcf->match == RX_LOC_REGEX_CASELESS) {
            uri.len = 0;
        } else {
            size_t skip = rx_min(clcf->name.len, uri.len);
            uri.data += skip;
            uri.len -= skip;
        }
    }
    p = rx_pnalloc(r->pool, root.len + uri.len + reserve + 2);
    if (p == NULL) {
        return RX_ERROR;
    }
    path->data = p;
    memcpy(p, root.data, root.len);
    p += root.len;
    memcpy(p, uri.data, uri.len);
    p += uri.len;
    *p = '\0';
    path->len = (size_t) (p - path->data);
    return RX_OK;
}
