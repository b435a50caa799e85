"""t/bench/summary.py: the summary of one t/bench/run session ("benchlib.py
summarize"): a Markdown table per scenario and server, ratio rows of the
server under test (the session's first label) against each other server
(nginx, and the previous main with BENCH_BASE), the machine-readable
"summary" lines (bench.sh's format: SCEN= req/s ratio, SCEN.cpu= CPU-time
ratio, idle SCEN= bytes ratio, all > 1 = better), and the targets of
t/bench/targets, each marked pass or short.
"""
import json
import os
import statistics

TARGETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets")


def _num(v, nd=None):
    """Human number: thousands separators for big values, 3 significant digits else."""
    if v is None:
        return "–"
    if nd is not None:
        return f"{v:,.{nd}f}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _med(rs, key):
    v = [r[key] for r in rs if r.get(key) is not None]
    return statistics.median(v) if v else None


def _ratio(x, y):
    return x / y if x and y else None


def _f3(v):
    return "–" if v is None else f"{v:.3f}"


def read_targets(path):
    """[(metric, op, threshold, note)] from t/bench/targets."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                metric, op, thr, *note = line.split()
                out.append((metric, op, float(thr), " ".join(note)))
    except OSError:
        pass
    return out


def _load(a):
    with open(a.results) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    if not a.session:
        sess = [r["session"] for r in recs if r.get("type") == "session"]
        if not sess:
            return None
        a.session = sess[-1]
    return [r for r in recs if r.get("session") == a.session]


def _header(a, info, labels):
    print()
    print(f"### t/bench/run, session {a.session}")
    print()
    if info:
        print(f"- {info.get('date', '?')}, kernel {info.get('kernel', '?')}, {info.get('cpus', '?')} CPUs; "
              f"commit {info.get('commit', '?')}")
        servers = info.get("servers") or {}
        for lab in sorted(servers, key=lambda l: labels.index(l) if l in labels else len(labels)):
            role = " (previous main)" if lab == info.get("base_label") else ""
            print(f"- {lab}{role}: {servers[lab]}")
        if info.get("origin"):
            print(f"- the proxy's origin: {info['origin']}")
        print(f"- {info.get('wrk', 'wrk')}, -t1, client on CPU {info.get('client_cpu', '?')}, "
              f"server (1 worker) on CPU {info.get('server_cpu', '?')}, php-fpm and origin on CPU "
              f"{info.get('upstream_cpu', info.get('client_cpu', '?'))}; {info.get('runs', '?')} runs × "
              f"{info.get('seconds', '?')} s per server, alternating, after a "
              f"{info.get('warmup', '?')} s warm-up")
    print("- req/s: median of the runs, min–max, spread = (max − min) / median; p50/p99: medians")
    print("- µs/req: server CPU time (user + sys of the whole process tree, master included) per "
          "request; RSS: whole tree after the run")
    print("- foreign: % of a CPU used meanwhile by processes that are not the bench's (median; "
          "noisy runs were redone); speed: a zlib probe before each run on the server / client CPU "
          "(MB/s, min–max, as bench.sh's): the host's contention, which steal time does not show")
    print("- idle scenarios: growth of the RSS of the whole tree per held connection (B/conn)")
    if len(labels) > 1:
        print(f"- ratio rows: {labels[0]} vs each other server, every column oriented so that > 1 "
              f"means {labels[0]} is better (req/s A/B; latency, µs/req, RSS, B/conn B/A)")
    print()


def _server_runs(sc, l, runs, st, key):
    """One server's good runs of a scenario, their values of key, the median
    and the error counts (counted in st); None (a FAILED row printed) when
    no run of it went well."""
    mine = [r for r in runs if r["scenario"] == sc and r["server"] == l]
    rs = [r for r in mine if r.get("ok")]
    bad = [r for r in mine if not r.get("ok")]
    if not rs:
        _failed_row(sc, l, bad, st)
        return None
    vals = [r[key] for r in rs]
    e_st = sum(r.get("err_status", 0) for r in rs)
    e_so = sum(r.get("err_sock", 0) for r in rs)
    st["errs"][l] = st["errs"].get(l, 0) + e_st + e_so + len(bad)
    return rs, bad, vals, statistics.median(vals), e_st, e_so


def _wrk_rows(sc, labels, runs, st):
    """Rows of one wrk/h2load scenario; returns {label: medians or None}."""
    med = {}
    for l in labels:
        got = _server_runs(sc, l, runs, st, "rps")
        if got is None:
            med[l] = None
            continue
        rs, bad, vals, m, e_st, e_so = got
        noisy = sum(1 for r in rs if r.get("noisy"))
        p50, p99 = _med(rs, "p50_us"), _med(rs, "p99_us")
        med[l] = {"v": m, "p50": p50, "p99": p99, "upr": _med(rs, "srv_us_per_req"),
                  "rss": _med(rs, "rss_kb"), "mbps": _med(rs, "mbps")}
        if m and med[l]["mbps"] and med[l]["mbps"] * 1e6 / m >= 65536:
            st["mbps_rows"].append(f"| {sc} | {l} | {med[l]['mbps']:.1f} |")
        fr = _num(_med(rs, "foreign_pct"), 1) + (f" ({noisy} noisy)" if noisy else "") + _speed(rs)
        err = f"{e_st}/{e_so}" + (f", {len(bad)} failed runs" if bad else "")
        print(f"| {sc} | {l} | {_num(m, 0)} | {_num(min(vals), 0)}–{_num(max(vals), 0)} "
              f"| {100.0 * (max(vals) - min(vals)) / m if m else 0:.1f} % "
              f"| {_num(p50 / 1000 if p50 is not None else None)} "
              f"| {_num(p99 / 1000 if p99 is not None else None)} "
              f"| {_num(med[l]['upr'], 1)} | {_num(med[l]['rss'] / 1024, 1)} "
              f"| {_num(_med(rs, 'srv_cpu_pct'), 0)} | {_num(_med(rs, 'wrk_cpu_pct'), 0)} "
              f"| {fr} | {len(rs)} | {err} |")
    return med


def _speed(rs):
    """' · 140–148/139–147': bench.sh's zlib probe (MB/s) on the server / client CPU."""
    out = []
    for k in ("speed_srv", "speed_cli"):
        v = [r[k] for r in rs if r.get(k)]
        if not v:
            return ""
        out.append(f"{min(v):.0f}–{max(v):.0f}")
    return " · " + "/".join(out)


