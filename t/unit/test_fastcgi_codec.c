/*
 * test_fastcgi_codec.c: FastCGI records (http/http_fastcgi_codec.c):
 * record headers, name-value pairs with 1- and 4-byte lengths, framing
 * into records of at most N bytes with padding, the response decoder fed
 * a stream split at every byte boundary (and byte by byte), giving bytes
 * back with unread, a bad version, and CGI header lines.
 */
#include "core.h"
#include "tap.h"

#if (RX_HTTP_FASTCGI)
#include "http_fastcgi_codec.h"

static size_t
record(char *p, unsigned type, unsigned id, const char *content, size_t len,
    size_t padding)
{
    rx_fcgi_write_header(p, type, id, len, padding);
    memcpy(p + 8, content, len);
    memset(p + 8 + len, 'P', padding);      /* padding is never content */
    return 8 + len + padding;
}

static void
test_header(void)
{
    unsigned char h[8];

    rx_fcgi_write_header((char *) h, RX_FCGI_STDIN, 0x1234, 0xabcd, 3);
    ok(h[0] == 1 && h[1] == 5 && h[2] == 0x12 && h[3] == 0x34 && h[4] == 0xab
       && h[5] == 0xcd && h[6] == 3 && h[7] == 0, "record header bytes");
    is_int(rx_fcgi_padding(0), 0, "padding of 0");
    is_int(rx_fcgi_padding(1), 7, "padding of 1");
    is_int(rx_fcgi_padding(8), 0, "padding of 8");
    is_int(rx_fcgi_padding(13), 3, "padding of 13");
}

static void
test_pairs(void)
{
    static char    big[70000];
    unsigned char  buf[80000];
    char          *end;

    end = rx_fcgi_write_pair((char *) buf, "AB", 2, "xyz", 3);
    is_int(end - (char *) buf, 7, "short pair: 1-byte lengths");
    is_int(rx_fcgi_pair_size(2, 3), 7, "its size");
    ok(buf[0] == 2 && buf[1] == 3 && memcmp(buf + 2, "ABxyz", 5) == 0,
       "short pair bytes");

    memset(big, 'v', sizeof(big));
    end = rx_fcgi_write_pair((char *) buf, "N", 1, big, 127);
    is_int(end - (char *) buf, 1 + 1 + 1 + 127, "value of 127: 1-byte length");
    ok(buf[1] == 127, "127 as one byte");

    end = rx_fcgi_write_pair((char *) buf, "N", 1, big, 128);
    is_int(end - (char *) buf, 1 + 4 + 1 + 128, "value of 128: 4-byte length");
    ok(buf[1] == 0x80 && buf[2] == 0 && buf[3] == 0 && buf[4] == 128,
       "128 as 0x80000080");
    is_int(rx_fcgi_pair_size(1, 128), 134, "its size");

    end = rx_fcgi_write_pair((char *) buf, big, 300, big, 70000);
    is_int(end - (char *) buf, 4 + 4 + 300 + 70000, "name 300, value 70000");
    ok(buf[0] == 0x80 && buf[1] == 0 && buf[2] == 0x01 && buf[3] == 0x2c,
       "name length 300 big-endian with the top bit");
    ok(buf[4] == 0x80 && buf[5] == 0x01 && buf[6] == 0x11 && buf[7] == 0x70,
       "value length 70000 big-endian with the top bit");
    is_int(rx_fcgi_pair_size(300, 70000), 70308, "its size");
}

/* Frames len bytes, then decodes them: records and content come back. */
static void
test_frame(size_t len, size_t max, size_t nrecords)
{
    static char        in[200000], out[220000], back[200000];
    rx_fcgi_decoder_t  d;
    rx_fcgi_event_t    ev;
    const char        *pos = out, *end;
    size_t             got = 0, recs = 0, i;
    bool               aligned = true;

    for (i = 0; i < len; i++) {
        in[i] = (char) (i * 7 + 3);
    }
    end = rx_fcgi_frame(out, RX_FCGI_PARAMS, 1, in, len, max);
    is_int(end - out, (int64_t) rx_fcgi_framed_size(len, max),
           "frame %zu by %zu: the size it said", len, max);
    rx_fcgi_decoder_init(&d);
    while (rx_fcgi_decode(&d, &pos, end, &ev) == RX_OK) {
        if (ev.kind == RX_FCGI_EV_CONTENT) {
            memcpy(back + got, ev.data, ev.len);
            got += ev.len;
        } else {
            recs++;
            aligned = aligned && (ev.content_len <= max);
        }
    }
    ok(got == len && memcmp(in, back, len) == 0 && pos == end,
       "frame %zu by %zu: the content comes back", len, max);
    is_int(recs, nrecords, "frame %zu by %zu: %zu records", len, max, nrecords);
    ok(aligned && (end - out) % 8 == 0, "frame %zu by %zu: records within "
       "the limit, padded to 8", len, max);
}

