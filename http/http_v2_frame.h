/*
 * http_v2_frame.h: HTTP/2 frames (RFC 9113 4, 6) as bytes: the 9-byte
 * header read and written, the constants, each type's fixed-size checks,
 * and the control frames ringx's own session writes. No state, no I/O.
 * Not yet used: the own framing that replaces libnghttp2's session (#20).
 */
#ifndef RX_HTTP_V2_FRAME_H
#define RX_HTTP_V2_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define RX_H2_FRAME_HDLEN        9
#define RX_H2_PREFACE            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define RX_H2_PREFACE_LEN        24
#define RX_H2_DEFAULT_WINDOW     65535
#define RX_H2_MAX_WINDOW         0x7fffffff
#define RX_H2_MIN_FRAME_SIZE     16384
#define RX_H2_MAX_FRAME_SIZE     0xffffff

/* frame types (RFC 9113 6) */
enum {
    RX_H2_DATA = 0,
    RX_H2_HEADERS = 1,
    RX_H2_PRIORITY = 2,
    RX_H2_RST_STREAM = 3,
    RX_H2_SETTINGS = 4,
    RX_H2_PUSH_PROMISE = 5,
    RX_H2_PING = 6,
    RX_H2_GOAWAY = 7,
    RX_H2_WINDOW_UPDATE = 8,
    RX_H2_CONTINUATION = 9
};

/* flags */
#define RX_H2_F_END_STREAM   0x01
#define RX_H2_F_ACK          0x01
#define RX_H2_F_END_HEADERS  0x04
#define RX_H2_F_PADDED       0x08
#define RX_H2_F_PRIORITY     0x20

/* error codes (RFC 9113 7) */
enum {
    RX_H2_NO_ERROR = 0,
    RX_H2_PROTOCOL_ERROR = 1,
    RX_H2_INTERNAL_ERROR = 2,
    RX_H2_FLOW_CONTROL_ERROR = 3,
    RX_H2_SETTINGS_TIMEOUT = 4,
    RX_H2_STREAM_CLOSED = 5,
    RX_H2_FRAME_SIZE_ERROR = 6,
    RX_H2_REFUSED_STREAM = 7,
    RX_H2_CANCEL = 8,
    RX_H2_COMPRESSION_ERROR = 9,
    RX_H2_CONNECT_ERROR = 10,
    RX_H2_ENHANCE_YOUR_CALM = 11,
    RX_H2_INADEQUATE_SECURITY = 12,
    RX_H2_HTTP_1_1_REQUIRED = 13
};

/* SETTINGS identifiers (RFC 9113 6.5.2) */
enum {
    RX_H2_SET_HEADER_TABLE_SIZE = 1,
    RX_H2_SET_ENABLE_PUSH = 2,
    RX_H2_SET_MAX_CONCURRENT_STREAMS = 3,
    RX_H2_SET_INITIAL_WINDOW_SIZE = 4,
    RX_H2_SET_MAX_FRAME_SIZE = 5,
    RX_H2_SET_MAX_HEADER_LIST_SIZE = 6
};

typedef struct {
    uint32_t    length;      /* payload bytes, 24 bits */
    uint8_t     type;
    uint8_t     flags;
    int32_t     stream_id;   /* the reserved bit cleared */
} rx_h2_frame_hd_t;

/* A frame's header from its 9 bytes, and written as 9 bytes. */
void rx_h2_frame_hd_read(rx_h2_frame_hd_t *hd, const uint8_t *p);
void rx_h2_frame_hd_write(uint8_t *p, uint32_t length, uint8_t type,
    uint8_t flags, int32_t stream_id);

/* The checks a frame's header alone decides, for the types whose
 * payload has a fixed size or whose stream must (not) be 0: 0, or the
 * connection error's code with *why set (for the log, after "client "). max_frame_size: ours (SETTINGS_MAX_FRAME_SIZE we announced). */
uint32_t rx_h2_frame_check(const rx_h2_frame_hd_t *hd,
    uint32_t max_frame_size, const char **why);

/* A type's name for logs ("unknown" beyond CONTINUATION). */
const char *rx_h2_frame_type_name(uint8_t type);
/* An error code's name ("unknown" beyond HTTP_1_1_REQUIRED). */
const char *rx_h2_error_name(uint32_t code);

/* 32-bit big-endian helpers. */
uint32_t rx_h2_get32(const uint8_t *p);
void rx_h2_put32(uint8_t *p, uint32_t v);

/* Control frames, each written at p (which has room for it): the bytes
 * written. */
#define RX_H2_RST_LEN      (RX_H2_FRAME_HDLEN + 4)
#define RX_H2_WU_LEN       (RX_H2_FRAME_HDLEN + 4)
#define RX_H2_PING_LEN     (RX_H2_FRAME_HDLEN + 8)
#define RX_H2_GOAWAY_LEN   (RX_H2_FRAME_HDLEN + 8)
size_t rx_h2_write_rst(uint8_t *p, int32_t id, uint32_t code);
size_t rx_h2_write_window_update(uint8_t *p, int32_t id, uint32_t inc);
size_t rx_h2_write_ping_ack(uint8_t *p, const uint8_t opaque[8]);
size_t rx_h2_write_goaway(uint8_t *p, int32_t last_id, uint32_t code);
/* SETTINGS of n entries (ids[i], values[i]); n = 0 and ack: the ack. */
size_t rx_h2_write_settings(uint8_t *p, const uint16_t *ids,
    const uint32_t *values, size_t n, int ack);

#endif /* RX_HTTP_V2_FRAME_H */
