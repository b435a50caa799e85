/*
 * fuzz_accept_encoding.c: rx_http_gzip_accepts (modules/gzip_ok.c), the
 * Accept-Encoding parser of the gzip filter (RFC 9110 12.5.3: codings,
 * parameters, quoted strings, q-values).
 *
 * Input: the header value (exactly sized on the heap, no NUL after it).
 *
 * Invariants:
 *   - a value without "gzip" and without '*' never accepts;
 *   - case does not matter: the value upper- and lower-cased (ASCII) gives
 *     the same answer;
 *   - for a value without '"' (no quoted string that could swallow what
 *     follows): empty elements and blanks around the list change nothing
 *     (", \t" before, " ,, identity" after give the same answer);
 *   - "gzip" with a valid q of 0 appended (", gzip;q=0") never turns a
 *     refusal into acceptance.
 */
#include <ctype.h>
#include "fuzz.h"
#include "gzip.h"

static bool
accepts(const char *s, size_t n)
{
    char     *copy = fuzz_dup((const uint8_t *) s, n);
    rx_str_t  v = { n, copy };
    bool      ok = rx_http_gzip_accepts(&v);

    free(copy);
    return ok;
}

static bool
has_ci(const char *s, size_t n, const char *what)
{
    size_t k = strlen(what), i;

    for (i = 0; i + k <= n; i++) {
        if (strncasecmp(s + i, what, k) == 0) {
            return true;
        }
    }
    return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char   *s = fuzz_dup(data, size), *t;
    bool    ok = accepts(s, size), other;
    size_t  i;

    if (!has_ci(s, size, "gzip") && memchr(s, '*', size) == NULL) {
        FUZZ_CHECK(!ok, "%s accepts gzip", fuzz_show(s, size));
    }

    t = malloc(size + 32);
    FUZZ_CHECK(t != NULL, "no memory");
    for (i = 0; i < size; i++) {
        t[i] = (char) toupper((unsigned char) s[i]);
    }
    other = accepts(t, size);
    FUZZ_CHECK(other == ok, "%s: %d, upper-cased: %d", fuzz_show(s, size),
               ok, other);
    for (i = 0; i < size; i++) {
        t[i] = (char) tolower((unsigned char) s[i]);
    }
    other = accepts(t, size);
    FUZZ_CHECK(other == ok, "%s: %d, lower-cased: %d", fuzz_show(s, size),
               ok, other);

    if (memchr(s, '"', size) == NULL) {
        memcpy(t, ", \t", 3);
        memcpy(t + 3, s, size);
        memcpy(t + 3 + size, " ,, identity", 12);
        other = accepts(t, size + 15);
        FUZZ_CHECK(other == ok, "%s: %d, in a padded list: %d",
                   fuzz_show(s, size), ok, other);
    }
    if (!ok) {
        memcpy(t, s, size);
        memcpy(t + size, ", gzip;q=0", 10);
        other = accepts(t, size + 10);
        FUZZ_CHECK(!other, "%s refuses gzip, with \", gzip;q=0\" it accepts",
                   fuzz_show(s, size));
    }
    free(t);
    free(s);
    return 0;
}
