/*
 * auth_basic_crypt.h: checks a password against a password-file hash in
 * the formats nginx accepts: {PLAIN}, {SHA}, {SSHA}, $apr1$, and whatever
 * the system's crypt(3) knows (DES, $1$, $5$, $6$, $y$, $2b$ ...).
 */
#ifndef RX_AUTH_BASIC_CRYPT_H
#define RX_AUTH_BASIC_CRYPT_H

#include "core.h"

/*
 * passwd is the client's password, hash the file's field (NUL-terminated
 * both). Returns RX_OK when they match, RX_DECLINED when they do not,
 * RX_ERROR when the hash cannot be computed (crypt(3) refused the setting
 * or a digest failed: errno says why, when crypt(3) set it).
 */
rx_int_t rx_auth_basic_check(const rx_str_t *passwd, const char *hash);

#endif /* RX_AUTH_BASIC_CRYPT_H */
