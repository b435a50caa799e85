/*
 * test_hpack.c: ringx's HPACK codec (http/http_v2_hpack.c, http_v2_huff.c):
 * the examples of RFC 7541 Appendix C decoded with the dynamic table
 * checked after each block, the Huffman code over every byte, every
 * malformed case the decoder must refuse, size updates, the encoder's
 * output decoded back, and the memory the table holds.
 *
 * With arguments it is the helper of t/hpack_interop.t: "interop LIMIT
 * MAXFIELD" reads lines from stdin, "d HEX" decodes a block on one decoder
 * (prints "f xNAMEHEX xVALUEHEX NEVER" per field, then "rc N" and
 * "t SIZE"),
 * "e NAMEHEX VALUEHEX" encodes one field, "s N" a status, and prints
 * "b xHEX" (the block), or "b x NULL" when the encoder refused.
 */
#include "core.h"
#include "tap.h"
#include "http_v2_hpack.h"

static u_char  scratch[1 << 16];
static char    out[1 << 16];
static size_t  out_len;

static int
collect(void *data, const u_char *name, size_t namelen, const u_char *value,
    size_t valuelen, rx_uint_t never)
{
    out_len += (size_t) snprintf(out + out_len, sizeof(out) - out_len,
                                 "%s%.*s: %.*s\n", never ? "!" : "",
                                 (int) namelen, name, (int) valuelen, value);
    return data ? *(int *) data : 0;
}

static size_t
unhex(u_char *dst, const char *hex)
{
    size_t        n = 0;
    unsigned int  b;

    for (; hex[0] && hex[1]; hex += 2) {
        if (hex[0] == ' ') {
            hex--;
            continue;
        }
        sscanf(hex, "%2x", &b);
        dst[n++] = (u_char) b;
    }
    return n;
}

/* Decodes one block given in hex; the fields go to out. */
static int
dec_hex(rx_hpack_dec_t *d, const char *hex)
{
    static u_char  block[8192];
    size_t         n = unhex(block, hex);
    u_char        *copy = malloc(n ? n : 1);
    int            rc;

    memcpy(copy, block, n);     /* exactly sized: ASan sees an overread */
    out_len = 0;
    out[0] = '\0';
    rc = rx_hpack_decode(d, copy, n, collect, NULL);
    free(copy);
    return rc;
}

/* The dynamic table as RFC 7541 Appendix C prints it, newest first. */
static const char *
table(const rx_hpack_dec_t *d)
{
    static char  buf[8192];
    size_t       len = 0, k;
    uint32_t     i, off;

    for (i = 1; i <= d->ent_n; i++) {
        const rx_hpack_entry_t *e = &d->ents[(d->ent_first + d->ent_n - i)
                                             % d->ent_cap];
        len += (size_t) snprintf(buf + len, sizeof(buf) - len, "[%u] (s = %u) ",
                                 i, e->namelen + e->valuelen + 32);
        for (k = 0, off = e->off; k < e->namelen + e->valuelen; k++) {
            if (k == e->namelen) {
                buf[len++] = ':';
                buf[len++] = ' ';
            }
            buf[len++] = (char) d->ring[off];
            off = off + 1 == d->ring_cap ? 0 : off + 1;
        }
        buf[len++] = '\n';
    }
    snprintf(buf + len, sizeof(buf) - len, "size %u", d->size);
    return buf;
}

static void
test_c2(void)
{
    rx_hpack_dec_t  d;

    rx_hpack_dec_init(&d, 4096, 8192, scratch);
    is_int(dec_hex(&d, "400a637573746f6d2d6b65790d637573746f6d2d686561646572"),
           0, "C.2.1 decodes");
    is_str(out, "custom-key: custom-header\n", "C.2.1 field");
    is_str(table(&d), "[1] (s = 55) custom-key: custom-header\nsize 55",
           "C.2.1 table");
    rx_hpack_dec_free(&d);

    rx_hpack_dec_init(&d, 4096, 8192, scratch);
    is_int(dec_hex(&d, "040c2f73616d706c652f70617468"), 0, "C.2.2 decodes");
    is_str(out, ":path: /sample/path\n", "C.2.2 field");
    is_int(d.ent_n + rx_hpack_dec_bytes(&d), 0, "C.2.2 inserts nothing, holds 0 bytes");

    is_int(dec_hex(&d, "100870617373776f726406736563726574"), 0, "C.2.3 decodes");
    is_str(out, "!password: secret\n", "C.2.3 field is never-indexed");
    is_int(d.ent_n, 0, "C.2.3 inserts nothing");

    is_int(dec_hex(&d, "82"), 0, "C.2.4 decodes");
    is_str(out, ":method: GET\n", "C.2.4 field");
    is_int(rx_hpack_dec_bytes(&d), 0, "no insertion: 0 bytes held");
    rx_hpack_dec_free(&d);
}

