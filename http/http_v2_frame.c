/*
 * http_v2_frame.c: HTTP/2 frames as bytes (RFC 9113 4.1, 6): headers read
 * and written, the checks a frame's header alone decides, and the control
 * frames the session writes. Stateless; http_v2_session.c owns the rest.
 */
#include <string.h>
#include "http_v2_frame.h"

uint32_t
rx_h2_get32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
           | (uint32_t) p[2] << 8 | p[3];
}

void
rx_h2_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

void
rx_h2_frame_hd_read(rx_h2_frame_hd_t *hd, const uint8_t *p)
{
    hd->length = (uint32_t) p[0] << 16 | (uint32_t) p[1] << 8 | p[2];
    hd->type = p[3];
    hd->flags = p[4];
    hd->stream_id = (int32_t) (rx_h2_get32(p + 5) & 0x7fffffff);
}

void
rx_h2_frame_hd_write(uint8_t *p, uint32_t length, uint8_t type,
    uint8_t flags, int32_t stream_id)
{
    p[0] = (uint8_t) (length >> 16);
    p[1] = (uint8_t) (length >> 8);
    p[2] = (uint8_t) length;
    p[3] = type;
    p[4] = flags;
    rx_h2_put32(p + 5, (uint32_t) stream_id & 0x7fffffff);
}

/* The payload size each control type must have (0: any). */
static uint32_t
fixed_length(uint8_t type)
{
    switch (type) {
    case RX_H2_PRIORITY:      return 5;
    case RX_H2_RST_STREAM:    return 4;
    case RX_H2_PING:          return 8;
    case RX_H2_WINDOW_UPDATE: return 4;
    default:                  return 0;
    }
}

uint32_t
rx_h2_frame_check(const rx_h2_frame_hd_t *hd, uint32_t max_frame_size,
    const char **why)
{
    uint32_t want;
    int      conn_only = hd->type == RX_H2_SETTINGS || hd->type == RX_H2_PING
                         || hd->type == RX_H2_GOAWAY;

    if (hd->length > max_frame_size) {
        *why = "sent frame larger than SETTINGS_MAX_FRAME_SIZE";
        return RX_H2_FRAME_SIZE_ERROR;
    }
    if (hd->type > RX_H2_CONTINUATION) {
        return 0;                        /* unknown: ignored (RFC 9113 4.1) */
    }
    if (conn_only && hd->stream_id != 0) {
        *why = "sent a connection's frame on a stream";
        return RX_H2_PROTOCOL_ERROR;
    }
    if (!conn_only && hd->type != RX_H2_WINDOW_UPDATE && hd->stream_id == 0) {
        *why = "sent a stream's frame on stream 0";
        return RX_H2_PROTOCOL_ERROR;
    }
    want = fixed_length(hd->type);
    if (want && hd->length != want) {
        *why = "sent frame with incorrect length";
        return RX_H2_FRAME_SIZE_ERROR;
    }
    if (hd->type == RX_H2_SETTINGS
        && (hd->length % 6 || ((hd->flags & RX_H2_F_ACK) && hd->length))) {
        *why = "sent SETTINGS frame with incorrect length";
        return RX_H2_FRAME_SIZE_ERROR;
    }
    if (hd->type == RX_H2_GOAWAY && hd->length < 8) {
        *why = "sent GOAWAY frame with incorrect length";
        return RX_H2_FRAME_SIZE_ERROR;
    }
    want = (hd->type == RX_H2_DATA || hd->type == RX_H2_HEADERS)
           && (hd->flags & RX_H2_F_PADDED) ? 1 : 0;
    want += hd->type == RX_H2_HEADERS && (hd->flags & RX_H2_F_PRIORITY) ? 5 : 0;
    if (hd->length < want) {
        *why = "sent frame too short for its padding or priority";
        return RX_H2_FRAME_SIZE_ERROR;
    }
    return 0;
}

const char *
rx_h2_frame_type_name(uint8_t type)
{
    static const char *const names[] = { "DATA", "HEADERS", "PRIORITY",
        "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
        "WINDOW_UPDATE", "CONTINUATION" };

    return type <= RX_H2_CONTINUATION ? names[type] : "unknown";
}

const char *
rx_h2_error_name(uint32_t code)
{
    static const char *const names[] = { "NO_ERROR", "PROTOCOL_ERROR",
        "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
        "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED" };

    return code <= RX_H2_HTTP_1_1_REQUIRED ? names[code] : "unknown";
}

size_t
rx_h2_write_rst(uint8_t *p, int32_t id, uint32_t code)
{
    rx_h2_frame_hd_write(p, 4, RX_H2_RST_STREAM, 0, id);
    rx_h2_put32(p + RX_H2_FRAME_HDLEN, code);
    return RX_H2_RST_LEN;
}

size_t
rx_h2_write_window_update(uint8_t *p, int32_t id, uint32_t inc)
{
    rx_h2_frame_hd_write(p, 4, RX_H2_WINDOW_UPDATE, 0, id);
    rx_h2_put32(p + RX_H2_FRAME_HDLEN, inc & 0x7fffffff);
    return RX_H2_WU_LEN;
}

size_t
rx_h2_write_ping_ack(uint8_t *p, const uint8_t opaque[8])
{
    rx_h2_frame_hd_write(p, 8, RX_H2_PING, RX_H2_F_ACK, 0);
    memcpy(p + RX_H2_FRAME_HDLEN, opaque, 8);
    return RX_H2_PING_LEN;
}

size_t
rx_h2_write_goaway(uint8_t *p, int32_t last_id, uint32_t code)
{
    rx_h2_frame_hd_write(p, 8, RX_H2_GOAWAY, 0, 0);
    rx_h2_put32(p + RX_H2_FRAME_HDLEN, (uint32_t) last_id & 0x7fffffff);
    rx_h2_put32(p + RX_H2_FRAME_HDLEN + 4, code);
    return RX_H2_GOAWAY_LEN;
}

size_t
rx_h2_write_settings(uint8_t *p, const uint16_t *ids, const uint32_t *values,
    size_t n, int ack)
{
    size_t   i;
    uint8_t *q = p + RX_H2_FRAME_HDLEN;

    rx_h2_frame_hd_write(p, (uint32_t) (ack ? 0 : n * 6), RX_H2_SETTINGS,
                         ack ? RX_H2_F_ACK : 0, 0);
    for (i = 0; !ack && i < n; i++, q += 6) {
        q[0] = (uint8_t) (ids[i] >> 8);
        q[1] = (uint8_t) ids[i];
        rx_h2_put32(q + 2, values[i]);
    }
    return (size_t) (q - p);
}
