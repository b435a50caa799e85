/*
 * http_v2_hpack.c: the HPACK decoder of request header blocks with its
 * dynamic table, and the stateless encoder of response fields (RFC 7541;
 * contracts in http_v2_hpack.h, the Huffman code in http_v2_huff.c).
 *
 * Why an own codec: libnghttp2 keeps two HPACK rings per connection
 * whether or not the client ever indexes anything, and its inflater is a
 * good share of a small request's instructions (#20). Here a connection
 * whose client inserts nothing holds no table memory, and a whole block
 * is decoded in one call with no allocation per field.
 */
#include "http_v2_hpack.h"

typedef struct {
    const u_char  *name;
    size_t         namelen;
    const u_char  *value;
    size_t         valuelen;
} rx_hpack_static_t;

#define RX_HPACK_ST(n, v)                                                     \
    { (const u_char *) n, sizeof(n) - 1, (const u_char *) v, sizeof(v) - 1 }

#define RX_HPACK_STATIC_N  61

/* index 0 is unused: the RFC counts from 1 */
static const rx_hpack_static_t rx_hpack_static[RX_HPACK_STATIC_N + 1] = {
    RX_HPACK_ST("", ""),
    RX_HPACK_ST(":authority", ""),  /* 1 */
    RX_HPACK_ST(":method", "GET"),  /* 2 */
    RX_HPACK_ST(":method", "POST"),  /* 3 */
    RX_HPACK_ST(":path", "/"),  /* 4 */
    RX_HPACK_ST(":path", "/index.html"),  /* 5 */
    RX_HPACK_ST(":scheme", "http"),  /* 6 */
    RX_HPACK_ST(":scheme", "https"),  /* 7 */
    RX_HPACK_ST(":status", "200"),  /* 8 */
    RX_HPACK_ST(":status", "204"),  /* 9 */
    RX_HPACK_ST(":status", "206"),  /* 10 */
    RX_HPACK_ST(":status", "304"),  /* 11 */
    RX_HPACK_ST(":status", "400"),  /* 12 */
    RX_HPACK_ST(":status", "404"),  /* 13 */
    RX_HPACK_ST(":status", "500"),  /* 14 */
    RX_HPACK_ST("accept-charset", ""),  /* 15 */
    RX_HPACK_ST("accept-encoding", "gzip, deflate"),  /* 16 */
    RX_HPACK_ST("accept-language", ""),  /* 17 */
    RX_HPACK_ST("accept-ranges", ""),  /* 18 */
    RX_HPACK_ST("accept", ""),  /* 19 */
    RX_HPACK_ST("access-control-allow-origin", ""),  /* 20 */
    RX_HPACK_ST("age", ""),  /* 21 */
    RX_HPACK_ST("allow", ""),  /* 22 */
    RX_HPACK_ST("authorization", ""),  /* 23 */
    RX_HPACK_ST("cache-control", ""),  /* 24 */
    RX_HPACK_ST("content-disposition", ""),  /* 25 */
    RX_HPACK_ST("content-encoding", ""),  /* 26 */
    RX_HPACK_ST("content-language", ""),  /* 27 */
    RX_HPACK_ST("content-length", ""),  /* 28 */
    RX_HPACK_ST("content-location", ""),  /* 29 */
    RX_HPACK_ST("content-range", ""),  /* 30 */
    RX_HPACK_ST("content-type", ""),  /* 31 */
    RX_HPACK_ST("cookie", ""),  /* 32 */
    RX_HPACK_ST("date", ""),  /* 33 */
    RX_HPACK_ST("etag", ""),  /* 34 */
    RX_HPACK_ST("expect", ""),  /* 35 */
    RX_HPACK_ST("expires", ""),  /* 36 */
    RX_HPACK_ST("from", ""),  /* 37 */
    RX_HPACK_ST("host", ""),  /* 38 */
    RX_HPACK_ST("if-match", ""),  /* 39 */
    RX_HPACK_ST("if-modified-since", ""),  /* 40 */
    RX_HPACK_ST("if-none-match", ""),  /* 41 */
    RX_HPACK_ST("if-range", ""),  /* 42 */
    RX_HPACK_ST("if-unmodified-since", ""),  /* 43 */
    RX_HPACK_ST("last-modified", ""),  /* 44 */
    RX_HPACK_ST("link", ""),  /* 45 */
    RX_HPACK_ST("location", ""),  /* 46 */
    RX_HPACK_ST("max-forwards", ""),  /* 47 */
    RX_HPACK_ST("proxy-authenticate", ""),  /* 48 */
    RX_HPACK_ST("proxy-authorization", ""),  /* 49 */
    RX_HPACK_ST("range", ""),  /* 50 */
    RX_HPACK_ST("referer", ""),  /* 51 */
    RX_HPACK_ST("refresh", ""),  /* 52 */
    RX_HPACK_ST("retry-after", ""),  /* 53 */
    RX_HPACK_ST("server", ""),  /* 54 */
    RX_HPACK_ST("set-cookie", ""),  /* 55 */
    RX_HPACK_ST("strict-transport-security", ""),  /* 56 */
    RX_HPACK_ST("transfer-encoding", ""),  /* 57 */
    RX_HPACK_ST("user-agent", ""),  /* 58 */
    RX_HPACK_ST("vary", ""),  /* 59 */
    RX_HPACK_ST("via", ""),  /* 60 */
    RX_HPACK_ST("www-authenticate", ""),  /* 61 */
};