static const char *c3_fields[] = {
    ":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\n",
    ":method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\n"
    "cache-control: no-cache\n",
    ":method: GET\n:scheme: https\n:path: /index.html\n"
    ":authority: www.example.com\ncustom-key: custom-value\n",
};

static const char *c3_tables[] = {
    "[1] (s = 57) :authority: www.example.com\nsize 57",
    "[1] (s = 53) cache-control: no-cache\n"
    "[2] (s = 57) :authority: www.example.com\nsize 110",
    "[1] (s = 54) custom-key: custom-value\n"
    "[2] (s = 53) cache-control: no-cache\n"
    "[3] (s = 57) :authority: www.example.com\nsize 164",
};

static const char *c5_fields[] = {
    ":status: 302\ncache-control: private\n"
    "date: Mon, 21 Oct 2013 20:13:21 GMT\nlocation: https://www.example.com\n",
    ":status: 307\ncache-control: private\n"
    "date: Mon, 21 Oct 2013 20:13:21 GMT\nlocation: https://www.example.com\n",
    ":status: 200\ncache-control: private\n"
    "date: Mon, 21 Oct 2013 20:13:22 GMT\nlocation: https://www.example.com\n"
    "content-encoding: gzip\n"
    "set-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1\n",
};

static const char *c5_tables[] = {
    "[1] (s = 63) location: https://www.example.com\n"
    "[2] (s = 65) date: Mon, 21 Oct 2013 20:13:21 GMT\n"
    "[3] (s = 52) cache-control: private\n"
    "[4] (s = 42) :status: 302\nsize 222",
    "[1] (s = 42) :status: 307\n"
    "[2] (s = 63) location: https://www.example.com\n"
    "[3] (s = 65) date: Mon, 21 Oct 2013 20:13:21 GMT\n"
    "[4] (s = 52) cache-control: private\nsize 222",
    "[1] (s = 98) set-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; "
    "version=1\n"
    "[2] (s = 52) content-encoding: gzip\n"
    "[3] (s = 65) date: Mon, 21 Oct 2013 20:13:22 GMT\nsize 215",
};

static void
test_sequence(const char *what, size_t limit, const char *const *blocks,
    const char *const *fields, const char *const *tables)
{
    rx_hpack_dec_t  d;
    int             i;

    rx_hpack_dec_init(&d, limit, 8192, scratch);
    for (i = 0; i < 3; i++) {
        is_int(dec_hex(&d, blocks[i]), 0, "%s.%d decodes", what, i + 1);
        is_str(out, fields[i], "%s.%d fields", what, i + 1);
        is_str(table(&d), tables[i], "%s.%d dynamic table", what, i + 1);
    }
    ok(rx_hpack_dec_bytes(&d) > 0, "%s: the table holds memory", what);
    rx_hpack_dec_free(&d);
    is_int(rx_hpack_dec_bytes(&d), 0, "%s: none after rx_hpack_dec_free", what);
}

static void
test_appendix_c(void)
{
    static const char *c3[] = {
        "828684410f7777772e6578616d706c652e636f6d",
        "828684be58086e6f2d6361636865",
        "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565",
    };
    static const char *c4[] = {
        "828684418cf1e3c2e5f23a6ba0ab90f4ff",
        "828684be5886a8eb10649cbf",
        "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
    };
    static const char *c5[] = {
        "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032"
        "303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e63"
        "6f6d",
        "4803333037c1c0bf",
        "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c0"
        "5a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157"
        "454f49553b206d61782d6167653d333630303b2076657273696f6e3d31",
    };
    static const char *c6[] = {
        "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1b"
        "ff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
        "4883640effc1c0bf",
        "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad"
        "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f95873160"
        "65c003ed4ee5b1063d5007",
    };

    test_c2();
    test_sequence("C.3", 4096, c3, c3_fields, c3_tables);
    test_sequence("C.4", 4096, c4, c3_fields, c3_tables);
    test_sequence("C.5", 256, c5, c5_fields, c5_tables);
    test_sequence("C.6", 256, c6, c5_fields, c5_tables);
}

