/*
 * test_response_parse.c: the two ways of http/http_response_parse.c to one
 * answer. A plain response whose head comes whole in the first read is
 * read without llhttp; any other goes to llhttp. Each case is parsed in
 * one read and a byte at a time (whose first read, one byte, always goes
 * to llhttp), and the two transcripts must be equal: the result, where
 * the response ended, the status line, the fields, Content-Length,
 * chunked, "Connection: close", the body bytes, keepalive, the error, and
 * what the upstream's close then says. The one read must take the way
 * the case names: this is how the cases check the rules of the plain way
 * against llhttp, and fuzz_response does the same on random bytes.
 */
#include "http.h"
#include "http_response_parse.h"
#include "tap.h"

typedef struct {
    const char  *name;
    const char  *bytes;
    bool         head;         /* the request was HEAD */
    bool         plain;        /* the one read is read the plain way */
} case_t;

#define CL30  "Content-Length: 30\r\n"
#define BODY30 "wg3KiBRpyhfga0CWkY7fNzlEIkGNCw"
#define NGINX_HEAD "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n" \
    "Date: Thu, 03 Dec 2026 17:08:07 GMT\r\nContent-Type: text/plain\r\n" \
    CL30 "Last-Modified: Thu, 03 Dec 2026 13:16:41 GMT\r\n" \
    "Connection: keep-alive\r\nETag: \"6b116bb9-1e\"\r\n" \
    "Accept-Ranges: bytes\r\n\r\n"
#define N10 "abcdefghij"
#define N100 N10 N10 N10 N10 N10 N10 N10 N10 N10 N10
#define N1000 N100 N100 N100 N100 N100 N100 N100 N100 N100 N100
#define F8 "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\n"

