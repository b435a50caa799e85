#!/usr/bin/env python3
# t/bench/idle_conns.py PORT WORKER_PID [N]: the memory of idle keepalive
# connections. Opens N (10,000) connections to 127.0.0.1:PORT, one request
# on each (GET /, answered), keeps them open, and prints the worker's VmRSS
# before and after, the growth per connection, and whether a request on a
# new connection is still answered while they are held. Run it against
# ringx and nginx with the same config (one worker, worker_connections and
# worker_rlimit_nofile above N, keepalive_timeout longer than the run).
import resource
import socket
import sys
import time

hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, pid = int(sys.argv[1]), int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
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
time.sleep(0.3)
before = rss_kib()
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(REQ)
    socks.append(s)
for s in socks:
    s.recv(4096)
time.sleep(0.5)
after = rss_kib()
probe = socket.create_connection(("127.0.0.1", port))
probe.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
answered = b" 200 " in probe.recv(4096)
print(f"before {before} KiB after {after} KiB "
      f"per-connection {(after - before) * 1024 / n:.0f} B "
      f"answered-while-held {answered}")
