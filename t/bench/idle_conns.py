#!/usr/bin/env python3
# t/bench/idle_conns.py PORT WORKER_PID [N] [MODE]: the memory of idle
# connections. Opens N (10,000) connections to 127.0.0.1:PORT, keeps them
# open, and prints the worker's VmRSS before and after (2 s after the last
# one opened: a worker tidies its memory once quiet), the growth per
# connection, and whether a request on a new connection is still answered
# while they are held. MODE:
#   batched  (default) one request on each (GET /, answered), all sent
#            first, then all read: N requests served at once
#   ka       one request on each, one connection after the other: idle
#            keepalive connections
#   fresh    nothing sent: connections waiting for their first byte
# Run it against ringx and nginx with the same config (one worker,
# worker_connections and worker_rlimit_nofile above N, keepalive_timeout
# and client_header_timeout longer than the run).
import resource
import socket
import sys
import time

hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, pid = int(sys.argv[1]), int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
mode = sys.argv[4] if len(sys.argv) > 4 else "batched"
if mode not in ("batched", "ka", "fresh"):
    sys.exit(f"unknown mode {mode}: batched, ka or fresh")
REQ = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


first = socket.create_connection(("127.0.0.1", port))
first.sendall(REQ)
first.recv(4096)
time.sleep(2)
before = rss_kib()


def read_head(s):
    d = b""
    while b"\r\n\r\n" not in d:
        got = s.recv(4096)
        if not got:
            break
        d += got


socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    if mode != "fresh":
        s.sendall(REQ)
    if mode == "ka":
        read_head(s)
    socks.append(s)
if mode == "batched":
    for s in socks:
        read_head(s)
time.sleep(2)
after = rss_kib()
probe = socket.create_connection(("127.0.0.1", port))
probe.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
answered = b" 200 " in probe.recv(4096)
print(f"{mode}: before {before} KiB after {after} KiB "
      f"per-connection {(after - before) * 1024 / n:.0f} B "
      f"answered-while-held {answered}")
