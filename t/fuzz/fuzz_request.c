/*
 * fuzz_request.c: the request parser (http/http_parse.c over llhttp)
 * driven the way http_connection.c drives it, plus the request-target
 * parser on every URL and Host validation on every Host value.
 *
 * Input: one control byte, then the bytes a client sends.
 *   bits 0-4  where the stream is cut into two reads: at (c & 31) / 31
 *             of its length
 *   bit 5     merge_slashes for rx_http_parse_request_target
 *   bit 6     on_headers_complete answers 501 (a handler refusing the
 *             request: the parser's HPE_USER path after the header)
 *   bit 7     small header buffers (64, 2 x 128) instead of nginx's
 *             defaults (1k, 4 x 8k), to reach 414 and 494
 * A printable '0' (0x30) means: cut in the middle, merge on, defaults.
 *
 * The connection is modelled as http_connection.c has it: one input
 * buffer (hc->in) that the parser sees through `base`; each read appends
 * to it, and here every append moves it (a new exact-sized copy, the old
 * one freed) so that a span kept as a pointer across reads, or a read one
 * byte past what was received, shows under ASan. After the header
 * (RX_HTTP_PARSE_HEADER_DONE) the parser is resumed at once and, as
 * process_input() does, the buffer starts afresh whenever everything in
 * it was parsed; a message that completes (MESSAGE_DONE) is dropped from
 * the buffer as rx_http_request_done() does and parsing goes on with what
 * follows (pipelining). A message without a body completes on an
 * execute() of zero bytes, as in process_input().
 *
 * Invariants:
 *   - the outcome does not depend on how the stream is cut into reads:
 *     the transcript of what the callbacks got (URL, request line,
 *     headers and trailers, body bytes as one stream, header facts,
 *     message ends, the error status) is the same when the stream comes
 *     in one read (checked whenever the cut falls inside the stream);
 *   - every span a callback gets lies inside the bytes received;
 *   - execute() never consumes more than it was given, and the parser
 *     makes progress (a bounded number of executes per read);
 *   - HEADER_DONE comes after on_headers_complete, MESSAGE_DONE after
 *     on_message_complete, and rx_http_parser_idle() agrees;
 *   - a message with Content-Length has exactly that many body bytes, and
 *     Content-Length never comes with chunked (request smuggling);
 *   - an error's status is 400-599, and the one a callback chose;
 *   - rx_http_validate_host: a valid host is non-empty, lower case, free
 *     of "..", '/', spaces and controls, and is a prefix of the value
 *     (lower-cased); allocating and in-place validation agree.
 *
 * Known findings that $RX_FUZZ_KNOWN can step over (t/fuzz/README.md):
 *   upgrade-pause          MESSAGE_DONE without a message after a request
 *                          with an Upgrade header: input ends there
 *   trailer-across-reads   a trailer span outside the received bytes (the
 *                          request is refused instead) and transcripts that
 *                          differ when a chunked body's trailer was involved
 *   limit-status           transcripts that differ only in where an error
 *                          was found, one of them a length limit (414, 494)
 */
#include "fuzz.h"
#include "http.h"
#include "http_parse.h"
#include "http_uri.h"

/* The transcript (fuzz.h) holds what the owner learns, in order: a run
 * in two reads and a run in one must agree (body bytes as one stream).
 * A record "K<len>[bytes] ", readable and unambiguous. */
static void
note(transcript_t *t, char kind, const void *bytes, size_t n)
{
    char head[32];

    append(t, head, (size_t) snprintf(head, sizeof(head), "%c%zu[", kind, n));
    append(t, bytes, n);
    append(t, "] ", 2);
}

typedef struct {
    rx_http_parser_t *p;
    transcript_t      tr;
    char             *buf;          /* hc->in */
    size_t            len;          /* hc->in_len */
    size_t            parsed;       /* hc->in_parsed */
    bool              merge;
    bool              refuse_header;
    bool              in_body;      /* state PROCESS: after HEADER_DONE */
    rx_uint_t         status;       /* a callback's answer */

    /* the message being parsed (a request: its pool) */
    rx_pool_t        *pool;
    bool              saw_url, saw_line, saw_headers_complete, saw_complete;
    rx_http_uri_t     uri;
    unsigned          http_version;
    bool              te, te_chunked;
    int64_t           content_length;
    bool              chunked;
    int64_t           body;
    rx_uint_t         headers;
    rx_uint_t         messages;
    transcript_t      body_stream;  /* body bytes not yet noted */
    bool              saw_trailer;  /* on_header after the header */
} conn_t;

