/*
 * fuzz_uri.c: rx_http_parse_request_target (http/http_uri.c) on the whole
 * input as a request-target, once with merge_slashes off and once on, and
 * rx_http_escape_uri on what it returns. The contract is http_uri.h's;
 * each FUZZ_CHECK below is a sentence of it:
 *
 *   - the result is RX_OK, RX_HTTP_TARGET_ASTERISK (only for "*") or 400;
 *   - on RX_OK the path starts with '/', holds no NUL, is NUL-terminated,
 *     has no "/./" or "/../" segment and does not end in "/." or "/..";
 *     with merge_slashes it has no "//"; a path free of '%', '?', '#',
 *     spaces and controls parses again to itself (normalising is
 *     idempotent);
 *   - args (when there was a '?') has no '#'; exten is a suffix of the
 *     path's last segment; unparsed is the target;
 *   - absolute-form: scheme and host are lower case, the host is not
 *     empty and has no "..", the port is <= 65535;
 *   - escaping: the length asked with dst NULL is the length written, the
 *     output has no byte of the type's set, and it decodes back to the
 *     input.
 */
#include "fuzz.h"
#include "http_uri.h"

static rx_pool_t *pool_for_run;

static bool
has(const char *p, size_t n, const char *needle)
{
    return memmem(p, n, needle, strlen(needle)) != NULL;
}

