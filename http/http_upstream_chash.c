/*
 * http_upstream_chash.c: building and searching the consistent-hash ring
 * (see http_upstream_chash.h). Pure: no request, no configuration state, so
 * t/unit/test_upstream_chash.c checks placement directly.
 */
#include "http.h"
#include "http_upstream_chash.h"
#include "crc32.h"

/* The CRC of "host\0port" as nginx splits a server name: a trailing
 * ":digits" is the port, "unix:" names have an empty port, others port 80.
 * Kept unfinished in zlib style, so that each point chains onto it. */
static uint32_t
name_hash(const rx_str_t *name)
{
    const char *host = name->data, *port = "80";
    size_t      hlen = name->len, plen = 2, j;
    uint32_t    crc;

    if (hlen >= 5 && strncasecmp(host, "unix:", 5) == 0) {
        host += 5;
        hlen -= 5;
        port = "";
        plen = 0;
    } else {
        for (j = name->len; j > 0; j--) {
            char c = name->data[j - 1];

            if (c == ':') {
                hlen = j - 1;
                port = name->data + j;
                plen = name->len - j;
                break;
            }
            if (c < '0' || c > '9') {
                break;
            }
        }
    }
    crc = rx_crc32(0, host, hlen);
    crc = rx_crc32(crc, "", 1);
    return rx_crc32(crc, port, plen);
}

static int
point_cmp(const void *a, const void *b)
{
    const rx_http_upstream_chash_point_t *x = a, *y = b;

    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

rx_int_t
rx_http_upstream_chash_init(rx_pool_t *pool, rx_http_upstream_chash_t *ring,
    const rx_http_upstream_server_t *servers, rx_uint_t n)
{
    rx_http_upstream_chash_point_t *pt;
    rx_uint_t                       i, j, k, total = 0;

    for (i = 0; i < n; i++) {
        total += (rx_uint_t) servers[i].weight * RX_HTTP_UPSTREAM_CHASH_POINTS;
    }
    pt = rx_palloc(pool, (total ? total : 1) * sizeof(*pt));
    if (pt == NULL) {
        return RX_ERROR;
    }
    k = 0;
    for (i = 0; i < n; i++) {
        uint32_t       base = name_hash(&servers[i].name), prev = 0;
        rx_uint_t      npoints = (rx_uint_t) servers[i].weight
                                 * RX_HTTP_UPSTREAM_CHASH_POINTS;
        unsigned char  le[4];

        for (j = 0; j < npoints; j++, k++) {
            /* the previous point's bytes, little endian, as nginx */
            le[0] = (unsigned char) prev;
            le[1] = (unsigned char) (prev >> 8);
            le[2] = (unsigned char) (prev >> 16);
            le[3] = (unsigned char) (prev >> 24);
            prev = rx_crc32(base, le, 4);
            pt[k].hash = prev;
            pt[k].server = i;
        }
    }
    /* the sort is not stable: equal hashes go to the lower server index,
     * so that the ring does not depend on qsort's order */
    qsort(pt, total, sizeof(*pt), point_cmp);
    for (i = 0, j = 0; i < total; i++) {
        if (j > 0 && pt[j - 1].hash == pt[i].hash) {
            if (pt[i].server < pt[j - 1].server) {
                pt[j - 1].server = pt[i].server;
            }
            continue;
        }
        pt[j++] = pt[i];
    }
    ring->point = pt;
    ring->n = j;
    return RX_OK;
}

rx_uint_t
rx_http_upstream_chash_find(const rx_http_upstream_chash_t *ring, uint32_t hash)
{
    rx_uint_t lo = 0, hi = ring->n;

    /* invariant: points before lo are < hash, points from hi are >= hash */
    while (lo < hi) {
        rx_uint_t mid = lo + (hi - lo) / 2;

        if (ring->point[mid].hash < hash) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo == ring->n ? 0 : lo;
}