/* A transcript record, after the body bytes that came before it. */
static void
event(conn_t *c, char kind, const void *bytes, size_t n)
{
    if (c->body_stream.len) {
        note(&c->tr, 'B', c->body_stream.data, c->body_stream.len);
        c->body_stream.len = 0;
    }
    note(&c->tr, kind, bytes, n);
}

static void
event_num(conn_t *c, char kind, int64_t v)
{
    char num[32];

    event(c, kind, num, (size_t) snprintf(num, sizeof(num), "%" PRId64, v));
}

/* Whether [at, at + n) lies inside the received bytes; false only for a
 * trailer when that known finding is stepped over (the callback then
 * refuses the request instead of reading the bytes). */
static bool
check_span(conn_t *c, const char *what, const char *at, size_t n)
{
    bool inside = at >= c->buf && at <= c->buf + c->len
                  && n <= (size_t) (c->buf + c->len - at);

    if (!inside && c->in_body && fuzz_known("trailer-across-reads")) {
        return false;
    }
    FUZZ_CHECK(inside, "%s span [%p, +%zu) outside the received bytes "
               "[%p, +%zu)%s", what, (const void *) at, n,
               (const void *) c->buf, c->len,
               c->in_body ? " (a trailer)" : "");
    return true;
}

static void
new_message(conn_t *c)
{
    rx_pool_destroy(c->pool);
    c->pool = rx_pool_create(1024, fuzz_null_log());
    c->saw_url = c->saw_line = c->saw_headers_complete = c->saw_complete = false;
    memset(&c->uri, 0, sizeof(c->uri));
    c->content_length = -1;
    c->chunked = false;
    c->http_version = 0;
    c->te = c->te_chunked = false;
    c->body = 0;
    c->headers = 0;
}

static rx_int_t
refuse(conn_t *c, rx_uint_t status)
{
    c->status = status;
    return (rx_int_t) status;
}

static rx_int_t
on_url(void *data, const char *at, size_t len)
{
    conn_t   *c = data;
    char     *target;
    rx_int_t  rc;

    (void) check_span(c, "URL", at, len);
    event(c, 'U', at, len);
    c->saw_url = true;
    /* as rx_http_on_url: the target is copied out of the moving buffer */
    target = rx_pstrdup_c(c->pool, at, len);
    FUZZ_CHECK(target != NULL, "no memory");
    rc = rx_http_parse_request_target(c->pool, target, len, &c->uri, c->merge);
    FUZZ_CHECK(rc == RX_OK || rc == RX_HTTP_TARGET_ASTERISK || rc == 400,
               "target rc %ld", (long) rc);
    if (rc == RX_OK) {
        FUZZ_CHECK(c->uri.path.len >= 1 && c->uri.path.data[0] == '/'
                   && memchr(c->uri.path.data, '\0', c->uri.path.len) == NULL,
                   "path %s", fuzz_show(c->uri.path.data, c->uri.path.len));
    }
    if (rc != RX_OK && rc != RX_HTTP_TARGET_ASTERISK) {
        return refuse(c, (rx_uint_t) rc);
    }
    return RX_OK;
}

static rx_int_t
on_request_line(void *data)
{
    conn_t                 *c = data;
    rx_http_message_info_t  info;

    FUZZ_CHECK(c->saw_url, "request line without a URL");
    FUZZ_CHECK(!c->saw_line, "two request lines in one message");
    c->saw_line = true;
    rx_http_parser_info(c->p, &info);
    FUZZ_CHECK(info.method_name != NULL && info.method_name[0] != '\0',
               "no method name");
    c->http_version = info.http_major * 1000 + info.http_minor;
    event(c, 'L', info.method_name, strlen(info.method_name));
    event_num(c, 'V', c->http_version);
    return RX_OK;
}

