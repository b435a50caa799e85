#!/usr/bin/env python3
"""t/bench/benchlib.py: the helper of t/bench/run (python3, stdlib only).

Subcommands (all used by t/bench/run; "summarize" is also handy by hand):
  conf        write a server's config from conf/main.conf + conf/SCEN.conf
  data DIR    write the static test files (small.txt, 1k.bin, mid.bin, big.bin, text.txt, hello.php)
  freeport N  print the first port >= N on 127.0.0.1 that nobody listens on
  tree PID    print PID and all its descendants
  check       one GET on 127.0.0.1 (--tls: over TLS): status 200, exact body, headers
  snap        JSON snapshot: CPU ticks of a server tree, per-CPU jiffies, all processes
  quiet       wait (bounded) until processes that are not ours go quiet
  record      wrk (or h2load) output + two snapshots -> one JSON line in the results file
  fail        a JSON line saying a server failed (--skip: could not run) a scenario
  record-idle idle_conns.py's result -> one JSON line in the results file
  summarize   Markdown table of one session of the results file (summary.py)

Adapted from shared/bench/lib/benchlib.py (same measuring method).
"""
import argparse
import codecs
import json
import os
import socket
import statistics
import sys
import time

CLK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- config, data
def cmd_conf(a):
    def read(path):  # "##" lines are template comments
        with open(path) as f:
            return "".join(l for l in f if not l.startswith("##")).rstrip("\n")
    tmpl, snip = read(a.template) + "\n", read(a.snippet)
    text = tmpl.replace("%%SCENARIO_CONF%%", snip)
    for kv in a.set or []:
        k, _, v = kv.partition("=")
        text = text.replace(f"%%{k}%%", v)
    out = []
    for line in text.split("\n"):
        if line.startswith("@"):  # "@nginx    directive;" -> "    directive;" for nginx only
            tag = line[1:].split(None, 1)[0] if line[1:].strip() else ""
            rest = line[1 + len(tag):]
            if tag not in ("nginx", "ringx"):
                sys.exit(f"benchlib conf: unknown marker @{tag} in: {line}")
            if tag != a.flavor:
                continue
            line = rest
        out.append(line)
    text = "\n".join(out)
    if "%%" in text:
        left = text[text.index("%%"):][:40].split("\n")[0]
        sys.exit(f"benchlib conf: placeholder left unreplaced: {left}")
    with open(a.out, "w") as f:
        f.write(text)
    return 0


def cmd_data(a):
    import random
    d = a.dir
    os.makedirs(d, exist_ok=True)
    r = random.Random(12345)
    with open(os.path.join(d, "small.txt"), "wb") as f:
        f.write(b"Hello, this is a 30-byte file\n")
    with open(os.path.join(d, "hello.php"), "wb") as f:
        f.write(b'<?php echo "Hello, World!\\n";\n')
    with open(os.path.join(d, "1k.bin"), "wb") as f:
        f.write(r.randbytes(1024))
    with open(os.path.join(d, "mid.bin"), "wb") as f:
        f.write(r.randbytes(16384))
    with open(os.path.join(d, "big.bin"), "wb") as f:
        f.write(r.randbytes(1 << 20))
    words = ("the of and to in is that for it as with was on be by this are from or have an "
             "server request response header connection worker upstream buffer socket event "
             "latency throughput memory kernel file static proxy cache client timeout module "
             "configuration location network process thread queue ring submit complete accept "
             "read write send receive close keepalive gzip compress stream chunk length type").split()
    out, n = [], 0
    while n < 16384:
        line = " ".join(r.choice(words) for _ in range(r.randint(6, 14))).capitalize() + ".\n"
        out.append(line)
        n += len(line)
    with open(os.path.join(d, "text.txt"), "w") as f:
        f.write("".join(out)[:16383] + "\n")
    return 0


def _port_busy(port):
    s = socket.socket()
    s.settimeout(0.2)
    try:
        return s.connect_ex(("127.0.0.1", port)) == 0
    finally:
        s.close()


def cmd_freeport(a):
    for p in range(a.start, a.start + 200):
        if p in (a.avoid or []):
            continue
        if not _port_busy(p):
            print(p)
            return 0
    print(f"no free port in {a.start}..{a.start + 199}", file=sys.stderr)
    return 1


