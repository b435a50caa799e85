/*
 * fuzz_response.c: the upstream response parser (http/http_response_parse.c
 * over llhttp in response mode) driven the way http_upstream.c's on_data()
 * and the proxy module drive it.
 *
 * Input: one control byte, the cut sizes, then the upstream's bytes.
 *   bit 0     the request was HEAD
 *   bits 1-3  n: how many cut bytes follow (0-7)
 *   bit 4     cut sizes count in units of 16 bytes instead of 1
 * Each cut byte b makes a read of (b + 1) (x 16) bytes; what is left after
 * the n reads is one more read. A printable '0' (0x30): no cut, GET.
 *
 * The model: header bytes are appended to one header buffer that never
 * moves (as u->header_buf; the header fields point into it), and the
 * parser gets each read there until the header is complete; after that
 * every read is a new exact-sized heap copy, freed after the call, so that
 * a body span kept across reads or read past its end shows under ASan.
 * Once the parser says RX_DONE nothing more is fed; when the input ends
 * before that, the upstream closes (rx_http_response_parse_eof).
 *
 * Invariants:
 *   - the outcome does not depend on the cuts: the transcript (result,
 *     where the response ended, status line, header fields, the body
 *     bytes as one stream, keepalive when nothing follows the response,
 *     the error) equals that of the same bytes in one read;
 *   - rx_http_response_parse consumes what it was given (RX_AGAIN, RX_OK)
 *     or at most that (RX_DONE); RX_DONE with bytes left over is never
 *     keepalive; a call after RX_DONE uses nothing and kills keepalive;
 *   - body bytes are handed over only after the final (non-1xx) header,
 *     never for HEAD, lie inside the read being parsed, and in all never
 *     exceed the bytes fed; with Content-Length (not chunked) they never
 *     exceed it, and a completed response has exactly that many (but for
 *     204, 304 and 101);
 *   - every header field (name, value, lower-cased name) lies inside the
 *     header buffer's received bytes, the name is non-empty, the value
 *     holds no CR, LF or NUL; the status line starts with the status;
 *     location/x-accel-* point at fields of that name;
 *   - keepalive only for a complete, framed response (HEAD, chunked,
 *     Content-Length, 204, 304) without "Connection: close";
 *   - the close ends a response (eof RX_DONE) only when its body runs to
 *     the close: never with Content-Length or chunked framing, never
 *     before the header.
 */
#include <ctype.h>
#include "fuzz.h"
#include "http.h"
#include "http_response_parse.h"

static void
append_num(transcript_t *t, char tag, int64_t v)
{
    append(t, &tag, 1);
    append(t, &v, sizeof(v));
}

typedef struct {
    rx_http_response_parser_t      *p;
    rx_http_upstream_headers_in_t   h;
    const char                     *cur;       /* the read being parsed */
    size_t                          cur_len;
    size_t                          fed;       /* bytes given so far */
    int64_t                         body;      /* body bytes delivered */
    bool                            head;
    transcript_t                    body_bytes;
} run_t;

static rx_int_t
on_body(void *data, const char *at, size_t len)
{
    run_t *r = data;

    FUZZ_CHECK(rx_http_response_parser_header_done(r->p),
               "%zu body bytes before the final header (status so far %lu)",
               len, (unsigned long) r->h.status);
    FUZZ_CHECK(!r->head, "%zu body bytes for HEAD", len);
    FUZZ_CHECK(at >= r->cur && len <= r->cur_len
               && (size_t) (at - r->cur) <= r->cur_len - len,
               "body span [%p, +%zu) outside the read [%p, +%zu)",
               (void *) at, len, (void *) r->cur, r->cur_len);
    r->body += (int64_t) len;
    FUZZ_CHECK(r->body <= (int64_t) r->fed, "body %" PRId64 " > fed %zu",
               r->body, r->fed);
    append(&r->body_bytes, at, len);
    return RX_OK;
}

static bool
inside(const char *s, size_t n, const char *buf, size_t len)
{
    return s >= buf && n <= len && (size_t) (s - buf) <= len - n;
}