/* Integers and lengths beyond this are refused (RFC 7541 5.1 leaves the
 * bound to the implementation; nothing legitimate comes near it). */
#define RX_HPACK_INT_MAX   UINT32_MAX

/* ---- decoding primitives ---------------------------------------------- */

/* An integer with an n-bit prefix (RFC 7541 5.1) at *pp, which must be
 * before end. At most 5 continuation bytes (35 bits) and 2^32 - 1. */
static int
dec_int(const u_char **pp, const u_char *end, rx_uint_t n, uint32_t *out)
{
    const u_char  *p = *pp;
    uint64_t       v, mask = (1u << n) - 1;
    rx_uint_t      shift;

    v = *p++ & mask;
    if (v == mask) {
        for (shift = 0; ; shift += 7) {
            if (p == end || shift > 28) {
                return RX_HPACK_COMPRESSION_ERROR;
            }
            v += (uint64_t) (*p & 0x7f) << shift;
            if (!(*p++ & 0x80)) {
                break;
            }
        }
        if (v > RX_HPACK_INT_MAX) {
            return RX_HPACK_COMPRESSION_ERROR;
        }
    }
    *out = (uint32_t) v;
    *pp = p;
    return RX_HPACK_OK;
}

/* Half the scratch buffer: one string Huffman-decoded from max_field bytes
 * (5 bits is the shortest code, so 8/5 symbols per byte at most). */
static size_t
scratch_half(size_t max_field)
{
    return max_field * 8 / 5 + 8;
}

size_t
rx_hpack_scratch_size(size_t max_field)
{
    if (max_field > INT32_MAX) {
        max_field = INT32_MAX;
    }
    return 2 * scratch_half(max_field);
}

/* A string literal (RFC 7541 5.2) at *pp; a Huffman-coded one is decoded
 * into buf (a scratch half). */
static int
dec_str(rx_hpack_dec_t *d, const u_char **pp, const u_char *end,
    u_char *buf, const u_char **s, size_t *slen)
{
    const u_char  *p = *pp;
    uint32_t       len;
    ssize_t        n;
    rx_uint_t      huff;

    if (p == end) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    huff = *p & 0x80;
    if (dec_int(&p, end, 7, &len) != RX_HPACK_OK) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    /* before the bytes are there, as nginx checks it while streaming */
    if (len > d->max_field) {
        return RX_HPACK_FIELD_TOO_LONG;
    }
    if (len > (size_t) (end - p)) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    if (huff) {
        n = rx_hpack_huff_decode(buf, p, len);
        if (n < 0) {
            return RX_HPACK_COMPRESSION_ERROR;
        }
        *s = buf;
        *slen = (size_t) n;
    } else {
        *s = p;
        *slen = len;
    }
    *pp = p + len;
    return RX_HPACK_OK;
}

