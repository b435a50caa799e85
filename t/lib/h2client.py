#!/usr/bin/python3
# t/lib/h2client.py: an HTTP/2 client for the t/http2*.t tests, on Debian's
# python3-h2 (real framing and HPACK). Prints one JSON object on stdout.
#
#   h2client.py PORT request [--tls] [--method M] [--path P] [--body-size N]
#               [--no-length] [--header k:v ...] [--streams N]
#               [--frame-size N] [--window N] [--reset-after N]
#               [--close-after N] [--then PATH]
#       N concurrent requests; out: {"responses": [{"status", "headers",
#       "body_len", "body"(first 200 bytes), "sha1"}], "goaway": code|null,
#       "then": the response to --then (a request on the same connection
#       after the others ended or were reset; with its "headers")}
#       --frame-size: the body in DATA frames of at most N bytes;
#       --window: our SETTINGS_INITIAL_WINDOW_SIZE (the response is paced);
#       --conn-window N: the connection's window grown by N at the start;
#       --reset-after: RST_STREAM CANCEL once N bytes of a response came
#       (--reset-index K: only the Kth stream's, counted from 0);
#       --req "METHOD PATH [N]" (repeatable): one stream each, with its own
#       method, path and body size, instead of --streams copies of --path;
#       each response also has "first_data"/"last_data" (the sequence
#       numbers of its first and last DATA frame on the connection: are
#       the streams interleaved?)
#       --close-after: the socket closed once N bytes came (streams open);
#       --linger S: after the responses, S more seconds for RST_STREAM
#       frames (a reset of a stream whose response ended: "reset" set,
#       "ended" true); out also has "last_stream_id" of a GOAWAY, and each
#       response "max_frame" (its largest DATA frame), "data_frames" (how
#       many DATA frames) and "empty_data" (how many of them were empty)
#   h2client.py PORT ATTACK [--count N]
#       rapid_reset | continuation | hpack_bomb | settings | ping |
#       empty_data | streams | zero_window
#       out: {"goaway": code|null, "refused": n, "resets": n, "responses": n,
#             "closed": bool}
import argparse, hashlib, json, socket, ssl, sys, time
import h2.connection, h2.config, h2.events, h2.settings, h2.errors
import hyperframe.frame as hf

def connect(port, tls):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["h2"])
        s = ctx.wrap_socket(s, server_hostname="localhost")
    return s

def new_conn(validate=True):
    cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                    validate_outbound_headers=validate,
                                    normalize_outbound_headers=validate)
    c = h2.connection.H2Connection(cfg)
    c.initiate_connection()
    return c

def pump(s, c, until, timeout=10):
    """reads and answers until until(events) says so; returns (events, closed)"""
    events = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            s.sendall(c.data_to_send())
        except OSError:
            pass
        if until(events):
            return events, False
        s.settimeout(max(0.05, deadline - time.time()))
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        except (ConnectionResetError, BrokenPipeError):
            return events, True
        if not d:
            return events, True
        try:
            new = c.receive_data(d)
        except h2.exceptions.ProtocolError:
            return events, True
        for e in new:
            if isinstance(e, h2.events.DataReceived):
                c.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
        events += new
    return events, False

def goaway_of(events, last=False):
    for e in events:
        if isinstance(e, h2.events.ConnectionTerminated):
            return e.last_stream_id if last else int(e.error_code)
    return None

class GoawayAside:
    """python-h2 treats a GOAWAY as the end of the connection and refuses
    the frames of the streams still in flight that follow it (RFC 9113 6.8
    lets them finish): GOAWAY frames are taken out of the bytes here and
    remembered, the rest goes to h2."""
    def __init__(self):
        self.buf = b""
        self.goaway = None          # (error code, last stream id)
    def feed(self, c, d):
        self.buf += d
        out = b""
        while len(self.buf) >= 9:
            n = int.from_bytes(self.buf[0:3], "big")
            if len(self.buf) < 9 + n:
                break
            frame, self.buf = self.buf[:9 + n], self.buf[9 + n:]
            if frame[3] == 7 and self.goaway is None:
                self.goaway = (int.from_bytes(frame[13:17], "big"),
                               int.from_bytes(frame[9:13], "big") & 0x7fffffff)
            elif frame[3] != 7:
                out += frame
        return c.receive_data(out) if out else []

