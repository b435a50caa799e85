/*
 * gzip_log.h: a buffer compressed into one gzip member, for access_log's
 * gzip parameter (modules/access_log.c): zlib stays behind the gzip
 * modules' files.
 */
#ifndef RX_GZIP_LOG_H
#define RX_GZIP_LOG_H

#include "http.h"

/* Compresses in[0..len) at level (1..9) into one complete gzip member.
 * Returns it in memory from rx_alloc (the caller frees it) with *out_len
 * set, or NULL after logging why at alert level on log. */
char *rx_gzip_log_member(int level, const char *in, size_t len,
    size_t *out_len, rx_log_t *log);

#endif