/* ---- the dynamic table -------------------------------------------------- */

void
rx_hpack_dec_init(rx_hpack_dec_t *d, size_t limit, size_t max_field,
    u_char *scratch)
{
    memset(d, 0, sizeof(*d));
    d->limit = (uint32_t) (limit > INT32_MAX ? INT32_MAX : limit);
    d->max_size = d->limit;
    d->max_field = (uint32_t) (max_field > INT32_MAX ? INT32_MAX : max_field);
    d->scratch = scratch;
}

size_t
rx_hpack_dec_bytes(const rx_hpack_dec_t *d)
{
    return (d->ring ? d->ring_cap : 0)
           + (d->ents ? d->ent_cap * sizeof(rx_hpack_entry_t) : 0);
}

void
rx_hpack_dec_free(rx_hpack_dec_t *d)
{
    free(d->ring);
    free(d->ents);
    d->ring = NULL;
    d->ents = NULL;
    d->ring_cap = d->ring_head = d->ring_used = 0;
    d->ent_cap = d->ent_first = d->ent_n = 0;
    d->size = 0;
}

static void
evict_oldest(rx_hpack_dec_t *d)
{
    rx_hpack_entry_t *e = &d->ents[d->ent_first];
    uint32_t          n = e->namelen + e->valuelen;

    d->ring_head += n;
    if (d->ring_head >= d->ring_cap) {
        d->ring_head -= d->ring_cap;
    }
    d->ring_used -= n;
    d->size -= n + RX_HPACK_ENTRY_OVERHEAD;
    if (++d->ent_first == d->ent_cap) {
        d->ent_first = 0;
    }
    if (--d->ent_n == 0) {
        d->ring_head = d->ent_first = 0;
    }
}

/* Evicts oldest first until the table fits max_size; an emptied table
 * gives its memory back (a client that sets the size to 0 holds none). */
static void
evict_to(rx_hpack_dec_t *d, size_t max)
{
    while (d->ent_n && d->size > max) {
        evict_oldest(d);
    }
    if (d->ent_n == 0) {
        rx_hpack_dec_free(d);
    }
}

/* Grows the byte ring to hold need more bytes, unwrapping what it holds:
 * doubling from 256, never beyond the table's size. */
static int
grow_ring(rx_hpack_dec_t *d, uint32_t need)
{
    uint32_t   cap = d->ring_cap ? d->ring_cap : 256, i, first;
    u_char    *ring;

    while (cap < d->ring_used + need) {
        cap *= 2;
    }
    if (cap > d->max_size) {
        cap = d->max_size;      /* >= used + need: the entry fits the table */
    }
    ring = malloc(cap);
    if (ring == NULL) {
        return RX_HPACK_NO_MEMORY;
    }
    first = d->ring_cap - d->ring_head;
    if (first > d->ring_used) {
        first = d->ring_used;
    }
    if (d->ring_used) {
        memcpy(ring, d->ring + d->ring_head, first);
        memcpy(ring + first, d->ring, d->ring_used - first);
    }
    for (i = 0; i < d->ent_n; i++) {
        rx_hpack_entry_t *e = &d->ents[(d->ent_first + i) % d->ent_cap];
        e->off = (e->off + d->ring_cap - d->ring_head) % d->ring_cap;
    }
    free(d->ring);
    d->ring = ring;
    d->ring_cap = cap;
    d->ring_head = 0;
    return RX_HPACK_OK;
}

/* Grows the ring of entries by one at least: doubling from 8, never
 * beyond what the table's size can hold (32 bytes an entry). */
