/*
 * http_v2_session.h: ringx's own HTTP/2 server session (RFC 9113): the
 * connection's frames, stream states, flow control both ways and the
 * floods' bounds, with no I/O and no HPACK. Bytes go in through
 * rx_h2_session_recv() and out through rx_h2_session_send() into a buffer
 * the caller gives; header blocks go to the caller undecoded and come
 * from it encoded. Not yet used: it replaces libnghttp2's session (#20).
 *
 * Modelled on the nghttp2 calls http_v2.c makes, so that they swap with
 * little change: callbacks with a user data pointer, submit functions,
 * consume (no automatic WINDOW_UPDATE), resume_data, want_read/want_write.
 *
 * Reentrancy: a callback may call the submit functions, consume and
 * terminate, but never recv or send. After a connection error the session
 * has queued GOAWAY(last stream, code), drops further input and wants to
 * write only that GOAWAY (and what was queued before it).
 */
#ifndef RX_HTTP_V2_SESSION_H
#define RX_HTTP_V2_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "http_v2_frame.h"

typedef struct rx_h2_session_s rx_h2_session_t;

/* data_source's "no bytes now": the stream waits for
 * rx_h2_session_resume_data() (as NGHTTP2_ERR_DEFERRED) */
#define RX_H2_DEFERRED   (-1)
/* data_source's failure: the stream is reset with INTERNAL_ERROR */
#define RX_H2_SOURCE_ERR (-2)