static const case_t cases[] = {
    { "nginx's static answer", NGINX_HEAD BODY30, false, true },
    { "its body in a later read too", NGINX_HEAD "wg3K", false, true },
    { "bytes after the body", NGINX_HEAD BODY30 "HTTP/1.1 200 OK\r\n",
      false, true },
    { "HTTP/1.0 with keep-alive",
      "HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: Keep-Alive\r\n"
      "\r\nabc", false, true },
    { "HTTP/1.0 without", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc",
      false, true },
    { "Connection: close, upper case",
      "HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 2\r\nCONNECTION: CLOSE\r\n\r\nzz",
      false, true },
    { "tabs and spaces inside a value and a reason",
      "HTTP/1.1 200 O\tK x\r\nContent-Length: 1\r\nX:  a\t b\r\n\r\nz",
      false, true },
    { "every tchar in a name, every VCHAR in a value",
      "HTTP/1.1 404 Not Found\r\nX-Y_Z!#$%&'*+-.^`|~09: \"q\" (c) <a>@[b]"
      "\\{}/:;=?,\r\nContent-Length: 000\r\n\r\n", false, true },
    { "Location and X-Accel-*",
      "HTTP/1.1 302 Found\r\nLocation: /a\r\nX-Accel-Redirect: /b\r\n"
      "x-accel-buffering: no\r\nContent-Length: 0\r\n\r\n", false, true },
    { "32 fields", "HTTP/1.1 200 OK\r\n" F8 F8 F8 "I: 1\r\nJ: 2\r\nK: 3\r\n"
      "L: 4\r\nM: 5\r\nN: 6\r\nO: 7\r\nContent-Length: 1\r\n\r\nz",
      false, true },
    { "a body cut by the close", NGINX_HEAD "wg3", false, true },
    { "tabs past eight bytes of a value, one on a step's first byte",
      "HTTP/1.1 200 OK\r\nX: abcdefghijklm\tnopqrstu\tvwxyz0123456789\t.\r\n"
      "Content-Length: 1\r\n\r\nz", false, true },
    { "names of 1,024 bytes with their NULs",
      "HTTP/1.1 200 OK\r\n" N1000 "ABCDEFGH: 1\r\nContent-Length: 1\r\n\r\nz",
      false, true },
    { "33 fields", "HTTP/1.1 200 OK\r\n" F8 F8 F8 F8
      "Content-Length: 1\r\n\r\nz", false, false },
    { "chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\n\r\n", false, false },
    { "no length: to the close", "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nabc",
      false, false },
    { "204", "HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n",
      false, false },
    { "304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n",
      false, false },
    { "100 before 200", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
      "Content-Length: 1\r\n\r\nz", false, false },
    { "101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\n\r\nxyz", false, false },
    { "HEAD", NGINX_HEAD, true, false },
    { "600", "HTTP/1.1 600 X\r\nContent-Length: 1\r\n\r\nz", false, false },
    { "two Content-Length",
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nz",
      false, false },
    { "Content-Length not digits",
      "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nz", false, false },
    { "Connection: keep-alive, Upgrade",
      "HTTP/1.1 200 OK\r\nConnection: keep-alive, Upgrade\r\n" CL30 "\r\n"
      BODY30, false, false },
    { "two Connection",
      "HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\n"
      CL30 "\r\n" BODY30, false, false },
    { "Proxy-Connection", "HTTP/1.1 200 OK\r\nProxy-Connection: close\r\n"
      CL30 "\r\n" BODY30, false, false },
    { "Upgrade", "HTTP/1.1 200 OK\r\nUpgrade: h2c\r\n" CL30 "\r\n" BODY30,
      false, false },
    { "a value ending in a space",
      "HTTP/1.1 200 OK\r\nX: a \r\n" CL30 "\r\n" BODY30, false, false },
    { "an empty value", "HTTP/1.1 200 OK\r\nX:\r\n" CL30 "\r\n" BODY30,
      false, false },
    { "a byte above 0x7f", "HTTP/1.1 200 OK\r\nX: caf\xc3\xa9\r\n" CL30
      "\r\n" BODY30, false, false },
    { "a space before the colon", "HTTP/1.1 200 OK\r\nX : a\r\n" CL30 "\r\n"
      BODY30, false, false },
    { "a folded line", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n" CL30 "\r\n"
      BODY30, false, false },
    { "a bare LF", "HTTP/1.1 200 OK\nContent-Length: 1\n\nz", false, false },
    { "no reason", "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nz",
      false, false },
    { "a reason after two spaces",
      "HTTP/1.1 200  OK\r\nContent-Length: 1\r\n\r\nz", false, false },
    { "HTTP/1.2", "HTTP/1.2 200 OK\r\nContent-Length: 1\r\n\r\nz",
      false, false },
    { "HTTP/2.0", "HTTP/2.0 200 OK\r\nContent-Length: 1\r\n\r\nz",
      false, false },
    { "a NUL in a value", "HTTP/1.1 200 OK\r\nX: a\0b\r\n" CL30 "\r\n"
      BODY30, false, false },
    { "names of 1,025 bytes with their NULs",
      "HTTP/1.1 200 OK\r\n" N1000 "ABCDEFGHI: 1\r\nContent-Length: 1\r\n\r\nz",
      false, false },
    { "DEL past eight bytes of a value",
      "HTTP/1.1 200 OK\r\nX: abcdefghijk\x7f" "lmnop\r\n" CL30 "\r\n" BODY30,
      false, false },
    { "a byte over 0x7f past eight bytes of a value",
      "HTTP/1.1 200 OK\r\nX: abcdefghijk\xe9" "lmnopqrstuvw\r\n" CL30 "\r\n"
      BODY30, false, false },
    { "0xff then a printable byte in a value",
      "HTTP/1.1 200 OK\r\nX: abcdefg\xff" "abcdefgh\r\n" CL30 "\r\n"
      BODY30, false, false },
    { "a control byte past eight bytes of a reason",
      "HTTP/1.1 200 Very good in\x01" "deed\r\nContent-Length: 1\r\n\r\nz",
      false, false },
    { "a bare CR past eight bytes of a value",
      "HTTP/1.1 200 OK\r\nX: abcdefghijk\rlmnop\r\n" CL30 "\r\n" BODY30,
      false, false },
};

typedef struct {
    char    t[8192];
    size_t  n;
} transcript_t;