static int
grow_ents(rx_hpack_dec_t *d)
{
    uint32_t          cap = d->ent_cap ? d->ent_cap * 2 : 8, i, max;
    rx_hpack_entry_t *ents;

    max = d->max_size / RX_HPACK_ENTRY_OVERHEAD;
    if (cap > max) {
        cap = max;              /* > ent_n: the new entry fits the table */
    }
    ents = malloc(cap * sizeof(rx_hpack_entry_t));
    if (ents == NULL) {
        return RX_HPACK_NO_MEMORY;
    }
    for (i = 0; i < d->ent_n; i++) {
        ents[i] = d->ents[(d->ent_first + i) % d->ent_cap];
    }
    free(d->ents);
    d->ents = ents;
    d->ent_cap = cap;
    d->ent_first = 0;
    return RX_HPACK_OK;
}

/* Copies len bytes into the ring at its end, wrapping. */
static void
ring_put(rx_hpack_dec_t *d, uint32_t at, const u_char *s, uint32_t len)
{
    uint32_t  first = d->ring_cap - at;

    if (len == 0) {
        return;
    }
    if (len <= first) {
        memcpy(d->ring + at, s, len);
    } else {
        memcpy(d->ring + at, s, first);
        memcpy(d->ring, s + first, len - first);
    }
}

/* RFC 7541 4.4: evict to make room, then add at the newest end; an entry
 * larger than the table empties it and is not added. The name must not
 * point into the ring (the caller copied a dynamic name to scratch). */
static int
insert(rx_hpack_dec_t *d, const u_char *name, size_t namelen,
    const u_char *value, size_t valuelen)
{
    size_t             esize = namelen + valuelen + RX_HPACK_ENTRY_OVERHEAD;
    uint32_t           n = (uint32_t) (namelen + valuelen), at;
    rx_hpack_entry_t  *e;

    if (esize > d->max_size) {
        evict_to(d, 0);
        return RX_HPACK_OK;
    }
    while (d->size + esize > d->max_size) {
        evict_oldest(d);
    }
    /* an entry of two empty strings still allocates: offsets need a ring */
    if ((d->ring == NULL || d->ring_used + n > d->ring_cap)
        && grow_ring(d, n) != RX_HPACK_OK)
    {
        return RX_HPACK_NO_MEMORY;
    }
    if (d->ent_n == d->ent_cap && grow_ents(d) != RX_HPACK_OK) {
        return RX_HPACK_NO_MEMORY;
    }
    at = d->ring_head + d->ring_used;
    if (at >= d->ring_cap) {
        at -= d->ring_cap;
    }
    ring_put(d, at, name, (uint32_t) namelen);
    at += (uint32_t) namelen;
    if (at >= d->ring_cap) {
        at -= d->ring_cap;
    }
    ring_put(d, at, value, (uint32_t) valuelen);
    e = &d->ents[(d->ent_first + d->ent_n) % d->ent_cap];
    e->off = d->ring_head + d->ring_used;
    if (e->off >= d->ring_cap) {
        e->off -= d->ring_cap;
    }
    e->namelen = (uint32_t) namelen;
    e->valuelen = (uint32_t) valuelen;
    d->ent_n++;
    d->ring_used += n;
    d->size += (uint32_t) esize;
    return RX_HPACK_OK;
}

/* A string of the ring: in place, or copied to buf when it wraps (or when
 * copy is asked, for a name about to be inserted). */
static int
ring_get(rx_hpack_dec_t *d, uint32_t off, uint32_t len, u_char *buf,
    rx_uint_t copy, const u_char **s)
{
    uint32_t  first = d->ring_cap - off;

    if (len <= first && !copy) {
        *s = d->ring + off;
        return RX_HPACK_OK;
    }
    if (len > scratch_half(d->max_field)) {
        return RX_HPACK_FIELD_TOO_LONG;     /* cannot be: max_field is fixed */
    }
    if (len <= first) {
        memcpy(buf, d->ring + off, len);
    } else {
        memcpy(buf, d->ring + off, first);
        memcpy(buf + first, d->ring, len - first);
    }
    *s = buf;
    return RX_HPACK_OK;
}

/* The field at index (1..61 static, then the dynamic table newest first);
 * value NULL: the name only. Names go to the first scratch half, values to
 * the second, when they must be copied. */
