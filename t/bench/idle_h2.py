#!/usr/bin/env python3
# t/bench/idle_h2.py PORT WORKER_PID [N] [MODE]: the memory of idle HTTP/2
# connections over TLS (ALPN h2). Opens N (2,000) connections to
# 127.0.0.1:PORT and keeps them open; MODE "request" (the default) sends one
# GET /1k.bin on each and reads its whole response, MODE "preface" only the
# connection preface and SETTINGS (waiting for the server's). Prints the
# worker's VmRSS before and after, and the growth per connection. Run it
# against ringx and nginx with the same config (one worker,
# worker_connections above N, keepalive_timeout longer than the run).
# IDLE_PLAIN=1: cleartext HTTP/2 with prior knowledge (h2c) instead of TLS.
# IDLE_HOLD=S keeps the connections S seconds more after printing (to look
# at the worker meanwhile). Needs python3-h2 (Debian's, /usr/bin/python3).
import resource
import socket
import ssl
import sys
import time

import os

import h2.config
import h2.connection
import h2.events

hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, pid = int(sys.argv[1]), int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
mode = sys.argv[4] if len(sys.argv) > 4 else "request"
plain = os.environ.get("IDLE_PLAIN") == "1"
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2"])


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


def open_one():
    s = socket.create_connection(("127.0.0.1", port))
    if not plain:
        s = ctx.wrap_socket(s, server_hostname="localhost")
        assert s.selected_alpn_protocol() == "h2", "no h2 by ALPN"
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    c.initiate_connection()
    if mode == "request":
        c.send_headers(1, [(":method", "GET"), (":path", "/1k.bin"),
                           (":scheme", "https"), (":authority", "localhost")],
                       end_stream=True)
    s.sendall(c.data_to_send())
    done = False
    while not done:
        data = s.recv(65536)
        if not data:
            raise SystemExit("connection closed by the server")
        for ev in c.receive_data(data):
            if mode == "request" and isinstance(ev, h2.events.StreamEnded):
                done = True
            if mode == "preface" and isinstance(ev, h2.events.RemoteSettingsChanged):
                done = True
            if isinstance(ev, h2.events.DataReceived):
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        out = c.data_to_send()
        if out:
            s.sendall(out)
    return s


first = open_one()
time.sleep(0.3)
before = rss_kib()
socks = [open_one() for _ in range(n)]
time.sleep(1.0)
after = rss_kib()
print(f"mode {mode} n {n} before {before} KiB after {after} KiB "
      f"per-connection {(after - before) * 1024 / n:.0f} B")
time.sleep(float(os.environ.get("IDLE_HOLD", "0")))