/* header_block's flags */
#define RX_H2_BLOCK_END_STREAM  0x01  /* the client's side ends with it */
#define RX_H2_BLOCK_TRAILERS    0x02  /* on a stream already open */
#define RX_H2_BLOCK_REFUSED     0x04  /* the stream was refused or reset:
                                         decode it (HPACK's state) only */

/* The remote SETTINGS in effect (after each SETTINGS frame). */
typedef struct {
    uint32_t header_table_size;
    uint32_t enable_push;
    uint32_t max_concurrent_streams;
    uint32_t initial_window_size;
    uint32_t max_frame_size;
    uint32_t max_header_list_size;
} rx_h2_settings_t;

/* Every callback gets the session's user data last; `sud` is the
 * stream's user data (rx_h2_session_set_stream_user_data), NULL when
 * none. All may be NULL except header_block and data_source. */
typedef struct {
    /* A client's HEADERS opens stream id. 0 lets it in; an error code
     * (REFUSED_STREAM, ...) resets it (its header block still comes, to
     * be decoded only). */
    uint32_t (*begin_headers)(rx_h2_session_t *s, int32_t id, void *ud);
    /* A complete header block (HEADERS + CONTINUATIONs, padding and
     * priority removed), valid during the call; flags RX_H2_BLOCK_*. */
    void     (*header_block)(rx_h2_session_t *s, int32_t id, void *sud,
                 const uint8_t *block, size_t len, unsigned flags, void *ud);
    /* Bytes of a DATA frame's payload (any split); end_stream on the
     * last call of the frame that ends the client's side (len may be 0).
     * The bytes count against the windows until rx_h2_session_consume. */
    void     (*data)(rx_h2_session_t *s, int32_t id, void *sud,
                 const uint8_t *p, size_t len, bool end_stream, void *ud);
    /* The stream is closed (code: NO_ERROR, or the RST_STREAM's either
     * way); the session forgets it after the call. */
    void     (*stream_close)(rx_h2_session_t *s, int32_t id, void *sud,
                 uint32_t code, void *ud);
    /* The client reset an open stream (stream_close follows). */
    void     (*rst_recv)(rx_h2_session_t *s, int32_t id, void *sud,
                 uint32_t code, void *ud);
    void     (*goaway_recv)(rx_h2_session_t *s, int32_t last_id,
                 uint32_t code, void *ud);
    /* A SETTINGS frame of the client's was applied (HPACK's table size
     * is the caller's). */
    void     (*settings)(rx_h2_session_t *s, const rx_h2_settings_t *remote,
                 void *ud);
    /* Up to max bytes of the stream's response written at dst (a DATA
     * frame's payload); *eof = true with the last ones (END_STREAM).
     * Returns the bytes, RX_H2_DEFERRED (0 without eof is the same) or
     * RX_H2_SOURCE_ERR. */
    ssize_t  (*data_source)(rx_h2_session_t *s, int32_t id, void *sud,
                 uint8_t *dst, size_t max, bool *eof, void *ud);
    /* A frame was written into the send buffer (for logs). */
    void     (*frame_sent)(rx_h2_session_t *s, uint8_t type, uint8_t flags,
                 int32_t id, void *ud);
    /* The session found an error of the client's: a connection error (id
     * 0; GOAWAY follows unless the callback terminated the session with a
     * code of its own first) or a stream's (RST_STREAM follows). why
     * reads after "client " ("sent PUSH_PROMISE frame"), in nginx's
     * words where nginx has some; a static string. */
    void     (*error)(rx_h2_session_t *s, int32_t id, uint32_t code,
                 const char *why, void *ud);
} rx_h2_callbacks_t;

/* The memory of the session, its streams and buffers (default
 * malloc/free); `size` is what was asked for at the allocation. */
typedef struct {
    void  *(*alloc)(size_t size, void *mud);
    void   (*free)(void *p, size_t size, void *mud);
    void    *mud;
} rx_h2_mem_t;

/* The session's settings; a 0 takes the default in brackets. */
typedef struct {
    uint32_t max_concurrent_streams;  /* announced and enforced [128] */
    uint32_t initial_window_size;     /* a stream's receive window [65535] */
    uint32_t max_header_list_size;    /* announced only [0: not] */
    uint32_t conn_window;             /* the connection's receive window
                                         [65535] */
    uint32_t max_header_block;        /* a header block's bytes [65536]:
                                         beyond, connection error
                                         ENHANCE_YOUR_CALM */
    uint32_t chunk_size;              /* DATA payload bound [max frame] */
    uint32_t max_settings;            /* entries per SETTINGS [32] */
    uint32_t max_queued_acks;         /* answers queued unread: SETTINGS
                                         and PING acks, RST_STREAM [1000] */
    uint32_t max_new_streams;         /* streams opened per recv call
                                         [2 x max_concurrent_streams] */
    uint32_t max_resets;              /* client resets per connection
                                         [2 x max_concurrent_streams + 100] */
    uint32_t max_empty_frames;        /* DATA, HEADERS, CONTINUATION without
                                         payload nor END flag [100] */
    uint32_t max_continuations;       /* per header block [8] */
} rx_h2_config_t;

/* A server session: our SETTINGS (and the connection window's
 * WINDOW_UPDATE) are queued. cb is kept (not copied): it outlives the
 * session (a static table). conf and mem may be NULL. NULL on no memory. */
rx_h2_session_t *rx_h2_session_new(const rx_h2_callbacks_t *cb,
    const rx_h2_config_t *conf, const rx_h2_mem_t *mem, void *ud);
/* Frees the session and its streams (no callbacks). */
void rx_h2_session_del(rx_h2_session_t *s);

/* The client's bytes, any split. Returns len (bytes after a connection
 * error are dropped), or -1 when the session could not get memory (it
 * is then terminated with INTERNAL_ERROR). */
ssize_t rx_h2_session_recv(rx_h2_session_t *s, const uint8_t *data,
    size_t len);
/* Writes frames at buf, at most size bytes (size >= 64): control frames,
 * then header blocks, then DATA round-robin. Returns the bytes written (0:
 * nothing to send now). */
size_t rx_h2_session_send(rx_h2_session_t *s, uint8_t *buf, size_t size);

bool rx_h2_session_want_read(const rx_h2_session_t *s);
bool rx_h2_session_want_write(const rx_h2_session_t *s);

/* n bytes of DATA of stream id (0: the connection's only, e.g. of a
 * stream gone) were taken by the caller: the windows reopen, WINDOW_UPDATE
 * is queued once half a window was consumed. */
void rx_h2_session_consume(rx_h2_session_t *s, int32_t id, size_t n);

/* A response's header block for stream id (copied); end_stream: no body.
 * Another may follow one sent without a body (after a 1xx); trailers
 * after DATA are not supported yet. -1: no such open stream, a block
 * already waiting, a body submitted, or no memory. */
int rx_h2_submit_headers(rx_h2_session_t *s, int32_t id,
    const uint8_t *block, size_t len, bool end_stream);
/* The stream's body comes from data_source, after its HEADERS. */
int rx_h2_submit_data(rx_h2_session_t *s, int32_t id);
/* A deferred data_source has bytes again. -1: no such stream. */
int rx_h2_session_resume_data(rx_h2_session_t *s, int32_t id);
/* Resets stream id with code (stream_close follows at once). */
int rx_h2_submit_rst_stream(rx_h2_session_t *s, int32_t id, uint32_t code);
/* GOAWAY(last_id, code) without ending the session: streams above
 * last_id are refused from then on; the session wants to read while
 * streams are open. */
int rx_h2_submit_goaway(rx_h2_session_t *s, int32_t last_id, uint32_t code);
/* A connection error: GOAWAY(the last stream processed, code); the first
 * code wins. */
void rx_h2_session_terminate(rx_h2_session_t *s, uint32_t code);

void rx_h2_session_set_stream_user_data(rx_h2_session_t *s, int32_t id,
    void *sud);
void *rx_h2_session_get_stream_user_data(rx_h2_session_t *s, int32_t id);
/* Whether the client's side of the open stream id is closed (-1: no such
 * stream), as nghttp2_session_get_stream_remote_close. */
int rx_h2_session_remote_closed(rx_h2_session_t *s, int32_t id);
/* The highest stream id the client opened (refused ones too). */
int32_t rx_h2_session_last_stream(const rx_h2_session_t *s);
/* Bytes the session holds now: itself, its streams, its buffers. */
size_t rx_h2_session_mem(const rx_h2_session_t *s);
/* The GOAWAY code sent or queued, -1 when none. */
int64_t rx_h2_session_goaway_code(const rx_h2_session_t *s);

#endif /* RX_HTTP_V2_SESSION_H */