static int
lookup(rx_hpack_dec_t *d, uint32_t index, rx_uint_t copy_name,
    const u_char **name, size_t *namelen, const u_char **value,
    size_t *valuelen)
{
    rx_hpack_entry_t  *e;
    uint32_t           off;
    int                rc;

    if (index == 0) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    if (index <= RX_HPACK_STATIC_N) {
        *name = rx_hpack_static[index].name;
        *namelen = rx_hpack_static[index].namelen;
        if (value) {
            *value = rx_hpack_static[index].value;
            *valuelen = rx_hpack_static[index].valuelen;
        }
        return RX_HPACK_OK;
    }
    index -= RX_HPACK_STATIC_N;
    if (index > d->ent_n) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    e = &d->ents[(d->ent_first + d->ent_n - index) % d->ent_cap];
    rc = ring_get(d, e->off, e->namelen, d->scratch, copy_name, name);
    if (rc != RX_HPACK_OK) {
        return rc;
    }
    *namelen = e->namelen;
    if (value) {
        off = e->off + e->namelen;
        if (off >= d->ring_cap) {
            off -= d->ring_cap;
        }
        rc = ring_get(d, off, e->valuelen,
                      d->scratch + scratch_half(d->max_field), 0, value);
        *valuelen = e->valuelen;
    }
    return rc;
}

void
rx_hpack_dec_set_limit(rx_hpack_dec_t *d, size_t limit)
{
    d->limit = (uint32_t) (limit > INT32_MAX ? INT32_MAX : limit);
    if (d->limit < d->max_size) {
        d->need_update = 1;
    }
}

/* ---- decoding the representations (RFC 7541 6) ------------------------- */

/* 6.3: a size update, only before the block's first field, at most the
 * SETTINGS_HEADER_TABLE_SIZE we advertised. */
static int
dec_size_update(rx_hpack_dec_t *d, const u_char **pp, const u_char *end)
{
    uint32_t  size;

    if (dec_int(pp, end, 5, &size) != RX_HPACK_OK || size > d->limit) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    evict_to(d, size);
    d->max_size = size;
    d->need_update = 0;
    return RX_HPACK_OK;
}

/* 6.2: a literal field, its name indexed or literal; prefix: the index's
 * prefix bits (6 when indexing, else 4). */
static int
dec_literal(rx_hpack_dec_t *d, const u_char **pp, const u_char *end,
    rx_uint_t prefix, rx_hpack_field_pt handler, void *data)
{
    const u_char  *name, *value;
    size_t         namelen, valuelen;
    uint32_t       index;
    rx_uint_t      indexing = (prefix == 6), never = !indexing && (**pp & 0x10);
    int            rc;

    if (dec_int(pp, end, prefix, &index) != RX_HPACK_OK) {
        return RX_HPACK_COMPRESSION_ERROR;
    }
    rc = index ? lookup(d, index, indexing, &name, &namelen, NULL, NULL)
               : dec_str(d, pp, end, d->scratch, &name, &namelen);
    if (rc != RX_HPACK_OK) {
        return rc;
    }
    rc = dec_str(d, pp, end, d->scratch + scratch_half(d->max_field),
                 &value, &valuelen);
    if (rc != RX_HPACK_OK) {
        return rc;
    }
    if (indexing) {
        rc = insert(d, name, namelen, value, valuelen);
        if (rc != RX_HPACK_OK) {
            return rc;
        }
    }
    return handler(data, name, namelen, value, valuelen, never);
}

