/*
 * http_v2_int.h: what http_v2.c (the connection and its session),
 * http_v2_fields.c (a request's header block: HPACK and RFC 9113's rules),
 * http_v2_stream.c (a stream's request on a connection of its own) and
 * http_v2_header.c (a response's header block) share. The framing is
 * ringx's own (http_v2_session.c, http_v2_hpack.c).
 */
#ifndef RX_HTTP_V2_INT_H
#define RX_HTTP_V2_INT_H

#include "http.h"
#include "http_v2.h"
#include "http_v2_session.h"
#include "http_v2_hpack.h"
#include "http_request_fields.h"

typedef struct rx_http_v2_conn_s   rx_http_v2_conn_t;
typedef struct rx_http_v2_stream_s rx_http_v2_stream_t;

/* A response header field before HPACK encodes it (http_v2_header.c). */
typedef struct {
    const char              *name;
    size_t                   namelen;
    const char              *value;
    size_t                   valuelen;
} rx_http_v2_nv_t;

struct rx_http_v2_conn_s {
    rx_conn_t               *conn;       /* the client's */
    rx_http_connection_t    *hc;         /* its HTTP/1 side: server names */
    rx_h2_session_t         *session;
    rx_hpack_dec_t           dec;        /* the client's header blocks */
    rx_http_v2_srv_conf_t   *conf;       /* the default server's */
    rx_http_v2_stream_t     *streams;    /* live streams, a list */
    rx_uint_t                nstreams;
    rx_uint_t                requests;     /* streams taken (keepalive_requests) */
    int32_t                  last_id;      /* the last stream GOAWAY NO_ERROR
                                              let in, or 0 */
    char                    *out;        /* the send in flight (malloc;
                                            freed when the connection is
                                            idle) */
    size_t                   out_len;
    size_t                   out_end;    /* what goes in this send: out_len,
                                            or whole TLS records of it
                                            while more frames follow */
    size_t                   out_sent;
    size_t                   out_size;
    struct iovec             iov;
    rx_posted_t              send_post;  /* flush at the end of the turn */
    bool                     closing;      /* being freed */
    bool                     goaway_sent;  /* idle: said goodbye */
    bool                     terminated;   /* GOAWAY queued */
    bool                     lingering;    /* done: reads dropped until
                                              the client closes */
    rx_msec_t                linger_deadline;  /* lingering_time's end */
};

/* The pseudo-header fields a stream's request keeps (ps_off). */
enum { RX_V2_METHOD = 0, RX_V2_PATH, RX_V2_AUTHORITY };

struct rx_http_v2_stream_s {
    rx_http_v2_conn_t       *h2;
    int32_t                  id;
    rx_conn_t               *vc;         /* the request's connection; NULL
                                            once it went */
    rx_http_v2_stream_t     *prev, *next;
    /* the request's fields as they come (malloc): the values of
     * :method, :path and :authority as "value\0" in head (ps_off: where,
     * plus 1, 0 for none; ps_len: their lengths; by RX_V2_METHOD ...),
     * the others as records (their lengths, then their bytes:
     * http_v2_stream.c) in fields, nfields of them, cookie crumbs joined;
     * header_bytes counts what they decoded to */
    char                    *head;
    size_t                   head_len, head_size, header_bytes;
    uint32_t                 ps_off[3], ps_len[3];
    char                    *fields;
    size_t                   fields_len, fields_size;
    rx_uint_t                nfields;
    char                    *cookie;
    size_t                   cookie_len, cookie_size;
    int64_t                  content_length;  /* -1: none came */
    int64_t                  data_len;        /* DATA bytes received */
    bool                     has_host, has_length;
    bool                     regular_seen;  /* a field that is not a
                                               pseudo-header came */
    bool                     malformed;     /* RFC 9113 8.1.1: reset */
    bool                     too_large;     /* beyond the header bounds */
    bool                     started;    /* the request went to vc */
    bool                     responded;  /* HEADERS submitted */
    bool                     with_body;  /* ... with a data provider */
    bool                     eof;        /* the response is complete */
    bool                     deferred;   /* the data provider waits */
    bool                     closed;     /* the session closed it */
    bool                     client_reset;  /* by the client's RST_STREAM */
    bool                     req_ended;  /* the request's END_STREAM came */
    bool                     last_send;  /* the send in progress carries
                                            the response's last bytes */
    bool                     end_sent;   /* END_STREAM went on its last
                                            DATA frame, before the request
                                            heard that its send went */
    /* the response bytes vc gave, until the session took them all */
    const struct iovec      *iov;
    int                      niov;
    int                      iov_index;
    size_t                   iov_off;
    size_t                   iov_total;
    size_t                   iov_left;    /* bytes of it not yet taken */
    size_t                   unconsumed;  /* DATA not yet acknowledged */
    size_t                   chunk_size;  /* http2_chunk_size of the
                                             location that answers */
    rx_posted_t              sent_post;
};