# ---------------------------------------------------------------- /proc helpers
def _stat(pid):
    """Fields of /proc/PID/stat after the comm, or None; comm separately."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None, None
    return s[s.rfind(")") + 2:].split(), s[s.find("(") + 1:s.rfind(")")]


def all_procs():
    """{'pid:starttime': [utime+stime, cutime+cstime, is_kthread, comm, ppid]}."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        r, comm = _stat(d)
        if r is None:
            continue
        out[f"{d}:{r[19]}"] = [int(r[11]) + int(r[12]), int(r[13]) + int(r[14]),
                               1 if int(r[6]) & 0x00200000 else 0, comm, int(r[1])]
    return out


def tree(pid, procs=None):
    procs = procs if procs is not None else all_procs()
    kids = {}
    for k, v in procs.items():
        kids.setdefault(v[4], []).append(int(k.split(":")[0]))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if not os.path.exists(f"/proc/{p}"):
            continue
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def proc_ticks(pids):
    t = 0
    for p in pids:
        r, _ = _stat(p)
        if r is not None:
            t += int(r[11]) + int(r[12])  # utime + stime
    return t


def cpu_jiffies():
    """{cpuN: [task, total, steal, irq+softirq]} from /proc/stat."""
    res = {}
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            parts = line.split()
            v = [int(x) for x in parts[1:]]
            user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
            task = user + nice + system
            total = task + irq + softirq + idle + iowait + steal
            res[parts[0]] = [task, total, steal, irq + softirq]
    return res


def mem(pid):
    """(rss_kb, pss_kb, nprocs) summed over PID and its descendants."""
    rss = pss = 0
    pids = tree(pid)
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
        except OSError:
            pass
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss, len(pids)


def cpu_speed(cpu, seconds=0.25):
    """zlib level-1 MB/s on one CPU, as bench.sh's probe: how fast the shared
    core is just now (host contention, invisible in steal time, shows here)."""
    import random
    import zlib
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    r = random.Random(7)
    words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(2, 9))) for _ in range(300)]
    buf = b" ".join(r.choice(words) for _ in range(12000))[:65536]
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        zlib.compress(buf, 1)
        n += 1
    dt = time.perf_counter() - t0
    os.sched_setaffinity(0, old)
    return n * len(buf) / dt / 1e6


def snap(pid, own, speed_cpus=()):
    """pid: the server's master (0: none); own: the harness's pid (its whole tree,
    servers and wrk included, is ours; everything else is foreign); speed_cpus:
    probe these CPUs first (before the snapshot, so outside the measured window)."""
    speed = {str(c): round(cpu_speed(c), 1) for c in speed_cpus}
    procs = all_procs()
    mine = {os.getpid()}
    for o in own:
        mine.update(tree(o, procs))
    spids = tree(pid, procs) if pid else []
    mine.update(spids)
    foreign = {k: v for k, v in procs.items() if int(k.split(":")[0]) not in mine}
    return {"t": time.monotonic(), "cpus": cpu_jiffies(), "ticks": proc_ticks(spids),
            "npids": len(spids), "procs": foreign, "speed": speed}


def foreign_ticks(pre, post):
    """CPU ticks used between two snapshots by processes that are not ours:
    (user processes, kernel threads, top 4 [(ticks, name)]).

    Growth of (own + reaped-children) time of live processes, plus the time of new
    ones, minus what exited ones had used before (it reappears in their reaper).
    The caller caps it by the /proc/stat busy time not charged to us."""
    user = kthr = 0
    top = []
    a, b = pre.get("procs", {}), post.get("procs", {})
    for k, (s1, c1, kt, comm, _ppid) in b.items():
        d = (s1 - a[k][0]) + (c1 - a[k][1]) if k in a else s1 + c1
        if kt:
            kthr += d
        else:
            user += d
        if d > 0:
            top.append((d, f"{comm}[{k.split(':')[0]}]"))
    for k, v in a.items():
        if k not in b and not v[2]:
            user -= v[0] + v[1]
    top.sort(reverse=True)
    return max(user, 0), kthr, top[:4]