int
rx_hpack_decode(rx_hpack_dec_t *d, const u_char *block, size_t len,
    rx_hpack_field_pt handler, void *data)
{
    const u_char  *p = block, *end = block + len, *name, *value;
    size_t         namelen, valuelen;
    uint32_t       index;
    rx_uint_t      start = 1;
    int            rc;

    while (p < end) {
        if ((*p & 0xe0) == 0x20) {
            if (!start) {
                return RX_HPACK_COMPRESSION_ERROR;
            }
            rc = dec_size_update(d, &p, end);
            if (rc != RX_HPACK_OK) {
                return rc;
            }
            continue;
        }
        if (d->need_update) {
            return RX_HPACK_COMPRESSION_ERROR;  /* RFC 7541 4.2 */
        }
        start = 0;
        if (*p & 0x80) {                        /* 6.1: indexed */
            if (dec_int(&p, end, 7, &index) != RX_HPACK_OK) {
                return RX_HPACK_COMPRESSION_ERROR;
            }
            rc = lookup(d, index, 0, &name, &namelen, &value, &valuelen);
            if (rc == RX_HPACK_OK) {
                rc = handler(data, name, namelen, value, valuelen, 0);
            }
        } else {
            rc = dec_literal(d, &p, end, (*p & 0x40) ? 6 : 4, handler, data);
        }
        if (rc != RX_HPACK_OK) {
            return rc;
        }
    }
    /* a block of size updates only is valid; the pending update is due */
    return d->need_update ? RX_HPACK_COMPRESSION_ERROR : RX_HPACK_OK;
}

/* ---- the encoder ------------------------------------------------------- */

/* The static table's names for the encoder: 128 slots of open addressing
 * over (length, first and last byte), built at first use. */
static uint8_t  rx_hpack_name_slots[128];
static bool     rx_hpack_names_ready;

static rx_uint_t
name_hash(const u_char *name, size_t len)
{
    return (len * 31 + (name[0] | 0x20) * 7 + (name[len - 1] | 0x20)) & 127;
}

static bool
same_name(rx_uint_t a, rx_uint_t b)
{
    return rx_hpack_static[a].namelen == rx_hpack_static[b].namelen
           && memcmp(rx_hpack_static[a].name, rx_hpack_static[b].name,
                     rx_hpack_static[a].namelen) == 0;
}

static void
names_init(void)
{
    rx_uint_t  i, h;

    /* from the end, so that a repeated name (adjacent in the table) ends
     * up with its lowest index in its slot */
    for (i = RX_HPACK_STATIC_N; i >= 1; i--) {
        h = name_hash(rx_hpack_static[i].name, rx_hpack_static[i].namelen);
        while (rx_hpack_name_slots[h] && !same_name(rx_hpack_name_slots[h], i)) {
            h = (h + 1) & 127;
        }
        rx_hpack_name_slots[h] = (uint8_t) i;
    }
    rx_hpack_names_ready = true;
}

/* The lowest static index of a name (any case), or 0. */
static rx_uint_t
static_name(const u_char *name, size_t len)
{
    rx_uint_t  h, i;

    if (!rx_hpack_names_ready) {
        names_init();
    }
    for (h = name_hash(name, len); (i = rx_hpack_name_slots[h]) != 0;
         h = (h + 1) & 127)
    {
        if (rx_hpack_static[i].namelen == len
            && strncasecmp((const char *) rx_hpack_static[i].name,
                           (const char *) name, len) == 0)
        {
            return i;
        }
    }
    return 0;
}

static u_char *
enc_int(u_char *p, rx_uint_t first, rx_uint_t n, size_t v)
{
    size_t  mask = ((size_t) 1 << n) - 1;

    if (v < mask) {
        *p++ = (u_char) (first | v);
        return p;
    }
    *p++ = (u_char) (first | mask);
    for (v -= mask; v >= 128; v >>= 7) {
        *p++ = (u_char) (0x80 | (v & 0x7f));
    }
    *p++ = (u_char) v;
    return p;
}

/* A string literal, Huffman-coded when that is shorter (as nginx). */
static u_char *
enc_str(u_char *p, const u_char *s, size_t len, rx_uint_t lower)
{
    size_t  hlen = rx_hpack_huff_len(s, len, lower), i;

    if (hlen < len) {
        p = enc_int(p, 0x80, 7, hlen);
        return rx_hpack_huff_encode(p, s, len, lower);
    }
    p = enc_int(p, 0, 7, len);
    for (i = 0; i < len; i++) {
        *p++ = (lower && s[i] >= 'A' && s[i] <= 'Z') ? s[i] | 0x20 : s[i];
    }
    return p;
}

