/*
 * fuzz_hpack.c: the HPACK decoder (http/http_v2_hpack.c, http_v2_huff.c)
 * over several blocks on one dynamic table, and the encoder on what it
 * decodes.
 *
 * Input: byte 0: the advertised table size in units of 32 (0..8160);
 * byte 1: max_field = (b + 1) * 8; then blocks, each one length byte n
 * and n bytes (the last block takes what is left). Every block is an
 * exactly sized heap copy, the scratch buffer exactly
 * rx_hpack_scratch_size(max_field) bytes, so ASan sees any overread.
 * Decoding stops at the first error, as the connection would.
 *
 * Invariants:
 *   - the result is OK, COMPRESSION_ERROR or FIELD_TOO_LONG;
 *   - every field the handler gets is readable (copied byte by byte), a
 *     string no longer than the table or 8/5 of max_field (or 64);
 *   - the table: size <= max_size <= limit, size is the sum of its
 *     entries' (name + value + 32), the ring holds the sum of their
 *     bytes, memory <= limit + limit / 32 entry slots, 0 bytes when empty;
 *   - every field without CR, LF, NUL and with a name, encoded by
 *     rx_hpack_encode_field within its bound, decodes (on a fresh decoder)
 *     to the name lower-cased and the same value, inserting nothing; its
 *     Huffman code round-trips.
 */
#include "fuzz.h"
#include "http_v2_hpack.h"

typedef struct {
    rx_hpack_dec_t  *d;
    size_t           fields;
    size_t           sum;        /* of every byte read: the reads happen */
} fuzz_ctx_t;

typedef struct {
    const u_char  *name, *value;
    size_t         namelen, valuelen;
    int            seen;
} fuzz_want_t;

static int
check_back(void *data, const u_char *name, size_t namelen,
    const u_char *value, size_t valuelen, rx_uint_t never)
{
    fuzz_want_t *w = data;
    size_t       i;

    FUZZ_CHECK(w->seen == 0, "the encoder's block holds more than one field");
    w->seen = 1;
    FUZZ_CHECK(namelen == w->namelen && valuelen == w->valuelen && !never,
               "lengths %zu/%zu back, %zu/%zu sent", namelen, valuelen,
               w->namelen, w->valuelen);
    for (i = 0; i < namelen; i++) {
        u_char c = w->name[i];
        FUZZ_CHECK(name[i] == ((c >= 'A' && c <= 'Z') ? (c | 0x20) : c),
                   "name %s back as %s", fuzz_show((const char *) w->name, namelen),
                   fuzz_show((const char *) name, namelen));
    }
    FUZZ_CHECK(memcmp(value, w->value, valuelen) == 0, "value %s back as %s",
               fuzz_show((const char *) w->value, valuelen),
               fuzz_show((const char *) value, valuelen));
    return 0;
}

/* The encoder and the Huffman code on a decoded field. */
static void
reencode(const u_char *name, size_t namelen, const u_char *value,
    size_t valuelen)
{
    static u_char  *scratch;
    rx_hpack_dec_t  d;
    fuzz_want_t     w = { name, value, namelen, valuelen, 0 };
    size_t          bound = rx_hpack_encode_bound(namelen, valuelen);
    u_char         *buf = malloc(bound), *p, *h;
    ssize_t         n;

    if (scratch == NULL) {
        scratch = malloc(rx_hpack_scratch_size(1 << 16));
    }
    p = rx_hpack_encode_field(buf, (const char *) name, namelen,
                              (const char *) value, valuelen);
    FUZZ_CHECK(p != NULL, "a clean field refused: %s",
               fuzz_show((const char *) name, namelen));
    FUZZ_CHECK((size_t) (p - buf) <= bound, "%zu bytes over the bound %zu",
               (size_t) (p - buf), bound);
    rx_hpack_dec_init(&d, 4096, 1 << 16, scratch);
    FUZZ_CHECK(rx_hpack_decode(&d, buf, (size_t) (p - buf), check_back, &w) == 0
               && w.seen && rx_hpack_dec_bytes(&d) == 0,
               "the encoder's block did not decode to one field");
    free(buf);

    h = malloc(valuelen * 4 + 8);
    p = rx_hpack_huff_encode(h, value, valuelen, 0);
    FUZZ_CHECK((size_t) (p - h) == rx_hpack_huff_len(value, valuelen, 0),
               "Huffman length");
    buf = malloc(valuelen + 1);
    n = rx_hpack_huff_decode(buf, h, (size_t) (p - h));
    FUZZ_CHECK(n == (ssize_t) valuelen && memcmp(buf, value, valuelen) == 0,
               "Huffman round trip of %s", fuzz_show((const char *) value, valuelen));
    free(buf);
    free(h);
}

