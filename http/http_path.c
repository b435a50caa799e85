/*
 * http_path.c: mapping a request's URI to a file path through the
 * location's root or alias. The URI is already normalised (no "..", no
 * NUL), so the path cannot climb out of root or alias.
 */
#include "http.h"

/*
 * Fills path (NUL-terminated, from r->pool) with root + uri, or alias +
 * the part of the URI after the location's prefix; reserve extra bytes
 * at the end for callers that append (an index file name).
 */
rx_int_t
rx_http_map_uri_to_path(rx_http_request_t *r, rx_str_t *path, size_t reserve)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_str_t                 uri = r->uri;
    const rx_str_t          *root = &clcf->root;
    char                    *p;

    if (clcf->alias && clcf->match != RX_LOC_REGEX
        && clcf->match != RX_LOC_REGEX_CASELESS) {
        /* alias replaces the location's prefix */
        size_t skip = rx_min(clcf->name.len, uri.len);
        uri.data += skip;
        uri.len -= skip;
    }
    p = rx_pnalloc(r->pool, root->len + uri.len + reserve + 2);
    if (p == NULL) {
        return RX_ERROR;
    }
    path->data = p;
    memcpy(p, root->data, root->len);
    p += root->len;
    memcpy(p, uri.data, uri.len);
    p += uri.len;
    *p = '\0';
    path->len = (size_t) (p - path->data);
    return RX_OK;
}