/* A response: STDERR, STDOUT in two records (the header ends in the
 * second), an unknown type, a padded empty record, END_REQUEST. */
static size_t
response(char *p)
{
    char *start = p;

    p += record(p, RX_FCGI_STDERR, 1, "warn: x\n", 8, 0);
    p += record(p, RX_FCGI_STDOUT, 1, "Status: 404 Not Found\r\nSet-Co", 29, 3);
    p += record(p, 11, 1, "unknown!", 8, 5);
    p += record(p, RX_FCGI_STDOUT, 1, "okie: a=1\r\n\r\nbody!", 18, 6);
    p += record(p, RX_FCGI_STDERR, 1, "", 0, 0);
    p += record(p, RX_FCGI_STDOUT, 1, "", 0, 7);
    p += record(p, RX_FCGI_END_REQUEST, 1, "\x01\x02\x03\x04\x00\0\0\0", 8, 0);
    return (size_t) (p - start);
}

typedef struct {
    char    out[256];
    size_t  out_len;
    char    err[64];
    size_t  err_len;
    char    ends[32];          /* record types, in order, as letters */
    size_t  nends;
    uint32_t app_status;
    rx_int_t rc;
} collected_t;

static void
collect(rx_fcgi_decoder_t *d, const char *data, size_t len, collected_t *c)
{
    const char      *pos = data, *end = data + len;
    rx_fcgi_event_t  ev;
    rx_int_t         rc;

    while ((rc = rx_fcgi_decode(d, &pos, end, &ev)) == RX_OK) {
        if (ev.kind == RX_FCGI_EV_CONTENT) {
            if (ev.type == RX_FCGI_STDOUT) {
                memcpy(c->out + c->out_len, ev.data, ev.len);
                c->out_len += ev.len;
            } else if (ev.type == RX_FCGI_STDERR) {
                memcpy(c->err + c->err_len, ev.data, ev.len);
                c->err_len += ev.len;
            }
        } else {
            c->ends[c->nends++] = (char) ('0' + ev.type);
            if (ev.type == RX_FCGI_END_REQUEST) {
                c->app_status = ev.app_status;
            }
        }
    }
    if (rc != RX_AGAIN || pos != end) {
        c->rc = RX_ERROR;
    }
}

static bool
expected(collected_t *c)
{
    static const char out[] = "Status: 404 Not Found\r\nSet-Cookie: a=1\r\n\r\nbody!";

    c->ends[c->nends] = '\0';
    return c->rc == RX_OK && c->out_len == sizeof(out) - 1
           && memcmp(c->out, out, c->out_len) == 0 && c->err_len == 8
           && memcmp(c->err, "warn: x\n", 8) == 0
           && strcmp(c->ends, "76;6763") == 0 && c->app_status == 0x01020304;
}

static void
test_splits(void)
{
    char              stream[512];
    size_t            len = response(stream), i, bad = 0;
    rx_fcgi_decoder_t d;
    collected_t       c;

    memset(&c, 0, sizeof(c));
    rx_fcgi_decoder_init(&d);
    collect(&d, stream, len, &c);
    ok(expected(&c), "the response in one piece");

    for (i = 0; i <= len; i++) {
        memset(&c, 0, sizeof(c));
        rx_fcgi_decoder_init(&d);
        collect(&d, stream, i, &c);
        collect(&d, stream + i, len - i, &c);
        if (!expected(&c)) {
            bad++;
            diag("split at %zu differs", i);
        }
    }
    is_int(bad, 0, "split in two at each of %zu positions", len + 1);

    memset(&c, 0, sizeof(c));
    rx_fcgi_decoder_init(&d);
    for (i = 0; i < len; i++) {
        collect(&d, stream + i, 1, &c);
    }
    ok(expected(&c), "byte by byte");
}

