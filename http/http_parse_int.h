/*
 * http_parse_int.h: the request parser's state, shared by http_parse.c
 * (llhttp's callbacks: spans, limits, hostile-input checks) and
 * http_parse_exec.c (running llhttp over the bytes, bare LF, errors into
 * statuses and reasons); private to those two, the only llhttp users.
 */
#ifndef RX_HTTP_PARSE_INT_H
#define RX_HTTP_PARSE_INT_H

#include <llhttp.h>
#include "http.h"
#include "http_parse.h"

typedef enum { SPAN_NONE = 0, SPAN_URL, SPAN_FIELD, SPAN_VALUE } span_kind_t;

struct rx_http_parser_s {
    llhttp_t                        llhttp;
    const rx_http_parse_handlers_t *h;
    void                           *data;
    char                          **base;        /* owner's buffer */
    size_t                          max_url;
    size_t                          max_header_line;
    /* spans as offsets into *base: the buffer may move between reads */
    size_t                          url_off, url_len;
    size_t                          field_off, field_len;
    size_t                          value_off, value_len;
    span_kind_t                     last;
    rx_uint_t                       status;      /* when we stopped it */
    const char                     *reason;
    bool                            in_message;
    bool                            in_header;   /* before headers complete */
    /* nginx's header buffers, modelled: lines fill the first buffer, then
     * large ones; a line never spans two buffers */
    size_t                          first_size;
    size_t                          large_size;
    rx_uint_t                       large_num;
    size_t                          first_used;
    size_t                          large_used;
    rx_uint_t                       large_count;
    size_t                          line_start;  /* offset of the next line */
    size_t                          header_max;  /* the header's bytes, at most */
    /* hostile-input checks llhttp (even strict) leaves to us */
    size_t                          method_end;  /* offset after the method */
    size_t                          version_off; /* offset of "1.1" */
    size_t                          version_len;
    size_t                          ext_len;     /* chunk extension bytes */
    size_t                          trailer_len; /* trailer section bytes */
    const char                     *exec_start;  /* this execute's input */
    const char                     *exec_end;
    size_t                          real_end;    /* offset past the last
                                                    byte of ours llhttp has
                                                    (not our CR) */
    char                            prev_byte;   /* last byte of the one before */
    char                            prev_nonws;  /* its last byte not SP/HT */
    bool                            have_field;  /* this line has a name */
    bool                            line_counted; /* the request line's */
    bool                            url_done;     /* the target was read */
    bool                            fields;       /* request line done */
    char                            reason_buf[256];
};

/* The CR fed to llhttp before a bare LF of the head. */
extern const char rx_http_parse_bare_lf_cr[1];

/* A piece llhttp hands over from that CR: empty, not in the owner's
 * buffer, and at a line's end. */
bool rx_http_parse_injected(const char *at);
/* The byte before `at`, which may have ended the previous execute. */
char rx_http_parse_byte_before(rx_http_parser_t *p, const char *at);
/* What the next execute needs of this one's end. */
void rx_http_parse_remember_tail(rx_http_parser_t *p, const char *start,
    const char *end);
/* The request line ended at pos: it is counted in the header's buffers. */
void rx_http_parse_request_line_end(rx_http_parser_t *p, size_t pos);

#endif /* RX_HTTP_PARSE_INT_H */