def send_safe(s, c):
    """a peer that closed after its GOAWAY is not an error of ours"""
    try:
        s.sendall(c.data_to_send())
    except OSError:
        pass

def do_request(a):
    s = connect(a.port, a.tls)
    c = new_conn()
    if a.window is not None:
        c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: a.window})
    if a.conn_window:
        c.increment_flow_control_window(a.conn_window)
    ids = []
    bodies = {}
    reqs = [(a.method, a.path, a.body_size)] * a.streams
    if a.req:
        reqs = [(r.split()[0], r.split()[1], int(r.split()[2]) if len(r.split()) > 2 else 0)
                for r in a.req]
    for i, (method, path, body_size) in enumerate(reqs):
        sid = c.get_next_available_stream_id()
        hdrs = [(":method", method), (":path", path), (":scheme", "https" if a.tls else "http"),
                (":authority", "localhost")]
        body = b""
        if body_size:
            body = bytes((65 + i % 26 for i in range(body_size)))
            if not a.no_length:
                hdrs.append(("content-length", str(len(body))))
        for h in a.header or []:
            k, v = h.split(":", 1)
            hdrs.append((k.strip().lower(), v.strip()))
        c.send_headers(sid, hdrs, end_stream=not body)
        ids.append(sid)
        bodies[sid] = [body, 0]
    resp = {sid: {"status": None, "headers": {}, "body": b"", "ended": False, "reset": None,
                  "max_frame": 0, "first_data": None, "last_data": None,
                  "data_frames": 0, "empty_data": 0} for sid in ids}
    reset_ids = ids if a.reset_index is None else ids[a.reset_index:a.reset_index + 1]
    nframe = 0
    deadline = time.time() + 20
    closed = False
    events_all = []
    received = 0
    aside = GoawayAside()
    while time.time() < deadline and not all(r["ended"] or r["reset"] is not None for r in resp.values()):
        if a.close_after is not None and received >= a.close_after:
            s.close()
            closed = True
            break
        for sid, b in bodies.items():
            body, off = b
            while off < len(body) and not resp[sid]["ended"] and resp[sid]["reset"] is None:
                w = min(c.local_flow_control_window(sid), c.max_outbound_frame_size, len(body) - off,
                        a.frame_size or len(body))
                if w <= 0:
                    break
                c.send_data(sid, body[off:off + w])
                off += w
                if off == len(body):
                    c.end_stream(sid)
            b[1] = off
        send_safe(s, c)
        try:
            d = s.recv(65536)
        except (socket.timeout, ConnectionResetError):
            break
        if not d:
            closed = True
            break
        for e in aside.feed(c, d):
            events_all.append(e)
            if isinstance(e, h2.events.ResponseReceived):
                resp[e.stream_id]["status"] = int(dict(e.headers)[":status"])
                resp[e.stream_id]["headers"] = {k: v for k, v in e.headers}
            elif isinstance(e, h2.events.DataReceived):
                resp[e.stream_id]["body"] += e.data
                resp[e.stream_id]["max_frame"] = max(resp[e.stream_id]["max_frame"], len(e.data))
                resp[e.stream_id]["data_frames"] += 1
                resp[e.stream_id]["empty_data"] += not e.data
                received += len(e.data)
                nframe += 1
                if resp[e.stream_id]["first_data"] is None:
                    resp[e.stream_id]["first_data"] = nframe
                resp[e.stream_id]["last_data"] = nframe
                c.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
                if (a.reset_after is not None and e.stream_id in reset_ids and len(resp[e.stream_id]["body"]) >= a.reset_after
                        and resp[e.stream_id]["reset"] is None and not e.stream_ended):
                    c.reset_stream(e.stream_id, h2.errors.ErrorCodes.CANCEL)
                    resp[e.stream_id]["reset"] = -1     # by us
            elif isinstance(e, h2.events.StreamEnded):
                resp[e.stream_id]["ended"] = True
            elif isinstance(e, h2.events.StreamReset):
                resp[e.stream_id]["reset"] = int(e.error_code)
        send_safe(s, c)
    if a.linger and not closed:
        def lingered(events):
            for e in events:
                if isinstance(e, h2.events.StreamReset) and e.stream_id in resp:
                    resp[e.stream_id]["reset"] = int(e.error_code)
            return all(r["reset"] is not None for r in resp.values())
        ev, closed = pump(s, c, lingered, timeout=a.linger)
        events_all += ev
    out = {"responses": [{"status": resp[i]["status"], "headers": resp[i]["headers"],
                          "max_frame": resp[i]["max_frame"],
                          "data_frames": resp[i]["data_frames"],
                          "empty_data": resp[i]["empty_data"],
                          "first_data": resp[i]["first_data"], "last_data": resp[i]["last_data"],
                          "ended": resp[i]["ended"], "reset": resp[i]["reset"],
                          "body_len": len(resp[i]["body"]),
                          "sha1": hashlib.sha1(resp[i]["body"]).hexdigest(),
                          "body": resp[i]["body"][:200].decode("latin-1")} for i in ids],
           "goaway": aside.goaway[0] if aside.goaway else goaway_of(events_all),
           "closed": closed,
           "last_stream_id": aside.goaway[1] if aside.goaway else goaway_of(events_all, last=True)}
    if a.then and not closed:
        out["then"] = then_request(s, c, a)
    print(json.dumps(out))

