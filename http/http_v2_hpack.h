/*
 * http_v2_hpack.h: ringx's own HPACK codec (RFC 7541), no I/O and no
 * nghttp2: a decoder for the header blocks clients send (with its dynamic
 * table) and a stateless encoder for response headers. Not yet used: it
 * replaces libnghttp2's HPACK when the own HTTP/2 framing lands (#20).
 *
 * Decoder contract
 *   - rx_hpack_decode() takes one whole header block (the framing joins
 *     HEADERS and CONTINUATION fragments first, bounded) and calls the
 *     handler once per field, in order. Name and value are valid only
 *     during the call: they point into the block, the static table, the
 *     dynamic table or the scratch buffer. The handler copies what it
 *     keeps. Nothing is validated beyond HPACK: upper case, pseudo-header
 *     order and forbidden bytes in names/values are the framing's (RFC
 *     9113 8.2.1: a malformed request is a stream error, not this codec's).
 *   - The handler returns 0 to go on; any other value stops decoding and
 *     is returned as it is (give positive values, so that they differ
 *     from RX_HPACK_*). Stopping leaves the dynamic table out of step with
 *     the client's, so it means the connection ends: to refuse only a
 *     stream, return 0 and remember it (the block must be decoded to the
 *     end to keep the table in step).
 *   - Scratch: Huffman-coded strings are decoded into a buffer the CALLER
 *     gives to rx_hpack_dec_init(), of rx_hpack_scratch_size(max_field)
 *     bytes. Decoding is synchronous and the handler copies, so one buffer
 *     per worker serves every connection; the decoder itself holds no
 *     string memory but its dynamic table.
 *   - Limits: a string whose length on the wire exceeds max_field is
 *     RX_HPACK_FIELD_TOO_LONG (a decoded Huffman string may be up to 8/5
 *     of it, as nginx allows). nginx 1.22 (ngx_http_v2.c,
 *     ngx_http_v2_state_field_len) checks the same length against
 *     large_client_header_buffers' size, logs at info "client sent too
 *     large header field" (before 1.19.7: "client exceeded
 *     http2_max_field_size limit") and ends the CONNECTION with GOAWAY
 *     ENHANCE_YOUR_CALM (0xb); it also bounds name + value of all fields
 *     of a block by size * num ("client sent too large header", same
 *     GOAWAY), which the caller's handler counts.
 *   - Every malformed block is RX_HPACK_COMPRESSION_ERROR: a connection
 *     error, GOAWAY COMPRESSION_ERROR (RFC 9113 4.3).
 *   - Memory: nothing is allocated until the client first inserts into the
 *     dynamic table; then a byte ring of names and values and a ring of
 *     entries grow (malloc/realloc) to what the table holds, never beyond
 *     the table's size in string bytes. rx_hpack_dec_bytes() tells what is
 *     held, rx_hpack_dec_free() releases it (the struct may then be
 *     re-initialised or dropped).
 *
 * Encoder contract
 *   - Stateless, never indexes (our SETTINGS never invite a table), as
 *     nginx. Each call writes one field at p and returns the end, or NULL
 *     when the field must not be sent (nothing useful was written):
 *     a name or value holding CR, LF or NUL, an empty name, a status
 *     outside 100..999. Names are lower-cased while written.
 *   - p must have rx_hpack_encode_bound(namelen, valuelen) bytes.
 */
#ifndef RX_HTTP_V2_HPACK_H
#define RX_HTTP_V2_HPACK_H

#include "core.h"

#define RX_HPACK_OK                  0
#define RX_HPACK_COMPRESSION_ERROR  -1   /* malformed: GOAWAY COMPRESSION_ERROR */
#define RX_HPACK_FIELD_TOO_LONG     -2   /* a string beyond max_field: see above */
#define RX_HPACK_NO_MEMORY          -3   /* malloc failed: INTERNAL_ERROR */

/* The protocol's default SETTINGS_HEADER_TABLE_SIZE (RFC 9113 6.5.2). */
#define RX_HPACK_DEFAULT_TABLE_SIZE  4096

