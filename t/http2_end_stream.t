#!/usr/bin/perl
# http2_end_stream.t: a response's last DATA frame carries END_STREAM (as
# nginx's), instead of an empty DATA frame after it: a static file in one
# frame and in many, a `return`, a proxied body, a body under limit_rate;
# each request still ends as it did (200 and its bytes in the access log,
# not a client close), a stream whose request body is still coming gets
# RST_STREAM NO_ERROR after its END_STREAM, and a HEAD ends on HEADERS.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use JSON::PP;

plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $H2C = "$FindBin::Bin/lib/h2client.py";
my $u = Test::Upstream->new;
$u->start;
my $uurl = $u->url;

my $t = Test::Ringx->new;
$t->write_file_raw('html/1k.bin', 'k' x 1024);
$t->write_file_raw('html/big.bin', join '', map { chr(($_ * 7) % 256) } 0 .. 100_000 - 1);
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    log_format h2 '$request|$status|$body_bytes_sent';
    access_log logs/access.log h2;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        root html;
        location / { }
        location /ret { return 200 "ret\n"; }
        location /slow { alias html/big.bin; limit_rate 200k; limit_rate_after 10k; }
        location /p/ { proxy_pass UPSTREAM; }
    }
}
EOF
$t->write_config($t->read_file('conf/ringx.conf') =~ s/UPSTREAM/$uurl/r);
$t->run;
my $p = $t->port(0);

sub h2 {
    my $o = `/usr/bin/python3 $H2C @_`;
    return eval { decode_json($o) } || { error => $o, responses => [] };
}

# the DATA frames of one response: how many, how many empty, all ended
sub frames_ok {
    my ($what, $r, $len, $frames) = @_;
    my $s = $r->{responses}[0] // {};
    is $s->{status}, 200, "$what: 200";
    is $s->{body_len}, $len, "$what: every byte" if defined $len;
    ok $s->{ended}, "$what: the stream ended";
    is $s->{empty_data}, 0, "$what: no empty DATA frame (END_STREAM on the last one)"
        or diag explain $s;
    is $s->{data_frames}, $frames, "$what: $frames DATA frames" if defined $frames;
}

frames_ok('1 KiB file', h2($p, 'request', '--path', '/1k.bin'), 1024, 1);
frames_ok('100 KB file', h2($p, 'request', '--path', '/big.bin'), 100_000);
frames_ok('return', h2($p, 'request', '--path', '/ret'), 4, 1);
frames_ok('proxied', h2($p, 'request', '--path', '/p/x'), undef);
like $t->read_file('logs/access.log') // '', qr{^GET /p/x HTTP/2\.0\|200\|\d+$}m,
    'proxied: logged 200';
frames_ok('limit_rate', h2($p, 'request', '--path', '/slow'), 100_000);

my $r = h2($p, 'request', '--streams', 30, '--path', '/1k.bin');
is scalar(grep { ($_->{status} // 0) == 200 && $_->{body_len} == 1024 && $_->{ended}
                 && $_->{empty_data} == 0 && $_->{data_frames} == 1 } @{$r->{responses}}),
    30, '30 streams at once: each a single DATA frame with END_STREAM';

# a request body still coming when the response ends: the response ends
# the stream only once the request is done (nothing it may still wait for
# is cut off), then RST_STREAM NO_ERROR stops the body
$r = h2($p, 'request', '--method', 'POST', '--path', '/ret', '--body-size', 200_000,
        '--linger', 1);
my $s = $r->{responses}[0] // {};
is $s->{status}, 200, 'a response before its request body: 200';
ok $s->{ended}, '... its stream ended';
is $s->{body_len}, 4, '... with its body';

$r = h2($p, 'request', '--method', 'HEAD', '--path', '/1k.bin');
$s = $r->{responses}[0] // {};
is $s->{status}, 200, 'HEAD: 200';
ok $s->{ended} && $s->{data_frames} == 0, 'HEAD: the stream ends on HEADERS, no DATA';

# every request ended as usual: logged with its status and bytes, and no
# stream was taken for a client's close
$t->stop;
my $log = $t->read_file('logs/access.log') // '';
is scalar(() = $log =~ m{^GET /1k\.bin HTTP/2\.0\|200\|1024$}mg), 31,
    'access log: every 1 KiB request 200 with its 1024 bytes';
like $log, qr{^GET /big\.bin HTTP/2\.0\|200\|100000$}m, 'access log: the 100 KB file';
like $log, qr{^GET /slow HTTP/2\.0\|200\|100000$}m, 'access log: the paced file';
like $log, qr{^HEAD /1k\.bin HTTP/2\.0\|200\|0$}m, 'access log: HEAD 200';
unlike $log, qr{\|499\|}, 'access log: no 499';
unlike $t->read_file('logs/error.log') // '', qr/client (closed|reset) HTTP\/2 stream/,
    'error log: no stream taken for a client close';

done_testing;
