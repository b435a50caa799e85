#!/usr/bin/perl
# http2_reuse.t: streams reset mid-response and new ones, with request
# headers of other sizes, opened at once on the same connection (where the
# memory the ended ones freed is what the new ones get): each new one must
# get its own answer (its own header values, its own body), whatever the previous
# stream left; the worker must stay the same (and, under SANITIZE=1,
# ASan must see no stale use: its report would end the worker).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use JSON::PP;

plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $t = Test::Ringx->new;
my $big = join '', map { chr(($_ * 13) % 256) } 0 .. 200_000 - 1;
$t->write_file_raw('html/big.bin', $big);
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 512; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        root html;
        location / { }
        location /echo { return 200 "$arg_n|$http_x_tag|$http_cookie\n"; }
    }
}
EOF
$t->run;
my $port = $t->port(0);

my $script = $t->prefix . '/reuse.py';
$t->write_file('reuse.py', <<'PY');
import json, socket, sys
import h2.connection, h2.config, h2.events, h2.settings
port, rounds = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port), timeout=15)
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 4096})
s.sendall(c.data_to_send())
big, echo, bad, resets, opened = {}, {}, [], 0, 0
def open_big():
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, [(":method", "GET"), (":path", "/big.bin"),
        (":scheme", "http"), (":authority", "localhost"),
        ("x-filler", "f" * (50 + 37 * (sid % 40))), ("cookie", "a=" + "z" * (sid % 300))],
        end_stream=True)
    big[sid] = 0
def open_echo(n):
    sid = c.get_next_available_stream_id()
    tag = "t%d-" % n + "x" * (n % 23)
    hdrs = [(":method", "GET"), (":path", "/echo?n=%d" % n),
            (":scheme", "http"), (":authority", "localhost"), ("x-tag", tag)]
    if n % 2:
        hdrs.append(("cookie", "c%d=1" % n))
    c.send_headers(sid, hdrs, end_stream=True)
    echo[sid] = {"want": "%d|%s|%s\n" % (n, tag, "c%d=1" % n if n % 2 else ""), "got": b""}
for i in range(20):
    open_big()
s.sendall(c.data_to_send())
done_echo = 0
while done_echo < rounds:
    d = s.recv(65536)
    if not d:
        break
    for ev in c.receive_data(d):
        if isinstance(ev, h2.events.DataReceived):
            c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            if ev.stream_id in big:
                # reset mid-response, and at once a new stream or two
                c.reset_stream(ev.stream_id)
                del big[ev.stream_id]
                resets += 1
                if opened < rounds and c.open_outbound_streams < 100:
                    open_echo(opened); opened += 1
                if opened < rounds and c.open_outbound_streams < 100:
                    open_big()
            elif ev.stream_id in echo:
                echo[ev.stream_id]["got"] += ev.data
        elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id in big:
            del big[ev.stream_id]        # ended before its reset: replace it
            if opened < rounds:
                open_big()
        elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id in echo:
            e = echo.pop(ev.stream_id)
            if e["got"].decode() != e["want"]:
                bad.append([e["want"], e["got"].decode(errors="replace")])
            done_echo += 1
            if opened < rounds and not big:
                open_big()
        elif isinstance(ev, h2.events.StreamReset) and ev.stream_id in echo:
            bad.append(["reset", ev.stream_id]); echo.pop(ev.stream_id); done_echo += 1
    s.sendall(c.data_to_send())
print(json.dumps({"done": done_echo, "resets": resets, "bad": bad[:5], "nbad": len(bad)}))
PY
my $out = `/usr/bin/python3 $script $port 300 2>&1`;
my $r = eval { decode_json($out) } || { error => $out };
is $r->{done}, 300, '300 streams opened as others were reset mid-response all ended'
    or diag $out;
ok(($r->{resets} // 0) >= 100, "... while $r->{resets} streams were reset mid-response");
is $r->{nbad}, 0, '... each answered with its own header values, not a previous stream\'s'
    or diag explain $r->{bad};
like `curl -s --max-time 10 --http2-prior-knowledge http://127.0.0.1:$port/echo?n=7 -H 'x-tag: last'`,
    qr/^7\|last\|\n\z/, 'the worker still answers afterwards';
ok !$t->log_contains(qr/AddressSanitizer|signal \d+|exited on signal/),
    'no worker crashed (no ASan report)';
done_testing;