static void
test_huffman(void)
{
    u_char   src[256], enc[1024], dec[2048];
    u_char  *e;
    ssize_t  n;
    int      i, bad = 0;

    for (i = 0; i < 256; i++) {
        src[i] = (u_char) i;
        e = rx_hpack_huff_encode(enc, src + i, 1, 0);
        n = rx_hpack_huff_decode(dec, enc, (size_t) (e - enc));
        bad += n != 1 || dec[0] != i
               || (size_t) (e - enc) != rx_hpack_huff_len(src + i, 1, 0);
    }
    is_int(bad, 0, "Huffman: each of the 256 bytes alone round-trips");
    e = rx_hpack_huff_encode(enc, src, 256, 0);
    is_int(e - enc, rx_hpack_huff_len(src, 256, 0), "Huffman: length as computed");
    n = rx_hpack_huff_decode(dec, enc, (size_t) (e - enc));
    ok(n == 256 && memcmp(dec, src, 256) == 0, "Huffman: all 256 bytes in one string");
    e = rx_hpack_huff_encode(enc, (const u_char *) "www.example.com", 15, 0);
    is_int(e - enc, 12, "Huffman: www.example.com is 12 bytes (C.4.1)");
    ok(memcmp(enc, "\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff", 12) == 0,
       "Huffman: www.example.com as C.4.1");
    e = rx_hpack_huff_encode(enc, (const u_char *) "Custom-KEY", 10, 1);
    n = rx_hpack_huff_decode(dec, enc, (size_t) (e - enc));
    ok(n == 10 && memcmp(dec, "custom-key", 10) == 0, "Huffman: lower-cased when asked");
}

typedef struct {
    const char  *hex;
    const char  *what;
} bad_case_t;

/* Each on a fresh decoder (limit 4096, max_field 8192), one entry inserted
 * first ("custom-key: custom-header", index 62). */
static const bad_case_t bad_cases[] = {
    { "80", "index 0" },
    { "bf", "index 63 beyond the table (62 is the last)" },
    { "ff80808080808000", "index with 6 continuation bytes" },
    { "ffffffffff0f", "index beyond 2^32" },
    { "ff818080807f", "index beyond 2^32 in 5 continuation bytes" },
    { "ff", "index cut after its prefix" },
    { "ff80", "index cut in its continuation" },
    { "4000", "literal with a name of length 0 but no value" },
    { "7f00", "literal name index 64 beyond the table" },
    { "40", "literal cut before its name" },
    { "40016101", "value longer than the block" },
    { "400561626364", "name longer than the block" },
    { "0001618400000000", "Huffman padding of zeros after six '0'" },
    { "00016184ffffffff", "Huffman value with EOS inside" },
    { "000161821fff", "Huffman padding of 11 bits" },
    { "0001618118", "Huffman padding that is not ones" },
    { "0001618100", "Huffman value cut inside a code" },
    { "000181610161", "Huffman name whose padding is not ones" },
    { "8234", "size update after a field" },
    { "3fe21f", "size update beyond the advertised 4096" },
    { "3fe11f3fe21f", "second size update beyond the limit" },
    { "3fffffffff0f", "size update beyond 2^32" },
    { "0f30016101", "literal name index 63 beyond the table" },
    { "1f30016101", "never-indexed name index 63 beyond the table" },
};

static void
test_malformed(void)
{
    rx_hpack_dec_t  d;
    size_t          i;
    int             rc;

    for (i = 0; i < rx_nelems(bad_cases); i++) {
        rx_hpack_dec_init(&d, 4096, 8192, scratch);
        rc = dec_hex(&d, "400a637573746f6d2d6b65790d637573746f6d2d686561646572");
        rc |= dec_hex(&d, bad_cases[i].hex) != RX_HPACK_COMPRESSION_ERROR;
        is_int(rc, 0, "refused: %s (%s)", bad_cases[i].what, bad_cases[i].hex);
        rx_hpack_dec_free(&d);
    }

    rx_hpack_dec_init(&d, 4096, 8192, scratch);
    is_int(dec_hex(&d, "000161811f"), 0, "Huffman 'a' with 3 bits of padding");
    is_str(out, "a: a\n", "... decodes as a");
    is_int(dec_hex(&d, "00016180"), 0, "an empty Huffman string");
    is_str(out, "a: \n", "... is empty");
    is_int(dec_hex(&d, "be"), -1, "index 62 on an empty table");
    is_int(dec_hex(&d, "bd"), 0, "index 61, the last static entry");
    is_str(out, "www-authenticate: \n", "... is www-authenticate");
    is_int(dec_hex(&d, ""), 0, "an empty block");
    rx_hpack_dec_free(&d);
}

