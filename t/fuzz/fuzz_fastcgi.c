/*
 * fuzz_fastcgi.c: the FastCGI record decoder and the CGI header line
 * parser (http/http_fastcgi_codec.c), driven the way
 * modules/fastcgi_upstream.c drives them.
 *
 * Input: one control byte, the cut sizes, then the upstream's bytes.
 *   bits 0-2  n: how many cut bytes follow (0-7)
 *   bit 3     cut sizes count in units of 16 bytes instead of 1
 *   bits 4-5  the CGI header buffer holds 64 << k bytes (64-512)
 *   bit 6     the bytes are not records but a STDOUT stream: the target
 *             frames them itself (rx_fcgi_frame, records of at most
 *             (byte after the cuts) + 1 content bytes, then an empty
 *             STDOUT and END_REQUEST), so that the fuzzer reaches the CGI
 *             header parser without building records
 * Each cut byte b makes a read of (b + 1) (x 16) bytes; what is left after
 * the n reads is one more read. A printable '0' (0x30): no cut, records,
 * a 512-byte header buffer.
 *
 * The model (fastcgi_upstream.c): every read is a new exact-sized heap
 * copy, freed after it was decoded. While the CGI header is incomplete,
 * STDOUT content is appended to a header buffer of exactly its capacity
 * and parsed line by line (rx_fcgi_parse_header_line); the empty line ends
 * it, and the STDOUT bytes after it are given back to the decoder
 * (rx_fcgi_decoder_unread) and decoded again as body. END_REQUEST ends the
 * response; a full header buffer without the empty line, a bad line or a
 * bad version ends it with an error.
 *
 * Invariants:
 *   - the decoder agrees with a plain reference walk over the whole
 *     stream: every complete record's type, id, content (as one stream),
 *     END_REQUEST's appStatus and protocolStatus; padding is skipped;
 *     a bad version is an error exactly where the walk finds it;
 *   - rx_fcgi_decode: RX_AGAIN consumes everything; a CONTENT event is
 *     non-empty, lies inside the read, and *pos ends right after it;
 *     after an unread of n bytes the next event starts n bytes back;
 *   - the outcome does not depend on the cuts (header lines, the body as
 *     one stream, the end and the error equal those of one read);
 *   - rx_fcgi_parse_header_line: RX_OK gives a non-empty token name
 *     followed by ':', a value inside the line without surrounding blanks,
 *     CR, LF or NUL, and *pos right after an LF; RX_DONE is an empty line
 *     (LF or CRLF); RX_AGAIN means no LF in what is left; RX_AGAIN and
 *     RX_ERROR leave *pos alone;
 *   - with bit 6: rx_fcgi_framed_size is what rx_fcgi_frame writes, and
 *     the content decoded is the stream framed.
 */
#include "fuzz.h"
#include "http_fastcgi_codec.h"

