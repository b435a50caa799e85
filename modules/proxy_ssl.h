/*
 * proxy_ssl.h: proxy_ssl_* (modules/proxy_ssl.c): the TLS settings of
 * proxy_pass https:// and the SSL_CTX built from them per location.
 */
#ifndef RX_PROXY_SSL_H
#define RX_PROXY_SSL_H

#include "http.h"
#include "http_upstream.h"

#if (RX_HAVE_OPENSSL)
/*
 * For proxy_pass, while its location is parsed: the location speaks TLS
 * (https://, or variables that may say so), so its SSL_CTX is built when
 * the configuration is merged. Returns the settings the upstream engine
 * will read (filled by then), NULL on error.
 */
const rx_http_upstream_ssl_t *rx_http_proxy_ssl_needed(rx_conf_t *cf);
#endif

#endif /* RX_PROXY_SSL_H */