/* http_v2_mem.c: per-worker free lists by size class (see there); the
 * streams' memory and the sessions' (rx_http_v2_session_mem) */
void *rx_http_v2_alloc(size_t n);
void *rx_http_v2_calloc(size_t n, size_t size);
void *rx_http_v2_realloc(void *p, size_t n);
void rx_http_v2_free(void *p);
/* The session's allocator (its memory through the free lists). */
extern const rx_h2_mem_t rx_http_v2_session_mem;
/* A connection's send buffer of size bytes, from the worker's few spare
 * ones when one fits (malloc'd otherwise), and given back to them. */
void *rx_http_v2_out_alloc(size_t size);
void rx_http_v2_out_free(void *p, size_t size);

/* http_v2.c */
void rx_http_v2_schedule_send(rx_http_v2_conn_t *h2);

/* http_v2_fields.c: a request's header block decoded (HPACK) and checked
 * (RFC 9113 8.2, 8.3) into the stream's fields (st NULL: decoded only, to
 * keep the client's table in step). RX_OK: the request may start;
 * RX_DECLINED: it may not (st NULL, or malformed or too large: its stream
 * was reset and it is logged); RX_ERROR: the connection ends (the session
 * was terminated with the code). */
rx_int_t rx_http_v2_fields(rx_http_v2_conn_t *h2, rx_http_v2_stream_t *st,
    const uint8_t *block, size_t len);
/* A DATA frame's bytes against the request's content-length (RFC 9113
 * 8.1.1): false when they break it (the stream was reset). */
bool rx_http_v2_fields_data(rx_http_v2_stream_t *st, size_t len,
    bool end_stream);

/* http_v2_stream.c */
rx_http_v2_stream_t *rx_http_v2_stream_create(rx_http_v2_conn_t *h2,
    int32_t id);
/* A header field of the stream's request (checked). 0, or -1 when memory
 * ran out. */
int rx_http_v2_stream_header(rx_http_v2_stream_t *st, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen);
/* The request's header is complete (end_stream: no body follows). */
void rx_http_v2_stream_start(rx_http_v2_stream_t *st, bool end_stream);
void rx_http_v2_stream_data(rx_http_v2_stream_t *st, const uint8_t *data,
    size_t len);
void rx_http_v2_stream_end(rx_http_v2_stream_t *st);
/* The session closed the stream (error: its code). */
void rx_http_v2_stream_closed(rx_http_v2_stream_t *st, uint32_t error);
/* The connection goes: the stream's request ends. */
void rx_http_v2_stream_abort(rx_http_v2_stream_t *st);
void rx_http_v2_stream_free(rx_http_v2_stream_t *st);
/* The session's data_source: up to max bytes of the response's send in
 * progress copied to dst (a DATA frame's payload). */
ssize_t rx_http_v2_stream_source(rx_h2_session_t *s, int32_t id, void *sud,
    uint8_t *dst, size_t max, bool *eof, void *ud);
/* The framing's send_header (http_v2_header.c): the response's header as
 * fields, which rx_http_v2_stream_submit sends as HEADERS with the body's
 * DATA provider. */
rx_int_t rx_http_v2_send_header(rx_http_request_t *r);
rx_int_t rx_http_v2_stream_submit(rx_http_request_t *r, rx_http_v2_nv_t *nva,
    size_t n);

#endif /* RX_HTTP_V2_INT_H */