static int
hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void
check_escape(const char *src, size_t len)
{
    static const char *const sets[] = {
        "\"#%<>?\\^`{|}", "\"#%<>?\\^`{|}&+;", NULL, "\"#%'"
    };
    rx_uint_t type;

    for (type = 0; type <= 4; type++) {    /* 4: unknown, as URI_COMPONENT */
        size_t  need = rx_http_escape_uri(NULL, src, len, type), got, i, o;
        char   *dst = malloc(need ? need : 1);

        got = rx_http_escape_uri(dst, src, len, type);
        FUZZ_CHECK(got == need, "escape type %lu: %zu asked, %zu written",
                   (unsigned long) type, need, got);
        for (i = 0, o = 0; i < got; o++) {
            unsigned char c = (unsigned char) dst[i];

            if (c == '%') {
                FUZZ_CHECK(i + 2 < got && hexval(dst[i + 1]) >= 0
                           && hexval(dst[i + 2]) >= 0,
                           "escape type %lu: bad %%XX at %zu of %s",
                           (unsigned long) type, i, fuzz_show(dst, got));
                c = (unsigned char) (hexval(dst[i + 1]) << 4 | hexval(dst[i + 2]));
                i += 3;
            } else {
                bool plain = c > 0x20 && c < 0x7f;
                if (type == 2 || type == 4) {
                    plain = plain && (((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
                                      || (c >= '0' && c <= '9')
                                      || strchr("-._~", c) != NULL);
                } else {
                    plain = plain && strchr(sets[type], c) == NULL;
                }
                FUZZ_CHECK(plain, "escape type %lu left 0x%02x in %s",
                           (unsigned long) type, c, fuzz_show(dst, got));
                i++;
            }
            FUZZ_CHECK(o < len && (unsigned char) src[o] == c,
                       "escape type %lu does not decode back: %s -> %s",
                       (unsigned long) type, fuzz_show(src, len),
                       fuzz_show(dst, got));
        }
        FUZZ_CHECK(o == len, "escape type %lu lost bytes: %s -> %s",
                   (unsigned long) type, fuzz_show(src, len), fuzz_show(dst, got));
        free(dst);
    }
}

static void
check_target(const char *t, size_t len, bool merge)
{
    rx_http_uri_t u;
    rx_int_t      rc = rx_http_parse_request_target(pool_for_run, t, len, &u, merge);
    const char   *p, *seg;
    size_t        n;

    FUZZ_CHECK(rc == RX_OK || rc == RX_HTTP_TARGET_ASTERISK || rc == 400,
               "rc %ld for %s", (long) rc, fuzz_show(t, len));
    if (rc == RX_HTTP_TARGET_ASTERISK) {
        FUZZ_CHECK(len == 1 && t[0] == '*', "asterisk for %s", fuzz_show(t, len));
        return;
    }
    if (rc != RX_OK) {
        return;
    }
    FUZZ_CHECK(!(len == 1 && t[0] == '*'), "\"*\" was not the asterisk-form");
    p = u.path.data;
    n = u.path.len;

    /* the path */
    FUZZ_CHECK(p != NULL && n >= 1 && p[0] == '/', "path %s does not start "
               "with '/' (target %s)", fuzz_show(p, n), fuzz_show(t, len));
    FUZZ_CHECK(memchr(p, '\0', n) == NULL, "NUL in path %s (target %s)",
               fuzz_show(p, n), fuzz_show(t, len));
    FUZZ_CHECK(p[n] == '\0', "path %s not NUL-terminated", fuzz_show(p, n));
    FUZZ_CHECK(!has(p, n, "/../") && !has(p, n, "/./"),
               "dot segment in path %s (target %s, merge %d)",
               fuzz_show(p, n), fuzz_show(t, len), merge);
    FUZZ_CHECK(!(n >= 3 && memcmp(p + n - 3, "/..", 3) == 0)
               && !(n >= 2 && memcmp(p + n - 2, "/.", 2) == 0),
               "path %s ends in a dot segment (target %s, merge %d)",
               fuzz_show(p, n), fuzz_show(t, len), merge);
    if (merge) {
        FUZZ_CHECK(!has(p, n, "//"), "\"//\" in path %s with merge_slashes "
                   "(target %s)", fuzz_show(p, n), fuzz_show(t, len));
    }

    /* the other parts */
    FUZZ_CHECK(u.unparsed.data == t && u.unparsed.len == len, "unparsed is "
               "not the target");
    if (u.args.data) {
        FUZZ_CHECK(memchr(u.args.data, '#', u.args.len) == NULL,
                   "'#' in args %s", fuzz_show(u.args.data, u.args.len));
    }
    if (u.exten.len) {
        seg = memrchr(p, '/', n);
        FUZZ_CHECK(u.exten.data + u.exten.len == p + n
                   && u.exten.data > seg && u.exten.data[-1] == '.',
                   "exten %s is not after a '.' of the last segment of %s",
                   fuzz_show(u.exten.data, u.exten.len), fuzz_show(p, n));
    }
    FUZZ_CHECK(u.request_uri.len >= 1, "empty request_uri for %s",
               fuzz_show(t, len));
    if (t[0] == '/') {
        FUZZ_CHECK(u.host.len == 0 && u.scheme.len == 0 && u.port == 0,
                   "origin-form %s has a host", fuzz_show(t, len));
    } else {
        size_t i;

        FUZZ_CHECK(u.host.len > 0 && !has(u.host.data, u.host.len, ".."),
                   "absolute-form host %s", fuzz_show(u.host.data, u.host.len));
        FUZZ_CHECK(u.port <= 65535, "port %lu", (unsigned long) u.port);
        FUZZ_CHECK(u.request_uri.data[0] == '/', "request_uri %s",
                   fuzz_show(u.request_uri.data, u.request_uri.len));
        for (i = 0; i < u.host.len; i++) {
            FUZZ_CHECK(!(u.host.data[i] >= 'A' && u.host.data[i] <= 'Z'),
                       "host %s not lower case", fuzz_show(u.host.data, u.host.len));
        }
        for (i = 0; i < u.scheme.len; i++) {
            FUZZ_CHECK(!(u.scheme.data[i] >= 'A' && u.scheme.data[i] <= 'Z'),
                       "scheme %s not lower case",
                       fuzz_show(u.scheme.data, u.scheme.len));
        }
    }

    /* normalising twice changes nothing */
    {
        size_t i;
        bool   plain = true;

        for (i = 0; i < n; i++) {
            unsigned char c = (unsigned char) p[i];
            if (c <= 0x20 || c == 0x7f || c == '%' || c == '?' || c == '#') {
                plain = false;
                break;
            }
        }
        if (plain) {
            rx_http_uri_t again;
            char         *copy = fuzz_dup((const uint8_t *) p, n);
            rx_int_t      rc2 = rx_http_parse_request_target(pool_for_run, copy,
                                                             n, &again, merge);

            FUZZ_CHECK(rc2 == RX_OK && again.path.len == n
                       && memcmp(again.path.data, p, n) == 0,
                       "not idempotent: %s -> %s -> rc %ld %s (merge %d)",
                       fuzz_show(t, len), fuzz_show(p, n), (long) rc2,
                       rc2 == RX_OK ? fuzz_show(again.path.data, again.path.len)
                                    : "", merge);
            free(copy);
        }
    }

    check_escape(p, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = fuzz_dup(data, size);

    pool_for_run = rx_pool_create(4096, fuzz_null_log());
    check_target(t, size, false);
    check_target(t, size, true);
    rx_pool_destroy(pool_for_run);
    free(t);
    return 0;
}
