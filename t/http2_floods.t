#!/usr/bin/perl
# http2_floods.t: HTTP/2 attacks, each sent through python3-h2/hyperframe
# (t/lib/h2client.py): Rapid Reset (CVE-2023-44487), the CONTINUATION
# flood (2024), an HPACK bomb (header fields beyond
# large_client_header_buffers), SETTINGS and PING floods (CVE-2019-9512,
# 9515), empty DATA frames (CVE-2019-9518), streams beyond
# http2_max_concurrent_streams (REFUSED_STREAM) and a zero-window stall
# (send_timeout). Each asserts how the connection ends (the GOAWAY code,
# or the stream's reset) and that the worker stays the same process,
# answers, and keeps its memory bounded.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use JSON::PP;

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');
plan(skip_all => 'curl without HTTP/2') if `curl --version` !~ /\bHTTP2\b/;
plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $H2C = "$FindBin::Bin/lib/h2client.py";
use constant { NO_ERROR => 0, PROTOCOL_ERROR => 1, INTERNAL_ERROR => 2,
               REFUSED_STREAM => 7, ENHANCE_YOUR_CALM => 11 };

my $t = Test::Ringx->new;
$t->write_file_raw('html/big.bin', 'x' x 500_000);
$t->write_file('html/index.html', "hello\n");
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 512; }
http {
    access_log off;
    large_client_header_buffers 4 8k;
    send_timeout 1s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        http2_max_concurrent_streams 100;
        root html;
        location / { }
    }
}
EOF
$t->run;
my $port = $t->port(0);
my ($worker) = $t->worker_pids;
ok $worker, 'a worker';

sub rss { my $s = $t->proc_status($worker); return $s && $s->{VmRSS} ? ($s->{VmRSS} =~ /(\d+)/)[0] : 0 }

sub attack {
    my ($mode, @args) = @_;
    my $o = `/usr/bin/python3 $H2C $port $mode @args`;
    return eval { decode_json($o) } || { error => $o };
}

sub alive {
    my ($what) = @_;
    my ($now) = $t->worker_pids;
    is $now, $worker, "$what: the same worker";
    is scalar `curl -s --max-time 10 --http2-prior-knowledge http://127.0.0.1:$port/index.html`,
        "hello\n", "$what: the worker still answers";
}

my $rss0 = rss();

my $r = attack('rapid_reset', '--count', 2000);
is $r->{goaway}, ENHANCE_YOUR_CALM, 'Rapid Reset: GOAWAY ENHANCE_YOUR_CALM';
ok $r->{closed}, 'Rapid Reset: the connection is closed';
ok $t->log_contains(qr/client (opened too many streams at once|reset too many streams), closing HTTP\/2 connection/),
    'Rapid Reset: logged';
alive('Rapid Reset');

$r = attack('continuation', '--count', 5000);
is $r->{goaway}, ENHANCE_YOUR_CALM, 'CONTINUATION flood: GOAWAY ENHANCE_YOUR_CALM';
ok $r->{closed}, 'CONTINUATION flood: closed';
alive('CONTINUATION flood');

$r = attack('hpack_bomb', '--count', 20);
is $r->{responses}, 0, 'header fields beyond large_client_header_buffers: no response';
ok $r->{resets} >= 1, '... the stream is reset';
ok $t->log_contains(qr/client sent too large header in HTTP\/2 stream 1/), '... and logged';
alive('HPACK bomb');

$r = attack('settings', '--count', 5000);
is $r->{goaway}, ENHANCE_YOUR_CALM, 'SETTINGS flood: GOAWAY ENHANCE_YOUR_CALM';
alive('SETTINGS flood');

$r = attack('ping', '--count', 5000);
is $r->{goaway}, ENHANCE_YOUR_CALM, 'PING flood: GOAWAY ENHANCE_YOUR_CALM';
alive('PING flood');

my $cpu0 = $t->cpu_seconds($worker);
$r = attack('empty_data', '--count', 20000, '--timeout', 2);
ok !defined $r->{error}, 'empty DATA frames: the client ran';
my $cpu = $t->cpu_seconds($worker) - $cpu0;
ok $cpu < 5, "empty DATA frames: the worker spent ${cpu}s of CPU on 20000 of them";
alive('empty DATA');

$r = attack('streams', '--count', 130, '--timeout', 2);
is $r->{refused}, 30, 'streams beyond http2_max_concurrent_streams (100): 30 REFUSED_STREAM';
ok !defined $r->{goaway}, '... and the connection stays';
alive('too many streams');

$r = attack('zero_window', '--path', '/big.bin', '--timeout', 8);
is $r->{responses}, 1, 'zero window: the response header comes';
ok $r->{resets} >= 1 || $r->{closed}, 'zero window: send_timeout ends the stalled stream';
ok $t->log_contains(qr/client timed out.*while sending response to client/),
    'zero window: "client timed out" logged';
alive('zero window');

if (!$t->sanitized) {
    my $grown = rss() - $rss0;
    ok $grown < 20_000, "the worker's memory grew by ${grown} KiB over every attack";
}

$t->stop;
done_testing;