/* The header as parsed so far: fields inside hbuf[0, hlen). */
static void
check_header(run_t *r, const char *hbuf, size_t hlen, transcript_t *t)
{
    rx_http_upstream_headers_in_t *h = &r->h;
    rx_table_elt_t                *e = h->headers.elts;
    rx_uint_t                      i;
    size_t                         k;

    FUZZ_CHECK(h->status >= 100 && h->status <= 999, "status %lu",
               (unsigned long) h->status);
    FUZZ_CHECK(h->status >= 200 || h->status == 101,
               "header done on an interim %lu", (unsigned long) h->status);
    FUZZ_CHECK(h->status_line.len >= 3 && h->status_line.data
               && (unsigned long) atoi(h->status_line.data) == h->status
               && (h->status_line.len == 3 || h->status_line.data[3] == ' '),
               "status line %s for %lu",
               fuzz_show(h->status_line.data, h->status_line.len),
               (unsigned long) h->status);
    append_tag(t, 'S', h->status_line.data, h->status_line.len);
    for (i = 0; i < h->headers.nelts; i++) {
        FUZZ_CHECK(e[i].key.len > 0 && inside(e[i].key.data, e[i].key.len,
                                              hbuf, hlen),
                   "field name %s outside the header buffer or empty",
                   fuzz_show(e[i].key.data, e[i].key.len));
        FUZZ_CHECK(e[i].value.len == 0
                   || inside(e[i].value.data, e[i].value.len, hbuf, hlen),
                   "field value %s outside the header buffer",
                   fuzz_show(e[i].value.data, e[i].value.len));
        FUZZ_CHECK(memchr(e[i].value.data, '\r', e[i].value.len) == NULL
                   && memchr(e[i].value.data, '\n', e[i].value.len) == NULL
                   && memchr(e[i].value.data, '\0', e[i].value.len) == NULL,
                   "field %s: value %s holds CR, LF or NUL",
                   fuzz_show(e[i].key.data, e[i].key.len),
                   fuzz_show(e[i].value.data, e[i].value.len));
        for (k = 0; k < e[i].key.len; k++) {
            FUZZ_CHECK(e[i].lowcase_key[k]
                       == tolower((unsigned char) e[i].key.data[k]),
                       "lowcase_key %s of %s", e[i].lowcase_key,
                       fuzz_show(e[i].key.data, e[i].key.len));
        }
        FUZZ_CHECK(e[i].lowcase_key[k] == '\0', "lowcase_key unterminated");
        append_tag(t, 'K', e[i].key.data, e[i].key.len);
        append_tag(t, 'V', e[i].value.data, e[i].value.len);
    }
#define POINTS_AT(p, name)                                                    \
    FUZZ_CHECK((p) == NULL || ((p) >= e && (p) < e + h->headers.nelts         \
                               && strcmp((p)->lowcase_key, name) == 0),       \
               #p " does not point at a %s field", name)
    POINTS_AT(h->location, "location");
    POINTS_AT(h->x_accel_redirect, "x-accel-redirect");
    POINTS_AT(h->x_accel_buffering, "x-accel-buffering");
    FUZZ_CHECK(!(h->chunked && h->content_length_n >= 0),
               "chunked with Content-Length %" PRId64, h->content_length_n);
    append_num(t, 'C', h->content_length_n);
    append_num(t, 'T', h->chunked);
    append_num(t, 'X', h->connection_close);
}

/* One run over stream[0, len) in the reads cuts[] (the rest: one more). */
static void
run(const char *stream, size_t len, const size_t *cuts, size_t ncuts,
    bool head, transcript_t *t)
{
    rx_pool_t  *pool = rx_pool_create(1024, fuzz_null_log());
    char       *hbuf = malloc(len ? len : 1), *piece = NULL;
    size_t      off = 0, hlen = 0, n, used, i = 0;
    rx_int_t    rc = RX_AGAIN, eof_rc = RX_AGAIN, again_rc;
    bool        header_done = false, keepalive = false;
    int64_t     cl;
    run_t       r;

    FUZZ_CHECK(pool != NULL && hbuf != NULL, "no memory");
    memset(&r, 0, sizeof(r));
    r.head = head;
    r.p = rx_http_response_parser_create(pool, &r.h, head, on_body, &r);
    FUZZ_CHECK(r.p != NULL, "no parser");

    while (off < len) {
        n = i < ncuts ? cuts[i] : len - off;
        i++;
        if (n > len - off) {
            n = len - off;
        }
        if (!header_done) {
            memcpy(hbuf + hlen, stream + off, n);
            r.cur = hbuf + hlen;
            hlen += n;
        } else {
            r.cur = piece = fuzz_dup((const uint8_t *) stream + off, n);
        }
        r.cur_len = n;
        r.fed += n;
        used = (size_t) -1;
        rc = rx_http_response_parse(r.p, r.cur, n, &used);
        free(piece);
        piece = NULL;
        FUZZ_CHECK(rc == RX_AGAIN || rc == RX_OK || rc == RX_DONE
                   || rc == RX_ERROR, "rc %ld", (long) rc);
        header_done = rx_http_response_parser_header_done(r.p);
        if (rc == RX_ERROR) {
            FUZZ_CHECK(rx_http_response_parser_error(r.p) != NULL,
                       "an error without a message");
            break;
        }
        FUZZ_CHECK(used <= n, "used %zu of %zu", used, n);
        FUZZ_CHECK(rc == RX_DONE || used == n, "rc %ld used %zu of %zu",
                   (long) rc, used, n);
        FUZZ_CHECK(rc == RX_AGAIN || rx_http_response_parser_header_done(r.p),
                   "rc %ld before the header", (long) rc);
        FUZZ_CHECK(rc != RX_AGAIN || !rx_http_response_parser_header_done(r.p),
                   "RX_AGAIN after the header");
        if (rc == RX_DONE) {
            keepalive = rx_http_response_parser_keepalive(r.p);
            FUZZ_CHECK(!(keepalive && used < n),
                       "keepalive with %zu bytes after the response",
                       n - used);
            off += used;
            break;
        }
        off += n;
    }

    if (rc != RX_DONE && rc != RX_ERROR) {
        eof_rc = rx_http_response_parse_eof(r.p);
        FUZZ_CHECK(eof_rc == RX_DONE || eof_rc == RX_ERROR, "eof rc %ld",
                   (long) eof_rc);
        FUZZ_CHECK(eof_rc == RX_ERROR || header_done,
                   "the close ends a response without a header");
        FUZZ_CHECK(eof_rc == RX_ERROR
                   || (r.h.content_length_n < 0 && !r.h.chunked),
                   "the close ends a framed body (Content-Length %" PRId64
                   ", chunked %d, %" PRId64 " body bytes)",
                   r.h.content_length_n, r.h.chunked, r.body);
        FUZZ_CHECK(eof_rc == RX_ERROR
                   || !rx_http_response_parser_keepalive(r.p),
                   "keepalive after the close");
        FUZZ_CHECK(eof_rc == RX_DONE
                   || rx_http_response_parser_error(r.p) != NULL,
                   "an eof error without a message");
    }

    append_num(t, 'R', rc);
    append_num(t, 'E', eof_rc);
    if (header_done) {
        check_header(&r, hbuf, hlen, t);
    }
    cl = r.h.content_length_n;
    if (header_done && cl >= 0 && !r.h.chunked) {
        FUZZ_CHECK(r.body <= cl, "%" PRId64 " body bytes, Content-Length %"
                   PRId64, r.body, cl);
        FUZZ_CHECK(rc != RX_DONE || head || r.body == cl || r.h.status == 204
                   || r.h.status == 304 || r.h.status == 101,
                   "complete with %" PRId64 " body bytes, Content-Length %"
                   PRId64, r.body, cl);
    }
    if (rc == RX_DONE) {
        append_num(t, 'U', (int64_t) off);
        /* keepalive as the parser knows it: a response that ends with a
         * read may be followed by more in the next one, unseen */
        append_num(t, 'A', keepalive && off == len);
        FUZZ_CHECK(!keepalive || !r.h.connection_close,
                   "keepalive with Connection: close");
        FUZZ_CHECK(!keepalive || head || r.h.chunked || cl >= 0
                   || r.h.status == 204 || r.h.status == 304,
                   "keepalive for a body that runs to the close (status %lu)",
                   (unsigned long) r.h.status);
        /* more bytes after the response: not ours */
        used = 7;
        again_rc = rx_http_response_parse(r.p, "x", 1, &used);
        FUZZ_CHECK(again_rc == RX_DONE && used == 0
                   && !rx_http_response_parser_keepalive(r.p),
                   "after RX_DONE: rc %ld used %zu keepalive %d",
                   (long) again_rc, used,
                   rx_http_response_parser_keepalive(r.p));
        FUZZ_CHECK(rx_http_response_parse_eof(r.p) == RX_DONE,
                   "eof after RX_DONE is not RX_DONE");
    }
    if (rc == RX_ERROR || eof_rc == RX_ERROR) {
        const char *e = rx_http_response_parser_error(r.p);
        append_tag(t, '!', e, strlen(e));
    }
    append_tag(t, 'B', r.body_bytes.data, r.body_bytes.len);

    if (fuzz_verbose()) {
        fprintf(stderr, "fuzz_response: %zu cuts: rc %ld eof %ld status %lu "
                "headers %lu body %" PRId64 " keepalive %d error %s\n",
                ncuts, (long) rc, (long) eof_rc, (unsigned long) r.h.status,
                (unsigned long) r.h.headers.nelts, r.body, keepalive,
                rx_http_response_parser_error(r.p)
                    ? rx_http_response_parser_error(r.p) : "-");
    }
    free(r.body_bytes.data);
    free(hbuf);
    rx_pool_destroy(pool);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    transcript_t  split = { NULL, 0, 0 }, whole = { NULL, 0, 0 };
    size_t        cuts[7], ncuts, i, unit, len;
    char         *stream;
    bool          head;

    if (size < 1) {
        return 0;
    }
    head = data[0] & 1;
    ncuts = (data[0] >> 1) & 7;
    unit = data[0] & 0x10 ? 16 : 1;
    if (size < 1 + ncuts) {
        return 0;
    }
    for (i = 0; i < ncuts; i++) {
        cuts[i] = ((size_t) data[1 + i] + 1) * unit;
    }
    len = size - 1 - ncuts;
    stream = fuzz_dup(data + 1 + ncuts, len);

    run(stream, len, cuts, ncuts, head, &split);
    if (ncuts) {
        run(stream, len, NULL, 0, head, &whole);
        FUZZ_CHECK(split.len == whole.len
                   && memcmp(split.data, whole.data, split.len) == 0,
                   "the outcome depends on the cuts (%zu vs %zu transcript "
                   "bytes); run with RX_FUZZ_VERBOSE=1", split.len, whole.len);
    }
    free(split.data);
    free(whole.data);
    free(stream);
    return 0;
}
