/*
 * tls_bio.c: the BIO between OpenSSL and the ring, its input and output
 * buffers (the output's spares are the worker's), and kTLS: handing the
 * write keys to the kernel, the control records OpenSSL still writes, and
 * the probe for the "tls" ULP.
 *
 * What the BIO reads is ciphertext the ring received (lent for one call,
 * then kept); what it writes goes to the socket at once when nothing is
 * queued before it (rx_tls_send_direct), else is appended to t->out for
 * event/tls.c to send; and it hands over to kTLS.
 */
#include "event.h"
#include "tls_conn.h"

#if (RX_HAVE_OPENSSL)

#include <netinet/tcp.h>
#include <linux/tls.h>

/* OpenSSL's internal BIO controls for kTLS (include/internal/bio.h of
 * OpenSSL 3; only the GET ones are public): a BIO of our own must answer
 * them for OpenSSL to hand the kernel its keys */
#define TLS_BIO_SET_KTLS            72
#define TLS_BIO_SET_KTLS_CTRL_MSG   74
#define TLS_BIO_CLEAR_KTLS_CTRL_MSG 75

static BIO_METHOD *bio_method;
static int         ktls_probe = -1;

/* ---- buffers --------------------------------------------------------- */

static bool
buf_reserve(char **buf, size_t *cap, size_t need)
{
    size_t  n;
    char   *p;

    if (need <= *cap) {
        return true;
    }
    n = *cap ? *cap : 4096;
    while (n < need) {
        n *= 2;
    }
    p = realloc(*buf, n);
    if (p == NULL) {
        return false;
    }
    *buf = p;
    *cap = n;
    return true;
}

static void
free_buf(char **buf, size_t *cap)
{
    free(*buf);
    *buf = NULL;
    *cap = 0;
}

/*
 * Output buffers are of one size, TLS_OUT_SIZE: what is encrypted ahead
 * (RX_TLS_FLIGHT_MAX) plus the record that crosses it, so the common case
 * never reallocates. A connection holds its two only while it sends;
 * then they go to the worker's spares, so that the next response (of any
 * connection) takes them back without malloc: buffers this large come
 * from mmap, and each new one would fault its pages in and each free
 * would unmap them (measured: most of the CPU of 1 MiB responses).
 */
#define TLS_OUT_SIZE     (RX_TLS_FLIGHT_MAX + 2 * (RX_TLS_RECORD + 512))
#define TLS_OUT_SPARES   32

static char   *out_spares[TLS_OUT_SPARES];
static int     nout_spares;

static bool
out_get(char **buf, size_t *cap)
{
    if (*buf != NULL) {
        return true;
    }
    *buf = nout_spares > 0 ? out_spares[--nout_spares] : malloc(TLS_OUT_SIZE);
    *cap = *buf ? TLS_OUT_SIZE : 0;
    return *buf != NULL;
}

void
rx_tls_out_put(char **buf, size_t *cap)
{
    if (*buf != NULL && *cap == TLS_OUT_SIZE && nout_spares < TLS_OUT_SPARES) {
        out_spares[nout_spares++] = *buf;
        *buf = NULL;
        *cap = 0;
        return;
    }
    free_buf(buf, cap);         /* grown past the size (a long handshake) */
}

bool
rx_tls_keep_lent(rx_tls_conn_t *t)
{
    if (t->lent_len == 0) {
        return true;
    }
    if (t->kept_start > 0 && t->kept_len > 0) {
        memmove(t->kept, t->kept + t->kept_start, t->kept_len);
    }
    t->kept_start = 0;
    if (!buf_reserve(&t->kept, &t->kept_cap, t->kept_len + t->lent_len)) {
        return false;
    }
    memcpy(t->kept + t->kept_len, t->lent, t->lent_len);
    t->kept_len += t->lent_len;
    t->lent = NULL;
    t->lent_len = 0;
    return true;
}

void
rx_tls_release_kept(rx_tls_conn_t *t)
{
    if (t->kept_len == 0 && t->kept_cap > 0) {
        free_buf(&t->kept, &t->kept_cap);
        t->kept_start = 0;
    }
}

/* ---- kTLS ------------------------------------------------------------- */

/* The size of the kernel's crypto_info for a cipher (OpenSSL's own
 * structure has a union of them first, then a length we do not rely on). */
static size_t
ktls_info_size(const struct tls_crypto_info *info)
{
    switch (info->cipher_type) {
    case TLS_CIPHER_AES_GCM_128:
        return sizeof(struct tls12_crypto_info_aes_gcm_128);
    case TLS_CIPHER_AES_GCM_256:
        return sizeof(struct tls12_crypto_info_aes_gcm_256);
    case TLS_CIPHER_AES_CCM_128:
        return sizeof(struct tls12_crypto_info_aes_ccm_128);
    case TLS_CIPHER_CHACHA20_POLY1305:
        return sizeof(struct tls12_crypto_info_chacha20_poly1305);
    default:
        return 0;
    }
}

