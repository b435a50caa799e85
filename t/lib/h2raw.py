#!/usr/bin/python3
# t/lib/h2raw.py: raw HTTP/2 frames for t/http2_conformance.t, in the
# style of h2spec: hyperframe builds each frame and hpack encodes header
# blocks without any checks, so a case can send what a correct client
# never would. Prints one JSON object:
#   {"goaway": code|null, "last_stream_id": n|null, "resets": {sid: code},
#    "status": {sid: status}, "ended": [sid ...], "closed": bool}
#
#   h2raw.py PORT CASE [--path P]
# CASE is one of the names in case_bytes() below; late_frames: a request,
# then after the connection's end PING frames, reporting "late_send_error".
import argparse, json, socket, time
import hpack
import hyperframe.frame as hf

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def req(path="/", method="GET", extra=(), authority="localhost"):
    h = [(":method", method), (":scheme", "http"), (":path", path),
         (":authority", authority)]
    return h + list(extra)


class Case:
    def __init__(self, path):
        self.enc = hpack.Encoder()
        self.path = path

    def headers(self, sid, fields, end_stream=True, **kw):
        flags = ["END_HEADERS"] + (["END_STREAM"] if end_stream else [])
        return hf.HeadersFrame(sid, data=self.enc.encode(fields), flags=flags,
                               **kw).serialize()

    def data(self, sid, payload, end_stream=False):
        return hf.DataFrame(sid, data=payload,
                            flags=["END_STREAM"] if end_stream else []).serialize()


def raw_frame(ftype, flags, sid, payload):
    return (len(payload).to_bytes(3, "big") + bytes([ftype, flags])
            + (sid & 0x7fffffff).to_bytes(4, "big") + payload)


def settings(pairs):
    return raw_frame(4, 0, 0, b"".join(k.to_bytes(2, "big") + v.to_bytes(4, "big")
                                       for k, v in pairs))


def window_update(sid, inc):
    return raw_frame(8, 0, sid, (inc & 0x7fffffff).to_bytes(4, "big"))


def case_bytes(name, c):
    p = c.path
    if name in ("ok", "late_frames"):   # a correct request, for contrast
        return c.headers(1, req(p))
    if name == "data_too_large":        # beyond SETTINGS_MAX_FRAME_SIZE
        return (c.headers(1, req(p, "POST"), end_stream=False)
                + raw_frame(0, 0, 1, b"x" * 16385))
    if name == "settings_bad_length":   # SETTINGS payload not a multiple of 6
        return raw_frame(4, 0, 0, b"\x00\x03\x00\x00")
    if name == "ping_bad_length":
        return raw_frame(6, 0, 0, b"1234567")
    if name == "data_idle":             # DATA on a stream never opened
        return c.data(1, b"hello")
    if name == "data_closed":           # DATA after the stream ended both ways
        return c.headers(1, req(p))
    if name == "headers_stream0":
        return raw_frame(1, 0x5, 0, c.enc.encode(req(p)))
    if name == "data_stream0":
        return raw_frame(0, 0, 0, b"x")
    if name == "missing_path":
        return c.headers(1, [(":method", "GET"), (":scheme", "http"),
                             (":authority", "localhost")])
    if name == "missing_method":
        return c.headers(1, [(":scheme", "http"), (":path", p),
                             (":authority", "localhost")])
    if name == "empty_path":
        return c.headers(1, req(""))
    if name == "unknown_pseudo":
        return c.headers(1, req(p, extra=[(":foo", "bar")]))
    if name == "pseudo_after_regular":
        return c.headers(1, [(":method", "GET"), (":scheme", "http"),
                             ("x-a", "b"), (":path", p)])
    if name == "duplicate_path":
        return c.headers(1, req(p, extra=[(":path", p)]))
    if name == "uppercase_name":
        return c.headers(1, req(p, extra=[("X-Upper", "1")]))
    if name == "connection_header":
        return c.headers(1, req(p, extra=[("connection", "keep-alive")]))
    if name == "transfer_encoding":
        return c.headers(1, req(p, extra=[("transfer-encoding", "chunked")]))
    if name == "te_gzip":
        return c.headers(1, req(p, extra=[("te", "gzip")]))
    if name == "te_trailers":           # allowed: the only value of TE
        return c.headers(1, req(p, extra=[("te", "trailers")]))
    if name == "length_short":          # content-length 10, 5 bytes sent
        return (c.headers(1, req(p, "POST", [("content-length", "10")]), end_stream=False)
                + c.data(1, b"12345", end_stream=True))
    if name == "length_long":           # content-length 3, 5 bytes sent
        return (c.headers(1, req(p, "POST", [("content-length", "3")]), end_stream=False)
                + c.data(1, b"12345", end_stream=True))
    if name == "value_crlf":            # a second header line smuggled
        return c.headers(1, req(p, extra=[("x-a", "b\r\nx-injected: 1")]))
    if name == "value_lf_request":      # a second request smuggled
        return c.headers(1, req(p, extra=[(
            "x-a", "b\n\nGET /smuggled HTTP/1.1\nhost: x\n")]))
    if name == "value_space":           # RFC 9113 8.2.1: no whitespace at the ends
        return c.headers(1, req(p, extra=[("x-a", " b")]))
    if name == "name_space":
        return c.headers(1, req(p, extra=[("x a", "b")]))
    if name == "value_nul":
        return c.headers(1, req(p, extra=[("x-a", "b\x00c")]))
    if name == "name_crlf":
        return c.headers(1, req(p, extra=[("x-a\r\nx-injected", "1")]))
    if name == "name_colon":
        return c.headers(1, req(p, extra=[("x-a:x-injected", "1")]))
    if name == "path_crlf":             # the request line itself
        return c.headers(1, req(p + " HTTP/1.1\r\nx-injected: 1\r\n\r\nGET /smuggled"))
    if name == "path_space":
        return c.headers(1, req(p + " HTTP/1.1"))
    if name == "method_crlf":
        return c.headers(1, req(p, "GET /smuggled HTTP/1.1\r\nx-injected: 1\r\n\r\nGET"))
    if name == "authority_crlf":
        return c.headers(1, req(p, authority="localhost\r\nx-injected: 1"))
    if name == "cookie_crlf":
        return c.headers(1, req(p, extra=[("cookie", "a=b\r\nx-injected: 1")]))
    if name == "settings_push_2":       # SETTINGS_ENABLE_PUSH 2
        return settings([(2, 2)])
    if name == "settings_window_big":   # SETTINGS_INITIAL_WINDOW_SIZE 2^31
        return settings([(4, 0x80000000)])
    if name == "settings_frame_small":  # SETTINGS_MAX_FRAME_SIZE below 16384
        return settings([(5, 16383)])
    if name == "settings_frame_big":    # SETTINGS_MAX_FRAME_SIZE above 2^24-1
        return settings([(5, 0x1000000)])
    if name == "window_overflow_conn":
        return window_update(0, 0x7fffffff) + window_update(0, 0x7fffffff)
    if name == "window_overflow_stream":
        return (c.headers(1, req(p, "POST"), end_stream=False)
                + window_update(1, 0x7fffffff) + window_update(1, 0x7fffffff))
    if name == "window_zero_conn":
        return window_update(0, 0)
    if name == "priority_self":         # PRIORITY: a stream on itself
        return raw_frame(2, 0, 1, (1).to_bytes(4, "big") + b"\x10")
    if name == "headers_priority_self":
        # END_STREAM | END_HEADERS | PRIORITY, depending on stream 1
        return raw_frame(1, 0x25, 1, (1).to_bytes(4, "big") + b"\x10"
                         + c.enc.encode(req(p)))
    if name == "even_stream":           # a client stream must be odd
        return c.headers(2, req(p))
    if name == "stream_id_down":        # stream ids must grow
        return c.headers(5, req(p)) + c.headers(3, req(p))
    raise SystemExit("unknown case " + name)


