/*
 * crc32.h: CRC-32 (IEEE 802.3, the one of zlib and gzip), for hashing keys
 * where a stable, well-spread 32-bit value is wanted (upstream hash).
 */
#ifndef RX_CRC32_H
#define RX_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* crc of the bytes so far (0 to start), updated with data; as zlib's
 * crc32(): rx_crc32(rx_crc32(0, a), b) is the CRC of a then b. */
uint32_t rx_crc32(uint32_t crc, const void *data, size_t len);

#endif /* RX_CRC32_H */
