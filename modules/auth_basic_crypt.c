/*
 * auth_basic_crypt.c: password hashes for auth_basic. The only user of
 * libcrypt, and of OpenSSL's digests (EVP: MD5 for Apache's apr1, SHA-1
 * for {SHA}/{SSHA}). Every comparison is constant-time.
 */
#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "auth_basic_crypt.h"
#include "base64.h"

#define SHA1_LEN  20
#define MD5_LEN   16

static bool
same(const void *a, size_t alen, const void *b, size_t blen)
{
    return alen == blen && CRYPTO_memcmp(a, b, alen) == 0;
}

/* One digest over up to three pieces; out holds EVP_MAX_MD_SIZE bytes. */
static rx_int_t
digest(EVP_MD_CTX *ctx, const EVP_MD *md, const void *a, size_t alen,
    const void *b, size_t blen, const void *c, size_t clen,
    unsigned char *out)
{
    if (EVP_DigestInit_ex(ctx, md, NULL) != 1
        || EVP_DigestUpdate(ctx, a, alen) != 1
        || EVP_DigestUpdate(ctx, b, blen) != 1
        || EVP_DigestUpdate(ctx, c, clen) != 1
        || EVP_DigestFinal_ex(ctx, out, NULL) != 1) {
        return RX_ERROR;
    }
    return RX_OK;
}

/* {SHA}base64(sha1(pw)) and {SSHA}base64(sha1(pw salt) salt) */
static rx_int_t
check_sha(const rx_str_t *passwd, const char *b64, bool salted)
{
    unsigned char  raw[256], md[EVP_MAX_MD_SIZE];
    rx_str_t       enc = { strlen(b64), (char *) b64 }, dec = { 0, (char *) raw };
    EVP_MD_CTX    *ctx;
    rx_int_t       rc = RX_ERROR;

    if (rx_base64_decoded_length(enc.len) > sizeof(raw)
        || rx_decode_base64(&dec, &enc) != RX_OK
        || dec.len < SHA1_LEN + (salted ? 1 : 0)
        || (!salted && dec.len != SHA1_LEN)) {
        return RX_DECLINED;      /* not a hash this password can match */
    }
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) {
        return RX_ERROR;
    }
    if (digest(ctx, EVP_sha1(), passwd->data, passwd->len,
               raw + SHA1_LEN, dec.len - SHA1_LEN, "", 0, md) == RX_OK) {
        rc = same(md, SHA1_LEN, raw, SHA1_LEN) ? RX_OK : RX_DECLINED;
    }
    EVP_MD_CTX_free(ctx);
    return rc;
}

static char *
to64(char *p, unsigned long v, int n)
{
    static const char itoa64[] =
        "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    while (n-- > 0) {
        *p++ = itoa64[v & 0x3f];
        v >>= 6;
    }
    return p;
}

/*
 * Apache's apr1: the MD5-based crypt of FreeBSD with "$apr1$" as its
 * magic. out gets "$apr1$salt$" and 22 characters of hash (at most 6 + 8
 * + 1 + 22 + 1 bytes).
 */