def then_request(s, c, a):
    """one more GET on the same connection: does it go on?"""
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, hdrs(sid, a.then), end_stream=True)
    r = {"status": None, "body": b"", "ended": False, "reset": None}
    def done(events):
        for e in events:
            if getattr(e, "stream_id", None) != sid:
                continue
            if isinstance(e, h2.events.ResponseReceived):
                r["status"] = int(dict(e.headers)[":status"])
                r["headers"] = {(k.decode("latin-1") if isinstance(k, bytes) else k):
                                (v.decode("latin-1") if isinstance(v, bytes) else v)
                                for k, v in e.headers}
            elif isinstance(e, h2.events.DataReceived):
                r["body"] += e.data
            elif isinstance(e, h2.events.StreamEnded):
                r["ended"] = True
            elif isinstance(e, h2.events.StreamReset):
                r["reset"] = int(e.error_code)
        return r["ended"] or r["reset"] is not None
    seen = []
    def until(events):
        new = events[len(seen):]
        seen.extend(new)
        return done(new) if new else (r["ended"] or r["reset"] is not None)
    pump(s, c, until, timeout=20)
    r["body"] = r["body"][:200].decode("latin-1")
    return r

def hdrs(sid, path="/"):
    return [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "localhost")]

def attack(a):
    s = connect(a.port, False)
    c = new_conn(validate=False)
    s.sendall(c.data_to_send())
    n = a.count
    res = {"refused": 0, "resets": 0, "responses": 0}
    if a.mode == "rapid_reset":
        for i in range(n):
            sid = c.get_next_available_stream_id()
            c.send_headers(sid, hdrs(sid), end_stream=True)
            c.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
            if i % 50 == 49:
                try:
                    s.sendall(c.data_to_send())
                except OSError:
                    break
    elif a.mode == "continuation":
        # a HEADERS frame without END_HEADERS, then CONTINUATION frames
        import hpack
        block = hpack.Encoder().encode(hdrs(1))
        raw = hf.HeadersFrame(1, data=block, flags=["END_STREAM"]).serialize()
        for i in range(n):
            raw += hf.ContinuationFrame(1, data=hpack.Encoder().encode([("x-a", "b" * 100)])).serialize()
        s.sendall(c.data_to_send())
        try:
            s.sendall(raw)
        except OSError:
            pass
    elif a.mode == "hpack_bomb":
        sid = c.get_next_available_stream_id()
        h = hdrs(sid) + [("x-bomb%d" % i, "v" * 4000) for i in range(n)]
        c.send_headers(sid, h, end_stream=True)
    elif a.mode == "settings":
        raw = b"".join(hf.SettingsFrame(0, settings={2: 0}).serialize() for _ in range(n))
        try:
            s.sendall(c.data_to_send() + raw)
        except OSError:
            pass
    elif a.mode == "ping":
        raw = b"".join(hf.PingFrame(0, opaque_data=b"12345678").serialize() for _ in range(n))
        try:
            s.sendall(c.data_to_send() + raw)
        except OSError:
            pass
    elif a.mode == "empty_data":
        sid = c.get_next_available_stream_id()
        c.send_headers(sid, [(":method", "POST")] + hdrs(sid)[1:], end_stream=False)
        raw = b"".join(hf.DataFrame(sid, data=b"").serialize() for _ in range(n))
        try:
            s.sendall(c.data_to_send() + raw)
        except OSError:
            pass
    elif a.mode == "streams":
        for i in range(n):
            sid = c.get_next_available_stream_id()
            c.send_headers(sid, [(":method", "POST")] + hdrs(sid, "/")[1:], end_stream=False)
    elif a.mode == "zero_window":
        c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        sid = c.get_next_available_stream_id()
        c.send_headers(sid, hdrs(sid, a.path), end_stream=True)
    try:
        s.sendall(c.data_to_send())
    except OSError:
        pass
    ev, closed = pump(s, c, lambda e: any(isinstance(x, h2.events.ConnectionTerminated) for x in e),
                      timeout=a.timeout)
    for e in ev:
        if isinstance(e, h2.events.StreamReset):
            res["resets"] += 1
            if e.error_code == h2.errors.ErrorCodes.REFUSED_STREAM:
                res["refused"] += 1
        if isinstance(e, h2.events.ResponseReceived):
            res["responses"] += 1
    if not closed:
        # after GOAWAY the server closes: is it gone?
        s.settimeout(a.timeout)
        try:
            closed = s.recv(65536) == b""
            while not closed:
                closed = s.recv(65536) == b""
        except ConnectionResetError:
            # closed with the flood still unread in its buffer: the kernel
            # resets (the GOAWAY came before, it is asserted apart)
            closed = True
        except (socket.timeout, OSError):
            pass
    res["goaway"] = goaway_of(ev)
    res["closed"] = closed
    print(json.dumps(res))

p = argparse.ArgumentParser()
p.add_argument("port", type=int)
p.add_argument("mode")
p.add_argument("--tls", action="store_true")
p.add_argument("--method", default="GET")
p.add_argument("--path", default="/")
p.add_argument("--body-size", type=int, default=0)
p.add_argument("--no-length", action="store_true")
p.add_argument("--header", action="append")
p.add_argument("--streams", type=int, default=1)
p.add_argument("--count", type=int, default=1000)
p.add_argument("--timeout", type=float, default=10)
p.add_argument("--frame-size", type=int, default=0)
p.add_argument("--window", type=int)
p.add_argument("--conn-window", type=int, default=0)
p.add_argument("--reset-after", type=int)
p.add_argument("--close-after", type=int)
p.add_argument("--then")
p.add_argument("--req", action="append")
p.add_argument("--reset-index", type=int)
p.add_argument("--linger", type=float, default=0)
a = p.parse_args()
if a.mode == "request":
    do_request(a)
else:
    attack(a)
