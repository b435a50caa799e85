/*
 * test_put_uint.c: rx_put_uint (core/str.c), the decimal writer of the
 * request path (ports, lengths, $status, $request_time), against what
 * snprintf("%0*llu") writes: every power of ten and its neighbours up to
 * UINT64_MAX, a sweep of small numbers with each padding, and that it
 * writes nothing past the end it returns.
 */
#include <stdio.h>
#include "core.h"
#include "tap.h"

/* 0 when rx_put_uint agrees with snprintf for n padded to min digits. */
static int
differs(uint64_t n, unsigned min)
{
    char got[RX_UINT_LEN + 8], want[RX_UINT_LEN + 8], *end;

    memset(got, '#', sizeof(got));
    end = rx_put_uint(got, n, min);
    snprintf(want, sizeof(want), "%0*llu", (int) min, (unsigned long long) n);
    if ((size_t) (end - got) != strlen(want)
        || memcmp(got, want, strlen(want)) != 0 || *end != '#')
    {
        diag("n=%llu min=%u: got \"%.*s\", want \"%s\"",
             (unsigned long long) n, min, (int) (end - got), got, want);
        return 1;
    }
    return 0;
}

int
main(void)
{
    uint64_t p = 1;
    unsigned bad = 0, min, i;

    plan(3);
    for (i = 0; i < 20; i++, p *= 10) {
        bad += differs(p, 1) + differs(p - 1, 1) + differs(p + 1, 1);
    }
    bad += differs(UINT64_MAX, 1) + differs(UINT64_MAX - 1, 1);
    is_int(bad, 0, "powers of ten, their neighbours and UINT64_MAX");
    bad = 0;
    for (min = 0; min <= 4; min++) {
        for (i = 0; i < 100000; i++) {
            bad += differs(i, min);
        }
    }
    is_int(bad, 0, "0 to 99999, padded to 0..4 digits (200 as \"200\", "
           "5 as \"005\")");
    bad = differs(0, 20) + differs(7, 20) + differs(UINT64_MAX, 20);
    is_int(bad, 0, "padded to the full 20 digits");
    return done();
}