static rx_int_t
apr1(EVP_MD_CTX *ctx, const rx_str_t *pw, const char *setting, char *out)
{
    static const char magic[] = "$apr1$";
    const EVP_MD     *md5 = EVP_md5();
    const char       *salt = setting + sizeof(magic) - 1;
    unsigned char     fin[EVP_MAX_MD_SIZE], alt[EVP_MAX_MD_SIZE];
    size_t            slen = 0, n;
    unsigned          i;
    char             *p;

    while (slen < 8 && salt[slen] && salt[slen] != '$') {
        slen++;
    }
    /* alt = md5(pw salt pw); then md5(pw magic salt, alt repeated over
     * the password's length, one byte per bit of that length) */
    if (digest(ctx, md5, pw->data, pw->len, salt, slen, pw->data, pw->len,
               alt) != RX_OK
        || EVP_DigestInit_ex(ctx, md5, NULL) != 1
        || EVP_DigestUpdate(ctx, pw->data, pw->len) != 1
        || EVP_DigestUpdate(ctx, magic, sizeof(magic) - 1) != 1
        || EVP_DigestUpdate(ctx, salt, slen) != 1) {
        return RX_ERROR;
    }
    for (n = pw->len; n > 0; n -= rx_min(n, MD5_LEN)) {
        if (EVP_DigestUpdate(ctx, alt, rx_min(n, MD5_LEN)) != 1) {
            return RX_ERROR;
        }
    }
    for (n = pw->len; n; n >>= 1) {
        if (EVP_DigestUpdate(ctx, (n & 1) ? "" : pw->data, 1) != 1) {
            return RX_ERROR;
        }
    }
    if (EVP_DigestFinal_ex(ctx, fin, NULL) != 1) {
        return RX_ERROR;
    }
    /* 1000 rounds to slow guessing down */
    for (i = 0; i < 1000; i++) {
        const void *first = (i & 1) ? (const void *) pw->data : fin;
        size_t      flen = (i & 1) ? pw->len : MD5_LEN;
        const void *last = (i & 1) ? (const void *) fin : pw->data;
        size_t      llen = (i & 1) ? MD5_LEN : pw->len;

        if (EVP_DigestInit_ex(ctx, md5, NULL) != 1
            || EVP_DigestUpdate(ctx, first, flen) != 1
            || ((i % 3) && EVP_DigestUpdate(ctx, salt, slen) != 1)
            || ((i % 7) && EVP_DigestUpdate(ctx, pw->data, pw->len) != 1)
            || EVP_DigestUpdate(ctx, last, llen) != 1
            || EVP_DigestFinal_ex(ctx, fin, NULL) != 1) {
            return RX_ERROR;
        }
    }
    p = out;
    memcpy(p, magic, sizeof(magic) - 1);
    p += sizeof(magic) - 1;
    memcpy(p, salt, slen);
    p += slen;
    *p++ = '$';
    p = to64(p, (unsigned long) fin[0] << 16 | fin[6] << 8 | fin[12], 4);
    p = to64(p, (unsigned long) fin[1] << 16 | fin[7] << 8 | fin[13], 4);
    p = to64(p, (unsigned long) fin[2] << 16 | fin[8] << 8 | fin[14], 4);
    p = to64(p, (unsigned long) fin[3] << 16 | fin[9] << 8 | fin[15], 4);
    p = to64(p, (unsigned long) fin[4] << 16 | fin[10] << 8 | fin[5], 4);
    p = to64(p, fin[11], 2);
    *p = '\0';
    return RX_OK;
}

static rx_int_t
check_apr1(const rx_str_t *passwd, const char *hash)
{
    char        out[64];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    rx_int_t    rc;

    if (ctx == NULL) {
        return RX_ERROR;
    }
    rc = apr1(ctx, passwd, hash, out);
    EVP_MD_CTX_free(ctx);
    if (rc != RX_OK) {
        return RX_ERROR;
    }
    return same(out, strlen(out), hash, strlen(hash)) ? RX_OK : RX_DECLINED;
}

/*
 * crypt(3): the setting is the hash itself. libxcrypt's crypt_r needs a
 * 32 KiB scratch area; a worker is one thread, so one static area serves
 * every call (zeroed once, as crypt_r requires).
 */
static rx_int_t
check_crypt(const rx_str_t *passwd, const char *hash)
{
    static struct crypt_data data;
    const char              *out;

    errno = 0;
    out = crypt_r(passwd->data, hash, &data);
    /* libxcrypt answers "*0"/"*1" instead of NULL on failure */
    if (out == NULL || out[0] == '*') {
        if (errno == 0) {
            errno = EINVAL;
        }
        return RX_ERROR;
    }
    return same(out, strlen(out), hash, strlen(hash)) ? RX_OK : RX_DECLINED;
}

rx_int_t
rx_auth_basic_check(const rx_str_t *passwd, const char *hash)
{
    if (strncmp(hash, "{PLAIN}", 7) == 0) {
        hash += 7;
        return same(passwd->data, passwd->len, hash, strlen(hash))
               ? RX_OK : RX_DECLINED;
    }
    if (strncmp(hash, "{SHA}", 5) == 0) {
        return check_sha(passwd, hash + 5, false);
    }
    if (strncmp(hash, "{SSHA}", 6) == 0) {
        return check_sha(passwd, hash + 6, true);
    }
    if (strncmp(hash, "$apr1$", 6) == 0) {
        return check_apr1(passwd, hash);
    }
    return check_crypt(passwd, hash);
}
