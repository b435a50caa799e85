/*
 * md5.h: MD5 (RFC 1321), ringx's own, so that the modules that need it
 * as nginx does (secure_link's hashes) work in a build without OpenSSL.
 */
#ifndef RX_MD5_H
#define RX_MD5_H

#include "core.h"

typedef struct {
    uint32_t       state[4];
    uint64_t       bytes;          /* message length so far */
    unsigned char  block[64];      /* bytes % 64 of them are pending */
} rx_md5_t;

void rx_md5_init(rx_md5_t *ctx);
void rx_md5_update(rx_md5_t *ctx, const void *data, size_t len);
/* Writes the 16-byte digest; ctx must be initialised again before reuse. */
void rx_md5_final(unsigned char digest[16], rx_md5_t *ctx);

#endif /* RX_MD5_H */
