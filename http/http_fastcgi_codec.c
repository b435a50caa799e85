/*
 * http_fastcgi_codec.c: FastCGI records (see http_fastcgi_codec.h): the
 * encoder side for BEGIN_REQUEST/PARAMS/STDIN, the record decoder for the
 * response, and CGI header lines. No allocation, no I/O.
 */
#include "http_fastcgi_codec.h"

void
rx_fcgi_write_header(char *p, unsigned type, unsigned id, size_t content_len,
    size_t padding)
{
    unsigned char *h = (unsigned char *) p;

    h[0] = RX_FCGI_VERSION;
    h[1] = (unsigned char) type;
    h[2] = (unsigned char) (id >> 8);
    h[3] = (unsigned char) id;
    h[4] = (unsigned char) (content_len >> 8);
    h[5] = (unsigned char) content_len;
    h[6] = (unsigned char) padding;
    h[7] = 0;
}

static size_t
length_size(size_t n)
{
    return n < 128 ? 1 : 4;
}

static char *
write_length(char *p, size_t n)
{
    unsigned char *u = (unsigned char *) p;

    if (n < 128) {
        u[0] = (unsigned char) n;
        return p + 1;
    }
    u[0] = (unsigned char) (((n >> 24) & 0x7f) | 0x80);
    u[1] = (unsigned char) (n >> 16);
    u[2] = (unsigned char) (n >> 8);
    u[3] = (unsigned char) n;
    return p + 4;
}

size_t
rx_fcgi_pair_size(size_t name_len, size_t value_len)
{
    return length_size(name_len) + length_size(value_len) + name_len + value_len;
}

char *
rx_fcgi_write_pair(char *p, const char *name, size_t name_len,
    const char *value, size_t value_len)
{
    p = write_length(p, name_len);
    p = write_length(p, value_len);
    memcpy(p, name, name_len);
    p += name_len;
    if (value_len) {
        memcpy(p, value, value_len);
    }
    return p + value_len;
}

size_t
rx_fcgi_framed_size(size_t len, size_t max)
{
    size_t full = len / max, rest = len % max, size;

    size = full * (RX_FCGI_HEADER_LEN + max + rx_fcgi_padding(max));
    if (rest) {
        size += RX_FCGI_HEADER_LEN + rest + rx_fcgi_padding(rest);
    }
    return size;
}

char *
rx_fcgi_frame(char *p, unsigned type, unsigned id, const char *data,
    size_t len, size_t max)
{
    while (len) {
        size_t n = len < max ? len : max, pad = rx_fcgi_padding(n);

        rx_fcgi_write_header(p, type, id, n, pad);
        p += RX_FCGI_HEADER_LEN;
        memcpy(p, data, n);
        p += n;
        memset(p, 0, pad);
        p += pad;
        data += n;
        len -= n;
    }
    return p;
}

void
rx_fcgi_decoder_init(rx_fcgi_decoder_t *d)
{
    memset(d, 0, sizeof(*d));
    d->state = RX_FCGI_ST_HEADER;
}

static void
end_event(rx_fcgi_decoder_t *d, rx_fcgi_event_t *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->kind = RX_FCGI_EV_END;
    ev->type = d->type;
    ev->id = d->id;
    ev->content_len = d->content_len;
    if (d->type == RX_FCGI_END_REQUEST && d->end_got >= 5) {
        ev->app_status = (uint32_t) d->end_body[0] << 24
                         | (uint32_t) d->end_body[1] << 16
                         | (uint32_t) d->end_body[2] << 8 | d->end_body[3];
        ev->protocol_status = d->end_body[4];
    }
    d->state = RX_FCGI_ST_HEADER;
    d->header_got = 0;
}

/*
 * The decoder's states, one step each on [*pp, end): RX_DECLINED when the
 * record moved on to the next state and decoding goes on with the rest of
 * the input; else what rx_fcgi_decode returns. *pp is past what was used.
 */

/* RX_FCGI_ST_HEADER: the 8 bytes of a record's header, at once when they
 * are all here, else as they come; the version is checked. */
static rx_int_t
decode_header(rx_fcgi_decoder_t *d, const char **pp, const char *end)
{
    const char *p = *pp;

    if (d->header_got == 0 && end - p >= RX_FCGI_HEADER_LEN) {
        /* the usual case: the whole header is here */
        memcpy(d->header, p, RX_FCGI_HEADER_LEN);
        d->header_got = RX_FCGI_HEADER_LEN;
        p += RX_FCGI_HEADER_LEN;
    }
    while (d->header_got < RX_FCGI_HEADER_LEN && p < end) {
        d->header[d->header_got++] = (unsigned char) *p++;
    }
    *pp = p;
    if (d->header_got < RX_FCGI_HEADER_LEN) {
        return RX_AGAIN;
    }
    if (d->header[0] != RX_FCGI_VERSION) {
        d->error = "upstream sent unsupported FastCGI protocol version";
        return RX_ERROR;
    }
    d->type = d->header[1];
    d->id = (unsigned) d->header[2] << 8 | d->header[3];
    d->content_len = (size_t) d->header[4] << 8 | d->header[5];
    d->content_left = d->content_len;
    d->padding_left = d->header[6];
    d->end_got = 0;
    d->state = RX_FCGI_ST_CONTENT;
    return RX_DECLINED;
}