static void
test_unread(void)
{
    char              stream[64];
    size_t            len = record(stream, RX_FCGI_STDOUT, 1, "head\nbody", 9, 7);
    const char       *pos = stream, *end = stream + len;
    rx_fcgi_decoder_t d;
    rx_fcgi_event_t   ev;

    rx_fcgi_decoder_init(&d);
    ok(rx_fcgi_decode(&d, &pos, end, &ev) == RX_OK && ev.len == 9,
       "the content in one event");
    rx_fcgi_decoder_unread(&d, 4);
    pos -= 4;
    ok(rx_fcgi_decode(&d, &pos, end, &ev) == RX_OK && ev.len == 4
       && memcmp(ev.data, "body", 4) == 0, "unread bytes come again");
    ok(rx_fcgi_decode(&d, &pos, end, &ev) == RX_OK
       && ev.kind == RX_FCGI_EV_END && ev.content_len == 9 && pos == end,
       "then the end of the record, padding skipped");
}

static void
test_bad_version(void)
{
    char              stream[16];
    const char       *pos = stream;
    rx_fcgi_decoder_t d;
    rx_fcgi_event_t   ev;

    record(stream, RX_FCGI_STDOUT, 1, "", 0, 0);
    stream[0] = 2;
    rx_fcgi_decoder_init(&d);
    is_int(rx_fcgi_decode(&d, &pos, stream + 8, &ev), RX_ERROR,
           "version 2 is refused");
    ok(d.error && strstr(d.error, "version"), "with a reason");
}

static void
test_header_lines(void)
{
    const char *text = "Status: 302 Found\r\nLocation:/x \r\nX-Empty:\n\r\nrest";
    size_t      pos = 0, len = strlen(text);
    rx_str_t    name, value;

    ok(rx_fcgi_parse_header_line(text, len, &pos, &name, &value) == RX_OK
       && name.len == 6 && memcmp(name.data, "Status", 6) == 0
       && value.len == 9 && memcmp(value.data, "302 Found", 9) == 0,
       "a CRLF line");
    ok(rx_fcgi_parse_header_line(text, len, &pos, &name, &value) == RX_OK
       && value.len == 2 && memcmp(value.data, "/x", 2) == 0,
       "no blank after the colon, a trailing blank dropped");
    ok(rx_fcgi_parse_header_line(text, len, &pos, &name, &value) == RX_OK
       && name.len == 7 && value.len == 0, "an LF line with an empty value");
    ok(rx_fcgi_parse_header_line(text, len, &pos, &name, &value) == RX_DONE
       && strcmp(text + pos, "rest") == 0, "the empty line ends the header");

    pos = 0;
    is_int(rx_fcgi_parse_header_line("Name: val", 9, &pos, &name, &value),
           RX_AGAIN, "an unfinished line");
    is_int(pos, 0, "leaves the position");
    pos = 0;
    is_int(rx_fcgi_parse_header_line("no colon\n", 9, &pos, &name, &value),
           RX_ERROR, "a line without a colon");
    pos = 0;
    is_int(rx_fcgi_parse_header_line("Bad Name: x\n", 12, &pos, &name, &value),
           RX_ERROR, "a blank in the name");
    pos = 0;
    is_int(rx_fcgi_parse_header_line(": x\n", 4, &pos, &name, &value),
           RX_ERROR, "an empty name");
}

int
main(void)
{
    test_header();
    test_pairs();
    test_frame(0, RX_FCGI_MAX_CONTENT, 0);
    test_frame(1, RX_FCGI_MAX_CONTENT, 1);
    test_frame(65535, RX_FCGI_MAX_CONTENT, 1);
    test_frame(65536, RX_FCGI_MAX_CONTENT, 2);
    test_frame(200000, RX_FCGI_STDIN_CONTENT, 7);
    test_splits();
    test_unread();
    test_bad_version();
    test_header_lines();
    return done();
}

#else

int
main(void)
{
    skip_all("built --without-http_fastcgi_module");
    return 0;
}

#endif
