#!/usr/bin/env python3
"""t/bench/idle_conns.py: the memory of idle connections (t/bench/run's idle
scenarios; python3, stdlib only).

    idle_conns.py --port PORT --pid PID [--mode M] [--count N] [--path P]

Opens N (10,000) connections to 127.0.0.1:PORT and prints the growth of the
RSS (and PSS) of the server's whole process tree (PID = its master, so
master + workers, as ../shared/bench/bench.sh's idle10k) per connection,
measured 1 s after the last one opened. Modes:
  batched    bench.sh's idle10k: 250 connections at a time, non-blocking,
             one GET each (answered), all held
  fresh      one at a time, connections that send nothing
  keepalive  one at a time, each after one GET (answered before the next)
  h2         one at a time over TLS with ALPN h2 (python3-h2: Debian's
             /usr/bin/python3), each after one GET on stream 1 (answered),
             its window update sent: an idle HTTP/2 connection (#20)
While they are held a GET on a new connection must be answered (the check),
and after 2 s more the connections the server closed are counted. The last
line is "IDLEJSON {...}" for benchlib.py record-idle. The server needs
worker_connections above N (idle.conf: 16384) and a keepalive_timeout
longer than the run.
"""
import argparse
import json
import os
import resource
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import http_get, mem  # noqa: E402


def response_done(buf):
    """True once buf holds a whole response with a Content-Length body."""
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return False
    clen = 0
    for ln in head.split(b"\r\n"):
        if ln.lower().startswith(b"content-length:"):
            clen = int(ln.split(b":")[1])
    return len(body) >= clen


def open_batched(port, count, req, batch=250):
    """bench.sh's way: connect a batch without blocking, GET on each, read
    each answer; returns (held sockets, failures)."""
    ep = select.epoll()
    socks, failed, i = [], 0, 0
    while i < count:
        n = min(batch, count - i)
        ents = {}
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            ents[s.fileno()] = [s, False, b""]  # socket, request sent, bytes read
            ep.register(s.fileno(), select.EPOLLOUT)
        pending, deadline = set(ents), time.monotonic() + 15
        while pending and time.monotonic() < deadline:
            for fd, ev in ep.poll(1.0):
                ent = ents[fd]
                s = ent[0]
                if not ent[1]:
                    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) or ev & (select.EPOLLERR | select.EPOLLHUP):
                        pending.discard(fd); ep.unregister(fd); s.close(); failed += 1
                        continue
                    s.send(req)
                    ent[1] = True
                    ep.modify(fd, select.EPOLLIN)
                    continue
                try:
                    d = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    d = b""
                if not d:
                    pending.discard(fd); ep.unregister(fd); s.close(); failed += 1
                    continue
                ent[2] += d
                if response_done(ent[2]):
                    pending.discard(fd); ep.unregister(fd); socks.append(s)
        for fd in pending:
            ep.unregister(fd)
            ents[fd][0].close()
            failed += 1
        i += n
    ep.close()
    return socks, failed


def open_sequential(port, count, req):
    """One connection at a time; req None: send nothing (a fresh connection)."""
    socks, failed = [], 0
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            if req:
                s.sendall(req)
                buf = b""
                while not response_done(buf):
                    d = s.recv(65536)
                    if not d:
                        raise OSError("closed before the answer")
                    buf += d
            socks.append(s)
        except OSError:
            failed += 1
    return socks, failed


def open_h2(port, count, path):
    """HTTP/2 over TLS, one connection at a time, one GET each."""
    import ssl
    import h2.config
    import h2.connection
    import h2.events
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    socks, failed = [], 0
    for _ in range(count):
        try:
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5),
                                server_hostname="localhost")
            if s.selected_alpn_protocol() != "h2":
                raise OSError("no h2 by ALPN")
            c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            c.initiate_connection()
            c.send_headers(1, [(":method", "GET"), (":path", path), (":scheme", "https"),
                               (":authority", "localhost")], end_stream=True)
            s.sendall(c.data_to_send())
            done = False
            while not done:
                d = s.recv(65536)
                if not d:
                    raise OSError("closed before the answer")
                for ev in c.receive_data(d):
                    if isinstance(ev, h2.events.DataReceived):
                        c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                    if isinstance(ev, h2.events.StreamEnded):
                        done = True
                out = c.data_to_send()
                if out:
                    s.sendall(out)
            socks.append(s)
        except (OSError, ssl.SSLError):
            failed += 1
    return socks, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True, help="the server's master")
    ap.add_argument("--mode", choices=("batched", "fresh", "keepalive", "h2"), default="batched")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--path", default="/small.txt")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < a.count + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(a.count + 100, hard), hard))
    req = f"GET {a.path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()
    time.sleep(0.5)
    rss0, pss0, _ = mem(a.pid)
    t0 = time.monotonic()
    if a.mode == "batched":
        socks, failed = open_batched(a.port, a.count, req)
    elif a.mode == "h2":
        socks, failed = open_h2(a.port, a.count, a.path)
    else:
        socks, failed = open_sequential(a.port, a.count, req if a.mode == "keepalive" else None)
    t_open = time.monotonic() - t0
    time.sleep(1.0)
    rss1, pss1, _ = mem(a.pid)
    t1 = time.monotonic()
    try:  # the server must still answer while the connections are held
        st, _, _ = http_get(a.port, a.path, timeout=5, tls=a.mode == "h2")
        check = {"status": st, "ms": round((time.monotonic() - t1) * 1000, 2)}
    except OSError as e:
        check = {"status": 0, "error": str(e)}
    time.sleep(2.0)
    p = select.poll()
    for s in socks:
        p.register(s.fileno(), select.POLLIN)
    closed = len(p.poll(0))  # readable = closed by the server (nothing else is due)
    n = len(socks)
    for s in socks:
        s.close()
    res = {"mode": a.mode, "opened": n, "failed": failed, "open_s": round(t_open, 2),
           "rss_before_kb": rss0, "rss_after_kb": rss1, "pss_before_kb": pss0, "pss_after_kb": pss1,
           "bytes_per_conn": round((rss1 - rss0) * 1024 / n, 1) if n else None,
           "pss_bytes_per_conn": round((pss1 - pss0) * 1024 / n, 1) if n else None,
           "closed_by_server": closed, "check": check}
    print("IDLEJSON " + json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