static bool
clean(const u_char *s, size_t n)
{
    return memchr(s, '\r', n) == NULL && memchr(s, '\n', n) == NULL
           && memchr(s, '\0', n) == NULL;
}

static int
on_field(void *data, const u_char *name, size_t namelen, const u_char *value,
    size_t valuelen, rx_uint_t never)
{
    fuzz_ctx_t  *c = data;
    size_t       max = c->d->max_field * 8 / 5 + 64;   /* static names */
    size_t       i;

    if (c->d->limit > max) {
        max = c->d->limit;
    }
    FUZZ_CHECK(namelen <= max && valuelen <= max, "a string of %zu/%zu bytes",
               namelen, valuelen);
    for (i = 0; i < namelen; i++) {
        c->sum += name[i];
    }
    for (i = 0; i < valuelen; i++) {
        c->sum += value[i];
    }
    if (namelen && clean(name, namelen) && clean(value, valuelen)) {
        reencode(name, namelen, value, valuelen);
    }
    c->fields++;
    return 0;
}

static void
check_table(const rx_hpack_dec_t *d)
{
    size_t  size = 0, bytes = 0, i;

    FUZZ_CHECK(d->size <= d->max_size && d->max_size <= d->limit,
               "size %u, max %u, limit %u", d->size, d->max_size, d->limit);
    for (i = 0; i < d->ent_n; i++) {
        const rx_hpack_entry_t *e = &d->ents[(d->ent_first + i) % d->ent_cap];
        FUZZ_CHECK(e->off < d->ring_cap, "entry offset %u of %u", e->off,
                   d->ring_cap);
        size += e->namelen + e->valuelen + RX_HPACK_ENTRY_OVERHEAD;
        bytes += e->namelen + e->valuelen;
    }
    FUZZ_CHECK(size == d->size && bytes == d->ring_used && bytes <= d->ring_cap,
               "size %u counted %zu, ring %u counted %zu", d->size, size,
               d->ring_used, bytes);
    FUZZ_CHECK(rx_hpack_dec_bytes(d) <= d->limit + d->limit / 32
               * sizeof(rx_hpack_entry_t), "%zu bytes held, limit %u",
               rx_hpack_dec_bytes(d), d->limit);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rx_hpack_dec_t  d;
    fuzz_ctx_t      c = { &d, 0, 0 };
    size_t          max_field, n;
    u_char         *scratch, *block;
    int             rc = RX_HPACK_OK;

    if (size < 2) {
        return 0;
    }
    max_field = ((size_t) data[1] + 1) * 8;
    scratch = malloc(rx_hpack_scratch_size(max_field));
    rx_hpack_dec_init(&d, (size_t) data[0] * 32, max_field, scratch);
    data += 2;
    size -= 2;
    while (size && rc == RX_HPACK_OK) {
        n = data[0] < size - 1 ? data[0] : size - 1;
        block = (u_char *) fuzz_dup(data + 1, n);
        rc = rx_hpack_decode(&d, block, n, on_field, &c);
        free(block);
        FUZZ_CHECK(rc == RX_HPACK_OK || rc == RX_HPACK_COMPRESSION_ERROR
                   || rc == RX_HPACK_FIELD_TOO_LONG, "rc %d", rc);
        check_table(&d);
        data += 1 + n;
        size -= 1 + n;
    }
    rx_hpack_dec_free(&d);
    free(scratch);
    return 0;
}
