/*
 * tls.c: the OpenSSL wrapper. For now only the version strings that -V
 * prints; TLS termination arrives with the ssl module.
 */
#include "core.h"

#if (RX_HAVE_OPENSSL)
#include <openssl/crypto.h>
#include <openssl/opensslv.h>

const char *
rx_tls_version_text(void)
{
    return OPENSSL_VERSION_TEXT;
}

const char *
rx_tls_runtime_version_text(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

#else

const char *
rx_tls_version_text(void)
{
    return "no TLS library";
}

const char *
rx_tls_runtime_version_text(void)
{
    return "no TLS library";
}

#endif
