/*
 * op.h: what an io_uring completion belongs to. Every SQE's user_data
 * carries the operation kind, the connection slot and the slot's
 * generation, so a completion for a slot that has since been reused is
 * recognised and dropped.
 *
 *   63      56 55                32 31      24 23          0
 *   [  kind  ] [   generation 24   ] [  tag   ] [   slot    ]
 *
 * A connection's slot is below 2^24 (worker_connections is at most that),
 * so the top byte of the slot word is a tag of the protocol's: which of
 * its users (an HTTP request or subrequest) submitted the operation, so
 * that the completion goes back to it. Other kinds (accept, DNS) use the
 * whole word as they like.
 */
#ifndef RX_OP_H
#define RX_OP_H

typedef enum {
    RX_OP_NONE = 0,
    RX_OP_SIGNAL,      /* read on the worker's signalfd */
    RX_OP_TIMEOUT,     /* the loop's own wake-up */
    RX_OP_ACCEPT,      /* slot = listening index */
    RX_OP_RECV,
    RX_OP_SEND,
    RX_OP_CLOSE,
    RX_OP_CANCEL,
    RX_OP_CONNECT,
    RX_OP_SPLICE,
    RX_OP_OPEN,
    RX_OP_STATX,
    RX_OP_WRITE,       /* log files */
    RX_OP_READ,        /* file reads for responses */
    RX_OP_POLL,        /* one-shot readiness (a full socket for sendfile) */
    RX_OP_FS,          /* rename, unlink, mkdir, link (WebDAV) */
    RX_OP_DNS,         /* the resolver's sockets (resolver_io.c): slot is
                          theirs, not a connection's */
    RX_OP_SEND_QUIET,  /* a quiet send's failure (conn_quiet.c) */
    RX_OP_KINDS
} rx_op_kind_t;

#define RX_OP_GEN_MASK  0xffffffu
#define RX_OP_SLOT_MASK 0xffffffu      /* a connection's slot */
#define RX_OP_TAG_SHIFT 24

static inline uint64_t
rx_op_pack(rx_op_kind_t kind, uint32_t slot, uint32_t gen)
{
    return ((uint64_t) kind << 56) | ((uint64_t) (gen & RX_OP_GEN_MASK) << 32)
           | slot;
}

static inline rx_op_kind_t rx_op_kind(uint64_t ud) { return (rx_op_kind_t) (ud >> 56); }
static inline uint32_t rx_op_gen(uint64_t ud) { return (uint32_t) (ud >> 32) & RX_OP_GEN_MASK; }
static inline uint32_t rx_op_slot(uint64_t ud) { return (uint32_t) ud; }
static inline uint8_t rx_op_tag(uint64_t ud) { return (uint8_t) ((uint32_t) ud >> RX_OP_TAG_SHIFT); }

#endif /* RX_OP_H */
