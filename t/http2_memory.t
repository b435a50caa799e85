#!/usr/bin/perl
# http2_memory.t: the memory an idle HTTP/2 connection keeps (issue #20).
# 300 connections over TLS (ALPN h2), each with one request answered and
# then left open: the worker's RSS may grow by at most 20,000 bytes per
# connection. Before http_v2_mem.c and the send buffer freed when a
# connection is idle, it grew ~57 KB (a 128 KiB send buffer per
# connection, nghttp2's blocks in holes of the heap); now ~35 KB, of which
# ~16 KB is OpenSSL's (an idle HTTP/1.1 connection over TLS: ~16 KB, in
# ringx as in nginx). Measured with t/bench/idle_h2.py, the tool the
# benchmark uses. Then every connection still answers. In session 10 the
# pages of nghttp2's 16 KiB frame buffer went back to the kernel while a
# connection was idle (31.3 -> 27.2 KB), and libnghttp2's session kept 9.3
# KB more; since session 11 the framing and HPACK are ringx's own, an idle
# connection keeps its session's settings and windows and the client's
# HPACK table (~16.8 KB with OpenSSL's): the bound is 20,000 bytes, nginx's
# (19.8 KB with this tool, 20.8 KB in the benchmark's h2-idle), which the
# starting binary of session 11 (27.2 KB) failed. A connection that was
# idle then sends a HEADERS frame of 6 KB, whole.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use JSON::PP ();

plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $IDLE = "$FindBin::Bin/bench/idle_h2.py";
my $N = 300;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->write_file_raw('html/1k.bin', 'k' x 1024);
my $big = 'b' x 6000;
(my $conf = <<'EOF') =~ s/%%BIG%%/$big/;
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_timeout 120s;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        http2 on;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        root html;
        location = /big-header {
            add_header X-Big "%%BIG%%";
            return 200 "after idle\n";
        }
    }
}
EOF
$t->write_config($conf);
$t->run;
my ($worker) = $t->worker_pids;
ok $worker, 'a worker';

SKIP: {
    skip 'ASan build: its quarantine and shadow memory make RSS meaningless', 2
        if $t->sanitized;
    my $out = `/usr/bin/python3 $IDLE ${\ $t->port(0)} $worker $N request 2>&1`;
    my ($per) = $out =~ /per-connection (\d+) B/;
    ok defined $per, "$N idle h2 connections measured" or diag $out;
    note "per idle h2 connection: ", $per // "?", " B";
    cmp_ok $per // 1e9, '<', 20_000,
        'an idle h2 connection over TLS after one request keeps < 20,000 '
        . 'bytes of RSS, no more than nginx (session 10: 27.2 KB)';
}

# the connections were kept, not dropped to save memory: one more answers
my $out = `/usr/bin/python3 $IDLE ${\ $t->port(0)} $worker 1 request 2>&1`;
like $out, qr/per-connection/, 'a request on a new connection is answered';

# after its first response the connection is idle (its frame buffer's
# pages given back): its next response's HEADERS, 6 KB, spans two of them
my $o = `/usr/bin/python3 $FindBin::Bin/lib/h2client.py ${\ $t->port(0)} request --tls --path /1k.bin --then /big-header 2>&1`;
my $r = eval { JSON::PP::decode_json($o) } || {};
is $r->{responses}[0]{body_len}, 1024, 'a first response, then the connection is idle'
    or diag $o;
is length($r->{then}{headers}{'x-big'} // ''), 6000,
    'after the idle, a 6,000-byte header field comes whole on the same connection'
    or diag $o;
is $r->{then}{body}, "after idle\n", 'and its body';

$t->stop;
done_testing;
