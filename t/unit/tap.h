/*
 * tap.h: a few TAP helpers shared by the unit tests in t/unit/.
 *
 *   plan(n)                    prints "1..n" first (else done() prints it)
 *   ok(cond, fmt, ...)         one test; returns cond
 *   is_int(got, want, fmt,...) integers (as int64_t); shows both on failure
 *   is_str(got, want, fmt,...) C strings (NULL allowed); shows both on failure
 *   diag(fmt, ...)             a "# ..." line
 *   skip_all(why)              "1..0 # SKIP why", for main() to return 0 after
 *   bail_out(why)              "Bail out! why", for main() to return 1 after
 *   done()                     the trailing plan when none was given, flushes
 *                              stdout; its value is main()'s exit status
 *
 * As in the other tests, a binary exits 1 when a test failed (t/unit.t also
 * counts the "not ok" lines) and 0 otherwise. Test names are printed on one
 * line with '#' escaped as "\#", so that no name reads as a TAP directive.
 */
#ifndef RX_TAP_H
#define RX_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int  tap_n, tap_failed, tap_planned = -1;

static void
tap_vline(const char *prefix, const char *fmt, va_list ap)
{
    char        buf[1024];
    const char *p;

    vsnprintf(buf, sizeof(buf), fmt, ap);
    fputs(prefix, stdout);
    for (p = buf; *p; p++) {
        if (*p == '\n' || *p == '\r') {
            putchar(' ');
        } else if (*p == '#' && prefix[0] != '#') {
            fputs("\\#", stdout);
        } else {
            putchar(*p);
        }
    }
    putchar('\n');
}

static void __attribute__((format(printf, 1, 2), unused))
diag(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    tap_vline("# ", fmt, ap);
    va_end(ap);
}

static bool __attribute__((format(printf, 2, 3), unused))
tap_ok(bool cond, const char *fmt, ...)
{
    char    prefix[32];
    va_list ap;

    snprintf(prefix, sizeof(prefix), "%sok %d - ", cond ? "" : "not ", ++tap_n);
    va_start(ap, fmt);
    tap_vline(prefix, fmt, ap);
    va_end(ap);
    tap_failed += !cond;
    return cond;
}

#define ok(cond, ...)  tap_ok((cond) ? true : false, __VA_ARGS__)

#define is_int(got, want, ...)                                                \
    do {                                                                      \
        int64_t tap_g_ = (int64_t) (got), tap_w_ = (int64_t) (want);          \
        if (!tap_ok(tap_g_ == tap_w_, __VA_ARGS__)) {                         \
            diag("     got: %" PRId64, tap_g_);                               \
            diag("expected: %" PRId64, tap_w_);                               \
        }                                                                     \
    } while (0)

#define is_str(got, want, ...)                                                \
    do {                                                                      \
        const char *tap_g_ = (got), *tap_w_ = (want);                         \
        bool tap_same_ = tap_g_ && tap_w_ ? strcmp(tap_g_, tap_w_) == 0       \
                                          : tap_g_ == tap_w_;                 \
        if (!tap_ok(tap_same_, __VA_ARGS__)) {                                \
            diag("     got: %s%s%s", tap_g_ ? "'" : "", tap_g_ ? tap_g_       \
                 : "NULL", tap_g_ ? "'" : "");                                \
            diag("expected: %s%s%s", tap_w_ ? "'" : "", tap_w_ ? tap_w_       \
                 : "NULL", tap_w_ ? "'" : "");                                \
        }                                                                     \
    } while (0)

#define plan(n)                                                               \
    do {                                                                      \
        tap_planned = (n);                                                    \
        printf("1..%d\n", tap_planned);                                       \
    } while (0)

#define skip_all(why)                                                         \
    do {                                                                      \
        printf("1..0 # SKIP %s\n", (why));                                    \
        fflush(stdout);                                                       \
    } while (0)

#define bail_out(why)                                                         \
    do {                                                                      \
        printf("Bail out! %s\n", (why));                                      \
        fflush(stdout);                                                       \
    } while (0)

#define done()                                                                \
    (tap_planned < 0 ? printf("1..%d\n", tap_n) : 0,                          \
     tap_planned >= 0 && tap_planned != tap_n                                 \
         ? printf("# planned %d tests but ran %d\n", tap_planned, tap_n) : 0, \
     fflush(stdout),                                                          \
     tap_failed || (tap_planned >= 0 && tap_planned != tap_n) ? 1 : 0)

#endif /* RX_TAP_H */