static void
test_size_updates(void)
{
    rx_hpack_dec_t  d;
    int             stop = 7;

    rx_hpack_dec_init(&d, 4096, 8192, scratch);
    is_int(dec_hex(&d, "3fe11f82"), 0, "size update to exactly 4096, then a field");
    is_int(dec_hex(&d, "203fe11f3f2082"), 0, "three size updates at the start");
    is_int(d.max_size, 32 + 31, "the latest one counts");
    is_int(dec_hex(&d, "400a637573746f6d2d6b65790d637573746f6d2d686561646572"),
           0, "an entry of 55 bytes in a table of 63");
    is_int(d.ent_n, 1, "... is inserted");
    is_int(dec_hex(&d, "3f1582"), 0, "size update to 52");
    is_int(d.ent_n + d.size + rx_hpack_dec_bytes(&d), 0,
           "... evicts it and frees the table");
    is_int(dec_hex(&d, "3fe11f400a637573746f6d2d6b65790d637573746f6d2d686561646572"),
           0, "size 4096 again, insert");
    is_int(dec_hex(&d, "20be"), RX_HPACK_COMPRESSION_ERROR,
           "size update to 0 evicts: index 62 is gone");
    is_int(rx_hpack_dec_bytes(&d), 0, "... and 0 bytes are held");

    /* a smaller SETTINGS_HEADER_TABLE_SIZE, acknowledged: RFC 7541 4.2 */
    dec_hex(&d, "3fe11f");
    rx_hpack_dec_set_limit(&d, 2048);
    is_int(dec_hex(&d, "82"), RX_HPACK_COMPRESSION_ERROR,
           "after a smaller limit, a block without a size update");
    is_int(dec_hex(&d, "3fe20f82"), RX_HPACK_COMPRESSION_ERROR,
           "after a smaller limit, an update beyond it (2049)");
    is_int(dec_hex(&d, "3fe10f82"), 0, "after a smaller limit, an update to it");
    is_int(dec_hex(&d, "82"), 0, "then blocks need none");

    /* the handler's answer and the field limit */
    out_len = 0;
    is_int(rx_hpack_decode(&d, (const u_char *) "\x82\x84", 2, collect, &stop), 7,
           "a handler's nonzero answer stops decoding and is returned");
    is_str(out, ":method: GET\n", "... after the first field");
    rx_hpack_dec_free(&d);

    rx_hpack_dec_init(&d, 4096, 16, scratch);
    is_int(dec_hex(&d, "0001611061616161616161616161616161616161"), 0,
           "a value of 16 bytes with max_field 16");
    is_int(dec_hex(&d, "000161116161616161616161616161616161616161"),
           RX_HPACK_FIELD_TOO_LONG, "a value of 17 bytes: FIELD_TOO_LONG");
    is_int(dec_hex(&d, "4011616161616161616161616161616161616161610161"),
           RX_HPACK_FIELD_TOO_LONG, "a name of 17 bytes: FIELD_TOO_LONG");
    is_int(dec_hex(&d, "0001619018c6318c6318c6318c6318c6318c631f"),
           0, "a Huffman value of 16 bytes on the wire, 25 decoded");
    is_int(out_len, strlen("a: \n") + 25, "... all 25 given");
    rx_hpack_dec_free(&d);
}

typedef struct {
    const char  *name, *value;
    const char  *expect;        /* decoded back */
} enc_case_t;