def _idle_rows(sc, labels, runs, st):
    """Rows of one idle scenario (the value is bytes per connection)."""
    med = {}
    for l in labels:
        got = _server_runs(sc, l, runs, st, "bytes_per_conn")
        if got is None:
            med[l] = None
            continue
        rs, bad, vals, m, e_st, e_so = got
        med[l] = {"v": m, "rss": _med(rs, "rss_kb")}
        b0, b1 = _med(rs, "rss_before_kb"), _med(rs, "rss_after_kb")
        checks = "/".join(sorted({str(r["check"].get("status")) for r in rs}))
        print(f"| {sc} | {l} | {_num(m, 0)} B/conn | {_num(min(vals), 0)}–{_num(max(vals), 0)} "
              f"| {100.0 * (max(vals) - min(vals)) / m if m else 0:.1f} % "
              f"| RSS {b0 / 1024:.1f} → {b1 / 1024:.1f} MiB, {int(_med(rs, 'opened'))} conns, "
              f"check {checks} | | | {_num(med[l]['rss'] / 1024, 1)} | | | | {len(rs)} "
              f"| {e_st}/{e_so}{f', {len(bad)} failed runs' if bad else ''} |")
    return med


def _failed_row(sc, l, bad, st):
    why = "; ".join(sorted({str(r.get("why", "?")) for r in bad})) or "not run"
    why = why.replace("|", "/").replace("\n", " ")[:160]
    skipped = bad and all(r.get("skipped") for r in bad)
    print(f"| {sc} | {l} | **{'SKIPPED' if skipped else 'FAILED'}** | {why} | | | | | | | | | | |")
    st["failed"] = st["failed"] or not skipped
    if skipped:
        st["skipped"].add(sc)


