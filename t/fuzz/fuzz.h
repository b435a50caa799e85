/*
 * fuzz.h: what the libFuzzer targets in t/fuzz/ share: a log that writes
 * to /dev/null (every level, so that the formatting runs too), an
 * invariant check that aborts with a message (libFuzzer then saves the
 * input as crash-*), and helpers to copy the input into exactly-sized heap
 * memory so that AddressSanitizer sees a read one byte past its end.
 */
#ifndef RX_FUZZ_H
#define RX_FUZZ_H

#include "core.h"

#define FUZZ_FN  static __attribute__((unused))

/* A broken invariant is a finding: say which, then abort(). */
#define FUZZ_CHECK(cond, ...)                                                 \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "\nFUZZ INVARIANT FAILED at %s:%d: %s\n  ",      \
                    __FILE__, __LINE__, #cond);                               \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            abort();                                                          \
        }                                                                     \
    } while (0)

static rx_open_file_t fuzz_null_file = { -1, rx_null_string };
static rx_log_t       fuzz_log = { .level = RX_LOG_DEBUG, .file = &fuzz_null_file };

/* The log every target hands to ringx: all levels, into /dev/null, or
 * to stderr when $RX_FUZZ_VERBOSE is set (to see what an input does). */
FUZZ_FN bool
fuzz_verbose(void)
{
    static int verbose = -1;

    if (verbose == -1) {
        const char *v = getenv("RX_FUZZ_VERBOSE");
        verbose = v && v[0] && strcmp(v, "0") != 0;
    }
    return verbose;
}

FUZZ_FN rx_log_t *
fuzz_null_log(void)
{
    if (fuzz_null_file.fd == -1) {
        fuzz_null_file.fd = fuzz_verbose()
                            ? dup(STDERR_FILENO)
                            : open("/dev/null", O_WRONLY | O_CLOEXEC);
    }
    rx_use_stderr = false;
    return &fuzz_log;
}

/* A finding already saved and reported can be stepped over so that the
 * fuzzer explores past it: $RX_FUZZ_KNOWN is a comma-separated list of
 * the tags the targets give their invariants (t/fuzz/README.md). */
FUZZ_FN bool
fuzz_known(const char *tag)
{
    const char *k = getenv("RX_FUZZ_KNOWN"), *p;
    size_t      n = strlen(tag);

    for (p = k; p && (p = strstr(p, tag)) != NULL; p += n) {
        if ((p == k || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) {
            return true;
        }
    }
    return false;
}

/* A heap copy of exactly n bytes (a distinct pointer even for n == 0). */
FUZZ_FN char *
fuzz_dup(const uint8_t *data, size_t n)
{
    char *p = malloc(n);

    if (p == NULL) {
        abort();
    }
    if (n) {
        memcpy(p, data, n);
    }
    return p;
}

/* A printable form of bytes for invariant messages. */
FUZZ_FN const char *
fuzz_show(const char *p, size_t n)
{
    static char  bufs[4][1024];
    static int   which;
    char        *b = bufs[which++ % 4];
    size_t       i, o = 0;

    if (p == NULL) {
        return "(null)";
    }
    for (i = 0; i < n && o < sizeof(bufs[0]) - 8; i++) {
        unsigned char c = (unsigned char) p[i];
        if (c < 0x20 || c >= 0x7f || c == '\\') {
            o += (size_t) snprintf(b + o, 5, "\\x%02x", c);
        } else {
            b[o++] = (char) c;
        }
    }
    if (i < n) {
        o += (size_t) snprintf(b + o, 5, "...");
    }
    b[o] = '\0';
    return b;
}

/* What a target learned from an input, in order, as bytes: two runs of
 * the same input (cut differently) must produce the same transcript. */
typedef struct {
    char    *data;
    size_t   len, size;
} transcript_t;

FUZZ_FN void
append(transcript_t *t, const void *bytes, size_t n)
{
    if (t->len + n > t->size) {
        t->size = (t->len + n) * 2 + 64;
        t->data = realloc(t->data, t->size);
        FUZZ_CHECK(t->data != NULL, "no memory");
    }
    if (n) {
        memcpy(t->data + t->len, bytes, n);
    }
    t->len += n;
}

/* A tagged field: the tag, the length, the bytes (unambiguous). */
FUZZ_FN void
append_tag(transcript_t *t, char tag, const void *s, size_t n)
{
    append(t, &tag, 1);
    append(t, &n, sizeof(n));
    append(t, s, n);
}

/* libFuzzer's entry points, defined by each fuzz_*.c. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* RX_FUZZ_H */