static void
test_encoder(void)
{
    static const enc_case_t cases[] = {
        { "Content-Type", "text/html; charset=utf-8",
          "content-type: text/html; charset=utf-8\n" },
        { "X-Custom-Header", "Some Value", "x-custom-header: Some Value\n" },
        { "server", "ringx", "server: ringx\n" },
        { "etag", "", "etag: \n" },
        { "x-bin", "\x80\xff\x01\x7f~", "x-bin: \x80\xff\x01\x7f~\n" },
        { "SET-COOKIE", "a=b; Path=/", "set-cookie: a=b; Path=/\n" },
        { "x", "y", "x: y\n" },
    };
    static u_char   buf[4096];
    char            longv[301];
    rx_hpack_dec_t  d;
    u_char         *p;
    size_t          i, bad = 0;

    is_int(rx_hpack_encode_status(buf, 200) - buf, 1, ":status 200 is one byte");
    is_int(buf[0], 0x88, "... indexed 8");
    p = rx_hpack_encode_status(buf, 404);
    ok(p - buf == 1 && buf[0] == 0x8d, ":status 404 is indexed 13");
    p = rx_hpack_encode_status(buf, 302);
    ok(p - buf == 4 && memcmp(buf, "\x08\x82\x64\x02", 4) == 0,
       ":status 302: literal, name index 8, Huffman 6402 (as C.6.1)");
    ok(rx_hpack_encode_status(buf, 99) == NULL
       && rx_hpack_encode_status(buf, 1000) == NULL, "status 99 and 1000 refused");

    rx_hpack_dec_init(&d, 4096, 8192, scratch);
    for (i = 0; i < rx_nelems(cases); i++) {
        p = rx_hpack_encode_field(buf, cases[i].name, strlen(cases[i].name),
                                  cases[i].value, strlen(cases[i].value));
        bad += (size_t) (p - buf) > rx_hpack_encode_bound(strlen(cases[i].name),
                                                         strlen(cases[i].value));
        out_len = 0;
        rx_hpack_decode(&d, buf, (size_t) (p - buf), collect, NULL);
        is_str(out, cases[i].expect, "encoded, decoded: %s", cases[i].name);
    }
    is_int(bad, 0, "every field within rx_hpack_encode_bound");
    p = rx_hpack_encode_field(buf, "content-length", 14, "5", 1);
    ok(p - buf == 4 && memcmp(buf, "\x0f\x0d\x01\x35", 4) == 0,
       "content-length: static name 28 as 0f 0d, value raw (Huffman not shorter)");
    memset(longv, 'x', 300);
    longv[300] = '\0';
    p = rx_hpack_encode_field(buf, "x-long", 6, longv, 300);
    out_len = 0;
    rx_hpack_decode(&d, buf, (size_t) (p - buf), collect, NULL);
    ok(out_len == 8 + 300 + 1 && memcmp(out + 8, longv, 300) == 0,
       "a 300-byte value (multi-byte length) round-trips");
    p = rx_hpack_encode_status(buf, 599);
    out_len = 0;
    rx_hpack_decode(&d, buf, (size_t) (p - buf), collect, NULL);
    is_str(out, ":status: 599\n", ":status 599 round-trips");
    is_int(rx_hpack_dec_bytes(&d), 0, "the encoder's output inserts nothing");
    rx_hpack_dec_free(&d);

    ok(rx_hpack_encode_field(buf, "x", 1, "a\r\nb", 4) == NULL, "CRLF in a value refused");
    ok(rx_hpack_encode_field(buf, "x", 1, "a\nb", 3) == NULL, "LF in a value refused");
    ok(rx_hpack_encode_field(buf, "x", 1, "a\0b", 3) == NULL, "NUL in a value refused");
    ok(rx_hpack_encode_field(buf, "x\r", 2, "a", 1) == NULL, "CR in a name refused");
    ok(rx_hpack_encode_field(buf, "", 0, "a", 1) == NULL, "an empty name refused");
}

/* 1000 insertions of varied sizes through a table of 4096: the newest
 * entries read back (across the ring's wraps), the size never beyond the
 * table, the memory never beyond the table plus its entry slots. */