/* RX_FCGI_ST_CONTENT: the content, handed over in the pieces it comes in;
 * END_REQUEST's own is kept instead, for its END event. */
static rx_int_t
decode_content(rx_fcgi_decoder_t *d, const char **pp, const char *end,
    rx_fcgi_event_t *ev)
{
    const char *p = *pp;
    size_t      n;

    if (d->content_left == 0) {
        d->state = RX_FCGI_ST_PADDING;
        return RX_DECLINED;
    }
    if (p == end) {
        return RX_AGAIN;
    }
    n = (size_t) (end - p);
    if (n > d->content_left) {
        n = d->content_left;
    }
    d->content_left -= n;
    *pp = p + n;
    if (d->type == RX_FCGI_END_REQUEST) {
        /* its 8-byte body is kept here: it may arrive in pieces */
        size_t i;
        for (i = 0; i < n && d->end_got < sizeof(d->end_body); i++) {
            d->end_body[d->end_got++] = (unsigned char) p[i];
        }
        return RX_DECLINED;
    }
    memset(ev, 0, sizeof(*ev));
    ev->kind = RX_FCGI_EV_CONTENT;
    ev->type = d->type;
    ev->id = d->id;
    ev->data = p;
    ev->len = n;
    return RX_OK;
}

/* RX_FCGI_ST_PADDING: skipped; then the record's END event. */
static rx_int_t
decode_padding(rx_fcgi_decoder_t *d, const char **pp, const char *end,
    rx_fcgi_event_t *ev)
{
    size_t n = (size_t) (end - *pp);

    if (n > d->padding_left) {
        n = d->padding_left;
    }
    *pp += n;
    d->padding_left -= n;
    if (d->padding_left) {
        return RX_AGAIN;
    }
    end_event(d, ev);
    return RX_OK;
}

rx_int_t
rx_fcgi_decode(rx_fcgi_decoder_t *d, const char **pos, const char *end,
    rx_fcgi_event_t *ev)
{
    const char *p = *pos;
    rx_int_t    rc = RX_DECLINED;

    while (rc == RX_DECLINED) {
        switch (d->state) {
        case RX_FCGI_ST_HEADER:
            rc = decode_header(d, &p, end);
            break;
        case RX_FCGI_ST_CONTENT:
            rc = decode_content(d, &p, end, ev);
            break;
        case RX_FCGI_ST_PADDING:
            rc = decode_padding(d, &p, end, ev);
            break;
        }
    }
    *pos = p;
    return rc;
}

void
rx_fcgi_decoder_unread(rx_fcgi_decoder_t *d, size_t n)
{
    d->content_left += n;
    d->state = RX_FCGI_ST_CONTENT;
}

/* RFC 9110 token characters: a header name (a table: this runs for every
 * byte of every name). */
static const unsigned char token_chars[256] = {
    ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
    ['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
    ['`'] = 1, ['|'] = 1, ['~'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
    ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
    ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
    ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
    ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
    ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
};

static bool
is_token(unsigned char ch)
{
    return token_chars[ch];
}

rx_int_t
rx_fcgi_parse_header_line(const char *buf, size_t len, size_t *pos,
    rx_str_t *name, rx_str_t *value)
{
    const char *start = buf + *pos, *end = buf + len, *lf, *line_end, *p, *v;

    lf = memchr(start, '\n', (size_t) (end - start));
    if (lf == NULL) {
        return RX_AGAIN;
    }
    line_end = lf;
    if (line_end > start && line_end[-1] == '\r') {
        line_end--;
    }
    if (line_end == start) {
        *pos = (size_t) (lf + 1 - buf);
        return RX_DONE;
    }
    for (p = start; p < line_end && is_token((unsigned char) *p); p++) {
        /* the name */
    }
    if (p == start || p == line_end || *p != ':') {
        return RX_ERROR;
    }
    name->data = (char *) start;
    name->len = (size_t) (p - start);
    for (v = p + 1; v < line_end && (*v == ' ' || *v == '\t'); v++) {
        /* blanks before the value */
    }
    while (line_end > v && (line_end[-1] == ' ' || line_end[-1] == '\t')) {
        line_end--;
    }
    if (memchr(v, '\0', (size_t) (line_end - v))
        || memchr(v, '\r', (size_t) (line_end - v))) {
        return RX_ERROR;
    }
    value->data = (char *) v;
    value->len = (size_t) (line_end - v);
    *pos = (size_t) (lf + 1 - buf);
    return RX_OK;
}
