/*
 * http_auth.c: the Basic credentials of a request. The Authorization
 * header is decoded once, on first use, for auth_basic and $remote_user
 * (which nginx fills whenever the client sends Basic credentials, checked
 * or not).
 */
#include "http.h"
#include "base64.h"

rx_int_t
rx_http_auth_basic_user(rx_http_request_t *r)
{
    rx_http_headers_in_t *in = &r->headers_in;
    rx_str_t              enc, dec;
    char                 *colon;

    if (in->basic_auth) {
        return in->basic_auth > 0 ? RX_OK : RX_DECLINED;
    }
    in->basic_auth = -1;
    if (in->authorization == NULL) {
        return RX_DECLINED;
    }
    enc = in->authorization->value;
    if (enc.len < sizeof("Basic ") - 1
        || strncasecmp(enc.data, "Basic ", sizeof("Basic ") - 1) != 0) {
        return RX_DECLINED;
    }
    enc.data += sizeof("Basic ") - 1;
    enc.len -= sizeof("Basic ") - 1;
    while (enc.len && enc.data[0] == ' ') {
        enc.data++;
        enc.len--;
    }
    if (enc.len == 0) {
        return RX_DECLINED;
    }
    dec.data = rx_pnalloc(r->pool, rx_base64_decoded_length(enc.len) + 1);
    if (dec.data == NULL) {
        in->basic_auth = 0;
        return RX_ERROR;
    }
    if (rx_decode_base64(&dec, &enc) != RX_OK) {
        return RX_DECLINED;
    }
    dec.data[dec.len] = '\0';
    colon = memchr(dec.data, ':', dec.len);
    if (colon == NULL || colon == dec.data) {
        return RX_DECLINED;
    }
    in->user.data = dec.data;
    in->user.len = (size_t) (colon - dec.data);
    in->passwd.data = colon + 1;
    in->passwd.len = (size_t) (dec.data + dec.len - colon - 1);
    in->basic_auth = 1;
    return RX_OK;
}