def run(port, name, path):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    c = Case(path)
    dec = hpack.Decoder()
    out = {"goaway": None, "last_stream_id": None, "resets": {}, "status": {},
           "ended": [], "closed": False}
    s.sendall(PREFACE + settings([]))
    payload = case_bytes(name, c)
    if name == "data_closed":
        s.sendall(payload)
        payload = None
    buf = b""
    deadline = time.time() + 10
    quiet = None
    while time.time() < deadline:
        if payload is not None and quiet is None:
            try:
                s.sendall(payload)
            except OSError:
                pass
            payload = b""
            quiet = time.time() + (6 if name == "late_frames" else 2)
        if quiet is not None and time.time() > quiet:
            break
        s.settimeout(0.2)
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            out["closed"] = True
            break
        if not d:
            out["closed"] = True
            break
        buf += d
        while len(buf) >= 9:
            n = int.from_bytes(buf[0:3], "big")
            if len(buf) < 9 + n:
                break
            t, fl, sid = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff
            body, buf = buf[9:9 + n], buf[9 + n:]
            if t == 4 and not fl & 1:
                s.sendall(raw_frame(4, 1, 0, b""))
            elif t == 7:
                out["goaway"] = int.from_bytes(body[4:8], "big")
                out["last_stream_id"] = int.from_bytes(body[0:4], "big") & 0x7fffffff
            elif t == 3:
                out["resets"][str(sid)] = int.from_bytes(body[0:4], "big")
            elif t == 1:
                pad = body[0] if fl & 0x8 else 0
                blk = body[(1 if fl & 0x8 else 0) + (5 if fl & 0x20 else 0):len(body) - pad]
                for k, v in dec.decode(blk):
                    if k == ":status":
                        out["status"][str(sid)] = int(v)
            if t in (0, 1) and fl & 1:
                out["ended"].append(sid)
                if name == "data_closed" and payload is None and sid == 1:
                    payload = c.data(1, b"late")
                    quiet = None
    if name == "late_frames":
        # after the server's GOAWAY and FIN: frames still sent are read and
        # dropped (lingering close), not answered with a TCP reset
        out["late_send_error"] = None
        for i in range(3):
            time.sleep(0.3)
            try:
                s.sendall(raw_frame(6, 0, 0, b"12345678"))
            except OSError as e:
                out["late_send_error"] = str(e)
                break
    print(json.dumps(out))


p = argparse.ArgumentParser()
p.add_argument("port", type=int)
p.add_argument("case")
p.add_argument("--path", default="/")
a = p.parse_args()
run(a.port, a.case, a.path)