size_t
rx_hpack_encode_bound(size_t namelen, size_t valuelen)
{
    /* first byte + name index's next byte, two lengths of <= 10 bytes */
    return namelen + valuelen + 2 + 2 * 10;
}

u_char *
rx_hpack_encode_status(u_char *p, rx_uint_t status)
{
    /* the statuses of static entries 8..14 */
    static const uint16_t  indexed[] = { 200, 204, 206, 304, 400, 404, 500 };
    u_char                 digits[3];
    rx_uint_t              i;

    for (i = 0; i < rx_nelems(indexed); i++) {
        if (status == indexed[i]) {
            *p++ = (u_char) (0x80 | (8 + i));   /* 6.1: indexed */
            return p;
        }
    }
    if (status < 100 || status > 999) {
        return NULL;
    }
    digits[0] = (u_char) ('0' + status / 100);
    digits[1] = (u_char) ('0' + status / 10 % 10);
    digits[2] = (u_char) ('0' + status % 10);
    *p++ = 0x08;                /* 6.2.2: without indexing, name 8 :status */
    return enc_str(p, digits, 3, 0);
}

/* CR, LF and NUL would split or cut a field on HTTP/1 hops (RFC 9113
 * 8.2.1): such a field is never sent. */
static bool
bad_bytes(const u_char *s, size_t len)
{
    size_t  i;

    for (i = 0; i < len; i++) {
        if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0') {
            return true;
        }
    }
    return false;
}

/*
 * The last value encoded for each name of the static table, per worker:
 * most responses repeat their date (for a second), server, content type,
 * and a file's last-modified and etag, and Huffman-coding them was ~15 %
 * of a small HTTP/2 response's instructions. A value that is the same
 * bytes as the last one's is copied as it was encoded (no state crosses
 * connections: the encoding is the same for every one, never indexed).
 */
#define MEMO_MAX  64

typedef struct {
    uint8_t    vlen;
    uint8_t    elen;              /* 0: empty slot */
    u_char     raw[MEMO_MAX];
    u_char     enc[MEMO_MAX + 2]; /* length prefix and string */
} memo_t;

static memo_t  memo[RX_HPACK_STATIC_N + 1];

/* The memo's encoding of value v for the name of index, or NULL. */
static const memo_t *
memo_hit(rx_uint_t index, const u_char *v, size_t len)
{
    const memo_t *m = &memo[index];

    return index && m->elen && m->vlen == len && memcmp(m->raw, v, len) == 0
           ? m : NULL;
}

static u_char *
enc_value(u_char *p, rx_uint_t index, const u_char *v, size_t len)
{
    memo_t  *m = &memo[index];
    u_char  *start = p;

    if (index == 0 || len > MEMO_MAX) {
        return enc_str(p, v, len, 0);
    }
    p = enc_str(p, v, len, 0);
    m->vlen = (uint8_t) len;
    m->elen = (uint8_t) (p - start);
    memcpy(m->raw, v, len);
    memcpy(m->enc, start, m->elen);
    return p;
}

u_char *
rx_hpack_encode_field(u_char *p, const char *name, size_t namelen,
    const char *value, size_t valuelen)
{
    const u_char  *n = (const u_char *) name, *v = (const u_char *) value;
    const memo_t  *m;
    rx_uint_t      index;

    if (namelen == 0 || bad_bytes(n, namelen)) {
        return NULL;
    }
    index = static_name(n, namelen);
    m = memo_hit(index, v, valuelen);
    if (m) {                            /* its bytes were checked then */
        p = enc_int(p, 0x00, 4, index);
        memcpy(p, m->enc, m->elen);
        return p + m->elen;
    }
    if (bad_bytes(v, valuelen)) {
        return NULL;
    }
    if (index) {
        p = enc_int(p, 0x00, 4, index);         /* 6.2.2, indexed name */
    } else {
        *p++ = 0x00;                            /* 6.2.2, new name */
        p = enc_str(p, n, namelen, 1);
    }
    return enc_value(p, index, v, valuelen);
}
