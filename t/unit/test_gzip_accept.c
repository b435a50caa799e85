/*
 * test_gzip_accept.c: the Accept-Encoding parser of the gzip filter
 * (modules/gzip_ok.c), table-driven. RFC 9110 12.5.3: a list of codings
 * with parameters; "gzip" (alias "x-gzip") with q > 0 accepts, else "*"
 * with q > 0 does; malformed q counts as 0, a malformed element is
 * skipped; names and "q" are caseless.
 */
#include "core.h"
#include "tap.h"

#if (RX_HTTP_GZIP)
#include "gzip.h"

typedef struct {
    const char *header;
    bool        gzip;
} ae_case_t;

static const ae_case_t cases[] = {
    { "gzip", true },
    { "GZip", true },
    { "x-gzip", true },
    { "gzip, deflate, br", true },
    { "br,gzip", true },
    { "  gzip  ", true },
    { "deflate", false },
    { "", false },
    { ",,, ,", false },
    { "identity", false },
    { "identity;q=1", false },
    /* q-values */
    { "gzip;q=1", true },
    { "gzip;q=1.0", true },
    { "gzip;q=1.000", true },
    { "gzip;q=0.001", true },
    { "gzip;q=0.5", true },
    { "gzip ; Q = 0.5", true },
    { "gzip;q=0", false },
    { "gzip;q=0.", false },
    { "gzip;q=0.000", false },
    { "gzip; q=0", false },
    { "gzip;q=1.001", false },        /* above 1: malformed, so 0 */
    { "gzip;q=2", false },
    { "gzip;q=", false },
    { "gzip;q=0.0001", false },       /* four decimals: malformed */
    { "gzip;q=-1", false },
    { "gzip;q=abc", false },
    /* other parameters */
    { "gzip;level=9", true },
    { "gzip;level=9;q=0", false },
    { "gzip;a=\"x,y;q=0\";q=0.2", true },
    { "gzip;a=\"x,y\";q=0", false },
    { "gzip;=1", false },             /* a malformed element is skipped */
    { "gzip;", false },
    { "gzip junk", false },
    { "gzip junk, gzip", true },
    /* the wildcard */
    { "*", true },
    { "*;q=0.1", true },
    { "*;q=0", false },
    { "*;q=0, gzip", true },          /* gzip named: its own q counts */
    { "gzip;q=0, *", false },
    { "gzip;q=0, *;q=1", false },
    { "br, *;q=0.5", true },
    /* names are whole tokens */
    { "gzipx", false },
    { "xgzip", false },
    { "gzip2;q=1", false },
    { "notgzip, gzip;q=0", false },
    /* the same coding twice: the higher weight */
    { "gzip;q=0, gzip;q=0.5", true },
};

static void
test_table(void)
{
    rx_uint_t i;

    for (i = 0; i < rx_nelems(cases); i++) {
        const ae_case_t *c = &cases[i];
        /* an unterminated copy: the parser must not lean on a NUL */
        size_t           len = strlen(c->header);
        char            *copy = malloc(len ? len : 1);
        rx_str_t         h;
        bool             got;

        memcpy(copy, c->header, len);
        h.len = len;
        h.data = copy;
        got = rx_http_gzip_accepts(&h);
        ok(got == c->gzip, "'%s' -> %s", c->header,
           c->gzip ? "gzip" : "no gzip");
        free(copy);
    }
}

int
main(void)
{
    test_table();
    return done();
}

#else

int
main(void)
{
    skip_all("built --without-http_gzip_module");
    return 0;
}

#endif