/* Bytes an entry counts for beyond its name and value (RFC 7541 4.1). */
#define RX_HPACK_ENTRY_OVERHEAD      32

typedef int (*rx_hpack_field_pt)(void *data, const u_char *name,
    size_t namelen, const u_char *value, size_t valuelen,
    rx_uint_t never_indexed);

/* One entry of the dynamic table: where its name starts in the byte ring
 * (its value follows, both may wrap) and the two lengths. */
typedef struct {
    uint32_t   off;
    uint32_t   namelen;
    uint32_t   valuelen;
} rx_hpack_entry_t;

/* A connection's decoder; zeroed by rx_hpack_dec_init(). */
typedef struct {
    u_char            *ring;       /* names and values, oldest first; NULL
                                      until the first insertion */
    rx_hpack_entry_t  *ents;       /* ring of entries, oldest first */
    u_char            *scratch;    /* the caller's, rx_hpack_scratch_size() */
    uint32_t           ring_cap;   /* bytes allocated for ring */
    uint32_t           ring_head;  /* offset of the oldest entry's first byte */
    uint32_t           ring_used;  /* bytes of names and values held */
    uint32_t           ent_cap;    /* entries allocated for ents */
    uint32_t           ent_first;  /* slot of the oldest entry */
    uint32_t           ent_n;      /* entries in the table */
    uint32_t           size;       /* the table's size as RFC 7541 4.1 counts */
    uint32_t           max_size;   /* from the latest size update */
    uint32_t           limit;      /* SETTINGS_HEADER_TABLE_SIZE we sent */
    uint32_t           max_field;  /* longest string on the wire */
    unsigned           need_update:1;  /* limit fell below max_size: the next
                                          block must start with an update */
} rx_hpack_dec_t;

/* The scratch buffer's size for a max_field: a name and a value, each up
 * to 8/5 of max_field once Huffman-decoded. */
size_t rx_hpack_scratch_size(size_t max_field);

/* limit: the SETTINGS_HEADER_TABLE_SIZE we advertise (4096 when we send
 * none); max_field: large_client_header_buffers' size; scratch: see above.
 * limit and max_field above 2^31 are cut to it. */
void rx_hpack_dec_init(rx_hpack_dec_t *d, size_t limit, size_t max_field,
    u_char *scratch);

/* A new SETTINGS_HEADER_TABLE_SIZE, once the client acknowledged it: a
 * smaller one than the table's size makes the client's next block start
 * with a size update (RFC 7541 4.2), else it is a COMPRESSION_ERROR. */
void rx_hpack_dec_set_limit(rx_hpack_dec_t *d, size_t limit);

int rx_hpack_decode(rx_hpack_dec_t *d, const u_char *block, size_t len,
    rx_hpack_field_pt handler, void *data);

size_t rx_hpack_dec_bytes(const rx_hpack_dec_t *d);
void rx_hpack_dec_free(rx_hpack_dec_t *d);

size_t rx_hpack_encode_bound(size_t namelen, size_t valuelen);
u_char *rx_hpack_encode_status(u_char *p, rx_uint_t status);
u_char *rx_hpack_encode_field(u_char *p, const char *name, size_t namelen,
    const char *value, size_t valuelen);

/*
 * The Huffman code (http_v2_huff.c). rx_hpack_huff_init() builds the
 * decoder's state table (12 KiB) once; the decoder calls it when first
 * needed, a master may call it before forking so that workers share it.
 * rx_hpack_huff_decode() writes at most len * 8 / 5 bytes at dst and
 * returns their number, or -1 for an invalid string (EOS inside, padding
 * over 7 bits or not all ones). rx_hpack_huff_len() is the encoded length
 * in bytes and rx_hpack_huff_encode() writes it, both of the string
 * lower-cased when lower.
 */
void rx_hpack_huff_init(void);
ssize_t rx_hpack_huff_decode(u_char *dst, const u_char *src, size_t len);
size_t rx_hpack_huff_len(const u_char *src, size_t len, rx_uint_t lower);
u_char *rx_hpack_huff_encode(u_char *dst, const u_char *src, size_t len,
    rx_uint_t lower);

#endif /* RX_HTTP_V2_HPACK_H */
