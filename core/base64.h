/*
 * base64.h: base64 decoding (RFC 4648), for Basic credentials and
 * {SHA}/{SSHA} password hashes (standard alphabet) and secure_link hashes
 * (URL-safe alphabet); encoding for userid's cookies.
 */
#ifndef RX_BASE64_H
#define RX_BASE64_H

/* The most bytes that decoding len characters can give. */
#define rx_base64_decoded_length(len)  (((len) + 3) / 4 * 3)

/*
 * Decodes src into dst (at least rx_base64_decoded_length(src->len)
 * bytes) and sets dst->len. Padding is optional; when present it is one
 * or two '=' that end a text of whole 4-character quanta. Any other
 * character outside the alphabet, or a length that leaves a lone
 * character (len % 4 == 1), fails. Returns RX_OK or RX_ERROR.
 */
rx_int_t rx_decode_base64(rx_str_t *dst, const rx_str_t *src);

/* The URL-safe alphabet ('-' and '_'), as nginx's secure_link reads it:
 * the text ends at the first '=', whatever follows. */
rx_int_t rx_decode_base64url(rx_str_t *dst, const rx_str_t *src);

/* The characters that encoding len bytes gives, padding included. */
#define rx_base64_encoded_length(len)  (((len) + 2) / 3 * 4)

/* Encodes src (standard alphabet, '=' padding) into dst->data, which
 * holds at least rx_base64_encoded_length(src->len) bytes; sets dst->len. */
void rx_encode_base64(rx_str_t *dst, const rx_str_t *src);

#endif /* RX_BASE64_H */
