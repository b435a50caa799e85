/*
 * http_metrics.c: the layout of the per-configuration metrics block
 * (http_metrics.h) and its histograms.
 */
#include "http.h"
#include "http_metrics.h"

static rx_msec_t  bounds[RX_HTTP_METRICS_BUCKETS];
static rx_uint_t  nbounds;

#define ALIGN64(n)  (((n) + 63) & ~(size_t) 63)

void
rx_http_metrics_layout_size(rx_http_metrics_layout_t *l)
{
    size_t off;

    off = l->nservers * sizeof(rx_http_metrics_req_t);
    l->off_locations = off;
    off += l->nlocations * sizeof(rx_http_metrics_req_t);
    l->off_upstreams = off;
    off += l->nupstreams * sizeof(rx_http_metrics_ups_t);
    l->off_peers = off;
    off += l->npeers * sizeof(rx_http_metrics_peer_t);
    /* a block per worker, on its own cache lines */
    l->stride = ALIGN64(off > 0 ? off : 1);
}

char *
rx_http_metrics_block(const rx_http_metrics_layout_t *l, rx_uint_t w)
{
    if (l == NULL || l->shm.addr == NULL || w >= l->nworkers) {
        return NULL;
    }
    return (char *) l->shm.addr + w * l->stride;
}

void
rx_http_metrics_use_bounds(const rx_http_metrics_layout_t *l)
{
    nbounds = l->nbounds;
    memcpy(bounds, l->bounds, sizeof(bounds));
}

void
rx_http_metrics_observe(rx_http_metrics_hist_t *h, rx_msec_t ms)
{
    rx_uint_t i;

    for (i = 0; i < nbounds && ms > bounds[i]; i++) {
        /* the first bound the value does not exceed */
    }
    h->bucket[i < nbounds ? i : RX_HTTP_METRICS_BUCKETS]++;
    h->sum_ms += ms;
}
