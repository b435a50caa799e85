/*
 * http_fastcgi_codec.h: FastCGI 1.0 records without I/O: record headers,
 * name-value pairs, framing a byte stream into records, a decoder that
 * takes records split anywhere across reads, and the CGI response header
 * line parser. Pure functions over caller memory, so that the unit test
 * and a fuzz target can drive them alone; modules/fastcgi.c uses them.
 */
#ifndef RX_HTTP_FASTCGI_CODEC_H
#define RX_HTTP_FASTCGI_CODEC_H

#include "core.h"

#define RX_FCGI_VERSION            1
#define RX_FCGI_HEADER_LEN         8

/* record types */
#define RX_FCGI_BEGIN_REQUEST      1
#define RX_FCGI_ABORT_REQUEST      2
#define RX_FCGI_END_REQUEST        3
#define RX_FCGI_PARAMS             4
#define RX_FCGI_STDIN              5
#define RX_FCGI_STDOUT             6
#define RX_FCGI_STDERR             7
#define RX_FCGI_DATA               8

#define RX_FCGI_RESPONDER          1   /* BEGIN_REQUEST role */
#define RX_FCGI_KEEP_CONN          1   /* BEGIN_REQUEST flag */

#define RX_FCGI_MAX_CONTENT        65535
#define RX_FCGI_STDIN_CONTENT      32768   /* what ringx puts in one record */

/* The 8 bytes of a record header; content_len <= 65535, padding < 256. */
void rx_fcgi_write_header(char *p, unsigned type, unsigned id,
    size_t content_len, size_t padding);
/* Padding that brings content_len to a multiple of 8. */
#define rx_fcgi_padding(content_len)  ((8 - ((content_len) & 7)) & 7)

/* A name-value pair: lengths below 128 take 1 byte, others 4 (top bit
 * set). rx_fcgi_pair_size tells how many bytes rx_fcgi_write_pair writes;
 * the latter returns the end of what it wrote. */
size_t rx_fcgi_pair_size(size_t name_len, size_t value_len);
char *rx_fcgi_write_pair(char *p, const char *name, size_t name_len,
    const char *value, size_t value_len);

/* A stream of len bytes as records of `type` with at most max content
 * bytes each, padded to 8 (len 0: nothing; the empty record that ends a
 * stream is the caller's). rx_fcgi_framed_size is the size of the result. */
size_t rx_fcgi_framed_size(size_t len, size_t max);
char *rx_fcgi_frame(char *p, unsigned type, unsigned id, const char *data,
    size_t len, size_t max);

/* The decoder of the response's records. Feed it bytes in any pieces; it
 * reports one event per call. */
typedef enum {
    RX_FCGI_ST_HEADER = 0,
    RX_FCGI_ST_CONTENT,
    RX_FCGI_ST_PADDING
} rx_fcgi_state_e;

typedef struct {
    rx_fcgi_state_e  state;
    unsigned char    header[RX_FCGI_HEADER_LEN];
    size_t           header_got;
    unsigned         type;           /* of the current record */
    unsigned         id;
    size_t           content_len;
    size_t           content_left;
    size_t           padding_left;
    unsigned char    end_body[8];    /* END_REQUEST's body, as it arrives */
    size_t           end_got;
    const char      *error;          /* why RX_ERROR */
} rx_fcgi_decoder_t;

typedef enum {
    RX_FCGI_EV_CONTENT = 1,  /* data/len: a piece of the record's content */
    RX_FCGI_EV_END           /* the record is complete, padding included */
} rx_fcgi_event_e;

typedef struct {
    rx_fcgi_event_e  kind;
    unsigned         type;
    unsigned         id;
    const char      *data;           /* CONTENT: within the input */
    size_t           len;
    size_t           content_len;    /* END: the record's content length */
    uint32_t         app_status;     /* END of END_REQUEST */
    unsigned         protocol_status;
} rx_fcgi_event_t;

void rx_fcgi_decoder_init(rx_fcgi_decoder_t *d);
/*
 * Consumes bytes from [*pos, end) up to the next event. Returns RX_OK with
 * *ev filled and *pos advanced past what the event covers; RX_AGAIN when
 * every byte was consumed and no event is complete; RX_ERROR (d->error)
 * for a record of another protocol version.
 */
rx_int_t rx_fcgi_decode(rx_fcgi_decoder_t *d, const char **pos,
    const char *end, rx_fcgi_event_t *ev);
/* Gives back the last n bytes of the CONTENT event just returned: they
 * will be reported again by the next call (given the same input). */
void rx_fcgi_decoder_unread(rx_fcgi_decoder_t *d, size_t n);

/*
 * One line of a CGI response header in buf[*pos, len): "Name: value"
 * ending in LF or CRLF. Returns RX_OK (name and value set, value without
 * surrounding blanks, *pos after the line), RX_DONE (the empty line that
 * ends the header, *pos after it), RX_AGAIN (no complete line yet, *pos
 * unchanged) or RX_ERROR (not a header line).
 */
rx_int_t rx_fcgi_parse_header_line(const char *buf, size_t len, size_t *pos,
    rx_str_t *name, rx_str_t *value);

#endif /* RX_HTTP_FASTCGI_CODEC_H */