static bool
is_token(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
           || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Parses the header lines in hbuf[*parsed, hlen); returns the last result. */
static rx_int_t
header_lines(const char *hbuf, size_t hlen, size_t *parsed, transcript_t *t)
{
    rx_str_t  name, value;
    rx_int_t  rc;
    size_t    old, i;

    for ( ;; ) {
        old = *parsed;
        name.data = value.data = NULL;
        rc = rx_fcgi_parse_header_line(hbuf, hlen, parsed, &name, &value);
        switch (rc) {
        case RX_OK:
            FUZZ_CHECK(*parsed > old && *parsed <= hlen
                       && hbuf[*parsed - 1] == '\n', "pos %zu -> %zu of %zu",
                       old, *parsed, hlen);
            FUZZ_CHECK(name.data == hbuf + old && name.len > 0
                       && name.len < *parsed - old
                       && name.data[name.len] == ':',
                       "name %s at %zu of line at %zu",
                       fuzz_show(name.data, name.len),
                       (size_t) (name.data - hbuf), old);
            for (i = 0; i < name.len; i++) {
                FUZZ_CHECK(is_token((unsigned char) name.data[i]),
                           "name %s", fuzz_show(name.data, name.len));
            }
            FUZZ_CHECK(value.data >= name.data + name.len + 1
                       && value.data + value.len <= hbuf + *parsed - 1,
                       "value %s outside its line",
                       fuzz_show(value.data, value.len));
            FUZZ_CHECK(value.len == 0
                       || (value.data[0] != ' ' && value.data[0] != '\t'
                           && value.data[value.len - 1] != ' '
                           && value.data[value.len - 1] != '\t'),
                       "value %s has blanks around",
                       fuzz_show(value.data, value.len));
            FUZZ_CHECK(memchr(value.data, '\r', value.len) == NULL
                       && memchr(value.data, '\n', value.len) == NULL
                       && memchr(value.data, '\0', value.len) == NULL,
                       "value %s holds CR, LF or NUL",
                       fuzz_show(value.data, value.len));
            append_tag(t, 'K', name.data, name.len);
            append_tag(t, 'V', value.data, value.len);
            continue;
        case RX_DONE:
            FUZZ_CHECK((*parsed == old + 1 && hbuf[old] == '\n')
                       || (*parsed == old + 2 && hbuf[old] == '\r'
                           && hbuf[old + 1] == '\n'),
                       "end of header %s",
                       fuzz_show(hbuf + old, *parsed - old));
            return rc;
        case RX_AGAIN:
            FUZZ_CHECK(*parsed == old
                       && memchr(hbuf + old, '\n', hlen - old) == NULL,
                       "RX_AGAIN with pos %zu -> %zu, an LF in %s", old,
                       *parsed, fuzz_show(hbuf + old, hlen - old));
            return rc;
        default:
            FUZZ_CHECK(rc == RX_ERROR && *parsed == old, "rc %ld pos %zu -> %zu",
                       (long) rc, old, *parsed);
            return rc;
        }
    }
}

typedef enum { ST_HEADER, ST_BODY, ST_END } phase_e;

/* One run over stream[0, len) in the reads cuts[] (the rest: one more).
 * The transcript t gets what the module would act on; rec gets every
 * record's content and END (for the reference walk). */
static void
run(const char *stream, size_t len, const size_t *cuts, size_t ncuts,
    size_t cap, transcript_t *t, transcript_t *rec)
{
    rx_fcgi_decoder_t  d;
    rx_fcgi_event_t    ev;
    char              *hbuf = malloc(cap), *piece;
    const char        *pos, *end, *expect = NULL;
    size_t             off = 0, n, hlen = 0, parsed = 0, take, rest, i = 0;
    rx_int_t           rc, hrc;
    phase_e            phase = ST_HEADER;
    const char        *error = NULL;
    bool               bad = false;
    transcript_t       body = { 0 };

    FUZZ_CHECK(hbuf != NULL, "no memory");
    rx_fcgi_decoder_init(&d);
    /* the module stops at the end or an error; the decoder goes on to the
     * end of the stream for the reference walk */
    while (off < len && !bad) {
        n = i < ncuts ? cuts[i] : len - off;
        i++;
        if (n > len - off) {
            n = len - off;
        }
        piece = fuzz_dup((const uint8_t *) stream + off, n);
        pos = piece;
        end = piece + n;
        expect = NULL;
        for ( ;; ) {
            const char *before = pos;
            bool        active = phase != ST_END && error == NULL;

            rc = rx_fcgi_decode(&d, &pos, end, &ev);
            FUZZ_CHECK(pos >= before && pos <= end, "pos moved from %zu to %zd",
                       (size_t) (before - piece), (ssize_t) (pos - piece));
            if (rc == RX_AGAIN) {
                FUZZ_CHECK(pos == end, "RX_AGAIN with %zu bytes left",
                           (size_t) (end - pos));
                break;
            }
            if (rc == RX_ERROR) {
                FUZZ_CHECK(d.error != NULL, "an error without a message");
                if (active) {
                    error = d.error;
                }
                bad = true;
                append_tag(rec, '!', &off, sizeof(off));
                break;
            }
            FUZZ_CHECK(rc == RX_OK, "rc %ld", (long) rc);
            if (ev.kind == RX_FCGI_EV_CONTENT) {
                FUZZ_CHECK(ev.len > 0 && ev.data >= before
                           && ev.data + ev.len == pos,
                           "content [%zd, +%zu) of the read [%zu, %zu)",
                           (ssize_t) (ev.data - piece), ev.len,
                           (size_t) (before - piece), n);
                FUZZ_CHECK(expect == NULL || ev.data == expect,
                           "after an unread the content starts at %zd, "
                           "not %zd", (ssize_t) (ev.data - piece),
                           (ssize_t) (expect - piece));
                FUZZ_CHECK(ev.type != RX_FCGI_END_REQUEST,
                           "END_REQUEST's body as content");
            } else {
                FUZZ_CHECK(ev.kind == RX_FCGI_EV_END && expect == NULL,
                           "event %d (unread pending: %d)", (int) ev.kind,
                           expect != NULL);
            }
            expect = NULL;

            if (!active) {
                /* only the reference walk's record */
            } else if (ev.kind == RX_FCGI_EV_CONTENT && phase == ST_HEADER
                && ev.type == RX_FCGI_STDOUT) {
                /* header_text() */
                take = rx_min(ev.len, cap - hlen);
                memcpy(hbuf + hlen, ev.data, take);
                hlen += take;
                hrc = header_lines(hbuf, hlen, &parsed, t);
                if (hrc == RX_DONE) {
                    rest = hlen - parsed + (ev.len - take);
                    FUZZ_CHECK(rest <= ev.len, "rest %zu of a %zu-byte "
                               "event", rest, ev.len);
                    hlen = parsed;
                    append_tag(t, 'H', NULL, 0);
                    append_tag(rec, 'c', ev.data, ev.len - rest);
                    rx_fcgi_decoder_unread(&d, rest);
                    pos -= rest;
                    expect = rest ? pos : NULL;
                    phase = ST_BODY;
                    continue;
                }
                if (hrc == RX_ERROR) {
                    error = "upstream sent invalid header";
                } else if (hlen == cap) {
                    error = "upstream sent too big header";
                }
            } else if (ev.kind == RX_FCGI_EV_CONTENT && phase == ST_BODY
                       && ev.type == RX_FCGI_STDOUT) {
                append(&body, ev.data, ev.len);
            } else if (ev.kind == RX_FCGI_EV_END
                       && ev.type == RX_FCGI_END_REQUEST) {
                if (phase == ST_HEADER) {
                    error = "upstream prematurely closed FastCGI stdout";
                }
                phase = ST_END;
                append_tag(t, 'E', &ev.app_status, sizeof(ev.app_status));
                append_tag(t, 'P', &ev.protocol_status,
                           sizeof(ev.protocol_status));
                {
                    /* keepalive needs nothing after the end */
                    size_t left = (size_t) (end - pos) + (len - off - n);
                    append_tag(t, 'l', &left, sizeof(left));
                }
            }
            if (ev.kind == RX_FCGI_EV_CONTENT) {
                append_tag(rec, 'c', ev.data, ev.len);
            } else {
                unsigned u[4] = { ev.type, ev.id, 0, 0 };
                size_t   cl = ev.content_len;

                if (ev.type == RX_FCGI_END_REQUEST && cl >= 5) {
                    u[2] = ev.app_status;
                    u[3] = ev.protocol_status;
                }
                append_tag(rec, 'e', u, sizeof(u));
                append_tag(rec, 'n', &cl, sizeof(cl));
            }
        }
        free(piece);
        off += n;
    }
    append_tag(t, 'B', body.data, body.len);
    if (error) {
        append_tag(t, '!', error, strlen(error));
    }
    free(body.data);
    free(hbuf);
}

/* The reference: every record of the stream, walked in one piece. */
static void
reference(const unsigned char *s, size_t len, transcript_t *rec)
{
    size_t o = 0, cl, pad, have;

    while (len - o >= 8) {
        if (s[o] != RX_FCGI_VERSION) {
            append_tag(rec, '!', NULL, 0);
            return;
        }
        cl = (size_t) s[o + 4] << 8 | s[o + 5];
        pad = s[o + 6];
        have = rx_min(cl, len - o - 8);
        if (s[o + 1] != RX_FCGI_END_REQUEST && have) {
            append_tag(rec, 'c', s + o + 8, have);
        }
        if (len - o - 8 < cl + pad) {
            return;
        }
        {
            unsigned u[4] = { s[o + 1], (unsigned) s[o + 2] << 8 | s[o + 3],
                              0, 0 };
            if (s[o + 1] == RX_FCGI_END_REQUEST && cl >= 5) {
                u[2] = (unsigned) s[o + 8] << 24 | (unsigned) s[o + 9] << 16
                       | (unsigned) s[o + 10] << 8 | s[o + 11];
                u[3] = s[o + 12];
            }
            append_tag(rec, 'e', u, sizeof(u));
            append_tag(rec, 'n', &cl, sizeof(cl));
        }
        o += 8 + cl + pad;
    }
}

/* Content records as a plain stream of 'c' entries (pieces merged), 'e',
 * 'n' kept, '!' reduced to its tag: comparable between runs. */
static void
normalize(const transcript_t *in, transcript_t *out, bool with_error_pos)
{
    size_t o = 0, n;
    char   tag;

    while (o < in->len) {
        tag = in->data[o];
        memcpy(&n, in->data + o + 1, sizeof(n));
        if (tag == 'c') {
            append(out, in->data + o + 1 + sizeof(n), n);
        } else {
            append_tag(out, tag, with_error_pos || tag != '!'
                       ? in->data + o + 1 + sizeof(n) : NULL,
                       with_error_pos || tag != '!' ? n : 0);
        }
        o += 1 + sizeof(n) + n;
    }
}

static bool
same(const transcript_t *a, const transcript_t *b)
{
    return a->len == b->len
           && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    transcript_t  t1 = { 0 }, t2 = { 0 }, r1 = { 0 }, r2 = { 0 },
                  ref = { 0 }, n1 = { 0 }, nr = { 0 }, dec = { 0 };
    size_t        cuts[7], ncuts, i, unit, len, cap, max = 0, framed, o;
    char         *stream, *p;
    bool          frame;

    if (size < 1) {
        return 0;
    }
    ncuts = data[0] & 7;
    unit = data[0] & 8 ? 16 : 1;
    cap = (size_t) 64 << ((data[0] >> 4) & 3);
    frame = data[0] & 0x40;
    if (size < 1 + ncuts + frame) {
        return 0;
    }
    for (i = 0; i < ncuts; i++) {
        cuts[i] = ((size_t) data[1 + i] + 1) * unit;
    }
    o = 1 + ncuts;
    if (frame) {
        max = (size_t) data[o++] + 1;
    }
    len = size - o;
    if (frame) {
        framed = rx_fcgi_framed_size(len, max);
        stream = malloc(framed + 2 * RX_FCGI_HEADER_LEN + 8);
        FUZZ_CHECK(stream != NULL, "no memory");
        p = rx_fcgi_frame(stream, RX_FCGI_STDOUT, 1, (const char *) data + o,
                          len, max);
        FUZZ_CHECK(p == stream + framed, "framed %zu bytes, said %zu",
                   (size_t) (p - stream), framed);
        rx_fcgi_write_header(p, RX_FCGI_STDOUT, 1, 0, 0);
        p += RX_FCGI_HEADER_LEN;
        rx_fcgi_write_header(p, RX_FCGI_END_REQUEST, 1, 8, 0);
        p += RX_FCGI_HEADER_LEN;
        memset(p, 0, 8);
        p += 8;
        framed = (size_t) (p - stream);
        p = fuzz_dup((const uint8_t *) stream, framed);
        free(stream);
        stream = p;
    } else {
        stream = fuzz_dup(data + o, len);
        framed = len;
    }

    run(stream, framed, cuts, ncuts, cap, &t1, &r1);
    reference((const unsigned char *) stream, framed, &ref);
    normalize(&r1, &n1, false);
    normalize(&ref, &nr, false);
    FUZZ_CHECK(same(&n1, &nr), "the decoder and the reference walk disagree "
               "(%zu vs %zu bytes)", n1.len, nr.len);
    if (frame) {
        /* the content of the records is the stream framed */
        size_t k = 0, n;
        while (k < r1.len) {
            memcpy(&n, r1.data + k + 1, sizeof(n));
            if (r1.data[k] == 'c') {
                append(&dec, r1.data + k + 1 + sizeof(n), n);
            }
            k += 1 + sizeof(n) + n;
        }
        FUZZ_CHECK(dec.len == len
                   && (len == 0 || memcmp(dec.data, data + o, len) == 0),
                   "framed %zu bytes, decoded %zu", len, dec.len);
    }
    if (ncuts) {
        run(stream, framed, NULL, 0, cap, &t2, &r2);
        FUZZ_CHECK(same(&t1, &t2), "the outcome depends on the cuts (%zu vs "
                   "%zu transcript bytes)", t1.len, t2.len);
    }
    free(t1.data); free(t2.data); free(r1.data); free(r2.data);
    free(ref.data); free(n1.data); free(nr.data); free(dec.data);
    free(stream);
    return 0;
}