def busy_pct(pre, post):
    """Sum over CPUs of % busy (task + irq time) between two snapshots."""
    busy = 0.0
    for cpu in pre["cpus"]:
        b0, j0, _, q0 = pre["cpus"][cpu]
        b1, j1, _, q1 = post["cpus"].get(cpu, pre["cpus"][cpu])
        busy += 100.0 * (b1 - b0 + q1 - q0) / ((j1 - j0) or 1)
    return busy


def cmd_quiet(a):
    """Wait until processes that are not ours use < max % of a CPU over 1 s."""
    t0 = time.monotonic()
    while True:
        pre = snap(0, a.own)
        time.sleep(1.0)
        post = snap(0, a.own)
        fu, _, top = foreign_ticks(pre, post)
        pct = min(100.0 * fu / CLK / (post["t"] - pre["t"]), busy_pct(pre, post))
        waited = time.monotonic() - t0
        if pct <= a.max or waited >= a.timeout:
            if waited > 1.5:
                names = ", ".join(n for _, n in top[:3])
                print(f"    (waited {waited:.0f} s for other processes to go quiet; "
                      f"last {pct:.0f}% {names})")
            return 0


def parse_times(path):
    """bash 'times' output -> children user+sys seconds (its second line)."""
    try:
        with open(path) as f:
            lines = f.read().split("\n")
        tot = 0.0
        for tok in lines[1].split():
            m, _, sec = tok.rstrip("s").partition("m")
            tot += int(m) * 60 + float(sec)
        return tot
    except (OSError, IndexError, ValueError):
        return None


# ---------------------------------------------------------------- HTTP check
def http_get(port, path, headers=None, timeout=5.0, tls=False):
    """Minimal HTTP/1.1 GET (tls: over TLS, the certificate unchecked);
    returns (status, {lower-case header: value}, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if tls:
        import ssl
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s, server_hostname="localhost")
    try:
        hdr = {"Host": "localhost", "Connection": "close"}
        hdr.update(headers or {})
        req = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdr.items()) + "\r\n"
        s.sendall(req.encode())
        buf = b""
        while b"\r\n\r\n" not in buf and len(buf) < 65536:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        head, _, body = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin1").split("\r\n")
        first = lines[0].split() if lines else []
        status = int(first[1]) if len(first) > 1 and first[1].isdigit() else 0
        h = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            h[k.strip().lower()] = v.strip()
        if "content-length" in h:
            n = int(h["content-length"])
            while len(body) < n:
                d = s.recv(65536)
                if not d:
                    break
                body += d
        elif h.get("transfer-encoding", "").lower() == "chunked":
            while not body.endswith(b"0\r\n\r\n"):
                d = s.recv(65536)
                if not d:
                    break
                body += d
            body = _dechunk(body)
        else:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                body += d
        return status, h, body
    finally:
        s.close()


def _dechunk(b):
    out = b""
    while b:
        line, _, b = b.partition(b"\r\n")
        n = int(line.split(b";")[0] or b"0", 16)
        if n == 0:
            break
        out += b[:n]
        b = b[n + 2:]
    return out


def cmd_check(a):
    hdrs = {}
    for h in a.header or []:
        k, _, v = h.partition(":")
        hdrs[k.strip()] = v.strip()
    last = None
    for _ in range(3):
        try:
            st, h, body = http_get(a.port, a.path, hdrs, tls=a.tls)
            break
        except (ConnectionRefusedError, ConnectionResetError) as e:
            last = e
            time.sleep(0.3)
        except OSError as e:
            print(f"{type(e).__name__}: {e}")
            return 1
    else:
        print(f"connect: {last}")
        return 1
    problems = []
    if st != 200:
        problems.append(f"status {st}")
    want = None
    if a.body is not None:
        want = codecs.decode(a.body, "unicode_escape").encode("latin1")
    if a.file:
        with open(os.path.join(a.prefix, a.file), "rb") as f:
            want = f.read()
    if want is not None:
        got = body
        if h.get("content-encoding", "").lower() == "gzip":
            import gzip
            try:
                got = gzip.decompress(body)
            except Exception as e:  # noqa: BLE001 (any decoding error is a failed check)
                problems.append(f"bad gzip: {e}")
        if got != want:
            problems.append(f"body {got[:40]!r} ({len(got)} B), want {want[:40]!r} ({len(want)} B)")
    for eh in a.expect_header or []:
        k, _, v = eh.partition(":")
        if h.get(k.strip().lower(), "").lower() != v.strip().lower():
            problems.append(f"header {k.strip()}: {h.get(k.strip().lower())!r}, want {v.strip()!r}")
    if problems:
        print("; ".join(problems))
        return 1
    print(f"ok: status {st}, body {len(body)} B")
    return 0


# ---------------------------------------------------------------- per-run record
def parse_wrk(path):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("WRKJSON "):
                    return json.loads(line[8:])
    except (OSError, ValueError):
        pass
    return parse_h2load(path)


def _pct(sorted_vals, p):
    if not sorted_vals:
        return 0
    return sorted_vals[min(len(sorted_vals) - 1, int(len(sorted_vals) * p / 100.0))]


def parse_h2load(path):
    """h2load's summary (PATH) and its per-request log (PATH.h2log: start
    us, status, duration us) as the dict report.lua prints for wrk: status
    counts non-2xx/3xx responses, connect the failed/errored requests,
    timeout h2load's timeouts; latencies from the log, in microseconds."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    import re
    fin = re.search(r"^finished in ([\d.]+)(m?s)", text, re.M)
    req = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                    r"(\d+) failed, (\d+) errored, (\d+) timeout", text, re.M)
    st = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.M)
    tr = re.search(r"^traffic: \S+ \((\d+)\) total", text, re.M)
    if not (fin and req and st and tr):
        return None
    dur = float(fin.group(1)) * (1000.0 if fin.group(2) == "s" else 1.0) * 1000.0
    lat = []
    try:
        with open(path + ".h2log") as f:
            for line in f:
                cols = line.split("\t")
                if len(cols) >= 3:
                    lat.append(int(cols[2]))
    except (OSError, ValueError):
        pass
    lat.sort()
    done = int(req.group(3))
    return {"requests": done, "duration_us": int(dur), "bytes": int(tr.group(1)),
            "connect": int(req.group(6)), "read": 0, "write": 0,
            "status": int(st.group(3)) + int(st.group(4)), "timeout": int(req.group(7)),
            "p50": _pct(lat, 50), "p90": _pct(lat, 90), "p99": _pct(lat, 99),
            "p999": _pct(lat, 99.9), "max": lat[-1] if lat else 0,
            "mean": sum(lat) / len(lat) if lat else 0.0}


