/*
 * tls_conn.h: the state of one TLS connection and the calls between the
 * files that share it (event/tls.c, tls_bio.c, tls_lib.c); private to
 * them. OpenSSL is included through tls.h.
 */
#ifndef RX_TLS_CONN_H
#define RX_TLS_CONN_H

#include "event.h"
#include "tls.h"

#if (RX_HAVE_OPENSSL)

#define RX_TLS_RECORD      16384          /* plaintext per record */
#define RX_TLS_FLIGHT_MAX  (64 * 1024)    /* ciphertext encrypted ahead */

struct rx_tls_conn_s {
    SSL                 *ssl;
    rx_conn_t           *c;
    rx_posted_t          posted;        /* deliver what waits inside */
    rx_posted_t          sent_posted;   /* a send that went at once is
                                           reported from here */

    /* ciphertext received: lent for one call, then what is kept */
    const char          *lent;
    size_t               lent_len;
    char                *kept;
    size_t               kept_start;
    size_t               kept_len;
    size_t               kept_cap;

    /* ciphertext to send: collected, and the flight with the kernel */
    char                *out;
    size_t               out_len;
    size_t               out_cap;
    char                *flight;
    size_t               flight_len;
    size_t               flight_sent;
    size_t               flight_cap;
    bool                 in_flight;

    /* the protocol's send: its iovecs, how far they are encrypted */
    const struct iovec  *app_iov;
    int                  app_niov;
    int                  app_i;
    size_t               app_off;
    size_t               app_total;
    bool                 app_pending;
    bool                 in_send;       /* inside the protocol's send */
    bool                 more;          /* more of it is encrypted next */

    unsigned             server:1;
    unsigned             detect_plain:1;
    unsigned             plain_http:1;
    unsigned             handshaked:1;
    unsigned             eof:1;          /* the peer closed TCP */
    unsigned             received:1;     /* a byte came from the peer */
    unsigned             reported:1;     /* an end or an error was reported */
    unsigned             shutdown:1;     /* shut down write after flight */
    unsigned             early:1;        /* reading TLS 1.3 early data */
    unsigned             early_used:1;   /* plaintext came as early data */
    unsigned             ktls_tx:1;      /* the kernel encrypts our sends */
    unsigned             ktls_ctrl:1;    /* OpenSSL's next write: a record */
    unsigned char        ktls_ctrl_type; /* ... of this type */
    const char          *saved_action;
    char                *error;         /* client side: why it failed */
};

/* ---- tls_bio.c: the BIO, its buffers, kTLS ----------------------------- */

/* Creates the BIO method once per process (idempotent); RX_ERROR when
 * OpenSSL cannot, with its errors queued. */
rx_int_t rx_tls_bio_init(void);

/* A BIO of ours for t (reads t->kept and t->lent, writes t->out), NULL
 * when out of memory. */
BIO *rx_tls_bio_new(rx_tls_conn_t *t);

/* Copies what OpenSSL left of the lent ciphertext into t->kept, so that
 * the ring's buffer can go back; false when out of memory. */
bool rx_tls_keep_lent(rx_tls_conn_t *t);

/* Frees t->kept once it is empty: an idle connection holds no input
 * buffer. */
void rx_tls_release_kept(rx_tls_conn_t *t);

/* Gives an output buffer back (to the worker's spares when it has the
 * usual size) and clears *buf and *cap. */
void rx_tls_out_put(char **buf, size_t *cap);

/* Sends len bytes of ciphertext at once from where OpenSSL wrote them
 * (a non-blocking send on the worker's thread), when nothing is queued
 * before them; the bytes the socket took (0: none). */
size_t rx_tls_send_direct(rx_tls_conn_t *t, const char *data, size_t len);

/* Sends t->out now with a non-blocking send (before kTLS takes over, or a
 * close_notify); what the socket does not take stays in t->out. true when
 * all went. */
bool rx_tls_send_out_now(rx_tls_conn_t *t);

/* ---- tls_lib.c: errors ------------------------------------------------- */

/*
 * Logs a failure of the connection: on the server side at level with the
 * client's address; on the client side (an upstream) the text is kept
 * for the protocol to log with its request (rx_tls_error) instead.
 * ssl_errors appends OpenSSL's error queue; the queue is emptied.
 */
void rx_tls_fail_log(rx_tls_conn_t *t, unsigned level, bool ssl_errors,
    const char *fmt, ...);

#endif /* RX_HAVE_OPENSSL */

#endif /* RX_TLS_CONN_H */