static void
say(transcript_t *t, const char *fmt, ...)
{
    va_list args;
    int     k;

    va_start(args, fmt);
    k = vsnprintf(t->t + t->n, sizeof(t->t) - t->n, fmt, args);
    va_end(args);
    if (k > 0) {
        t->n = rx_min(t->n + (size_t) k, sizeof(t->t) - 1);
    }
}

static rx_int_t
on_body(void *data, const char *at, size_t len)
{
    say(data, "%.*s", (int) len, at);
    return RX_OK;
}

/* One run over bytes[0, len) in reads of step bytes (0: one read). */
static bool
run(const case_t *c, size_t len, size_t step, transcript_t *out)
{
    rx_pool_t                     *pool = rx_pool_create(4096, NULL);
    rx_http_upstream_headers_in_t  h;
    rx_http_response_parser_t     *p;
    transcript_t                   body = { .n = 0 };
    rx_table_elt_t                *e;
    size_t                         off = 0, n, used = 0;
    rx_int_t                       rc = RX_AGAIN;
    rx_uint_t                      i;
    bool                           plain;

    memset(&h, 0, sizeof(h));
    p = rx_http_response_parser_create(pool, &h, c->head, on_body, &body);
    while (off < len) {
        n = step ? rx_min(step, len - off) : len - off;
        rc = rx_http_response_parse(p, c->bytes + off, n, &used);
        if (rc == RX_ERROR || rc == RX_DONE) {
            off += rc == RX_DONE ? used : 0;
            break;
        }
        off += n;
    }
    /* where an error was found depends on the reads: not said */
    say(out, "rc %ld at %zu", (long) rc, rc == RX_ERROR ? 0 : off);
    if (rc == RX_AGAIN || rc == RX_OK) {
        say(out, " eof %ld", (long) rx_http_response_parse_eof(p));
    }
    if (rx_http_response_parser_header_done(p)) {
        say(out, " [%.*s]", (int) h.status_line.len, h.status_line.data);
        e = h.headers.elts;
        for (i = 0; i < h.headers.nelts; i++) {
            say(out, " %.*s(%s)=%.*s", (int) e[i].key.len, e[i].key.data,
                e[i].lowcase_key, (int) e[i].value.len, e[i].value.data);
        }
        say(out, " cl %lld chunked %d close %d loc %d xar %d xab %d",
            (long long) h.content_length_n, h.chunked, h.connection_close,
            h.location ? (int) (h.location - e) : -1,
            h.x_accel_redirect ? (int) (h.x_accel_redirect - e) : -1,
            h.x_accel_buffering ? (int) (h.x_accel_buffering - e) : -1);
    }
    say(out, " body <%.*s> keepalive %d error %s", (int) body.n, body.t,
        off == len && rx_http_response_parser_keepalive(p),
        rx_http_response_parser_error(p) ? rx_http_response_parser_error(p)
                                         : "-");
    plain = rx_http_response_parser_plain(p);
    rx_pool_destroy(pool);
    return plain;
}

int
main(void)
{
    size_t i, len;

    for (i = 0; i < rx_nelems(cases); i++) {
        const case_t *c = &cases[i];
        transcript_t  whole = { .n = 0 }, bytes = { .n = 0 };
        bool          plain;

        len = strlen(c->bytes);
        if (strcmp(c->name, "a NUL in a value") == 0) {
            len = sizeof("HTTP/1.1 200 OK\r\nX: a\0b\r\n" CL30 "\r\n" BODY30)
                  - 1;
        }
        plain = run(c, len, 0, &whole);
        run(c, len, 1, &bytes);
        ok(plain == c->plain, "%s: read %s", c->name,
           c->plain ? "the plain way" : "by llhttp");
        if (!ok(strcmp(whole.t, bytes.t) == 0, "%s: one read and a byte at "
                "a time agree", c->name)) {
            diag("one read:  %s", whole.t);
            diag("by bytes:  %s", bytes.t);
        } else if (getenv("RX_TEST_VERBOSE")) {
            diag("%s", whole.t);
        }
    }
    return done();
}