def cmd_record(a):
    """Exit status 3: the run was noisy and is marked discarded (the caller redoes it)."""
    with open(a.pre) as f:
        pre = json.load(f)
    with open(a.post) as f:
        post = json.load(f)
    w = parse_wrk(a.wrk)
    rec = {"type": "run", "session": a.session, "scenario": a.scenario, "server": a.label,
           "run": a.run, "try": a.try_, "ok": w is not None and w["requests"] > 0,
           "alive": os.path.exists(f"/proc/{a.pid}")}
    if not rec["alive"]:
        rec["ok"] = False
        rec["why"] = "server died during the run"
    elif w is None:
        rec["why"] = "wrk gave no result"
    if w:
        dur = w["duration_us"] / 1e6
        wall = post["t"] - pre["t"]
        dticks = post["ticks"] - pre["ticks"]
        rec.update({
            "rps": w["requests"] / dur if dur else 0.0, "mbps": w["bytes"] / dur / 1e6 if dur else 0.0,
            "requests": w["requests"], "seconds": round(dur, 3),
            "p50_us": w["p50"], "p90_us": w["p90"], "p99_us": w["p99"], "max_us": w["max"],
            "err_status": w["status"],
            "err_sock": w["connect"] + w["read"] + w["write"] + w["timeout"],
            "err_detail": {k: w[k] for k in ("connect", "read", "write", "timeout", "status")},
            "srv_cpu_pct": 100.0 * dticks / CLK / wall if wall > 0 else None,
            "srv_us_per_req": 1e6 * dticks / CLK / w["requests"] if w["requests"] else None,
        })
        t0, t1 = parse_times(a.times0), parse_times(a.times1)
        rec["wrk_cpu_pct"] = 100.0 * (t1 - t0) / wall if None not in (t0, t1) and wall > 0 else None
        busy = 0.0
        steal = 0.0
        for cpu in sorted(pre["cpus"]):
            b0, j0, s0, q0 = pre["cpus"][cpu]
            b1, j1, s1, q1 = post["cpus"].get(cpu, (b0, j0, s0, q0))
            dt = (j1 - j0) or 1
            rec[f"{cpu}_busy_pct"] = round(100.0 * (b1 - b0 + q1 - q0) / dt, 1)
            busy += 100.0 * (b1 - b0 + q1 - q0) / dt
            steal += 100.0 * (s1 - s0) / dt
        rec["steal_pct"] = round(steal, 1)
        sp = list((pre.get("speed") or {}).values())
        if len(sp) == 2:
            rec["speed_srv"], rec["speed_cli"] = sp
        # busy time not charged to the server or wrk (kernel threads, softirq, others)
        rec["other_pct"] = busy - (rec["srv_cpu_pct"] or 0) - (rec["wrk_cpu_pct"] or 0)
        fu, fk, top = foreign_ticks(pre, post)
        rec["foreign_pct"] = min(100.0 * fu / CLK / wall, max(rec["other_pct"], 0.0))
        rec["kthread_pct"] = 100.0 * fk / CLK / wall
        rec["foreign_top"] = [f"{name}:{100.0 * d / CLK / wall:.0f}%" for d, name in top]
        rec["noisy"] = rec["foreign_pct"] > a.max_foreign or steal > a.max_foreign
    rss, pss, n = mem(a.pid)
    rec.update({"rss_kb": rss, "pss_kb": pss, "nprocs": n})
    if a.meta:
        for k, v in json.loads(a.meta).items():
            rec.setdefault(k, v)
    tag = f"  {a.scenario:<11} {a.label:<8} run {a.run}"
    if w:
        note = ""
        if rec["noisy"]:
            note = "  NOISY " + ("(redone)" if a.retry else "(kept)")
            if a.retry:
                rec["discarded"] = True
            note += " " + " ".join(rec["foreign_top"][:2])
        if not rec["ok"]:
            note += f"  FAILED ({rec.get('why')})"
        print(f"{tag}: {rec['rps']:>9.0f} req/s  p50 {w['p50'] / 1000:.3f} ms  p99 {w['p99'] / 1000:.3f} ms  "
              f"err {rec['err_status']}/{rec['err_sock']}  srv {rec['srv_cpu_pct']:.0f}% "
              f"{rec['srv_us_per_req'] or 0:.1f} us/req  wrk {rec['wrk_cpu_pct'] or 0:.0f}%  "
              f"rss {rss / 1024:.1f} MiB  foreign {rec['foreign_pct']:.0f}%  "
              f"speed {rec.get('speed_srv', 0):.0f}/{rec.get('speed_cli', 0):.0f}{note}", flush=True)
    else:
        print(f"{tag}: FAILED ({rec.get('why')})", flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")
    return 3 if rec.get("discarded") else 0


def cmd_fail(a):
    rec = {"type": "run", "session": a.session, "scenario": a.scenario, "server": a.label,
           "run": 0, "ok": False, "why": a.why}
    if a.skip:  # the server cannot run this scenario (a feature it lacks): no failure
        rec["skipped"] = True
    if a.meta:
        for k, v in json.loads(a.meta).items():
            rec.setdefault(k, v)
    with open(a.out, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")
    print(f"  {a.scenario:<11} {a.label:<8} {'SKIPPED' if a.skip else 'FAILED'}: {a.why}",
          flush=True)
    return 0


def cmd_record_idle(a):
    """idle_conns.py's IDLEJSON line -> one run record (value: bytes_per_conn)."""
    res = None
    try:
        with open(a.idle) as f:
            for line in f:
                if line.startswith("IDLEJSON "):
                    res = json.loads(line[9:])
    except (OSError, ValueError):
        pass
    rec = {"type": "run", "kind": "idle", "session": a.session, "scenario": a.scenario,
           "server": a.label, "run": a.run, "ok": bool(res and res["opened"])}
    if res:
        rec.update(res)
        rec["rss_kb"] = res["rss_after_kb"]
        rec["err_status"] = 0 if res["check"].get("status") == 200 else 1
        rec["err_sock"] = res["failed"] + res["closed_by_server"]
    else:
        rec["why"] = "the idle client gave no result"
    if a.meta:
        for k, v in json.loads(a.meta).items():
            rec.setdefault(k, v)
    tag = f"  {a.scenario:<11} {a.label:<8} run {a.run}"
    if res:
        print(f"{tag}: {res['bytes_per_conn']} B/conn (pss {res['pss_bytes_per_conn']})  "
              f"rss {res['rss_before_kb'] / 1024:.1f} -> {res['rss_after_kb'] / 1024:.1f} MiB  "
              f"opened {res['opened']} failed {res['failed']} in {res['open_s']} s  "
              f"check {res['check']}  closed by server {res['closed_by_server']}", flush=True)
    else:
        with open(a.idle, errors="replace") as f:
            tail = f.read().strip().split("\n")[-3:]
        print(f"{tag}: FAILED (no result: {' / '.join(tail)})", flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")
    return 0


def cmd_session(a):
    rec = {"type": "session", "session": a.session}
    rec.update(json.loads(a.json))
    with open(a.out, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")
    return 0


# ---------------------------------------------------------------- summary
def cmd_summarize(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import summary  # its own file: t/bench/summary.py
    return summary.cmd_summarize(a)


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("conf")
    for k in ("template", "snippet", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--flavor", choices=("nginx", "ringx"), required=True)
    p.add_argument("--set", action="append", help="KEY=VALUE replaces %%KEY%%")
    p = sub.add_parser("data"); p.add_argument("dir")
    p = sub.add_parser("freeport"); p.add_argument("start", type=int)
    p.add_argument("--avoid", type=int, action="append")
    p = sub.add_parser("tree"); p.add_argument("pid", type=int)
    p = sub.add_parser("check")
    p.add_argument("--port", type=int, required=True); p.add_argument("--path", required=True)
    p.add_argument("--prefix", default="."); p.add_argument("--header", action="append")
    p.add_argument("--body"); p.add_argument("--file"); p.add_argument("--expect-header", action="append")
    p.add_argument("--tls", action="store_true", help="over TLS (https scenarios)")
    p = sub.add_parser("snap")
    p.add_argument("--pid", type=int, default=0); p.add_argument("--own", type=int, action="append", default=[])
    p.add_argument("--speed-cpu", type=int, action="append", default=[])
    p = sub.add_parser("quiet")
    p.add_argument("--max", type=float, default=10.0); p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--own", type=int, action="append", default=[])
    p = sub.add_parser("record")
    for k in ("pre", "post", "wrk", "scenario", "label", "out", "session"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--run", type=int, required=True); p.add_argument("--pid", type=int, required=True)
    p.add_argument("--try", dest="try_", type=int, default=0)
    p.add_argument("--times0", default=""); p.add_argument("--times1", default="")
    p.add_argument("--max-foreign", type=float, default=10.0)
    p.add_argument("--retry", type=int, default=0, help="1: mark a noisy run discarded")
    p.add_argument("--meta", help="JSON object merged into the record")
    p = sub.add_parser("fail")
    for k in ("scenario", "label", "why", "out", "session"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--meta")
    p.add_argument("--skip", action="store_true", help="skipped (cannot run), not failed")
    p = sub.add_parser("record-idle")
    for k in ("idle", "scenario", "label", "out", "session"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--run", type=int, required=True); p.add_argument("--meta")
    p = sub.add_parser("session")
    for k in ("session", "json", "out"):
        p.add_argument("--" + k, required=True)
    p = sub.add_parser("summarize")
    p.add_argument("results"); p.add_argument("--session", help="default: the last one")
    p.add_argument("--label", action="append", help="A then B (default: from the session)")
    p.add_argument("--targets", help="default: t/bench/targets")
    a = ap.parse_args()
    if a.cmd == "tree":
        print(" ".join(map(str, tree(a.pid))))
        return 0
    if a.cmd == "snap":
        print(json.dumps(snap(a.pid, a.own, a.speed_cpu)))
        return 0
    return {"conf": cmd_conf, "data": cmd_data, "freeport": cmd_freeport, "check": cmd_check,
            "quiet": cmd_quiet, "record": cmd_record, "record-idle": cmd_record_idle,
            "fail": cmd_fail, "session": cmd_session,
            "summarize": cmd_summarize}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