static void
check_host(const char *v, size_t vl, rx_pool_t *pool)
{
    rx_str_t  a, b;
    bool      ok_a, ok_b;
    char     *own = fuzz_dup((const uint8_t *) v, vl);
    size_t    i;

    a.data = (char *) v;
    a.len = vl;
    ok_a = rx_http_validate_host(&a, pool, true);
    b.data = own;
    b.len = vl;
    ok_b = rx_http_validate_host(&b, NULL, false);

    FUZZ_CHECK(ok_a == ok_b, "validate_host with and without a pool disagree "
               "on %s", fuzz_show(v, vl));
    if (!ok_a) {
        FUZZ_CHECK(a.data == v && a.len == vl, "an invalid host was changed");
        free(own);
        return;
    }
    FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0,
               "validate_host: %s vs %s", fuzz_show(a.data, a.len),
               fuzz_show(b.data, b.len));
    FUZZ_CHECK(a.data != v, "alloc asked for a copy");
    FUZZ_CHECK(a.len >= 1 && a.len <= vl, "host length %zu of %zu", a.len, vl);
    FUZZ_CHECK(memmem(a.data, a.len, "..", 2) == NULL, "\"..\" in host %s",
               fuzz_show(a.data, a.len));
    for (i = 0; i < a.len; i++) {
        unsigned char ch = (unsigned char) a.data[i];
        unsigned char in = (unsigned char) v[i];

        FUZZ_CHECK(ch > 0x20 && ch != 0x7f && ch != '/'
                   && !(ch >= 'A' && ch <= 'Z'),
                   "byte 0x%02x in host %s (from %s)", ch,
                   fuzz_show(a.data, a.len), fuzz_show(v, vl));
        FUZZ_CHECK(ch == ((in >= 'A' && in <= 'Z') ? (in | 0x20) : in),
                   "host %s is not the lower-cased start of %s",
                   fuzz_show(a.data, a.len), fuzz_show(v, vl));
    }
    free(own);
}

static rx_int_t
on_header(void *data, const char *k, size_t kl, const char *v, size_t vl)
{
    conn_t *c = data;
    char   *key, *value;

    if (c->in_body) {
        c->saw_trailer = true;
    }
    if (!check_span(c, "header name", k, kl)
        || !check_span(c, "header value", v, vl))
    {
        return refuse(c, RX_HTTP_BAD_REQUEST);
    }
    event(c, 'K', k, kl);
    event(c, 'H', v, vl);
    c->headers++;
    /* as rx_http_on_header: trailing whitespace off, copied to the pool */
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) {
        vl--;
    }
    key = rx_pstrdup_c(c->pool, k, kl);
    value = rx_pstrdup_c(c->pool, v, vl);
    FUZZ_CHECK(key != NULL && value != NULL, "no memory");
    if (kl == 17 && strncasecmp(k, "transfer-encoding", 17) == 0 && !c->te) {
        c->te = true;         /* the first one counts, as r->headers_in's slot */
        c->te_chunked = vl == 7 && strncasecmp(v, "chunked", 7) == 0;
    }
    if (kl == 4 && strncasecmp(k, "host", 4) == 0) {
        check_host(value, vl, c->pool);
    }
    return RX_OK;
}

static rx_int_t
on_headers_complete(void *data)
{
    conn_t                 *c = data;
    rx_http_message_info_t  info;

    FUZZ_CHECK(c->saw_line, "headers complete without a request line");
    c->saw_headers_complete = true;
    rx_http_parser_info(c->p, &info);
    FUZZ_CHECK(info.content_length >= -1, "content_length %" PRId64,
               info.content_length);
    FUZZ_CHECK(!(info.chunked && info.content_length >= 0),
               "chunked with Content-Length %" PRId64, info.content_length);
    c->content_length = info.content_length;
    c->chunked = info.chunked;
    event_num(c, 'C', info.content_length);
    event_num(c, 'T', info.chunked);
    if (c->refuse_header) {
        return refuse(c, RX_HTTP_NOT_IMPLEMENTED);
    }
    /* the refusals of rx_http_on_headers_complete that decide whether the
     * connection goes on parsing, hence the framing seen here */
    if (c->te && c->http_version < RX_HTTP_VERSION_11) {
        return refuse(c, RX_HTTP_BAD_REQUEST);
    }
    if (c->te && !c->te_chunked) {
        return refuse(c, RX_HTTP_NOT_IMPLEMENTED);
    }
    if (info.http_major != 1) {
        return refuse(c, info.http_major > 1 ? RX_HTTP_VERSION_NOT_SUPPORTED
                                             : RX_HTTP_BAD_REQUEST);
    }
    if (info.method & (RX_HTTP_CONNECT | RX_HTTP_TRACE)) {
        return refuse(c, RX_HTTP_NOT_ALLOWED);
    }
    return RX_OK;
}

