/*
 * test_upstream_chash.c: CRC-32 (core/crc32.c) against known values, and
 * the consistent-hash ring (http/http_upstream_chash.c): points sorted and
 * unique, 160 per unit of weight, the search against a linear scan, an
 * even spread, weights honoured, and the ketama property: removing a
 * server moves only the keys it held, adding one takes keys only to it.
 */
#include "core.h"
#include "http.h"
#include "http_upstream_chash.h"
#include "crc32.h"
#include "tap.h"

#define NKEYS  20000

static rx_pool_t *pool;

static void
servers_of(rx_http_upstream_server_t *s, const char *const *names,
    const rx_int_t *weights, rx_uint_t n)
{
    rx_uint_t i;

    memset(s, 0, n * sizeof(*s));
    for (i = 0; i < n; i++) {
        s[i].name.data = (char *) names[i];
        s[i].name.len = strlen(names[i]);
        s[i].weight = weights ? weights[i] : 1;
    }
}

/* the server a key goes to: the name, so that rings can be compared */
static const char *
owner(const rx_http_upstream_chash_t *ring,
    const rx_http_upstream_server_t *s, uint32_t key)
{
    return s[ring->point[rx_http_upstream_chash_find(ring, key)].server].name.data;
}

static uint32_t
key_hash(rx_uint_t k)
{
    char buf[32];
    int  len = snprintf(buf, sizeof(buf), "/key/%lu", (unsigned long) k);

    return rx_crc32(0, buf, (size_t) len);
}

static void
test_crc32(void)
{
    is_int(rx_crc32(0, "123456789", 9), 0xcbf43926, "crc32 check value");
    is_int(rx_crc32(0, "", 0), 0, "crc32 of nothing");
    is_int(rx_crc32(rx_crc32(0, "1234", 4), "56789", 5), 0xcbf43926,
           "crc32 chains as zlib's");
    is_int(rx_crc32(0, "The quick brown fox jumps over the lazy dog", 43),
           0x414fa339, "crc32 of the fox");
}

static void
test_ring_shape(void)
{
    static const char *const names[] = {
        "10.0.0.1:80", "10.0.0.2:80", "backend.example.com", "unix:/tmp/s"
    };
    static const rx_int_t weights[] = { 1, 2, 1, 3 };
    rx_http_upstream_server_t s[4];
    rx_http_upstream_chash_t  ring;
    rx_uint_t                 i, k, per[4] = { 0 }, bad = 0;
    bool                      sorted = true;

    servers_of(s, names, weights, 4);
    ok(rx_http_upstream_chash_init(pool, &ring, s, 4) == RX_OK, "ring built");
    ok(ring.n <= 7 * 160 && ring.n >= 7 * 160 - 5,
       "160 points per unit of weight (%lu)", (unsigned long) ring.n);
    for (i = 1; i < ring.n; i++) {
        if (ring.point[i - 1].hash >= ring.point[i].hash) {
            sorted = false;
        }
    }
    ok(sorted, "points sorted, no two alike");
    for (i = 0; i < ring.n; i++) {
        per[ring.point[i].server]++;
    }
    ok(per[0] == 160 && per[1] == 320 && per[2] == 160 && per[3] == 480,
       "each server has weight x 160 points (%lu %lu %lu %lu)",
       (unsigned long) per[0], (unsigned long) per[1],
       (unsigned long) per[2], (unsigned long) per[3]);

    /* the search against a linear scan, ends included */
    for (k = 0; k < 2000; k++) {
        uint32_t  h = k < 4 ? (uint32_t[]) { 0, UINT32_MAX,
                                             ring.point[0].hash,
                                             ring.point[ring.n - 1].hash }[k]
                            : key_hash(k);
        rx_uint_t want = 0;

        for (i = 0; i < ring.n; i++) {
            if (ring.point[i].hash >= h) {
                want = i;
                break;
            }
        }
        if (rx_http_upstream_chash_find(&ring, h) != want) {
            bad++;
        }
    }
    is_int(bad, 0, "find gives the first point >= hash, wrapping");
    ok(ring.point[ring.n - 1].hash == UINT32_MAX
       || rx_http_upstream_chash_find(&ring, ring.point[ring.n - 1].hash + 1)
          == 0, "past the last point: the first");
}