/*
 * The records of a send of several go to the socket from OpenSSL's own
 * buffer, as they are encrypted, when nothing waits before them: no copy into
 * t->out and no ring send behind it (nginx's socket BIO does the same; a
 * copy of every byte sent was ~5 % of the CPU of 1 MiB responses over
 * HTTP/2). While more records of the same send follow, MSG_MORE holds
 * them in the socket (corked) and the last one pushes them together: as
 * few segments, and wake-ups of the peer, as one gathered send made. The
 * handshake's records are still gathered (one flight, one segment), and
 * so is what a full socket does not take, for the ring.
 */
size_t
rx_tls_send_direct(rx_tls_conn_t *t, const char *data, size_t len)
{
    ssize_t n;

    if (!t->handshaked || t->in_flight || t->out_len > 0
        || t->c->state != RX_CONN_ACTIVE) {
        return 0;
    }
    /* a send of one record (a small response, a batch of HTTP/2 frames)
     * goes by the ring: its SQE is submitted with the loop turn's others,
     * where a syscall of its own cost more (tls-1k: 1.2x the CPU) */
    if (!t->more && t->app_total == 0) {
        return 0;
    }
    do {
        n = send(t->c->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL
                 | (t->more ? MSG_MORE : 0));
    } while (n == -1 && errno == EINTR);
    /* an error is left to the ring's send of the rest, which reports it */
    return n > 0 ? (size_t) n : 0;
}

/*
 * Sends what OpenSSL encrypted so far, now, from the worker (before
 * TLS_TX, after which the kernel would encrypt it a second time; a
 * close_notify before the close). A socket that takes less keeps the rest
 * for the ring.
 */
bool
rx_tls_send_out_now(rx_tls_conn_t *t)
{
    size_t  done = 0;
    ssize_t n;

    while (done < t->out_len) {
        n = send(t->c->fd, t->out + done, t->out_len - done,
                 MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n <= 0) {
            if (n == -1 && errno == EINTR) {
                continue;
            }
            break;
        }
        done += (size_t) n;
    }
    if (done > 0 && done < t->out_len) {
        memmove(t->out, t->out + done, t->out_len - done);
    }
    t->out_len -= done;
    return t->out_len == 0;
}

/*
 * BIO_CTRL_SET_KTLS for sending: OpenSSL has the application write keys
 * and asks whether the kernel takes them. Not while ciphertext of ours is
 * with the ring (it must reach the socket before the switch), nor for
 * reading (decryption stays here, where the ring's buffers are).
 */
static long
ktls_start_tx(rx_tls_conn_t *t, long is_tx, const struct tls_crypto_info *info)
{
    rx_conn_t *c = t->c;
    size_t     size = info ? ktls_info_size(info) : 0;

    if (!is_tx || size == 0 || t->in_flight || c->state != RX_CONN_ACTIVE
        || !rx_tls_send_out_now(t)) {
        return 0;
    }
    if (setsockopt(c->fd, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) == -1
        && errno != EEXIST) {
        rx_log_debug(&c->log, errno, "kTLS: setsockopt(TCP_ULP) failed");
        return 0;
    }
    if (setsockopt(c->fd, SOL_TLS, TLS_TX, info, (socklen_t) size) == -1) {
        rx_log_debug(&c->log, errno, "kTLS: setsockopt(TLS_TX) failed");
        return 0;
    }
    t->ktls_tx = true;
    rx_tls_out_put(&t->out, &t->out_cap);
    return 1;
}

/*
 * A record OpenSSL writes once the kernel encrypts: its plaintext, sent at
 * once with its type in a control message (the kernel sends the whole
 * record or nothing). Only control records come this way (the protocol's
 * data goes to the socket directly), and OpenSSL flushed first, so
 * nothing of ours is ahead of it.
 */