static rx_int_t
on_body(void *data, const char *at, size_t len)
{
    conn_t *c = data;

    (void) check_span(c, "body", at, len);
    FUZZ_CHECK(c->saw_headers_complete, "body before the header's end");
    c->body += (int64_t) len;
    /* the pieces differ with the reads: the stream is what counts */
    append(&c->body_stream, at, len);
    return RX_OK;
}

static rx_int_t
on_message_complete(void *data)
{
    conn_t *c = data;

    FUZZ_CHECK(c->saw_headers_complete, "message complete without a header");
    c->saw_complete = true;
    event(c, 'M', NULL, 0);
    if (c->content_length >= 0 && !c->chunked) {
        FUZZ_CHECK(c->body == c->content_length, "Content-Length %" PRId64
                   " but %" PRId64 " body bytes", c->content_length, c->body);
    }
    return RX_OK;
}

static const rx_http_parse_handlers_t handlers = {
    on_url, on_request_line, on_header, on_headers_complete, on_body,
    NULL, on_message_complete
};

/* The buffer with [from, len) of the old one followed by n new bytes, at
 * a new address; the old one is freed. */
static void
move_buffer(conn_t *c, size_t from, const uint8_t *more, size_t n)
{
    size_t  keep = c->len - from;
    char   *b = malloc(keep + n);

    FUZZ_CHECK(b != NULL, "no memory");
    if (keep) {
        memcpy(b, c->buf + from, keep);
    }
    if (n) {
        memcpy(b + keep, more, n);
    }
    free(c->buf);
    c->buf = b;
    c->len = keep + n;
    c->parsed -= from;
}

/* One read of n bytes, then parsing as process_input() does. Returns
 * false when the connection is done (an error). */
static bool
receive(conn_t *c, const uint8_t *bytes, size_t n)
{
    rx_http_parse_rc_t rc;
    size_t             got, executes = 0, limit = 2 * (c->len + n) + 16;

    move_buffer(c, 0, bytes, n);

    for ( ;; ) {
        if (c->parsed == c->len
            && !(c->in_body && !rx_http_parser_idle(c->p))) {
            return true;
        }
        FUZZ_CHECK(++executes <= limit, "no progress: %zu executes on %zu "
                   "bytes", executes, c->len);
        c->status = 0;
        rc = rx_http_parser_execute(c->p, c->parsed, c->len - c->parsed, &got);
        FUZZ_CHECK(got <= c->len - c->parsed, "consumed %zu of %zu", got,
                   c->len - c->parsed);
        c->parsed += got;
        if (fuzz_verbose()) {
            fprintf(stderr, "fuzz_request: execute -> %d, %zu consumed, "
                    "%zu left, status %lu\n", (int) rc, got,
                    c->len - c->parsed, (unsigned long) (rc == RX_HTTP_PARSE_ERROR
                    ? rx_http_parser_status(c->p) : 0));
        }
        if (c->in_body && c->parsed == c->len) {
            move_buffer(c, c->len, NULL, 0);    /* hc->in_len = 0 */
        }

        switch (rc) {
        case RX_HTTP_PARSE_AGAIN:
            FUZZ_CHECK(c->parsed == c->len, "AGAIN with %zu bytes left",
                       c->len - c->parsed);
            return true;

        case RX_HTTP_PARSE_HEADER_DONE:
            FUZZ_CHECK(c->saw_headers_complete && !c->in_body,
                       "HEADER_DONE out of turn");
            FUZZ_CHECK(!rx_http_parser_idle(c->p), "idle after the header");
            c->in_body = true;
            rx_http_parser_resume(c->p);
            break;

        case RX_HTTP_PARSE_MESSAGE_DONE:
            if (!c->saw_complete && fuzz_known("upgrade-pause")) {
                return false;    /* known: stop here as if the peer left */
            }
            FUZZ_CHECK(c->saw_complete, "MESSAGE_DONE without "
                       "on_message_complete (%lu messages done before)",
                       (unsigned long) c->messages);
            FUZZ_CHECK(rx_http_parser_idle(c->p), "not idle after a message");
            c->messages++;
            c->in_body = false;
            rx_http_parser_resume(c->p);
            move_buffer(c, c->parsed, NULL, 0);   /* the memmove of keepalive */
            new_message(c);
            break;

        case RX_HTTP_PARSE_ERROR: {
            rx_uint_t status = rx_http_parser_status(c->p);
            const char *reason = rx_http_parser_reason(c->p);

            FUZZ_CHECK(status >= 400 && status <= 599, "status %lu",
                       (unsigned long) status);
            if (c->status) {
                FUZZ_CHECK(status == c->status, "status %lu, the callback "
                           "said %lu", (unsigned long) status,
                           (unsigned long) c->status);
            }
            if (reason) {
                FUZZ_CHECK(strlen(reason) < 512, "reason too long");
            }
            event_num(c, 'E', (int64_t) status);
            if (c->in_body && c->chunked) {
                c->saw_trailer = true;   /* may be one cut by the reads */
            }
            (void) rx_http_parser_reason_level(c->p);
            return false;
        }

        default:
            FUZZ_CHECK(0, "execute returned %d", (int) rc);
        }
    }
}

