/*
 * charset.h: what the charset module's files share: the tables of the
 * charset_map blocks (charset_map.c) and the recoding of a response body
 * with one of them (charset_recode.c); charset.c owns the directives and
 * the header filter.
 */
#ifndef RX_CHARSET_H
#define RX_CHARSET_H

#include "http.h"

/* One charset_map block, read both ways. With utf8 (the second charset
 * is utf-8) utf[b] holds the UTF-8 bytes of the character of byte b
 * (ulen[b] of them, 0: none), and cps the sorted code points for the way
 * back; otherwise to[b] is the byte b becomes, back[b] the reverse. */
typedef struct {
    rx_str_t   src;             /* lower-cased names */
    rx_str_t   dst;
    bool       utf8;
    uint8_t    to[256];
    uint8_t    back[256];
    uint8_t    ulen[256];
    uint8_t    utf[256][4];
    uint32_t   cps[256];        /* code point << 8 | byte, sorted */
    rx_uint_t  ncps;
} rx_charset_map_t;

/* The directions a response is recoded in. */
typedef enum {
    RX_CHARSET_BYTES = 1,       /* single byte to single byte */
    RX_CHARSET_TO_UTF8,         /* a single-byte charset to utf-8 */
    RX_CHARSET_FROM_UTF8        /* utf-8 to a single-byte charset */
} rx_charset_mode_e;

typedef struct {
    rx_array_t  maps;           /* rx_charset_map_t */
} rx_http_charset_main_conf_t;

/* One response being recoded (r->charset_ctx). held: the first bytes of
 * a UTF-8 sequence the last buffer cut. Output buffers are ours, used
 * again once sent (pos == last). */
typedef struct {
    const rx_charset_map_t  *map;
    rx_charset_mode_e        mode;
    bool                     reverse;   /* BYTES: dst to src */
    unsigned char            held[4];
    size_t                   held_len;
    rx_array_t               bufs;      /* rx_buf_t * */
    rx_buf_t                *cur;
    rx_chain_t              *free;
    rx_chain_t              *out;
    rx_chain_t             **last_out;
} rx_charset_ctx_t;

/* charset_map src dst { byte value; ... } (the directive's setter). */
const char *rx_http_charset_map_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
/* The map between two charsets (either way round), or NULL; *reverse is
 * set when the response goes from the map's dst to its src. */
const rx_charset_map_t *rx_http_charset_find_map(
    const rx_http_charset_main_conf_t *mcf, const rx_str_t *from,
    const rx_str_t *to, bool *reverse);
/* Is a charset name utf-8 (any case)? */
bool rx_http_charset_is_utf8(const rx_str_t *name);

/* Recodes in (all of it: the producer's buffers are free on return) into
 * the context's buffers and passes them to next. */
rx_int_t rx_http_charset_recode(rx_http_request_t *r, rx_charset_ctx_t *ctx,
    rx_chain_t *in, rx_http_output_body_filter_pt next);

#endif /* RX_CHARSET_H */