static void
test_memory(void)
{
    static u_char   block[1024];
    static char     want[1024];
    rx_hpack_dec_t  d;
    size_t          n, vlen, max_bytes = 0, i;
    int             bad = 0, badsize = 0;

    rx_hpack_dec_init(&d, 4096, 8192, scratch);
    is_int(rx_hpack_dec_bytes(&d), 0, "a new decoder holds 0 bytes");
    for (i = 0; i < 1000; i++) {
        vlen = (i * 37) % 250;     /* lengths of 1 or 2 bytes */
        n = 0;
        block[n++] = 0x40;
        block[n++] = 6;
        n += (size_t) sprintf((char *) block + n, "x-%04zu", i);
        if (vlen < 127) {
            block[n++] = (u_char) vlen;
        } else {
            block[n++] = 0x7f;
            block[n++] = (u_char) (vlen - 127);
        }
        memset(block + n, 'a' + (int) (i % 26), vlen);
        n += vlen;
        block[n++] = 0xbe;      /* then index 62: the entry just inserted */
        if (i > 0) {
            block[n++] = 0xbf;  /* and 63, the one before (still there) */
        }
        out_len = 0;
        if (rx_hpack_decode(&d, block, n, collect, NULL) != 0) {
            bad++;
            continue;
        }
        n = (size_t) snprintf(want, sizeof(want), "x-%04zu: %.*s\n", i,
                              (int) vlen, (char *) block + 2 + 6
                              + (vlen < 127 ? 1 : 2));
        bad += out_len < 2 * n || memcmp(out, want, n) != 0
               || memcmp(out + n, want, n) != 0;
        badsize += d.size > 4096;
        if (rx_hpack_dec_bytes(&d) > max_bytes) {
            max_bytes = rx_hpack_dec_bytes(&d);
        }
    }
    is_int(bad, 0, "1000 insertions: each read back by index, across wraps");
    is_int(badsize, 0, "the table's size never beyond 4096");
    ok(max_bytes <= 4096 + 4096 / 32 * sizeof(rx_hpack_entry_t),
       "memory held at most the table's size + its entry slots (%zu bytes)",
       max_bytes);
    diag("1000 insertions: at most %zu bytes held, %u entries at the end",
         max_bytes, d.ent_n);
    dec_hex(&d, "20");
    is_int(rx_hpack_dec_bytes(&d), 0, "size update to 0: 0 bytes held");
    rx_hpack_dec_free(&d);
}

/* ---- the helper of t/hpack_interop.t ------------------------------------ */

static int
print_field(void *data, const u_char *name, size_t namelen,
    const u_char *value, size_t valuelen, rx_uint_t never)
{
    size_t  i;

    printf("f x");
    for (i = 0; i < namelen; i++) {
        printf("%02x", name[i]);
    }
    printf(" x");
    for (i = 0; i < valuelen; i++) {
        printf("%02x", value[i]);
    }
    printf(" %u\n", (unsigned) never);
    return 0;
}

static int
interop(size_t limit, size_t max_field)
{
    static char     line[1 << 17];
    static u_char   a[1 << 16], b[1 << 16], enc[1 << 17];
    rx_hpack_dec_t  d;
    u_char         *p;
    size_t          an, bn, i;
    char           *sp;

    if (rx_hpack_scratch_size(max_field) > sizeof(scratch)) {
        fprintf(stderr, "max_field %zu: scratch too small\n", max_field);
        return 1;
    }
    rx_hpack_dec_init(&d, limit, max_field, scratch);
    while (fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == 'd') {
            an = unhex(a, line + 2);
            i = (size_t) rx_hpack_decode(&d, a, an, print_field, NULL);
            printf("rc %d\nt %u\n", (int) i, d.size);
        } else if (line[0] == 'e' || line[0] == 's') {
            sp = strchr(line + 2, ' ');
            if (sp) {
                *sp++ = '\0';
            }
            an = unhex(a, line + 2);
            bn = sp ? unhex(b, sp) : 0;
            p = line[0] == 's'
                ? rx_hpack_encode_status(enc, (rx_uint_t) atoi(line + 2))
                : rx_hpack_encode_field(enc, (char *) a, an, (char *) b, bn);
            printf("b x");
            for (i = 0; p && enc + i < p; i++) {
                printf("%02x", enc[i]);
            }
            printf("%s\n", p ? "" : " NULL");
        }
        fflush(stdout);
    }
    rx_hpack_dec_free(&d);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "interop") == 0) {
        return interop((size_t) atol(argv[2]), (size_t) atol(argv[3]));
    }
    rx_hpack_huff_init();
    test_appendix_c();
    test_huffman();
    test_malformed();
    test_size_updates();
    test_encoder();
    test_memory();
    return done();
}
