/*
 * test_temp_file.c: the memory side of http/http_temp_file.c: bytes
 * appended while no write drains them (a disk slower than the upstream)
 * are kept whole and in order, and the filling buffer grows by doubling,
 * not by each append (4 MiB in 16 KiB appends once took 256 copies of a
 * buffer growing to 4 MiB: 20 s of CPU under ASan, t/proxy_cache_lifetime.t).
 */
#include "core.h"
#include "http_temp_file.h"
#include "tap.h"

#define PIECE  (16 * 1024)
#define TOTAL  (4 * 1024 * 1024)

int
main(void)
{
    rx_http_temp_file_t tf;
    static char         piece[PIECE];
    size_t              off, last_cap = 0;
    unsigned            grows = 0, i;
    bool                whole = true;

    plan(6);
    rx_http_temp_init(&tf, "/tmp");
    for (off = 0; off < TOTAL; off += PIECE) {
        for (i = 0; i < PIECE; i++) {
            piece[i] = (char) ((off + i) * 131 >> 3);
        }
        if (rx_http_temp_append(&tf, piece, PIECE) != RX_OK) {
            whole = false;
            break;
        }
        if (tf.wcap[tf.wcur] != last_cap) {
            grows++;
            last_cap = tf.wcap[tf.wcur];
        }
    }
    ok(whole, "4 MiB appended in 16 KiB pieces");
    is_int((int64_t) rx_http_temp_backlog(&tf), TOTAL, "all of it waits in memory");
    for (off = 0; off < TOTAL && whole; off++) {
        if (tf.wbuf[tf.wcur][off] != (char) (off * 131 >> 3)) {
            diag("byte %zu differs", off);
            whole = false;
        }
    }
    ok(whole, "every byte in order");
    /* 64 KiB doubled to 4 MiB: 7 sizes; growing by each append: 253 */
    ok(grows <= 8, "the buffer grew %u times (at most 8)", grows);
    ok(tf.wcap[tf.wcur] <= 2 * TOTAL, "its capacity (%zu) is at most twice "
       "what it holds", tf.wcap[tf.wcur]);
    /* one large append takes what it needs at once */
    rx_http_temp_append(&tf, piece, 1);
    ok(tf.wlen[tf.wcur] == TOTAL + 1 && tf.wcap[tf.wcur] >= TOTAL + 1,
       "one more byte: capacity %zu", tf.wcap[tf.wcur]);
    rx_http_temp_free(&tf);
    return done();
}
