/*
 * http_v2_session_int.h: the session's state, shared by its input side
 * (http_v2_session.c) and its output side (http_v2_session_out.c).
 */
#ifndef RX_HTTP_V2_SESSION_INT_H
#define RX_HTTP_V2_SESSION_INT_H

#include "http_v2_session.h"

/* A stream's state (RFC 9113 5.1). A server never reserves streams;
 * closed ones are freed at once, so "closed" is only ever transient. */
enum {
    RX_H2_ST_OPEN = 1,
    RX_H2_ST_HALF_LOCAL,     /* our END_STREAM went */
    RX_H2_ST_HALF_REMOTE,    /* the client's END_STREAM came */
};

typedef struct rx_h2_stream_s rx_h2_stream_t;

/* A live stream: about 64 bytes, freed when it closes. */
struct rx_h2_stream_s {
    rx_h2_stream_t  *next;        /* the session's streams */
    rx_h2_stream_t  *qnext;       /* the header or the DATA queue */
    void            *sud;
    uint8_t         *hblock;      /* a submitted header block (copy) */
    uint32_t         hlen;        /* its bytes */
    int32_t          id;
    int32_t          send_window; /* may go below 0 (RFC 9113 6.9.2) */
    int32_t          recv_window; /* what the client may still send */
    uint32_t         unacked;     /* consumed, not yet in a WINDOW_UPDATE */
    uint8_t          state;
    bool             hend;        /* the header block ends the stream */
    bool             in_hq, in_dq;
    bool             has_data;    /* a data source after the headers */
    bool             deferred;
    bool             headers_sent;
};

/* A control frame waiting to go. */
typedef struct {
    uint8_t          type;        /* RST_STREAM, WINDOW_UPDATE, PING, SETTINGS */
    uint8_t          opaque[8];   /* PING's */
    int32_t          id;
    uint32_t         value;       /* RST code, increment */
} rx_h2_ctrl_t;

#define RX_H2_RESET_IDS  32

/* The input's states: any split of the byte stream lands in one. */
enum {
    RX_H2_IN_PREFACE = 0,
    RX_H2_IN_HEAD,       /* a frame header, 9 bytes into ibuf */
    RX_H2_IN_FILL,       /* `need` bytes into ibuf, then fill_done() */
    RX_H2_IN_BODY,       /* DATA payload or a header block fragment */
    RX_H2_IN_SKIP,       /* `left` bytes dropped (padding, unknown) */
    RX_H2_IN_DEAD        /* after a connection error: all dropped */
};

struct rx_h2_session_s {
    const rx_h2_callbacks_t *cb;
    void              *ud;
    rx_h2_mem_t        mem;
    rx_h2_config_t     conf;
    rx_h2_settings_t   remote;

    rx_h2_stream_t    *streams;   /* every live stream */
    rx_h2_stream_t    *last_st;   /* the last one looked up: frames come in
                                     runs of one stream (DATA chunks) */
    rx_h2_stream_t    *hq, *hq_tail;  /* header blocks to send */
    rx_h2_stream_t    *dq, *dq_tail;  /* streams with DATA to send */
    /* the header block being written: no other frame may go before its
     * rest (RFC 9113 6.10), even when its stream closed meanwhile */
    uint8_t           *hout;
    uint32_t           hout_len, hout_off;
    int32_t            hout_id;
    bool               hout_end;  /* with END_STREAM */
    uint32_t           ndq;
    rx_h2_ctrl_t      *ctrl;      /* queued control frames (malloc'd,
                                     freed when drained) */
    uint32_t           nctrl, ctrl_head, ctrl_size;
    uint32_t           acks;      /* answers among them (all but
                                     WINDOW_UPDATE): bounded */
    uint32_t           nstreams;  /* open streams (all client-opened) */

