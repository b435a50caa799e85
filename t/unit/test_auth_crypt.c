/*
 * test_auth_crypt.c: password hashes for auth_basic
 * (modules/auth_basic_crypt.c) and base64 decoding (core/base64.c).
 * apr1 vectors come from `openssl passwd -apr1 -salt sAlt1234`, chosen
 * around the 16-byte boundary of the algorithm's length loop; {SHA} and
 * {SSHA} from OpenSSL's and Perl's Digest::SHA.
 */
#include "core.h"
#include "base64.h"
#include "tap.h"

#if (RX_HTTP_AUTH_BASIC)
#include "auth_basic_crypt.h"

typedef struct {
    const char *passwd;
    const char *hash;
    rx_int_t    want;
} check_case_t;

static const check_case_t checks[] = {
    { "", "$apr1$sAlt1234$sQxMYv3kqN/z5LYx/HLwR0", RX_OK },
    { "a", "$apr1$sAlt1234$2kqYYQ3BLIBMEPt68vdgK/", RX_OK },
    { "0123456789abcdef", "$apr1$sAlt1234$DPTjSms7ybGzMeq5Krddt/", RX_OK },
    { "0123456789abcdefg", "$apr1$sAlt1234$C6/AIFyn8oCxsevJH1rO21", RX_OK },
    { "p\xc3\xa4ssw\xc3\xb6rd", "$apr1$sAlt1234$cxvIyJAaLkTO3xITSpQLo.", RX_OK },
    { "a much longer password of 40 characters!",
      "$apr1$sAlt1234$K8lQMWboZkgiqPtvnTYOo.", RX_OK },
    { "secret", "$apr1$x$12YdXEY0/hH4rDNkmZupO0", RX_OK },
    { "secret", "$apr1$abc$PZF73YJz5hJ9yyI.7OP.R.", RX_OK },
    { "Secret", "$apr1$abc$PZF73YJz5hJ9yyI.7OP.R.", RX_DECLINED },
    { "secret", "$apr1$abc$PZF73YJz5hJ9yyI.7OP.R", RX_DECLINED },  /* cut */
    /* a salt longer than 8 is cut to 8, so the full text cannot match */
    { "secret", "$apr1$longersalt99$YXScFcJtqSBgV1RHr/71m.", RX_DECLINED },
    { "secret", "$apr1$longersa$YXScFcJtqSBgV1RHr/71m.", RX_OK },
    { "secret", "$1$sAlt1234$iesmOjlbKwyYUs6T.1G.L.", RX_OK },
    { "secreT", "$1$sAlt1234$iesmOjlbKwyYUs6T.1G.L.", RX_DECLINED },
    { "secret", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", RX_OK },
    { "secreT", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", RX_DECLINED },
    { "secret", "{SHA}5en6G6MezRroT3XKqkdPOmY", RX_DECLINED },     /* short */
    { "secret", "{SHA}!!!!", RX_DECLINED },
    { "secret", "{SSHA}dj2lH1ocucmj5OQsjP6mQrVx6FhOYUNs", RX_OK },
    { "secreT", "{SSHA}dj2lH1ocucmj5OQsjP6mQrVx6FhOYUNs", RX_DECLINED },
    { "secret", "{SSHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", RX_DECLINED }, /* no salt */
    { "secret", "{PLAIN}secret", RX_OK },
    { "secre", "{PLAIN}secret", RX_DECLINED },
    { "secret", "{PLAIN}", RX_DECLINED },
    { "", "{PLAIN}", RX_OK },
    { "secret", "", RX_ERROR },                 /* crypt(3) refuses */
    { "secret", "$9$nonsense", RX_ERROR },
};
#endif

typedef struct {
    const char *in;
    const char *out;      /* NULL: invalid */
} b64_case_t;

static const b64_case_t b64[] = {
    { "", "" },
    { "YQ==", "a" }, { "YQ", "a" },
    { "YQ=", NULL },              /* padding, but not a whole quantum */
    { "YWI=", "ab" }, { "YWI", "ab" },
    { "YWJj", "abc" },
    { "dXNlcjpwYXNz", "user:pass" },
    { "Pz8/Pw==", "????" },
    { "Y", NULL },                /* a lone character */
    { "YQ===", NULL },            /* three '=' */
    { "YWJj=", NULL },            /* '=' after a whole quantum */
    { "Y=Q=", NULL },             /* '=' inside */
    { "YW J", NULL },
    { "YW-_", NULL },             /* the URL alphabet is not this one */
};

int
main(void)
{
    char     buf[64];
    rx_str_t src, dst;
    size_t   i;

    for (i = 0; i < rx_nelems(b64); i++) {
        src.data = (char *) b64[i].in;
        src.len = strlen(b64[i].in);
        dst.data = buf;
        if (b64[i].out == NULL) {
            ok(rx_decode_base64(&dst, &src) == RX_ERROR, "base64 \"%s\" is invalid",
               b64[i].in);
            continue;
        }
        if (!ok(rx_decode_base64(&dst, &src) == RX_OK, "base64 \"%s\" decodes",
                b64[i].in)) {
            continue;
        }
        buf[dst.len] = '\0';
        is_str(buf, b64[i].out, "base64 \"%s\"", b64[i].in);
    }

#if (RX_HTTP_AUTH_BASIC)
    for (i = 0; i < rx_nelems(checks); i++) {
        rx_str_t pw = { strlen(checks[i].passwd), (char *) checks[i].passwd };

        is_int(rx_auth_basic_check(&pw, checks[i].hash), checks[i].want,
               "\"%s\" against \"%s\"", checks[i].passwd, checks[i].hash);
    }
#endif
    return done();
}