static void
test_spread_and_weight(void)
{
    static const char *const names[] = {
        "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"
    };
    static const rx_int_t weights[] = { 1, 1, 2 };
    rx_http_upstream_server_t s[3];
    rx_http_upstream_chash_t  ring;
    rx_uint_t                 k, i, n[3] = { 0 };

    servers_of(s, names, NULL, 3);
    rx_http_upstream_chash_init(pool, &ring, s, 3);
    for (k = 0; k < NKEYS; k++) {
        n[ring.point[rx_http_upstream_chash_find(&ring, key_hash(k))].server]++;
    }
    for (i = 0; i < 3; i++) {
        ok(n[i] > NKEYS / 3 * 6 / 10 && n[i] < NKEYS / 3 * 14 / 10,
           "equal weights: server %lu holds about a third (%lu of %d)",
           (unsigned long) i, (unsigned long) n[i], NKEYS);
    }

    servers_of(s, names, weights, 3);
    rx_http_upstream_chash_init(pool, &ring, s, 3);
    memset(n, 0, sizeof(n));
    for (k = 0; k < NKEYS; k++) {
        n[ring.point[rx_http_upstream_chash_find(&ring, key_hash(k))].server]++;
    }
    ok(n[2] > n[0] * 13 / 10 && n[2] > n[1] * 13 / 10
       && n[2] < (n[0] + n[1]) * 15 / 10,
       "weight=2 holds about twice the keys of weight=1 (%lu %lu %lu)",
       (unsigned long) n[0], (unsigned long) n[1], (unsigned long) n[2]);
}

static void
test_remove_add(void)
{
    static const char *const four[] = {
        "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083", "127.0.0.1:8084"
    };
    /* the third line removed: the others keep their names, not their
     * positions */
    static const char *const three[] = {
        "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8084"
    };
    rx_http_upstream_server_t s4[4], s3[3];
    rx_http_upstream_chash_t  r4, r3;
    rx_uint_t                 k, moved = 0, moved_other = 0, held = 0;

    servers_of(s4, four, NULL, 4);
    servers_of(s3, three, NULL, 3);
    rx_http_upstream_chash_init(pool, &r4, s4, 4);
    rx_http_upstream_chash_init(pool, &r3, s3, 3);
    for (k = 0; k < NKEYS; k++) {
        uint32_t    h = key_hash(k);
        const char *a = owner(&r4, s4, h), *b = owner(&r3, s3, h);

        if (strcmp(a, "127.0.0.1:8083") == 0) {
            held++;
            continue;
        }
        if (strcmp(a, b) != 0) {
            moved_other++;
        }
    }
    is_int(moved_other, 0, "removing a server moves none of the others' keys");
    ok(held > NKEYS / 4 / 2 && held < NKEYS / 4 * 2,
       "the removed server held about a quarter (%lu of %d)",
       (unsigned long) held, NKEYS);

    /* adding it back: keys move only to it */
    for (k = 0; k < NKEYS; k++) {
        uint32_t    h = key_hash(k);
        const char *a = owner(&r3, s3, h), *b = owner(&r4, s4, h);

        if (strcmp(a, b) != 0) {
            moved++;
            if (strcmp(b, "127.0.0.1:8083") != 0) {
                moved_other++;
            }
        }
    }
    ok(moved == held && moved_other == 0,
       "adding a server takes keys only to it (%lu moved)",
       (unsigned long) moved);
}

static void
test_names(void)
{
    static const char *const a[] = { "10.0.0.1:80", "10.0.0.2" };
    static const char *const b[] = { "10.0.0.1", "10.0.0.2:80" };
    rx_http_upstream_server_t sa[2], sb[2];
    rx_http_upstream_chash_t  ra, rb;
    rx_uint_t                 i;
    bool                      same;

    servers_of(sa, a, NULL, 2);
    servers_of(sb, b, NULL, 2);
    rx_http_upstream_chash_init(pool, &ra, sa, 2);
    rx_http_upstream_chash_init(pool, &rb, sb, 2);
    same = ra.n == rb.n;
    for (i = 0; same && i < ra.n; i++) {
        same = ra.point[i].hash == rb.point[i].hash
               && ra.point[i].server == rb.point[i].server;
    }
    ok(same, "a name without a port is the name with port 80");
}

int
main(void)
{
    pool = rx_pool_create(16384, NULL);
    if (pool == NULL) {
        bail_out("no pool");
        return 1;
    }
    test_crc32();
    test_ring_shape();
    test_spread_and_weight();
    test_remove_add();
    test_names();
    rx_pool_destroy(pool);
    return done();
}