    /* input */
    uint8_t            in_state;
    uint8_t            ibuf[24];
    uint32_t           need, have;
    rx_h2_frame_hd_t   hd;        /* the frame being read */
    uint32_t           left;      /* of its payload, to come */
    uint32_t           pad;       /* padding at its end */
    bool               end_told;  /* data's end_stream was given */
    bool               settings_seen;   /* the first frame was SETTINGS */
    bool               settings_acked;  /* the client acked ours */
    uint8_t           *block;     /* the header block being collected */
    const uint8_t     *zc;        /* ... or the whole of it in the input
                                     being read (until block_done) */
    uint32_t           block_len, block_size;
    int32_t            block_id;  /* its stream; 0: none expected */
    uint8_t            block_flags;  /* RX_H2_BLOCK_* */
    uint32_t           continuations;
    uint32_t           empty_frames;
    uint32_t           new_streams;  /* in this recv call */
    uint32_t           resets;
    int32_t            max_id;    /* the highest stream the client opened */
    int32_t            last_proc; /* ... and we let in (GOAWAY's) */
    /* streams we reset lately (as many as nginx keeps closed nodes):
     * their frames in flight are ignored (RFC 9113 5.4.2), not answered */
    int32_t            reset_ids[RX_H2_RESET_IDS];
    uint32_t           reset_next;
    bool               nomem;

    /* flow control */
    int64_t            send_window;  /* the client's connection window */
    int32_t            recv_window;  /* what it may still send us */
    uint32_t           unacked;      /* consumed, not yet announced */
    uint32_t           local_iws;    /* stream window in effect: 65535
                                        until our SETTINGS are acked */

    /* ending */
    int32_t            goaway_last;  /* GOAWAY's last stream id */
    int64_t            goaway_code;  /* -1: none queued */
    bool               goaway_pending;
    bool               goaway_sent;
    bool               goaway_recv;
    bool               terminated;   /* a connection error: no input */
    bool               term_sent;    /* its GOAWAY went: nothing more */
    bool               settings_pending;  /* our SETTINGS to send */
    uint32_t           settings_window;   /* the conn WINDOW_UPDATE with it */

    size_t             held;         /* bytes of memory held */
};

/* http_v2_session.c, for the output side */
void *rx_h2_alloc(rx_h2_session_t *s, size_t size);
void rx_h2_free(rx_h2_session_t *s, void *p, size_t size);
rx_h2_stream_t *rx_h2_stream_find(rx_h2_session_t *s, int32_t id);
/* The stream closes with code: stream_close, then it is freed. */
void rx_h2_stream_close(rx_h2_session_t *s, rx_h2_stream_t *st,
    uint32_t code);
/* Queues a control frame; false when no memory (the session is
 * terminated) or when acks overflow (ENHANCE_YOUR_CALM). */
bool rx_h2_ctrl_push(rx_h2_session_t *s, uint8_t type, int32_t id,
    uint32_t value, const uint8_t *opaque);
/* A connection error: error callback, then GOAWAY. */
void rx_h2_conn_error(rx_h2_session_t *s, uint32_t code, const char *why);

/* The client's side of the stream ended (it closes when ours did). */
void rx_h2_remote_close(rx_h2_session_t *s, rx_h2_stream_t *st);
/* RST_STREAM(code) queued, the stream closed if live, its id kept a
 * while so that its frames in flight are ignored (RFC 9113 5.4.2). */
void rx_h2_reset_stream(rx_h2_session_t *s, int32_t id, uint32_t code);
bool rx_h2_reset_lately(rx_h2_session_t *s, int32_t id);
/* A stream error: the error callback, then rx_h2_reset_stream. */
void rx_h2_stream_error(rx_h2_session_t *s, int32_t id, uint32_t code,
    const char *why);
/* n bytes of the windows given back (WINDOW_UPDATE when half is). */
void rx_h2_conn_consume(rx_h2_session_t *s, size_t n);
void rx_h2_stream_consume(rx_h2_session_t *s, rx_h2_stream_t *st, size_t n);

#define RX_H2_MIN(a, b)  ((a) < (b) ? (a) : (b))
#define RX_H2_MAX(a, b)  ((a) > (b) ? (a) : (b))

/* http_v2_session_out.c */
void rx_h2_dq_push(rx_h2_session_t *s, rx_h2_stream_t *st);
void rx_h2_queues_drop(rx_h2_session_t *s, rx_h2_stream_t *st);

#endif /* RX_HTTP_V2_SESSION_INT_H */
