/*
 * md5.c: MD5 as RFC 1321 defines it: 64-byte blocks, four rounds of
 * sixteen steps, the length in bits appended little-endian.
 */
#include "md5.h"

/* per-step left rotations, by round */
static const unsigned char shifts[4][4] = {
    { 7, 12, 17, 22 }, { 5, 9, 14, 20 }, { 4, 11, 16, 23 }, { 6, 10, 15, 21 }
};

/* floor(abs(sin(i + 1)) * 2^32) */
static const uint32_t sines[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391
};

static void
md5_block(uint32_t state[4], const unsigned char *p)
{
    uint32_t  w[16], a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t  f, t;
    unsigned  i, g;

    for (i = 0; i < 16; i++) {
        w[i] = (uint32_t) p[4 * i] | (uint32_t) p[4 * i + 1] << 8
               | (uint32_t) p[4 * i + 2] << 16 | (uint32_t) p[4 * i + 3] << 24;
    }
    for (i = 0; i < 64; i++) {
        switch (i / 16) {
        case 0:  f = (b & c) | (~b & d); g = i; break;
        case 1:  f = (d & b) | (~d & c); g = (5 * i + 1) % 16; break;
        case 2:  f = b ^ c ^ d;          g = (3 * i + 5) % 16; break;
        default: f = c ^ (b | ~d);       g = (7 * i) % 16; break;
        }
        t = a + f + sines[i] + w[g];
        a = d;
        d = c;
        c = b;
        b += (t << shifts[i / 16][i % 4]) | (t >> (32 - shifts[i / 16][i % 4]));
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
}

void
rx_md5_init(rx_md5_t *ctx)
{
    ctx->state[0] = 0x67452301;
    ctx->state[1] = 0xefcdab89;
    ctx->state[2] = 0x98badcfe;
    ctx->state[3] = 0x10325476;
    ctx->bytes = 0;
}

void
rx_md5_update(rx_md5_t *ctx, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t               used = (size_t) (ctx->bytes % 64), n;

    ctx->bytes += len;
    if (used) {
        n = rx_min(len, 64 - used);
        memcpy(ctx->block + used, p, n);
        p += n;
        len -= n;
        if (used + n < 64) {
            return;
        }
        md5_block(ctx->state, ctx->block);
    }
    for (; len >= 64; p += 64, len -= 64) {
        md5_block(ctx->state, p);
    }
    memcpy(ctx->block, p, len);
}

void
rx_md5_final(unsigned char digest[16], rx_md5_t *ctx)
{
    static const unsigned char pad[64] = { 0x80 };
    unsigned char              len[8];
    uint64_t                   bits = ctx->bytes * 8;
    size_t                     used = (size_t) (ctx->bytes % 64);
    unsigned                   i;

    for (i = 0; i < 8; i++) {
        len[i] = (unsigned char) (bits >> (8 * i));
    }
    rx_md5_update(ctx, pad, used < 56 ? 56 - used : 120 - used);
    rx_md5_update(ctx, len, 8);
    for (i = 0; i < 16; i++) {
        digest[i] = (unsigned char) (ctx->state[i / 4] >> (8 * (i % 4)));
    }
}