static int
ktls_write_record(rx_tls_conn_t *t, BIO *b, const char *data, int len)
{
    union {
        struct cmsghdr hdr;
        char           buf[CMSG_SPACE(sizeof(unsigned char))];
    } cbuf;
    struct msghdr   msg;
    struct iovec    iov;
    struct cmsghdr *cmsg;
    ssize_t         n;

    if (!t->ktls_ctrl || t->in_flight || len < 0) {
        return -1;
    }
    memset(&msg, 0, sizeof(msg));
    memset(&cbuf, 0, sizeof(cbuf));
    iov.iov_base = (void *) data;
    iov.iov_len = (size_t) len;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.buf;
    msg.msg_controllen = sizeof(cbuf.buf);
    cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_TLS;
    cmsg->cmsg_type = TLS_SET_RECORD_TYPE;
    cmsg->cmsg_len = CMSG_LEN(sizeof(unsigned char));
    *CMSG_DATA(cmsg) = t->ktls_ctrl_type;
    do {
        n = sendmsg(t->c->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n == -1 && errno == EINTR);
    if (n == -1) {
        if (errno == EAGAIN) {
            BIO_set_retry_write(b);
        }
        return -1;
    }
    t->ktls_ctrl = false;
    return len;
}

/* ---- the BIO --------------------------------------------------------- */

static int
bio_write(BIO *b, const char *data, int len)
{
    rx_tls_conn_t *t = BIO_get_data(b);
    size_t         done;

    BIO_clear_retry_flags(b);
    if (t->ktls_tx) {
        return ktls_write_record(t, b, data, len);
    }
    if (len <= 0) {
        return 0;
    }
    done = rx_tls_send_direct(t, data, (size_t) len);
    if (done == (size_t) len) {
        return len;
    }
    if (!out_get(&t->out, &t->out_cap)
        || !buf_reserve(&t->out, &t->out_cap,
                        t->out_len + (size_t) len - done)) {
        return -1;
    }
    memcpy(t->out + t->out_len, data + done, (size_t) len - done);
    t->out_len += (size_t) len - done;
    return len;
}

static int
bio_read(BIO *b, char *buf, int len)
{
    rx_tls_conn_t *t = BIO_get_data(b);
    size_t         n;

    BIO_clear_retry_flags(b);
    if (len <= 0) {
        return 0;
    }
    if (t->kept_len > 0) {
        n = rx_min((size_t) len, t->kept_len);
        memcpy(buf, t->kept + t->kept_start, n);
        t->kept_start += n;
        t->kept_len -= n;
        if (t->kept_len == 0) {
            t->kept_start = 0;
        }
        return (int) n;
    }
    if (t->lent_len > 0) {
        n = rx_min((size_t) len, t->lent_len);
        memcpy(buf, t->lent, n);
        t->lent += n;
        t->lent_len -= n;
        return (int) n;
    }
    if (t->eof) {
        return 0;
    }
    BIO_set_retry_read(b);
    return -1;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    rx_tls_conn_t *t = BIO_get_data(b);

    switch (cmd) {
    case BIO_CTRL_FLUSH:
        /* the ring sends when the call returns; with kTLS, OpenSSL asks
         * before a control record, which must not overtake a send */
        return t->ktls_tx ? !t->in_flight : 1;
    case BIO_CTRL_EOF:
        /* OpenSSL asks after a read of 0: the peer closed TCP */
        return t->eof && t->kept_len == 0 && t->lent_len == 0;
    case TLS_BIO_SET_KTLS:
        return ktls_start_tx(t, num, ptr);
    case BIO_CTRL_GET_KTLS_SEND:
        return t->ktls_tx;
    case BIO_CTRL_GET_KTLS_RECV:
        return 0;
    case TLS_BIO_SET_KTLS_CTRL_MSG:
        t->ktls_ctrl = true;
        t->ktls_ctrl_type = (unsigned char) num;
        return 1;
    case TLS_BIO_CLEAR_KTLS_CTRL_MSG:
        t->ktls_ctrl = false;
        return 1;
    default:
        return 0;
    }
}

static int
bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

rx_int_t
rx_tls_bio_init(void)
{
    if (bio_method != NULL) {
        return RX_OK;
    }
    bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                              "ringx ring");
    if (bio_method == NULL
        || !BIO_meth_set_write(bio_method, bio_write)
        || !BIO_meth_set_read(bio_method, bio_read)
        || !BIO_meth_set_ctrl(bio_method, bio_ctrl)
        || !BIO_meth_set_create(bio_method, bio_create)) {
        return RX_ERROR;
    }
    return RX_OK;
}

BIO *
rx_tls_bio_new(rx_tls_conn_t *t)
{
    BIO *bio = BIO_new(bio_method);

    if (bio != NULL) {
        BIO_set_data(bio, t);
    }
    return bio;
}

/* ---- the kTLS probe ---------------------------------------------------- */

bool
rx_tls_ktls_available(void)
{
    struct sockaddr_in sin;
    socklen_t          len = sizeof(sin);
    int                l, s;

    if (ktls_probe != -1) {
        return ktls_probe == 1;
    }
    /* the ULP attaches to a connected TCP socket only: a loopback pair */
    ktls_probe = 0;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l != -1 && s != -1
        && bind(l, (struct sockaddr *) &sin, sizeof(sin)) == 0
        && listen(l, 1) == 0
        && getsockname(l, (struct sockaddr *) &sin, &len) == 0
        && connect(s, (struct sockaddr *) &sin, sizeof(sin)) == 0
        && setsockopt(s, SOL_TCP, TCP_ULP, "tls", sizeof("tls")) == 0) {
        ktls_probe = 1;
    }
    if (l != -1) close(l);
    if (s != -1) close(s);
    return ktls_probe == 1;
}

#endif /* RX_HAVE_OPENSSL */