/* Whether the transcripts differ only in an error found at a different
 * place, one of them a length limit (414, 494): both end in an error, and
 * what came before the earlier error is a prefix of the other. */
static bool
limit_status_only(const transcript_t *a, const transcript_t *b)
{
    static const char  end[] = " $0[] ";
    const char        *ea, *eb;
    size_t             la, lb;

    if (a->len < 7 || b->len < 7) {
        return false;
    }
    ea = memmem(a->data, a->len, "E3[", 3);
    eb = memmem(b->data, b->len, "E3[", 3);
    if (ea == NULL || eb == NULL
        || (size_t) (a->data + a->len - ea) != 7 + sizeof(end) - 1
        || (size_t) (b->data + b->len - eb) != 7 + sizeof(end) - 1)
    {
        return false;
    }
    if (!(memcmp(ea + 3, "414", 3) == 0 || memcmp(ea + 3, "494", 3) == 0
          || memcmp(eb + 3, "414", 3) == 0 || memcmp(eb + 3, "494", 3) == 0))
    {
        return false;
    }
    la = (size_t) (ea - a->data);
    lb = (size_t) (eb - b->data);
    return memcmp(a->data, b->data, rx_min(la, lb)) == 0;
}

/* The whole stream, in two reads cut at `split` (a read of 0 bytes is
 * none); the transcript is left in *tr. */
static bool
run(unsigned ctl, const uint8_t *data, size_t size, size_t split,
    transcript_t *tr)
{
    conn_t c;
    bool   alive = true;

    memset(&c, 0, sizeof(c));
    c.merge = (ctl & 0x20) != 0;
    c.refuse_header = (ctl & 0x40) != 0;
    c.buf = malloc(0);
    new_message(&c);
    if (ctl & 0x80) {
        c.p = rx_http_parser_create_request(fuzz_null_log(), &handlers, &c,
                                            &c.buf, 64, 128, 2);
    } else {
        c.p = rx_http_parser_create_request(fuzz_null_log(), &handlers, &c,
                                            &c.buf, 1024, 8192, 4);
    }
    FUZZ_CHECK(c.p != NULL, "no parser");

    if (split > 0) {
        alive = receive(&c, data, split);
    }
    if (alive && size > split) {
        receive(&c, data + split, size - split);
    }

    event(&c, '$', NULL, 0);
    rx_http_parser_free(c.p);
    rx_pool_destroy(c.pool);
    free(c.buf);
    free(c.body_stream.data);
    *tr = c.tr;
    return c.saw_trailer;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    transcript_t  two, one;
    bool          trailer;
    unsigned      ctl;
    size_t        split;

    if (size < 1) {
        return 0;
    }
    ctl = data[0];
    data++;
    size--;
    split = (size * (ctl & 31)) / 31;

    trailer = run(ctl, data, size, split, &two);
    if (split > 0 && split < size) {
        trailer |= run(ctl, data, size, size, &one);
        if (!(one.len == two.len && memcmp(one.data, two.data, one.len) == 0)
            && !(trailer && fuzz_known("trailer-across-reads"))
            && !(limit_status_only(&one, &two) && fuzz_known("limit-status")))
        {
            size_t i = 0;

            while (i < one.len && i < two.len && one.data[i] == two.data[i]) {
                i++;
            }
            FUZZ_CHECK(0, "the outcome depends on where the reads are cut "
                       "(at %zu of %zu): transcripts differ at byte %zu: "
                       "one read: %s\n  two reads: %s", split, size, i,
                       fuzz_show(one.data + (i > 40 ? i - 40 : 0),
                                 rx_min(one.len - (i > 40 ? i - 40 : 0), 120)),
                       fuzz_show(two.data + (i > 40 ? i - 40 : 0),
                                 rx_min(two.len - (i > 40 ? i - 40 : 0), 120)));
        }
        free(one.data);
    }
    free(two.data);
    return 0;
}