def _ratios(sc, idle, a_med, b_med):
    """{metric: ratio > 1 = A better} of A against B in one scenario."""
    if idle:
        return {sc: _ratio(b_med["v"], a_med["v"]), sc + ".mem": _ratio(a_med["v"], b_med["v"])}
    return {sc: _ratio(a_med["v"], b_med["v"]), sc + ".cpu": _ratio(b_med["upr"], a_med["upr"]),
            "p50": _ratio(b_med["p50"], a_med["p50"]), "p99": _ratio(b_med["p99"], a_med["p99"]),
            "rss": _ratio(b_med["rss"], a_med["rss"])}


def cmd_summarize(a):
    recs = _load(a)
    if recs is None:
        print("no session in " + a.results)
        return 2
    info = next((r for r in recs if r.get("type") == "session"), {})
    runs = [r for r in recs if r.get("type") == "run" and not r.get("discarded")]
    labels = a.label or info.get("labels") or []
    for r in runs:
        if r["server"] not in labels:
            labels.append(r["server"])
    order = []
    for r in runs:
        if r["scenario"] not in order:
            order.append(r["scenario"])
    _header(a, info, labels)
    print("| scenario | server | req/s | min–max | spread | p50 ms | p99 ms | µs/req | RSS MiB "
          "| srv CPU % | wrk CPU % | foreign % · speed | runs | errors |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    st = {"errs": {}, "mbps_rows": [], "failed": False, "skipped": set(), "abs": {}}
    ratios = {l: {} for l in labels[1:]}   # label -> {metric: ratio}
    for sc in order:
        idle = any(r.get("kind") == "idle" for r in runs if r["scenario"] == sc)
        med = (_idle_rows if idle else _wrk_rows)(sc, labels, runs, st)
        st["abs"][sc] = med.get(labels[0]) if labels else None
        for other in labels[1:]:
            A, B = med.get(labels[0]), med.get(other)
            if not A or not B:
                ratios[other][sc] = "SKIPPED" if sc in st["skipped"] else "FAILED"
                print(f"| {sc} | **{labels[0]}/{other}** | **–** | | | | | | | | | | | |")
                continue
            r = _ratios(sc, idle, A, B)
            ratios[other].update({k: v for k, v in r.items() if k.startswith(sc)})
            if idle:
                print(f"| {sc} | **{labels[0]}/{other}** | **{_f3(r[sc])}** (B/conn {other}/{labels[0]}) "
                      f"| | | | | | {_f3(_ratio(B['rss'], A['rss']))} | | | | | |")
            else:
                print(f"| {sc} | **{labels[0]}/{other}** | **{_f3(r[sc])}** | | | {_f3(r['p50'])} "
                      f"| {_f3(r['p99'])} | **{_f3(r[sc + '.cpu'])}** | {_f3(r['rss'])} | | | | | |")
    print()
    if st["mbps_rows"]:  # large bodies: the throughput is the figure that matters
        print("| scenario | server | MB/s (median) |")
        print("|---|---|---:|")
        print("\n".join(st["mbps_rows"]))
        print()
    kept = [r for r in runs if r.get("ok")]
    noisy = sum(1 for r in kept if r.get("noisy"))
    if noisy:
        print(f"**Warning: {noisy} of {len(kept)} runs were NOISY** (other processes used more than "
              f"{info.get('max_foreign', 10)} % of a CPU) and were kept: the figures and ratios are "
              f"unreliable. Rerun on a quieter machine (the defaults wait up to BENCH_QUIET_WAIT=120 s "
              f"before each run and redo a noisy one BENCH_RETRIES=2 times).")
        print()
    _targets(a, info, labels, ratios, order)
    _regressions(info, ratios)
    _summary_lines(info, labels, ratios, order, st)
    return 1 if st["failed"] else 0


def _targets(a, info, labels, ratios, order):
    """The targets table: each metric against nginx with its threshold, and
    the same metric against the previous main (a regression shows there)."""
    targets = read_targets(getattr(a, "targets", None) or TARGETS)
    ng, base = info.get("nginx_label"), info.get("base_label")
    if not targets or ng not in ratios:
        return
    head = f"| target | {labels[0]}/{ng} | threshold | |"
    if base in ratios:
        head += f" {labels[0]}/{base} |"
    print(f"Targets (t/bench/targets): ratios of {labels[0]} against {ng} (> 1 = {labels[0]} "
          f"better; *.mem: bytes per idle connection {labels[0]}/{ng}, < 1 = {labels[0]} uses less)"
          + (f"; beside, the same ratio against {base}" if base in ratios else ""))
    print()
    print(head)
    print("|---|---:|---:|---|" + ("---:|" if base in ratios else ""))
    for metric, op, thr, note in targets:
        sc = metric.split(".")[0]
        v = ratios[ng].get(metric)
        if sc not in order:
            verdict, shown = "not run", "–"
        elif not isinstance(v, float):
            verdict, shown = "**" + str(ratios[ng].get(sc, "FAILED")) + "**", "–"
        else:
            ok = v >= thr if op == ">=" else v <= thr
            verdict, shown = ("pass" if ok else "**short**"), f"{v:.3f}"
        row = f"| {metric} {note} | {shown} | {op} {thr:g} | {verdict} |"
        if base in ratios:
            bv = ratios[base].get(metric)
            row += f" {bv:.3f}{' **worse**' if _worse(metric, bv) else ''} |" if isinstance(bv, float) \
                else " – |"
        print(row)
    print()


NOISE = 0.05   # BASELINE.md: nginx against itself, ratios within ±5 % (±20 % for big, fastcgi .cpu)


def _worse(metric, v):
    """A ratio against the previous main beyond the noise, the wrong way."""
    if not isinstance(v, float):
        return False
    noise = 0.20 if metric in ("big.cpu", "fastcgi.cpu") else NOISE
    return v > 1 + noise if metric.endswith(".mem") else v < 1 - noise


def _regressions(info, ratios):
    base = info.get("base_label")
    if base not in ratios:
        return
    worse = [f"{m} {v:.3f}" for m, v in ratios[base].items()
             if _worse(m, v) and m + ".mem" not in ratios[base]]
    print(f"Against {base}, beyond the noise (±5 %, ±20 % for big.cpu and fastcgi.cpu) the wrong way: "
          + (", ".join(worse) if worse else "none"))
    print()


def _summary_lines(info, labels, ratios, order, st):
    """bench.sh's last line, against nginx ("summary"), and against the
    previous main ("summary-base")."""
    errs = "/".join(str(st["errs"].get(l, 0)) for l in labels)
    ng, base = info.get("nginx_label"), info.get("base_label")
    for other in labels[1:]:
        parts = []
        for sc in order:
            v = ratios[other].get(sc)
            parts.append(f"{sc}={_f3(v) if isinstance(v, float) else v}")
        for sc in order:
            v = ratios[other].get(sc + ".cpu")
            if isinstance(v, float):
                parts.append(f"{sc}.cpu={v:.3f}")
        name = "summary-base" if other == base else "summary" if other == ng or other == labels[1] \
            else f"summary-{other}"
        print(f"{name} mode=ratio vs={other} " + " ".join(parts) + f" errors={errs}")
    if len(labels) == 1:
        parts = []
        for sc in order:
            m = st["abs"].get(sc)
            parts.append(f"{sc}={'SKIPPED' if sc in st['skipped'] else 'FAILED'}" if not m else
                         f"{sc}={m['v']:.0f}" + (f" {sc}.cpu={m['upr']:.1f}" if m.get("upr") else ""))
        print("summary mode=abs " + " ".join(parts) + f" errors={errs}")
