/*
 * gzip_log.c: one gzip member of a buffer (access_log ... gzip[=level]).
 * Each flush of a compressed access log is a member of its own, as in
 * nginx: `zcat` reads the concatenation, and a worker that dies loses only
 * its unflushed buffer, never the readability of what is on disk.
 */
#include "gzip_log.h"
#include <limits.h>
#include <zlib.h>

char *
rx_gzip_log_member(int level, const char *in, size_t len, size_t *out_len,
    rx_log_t *log)
{
    z_stream  zs;
    char     *out = NULL;
    size_t    size;
    int       rc;

    if (len > (size_t) UINT_MAX) {      /* zlib counts in uInt */
        rx_log_error(RX_LOG_ALERT, log, 0, "gzip log buffer too large");
        return NULL;
    }
    memset(&zs, 0, sizeof(zs));
    /* windowBits 15 + 16: a gzip header and trailer around the deflate
     * data; memLevel 8: zlib's default */
    rc = deflateInit2(&zs, level, Z_DEFLATED, MAX_WBITS + 16, 8,
                      Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        rx_log_error(RX_LOG_ALERT, log, 0, "deflateInit2() failed: %d", rc);
        return NULL;
    }
    size = deflateBound(&zs, (uLong) len);
    out = rx_alloc(size, log);
    if (out == NULL) {
        goto done;
    }
    zs.next_in = (Bytef *) in;
    zs.avail_in = (uInt) len;
    zs.next_out = (Bytef *) out;
    zs.avail_out = (uInt) size;
    /* deflateBound's room: one Z_FINISH call ends the member */
    rc = deflate(&zs, Z_FINISH);
    if (rc != Z_STREAM_END) {
        rx_log_error(RX_LOG_ALERT, log, 0, "deflate(Z_FINISH) failed: %d", rc);
        free(out);
        out = NULL;
        goto done;
    }
    *out_len = size - zs.avail_out;

done:
    deflateEnd(&zs);
    return out;
}
