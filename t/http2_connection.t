#!/usr/bin/perl
# http2_connection.t: an HTTP/2 connection's course and its directives
# (issue #20, second pass): keepalive_requests ends it as nginx 1.19.7+
# does (GOAWAY NO_ERROR naming the last stream let in, streams in flight
# finish, later ones refused, then close), keepalive_timeout 0 after one
# stream; http2_chunk_size per location (the largest DATA frame of each);
# a request body the response did not wait for; after its last stream the
# connection lingers (lingering_close, as nginx): RST_STREAM NO_ERROR after
# the complete response (RFC 9113 8.1), not the body read and dropped; the
# directives nginx accepts with a warning (server push, http2_pool_size,
# http2_streams_index_size) and http2_recv_buffer_size, which ringx has
# no use for and says so at -t.

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

use constant { NO_ERROR => 0, REFUSED_STREAM => 7 };

my $H2C = "$FindBin::Bin/lib/h2client.py";
my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_file_raw('html/big.bin', 'b' x 100_000);
$t->write_file('html/index.html', "hello\n");
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    http2_recv_buffer_size 512k;
    http2_push_preload on;
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        keepalive_requests 3;
        http2_pool_size 4k;
        http2_streams_index_size 32;
        http2_max_concurrent_pushes 5;
        location / { http2_push /style.css; }
        location /p/ { proxy_pass http://$UP; }
        location /c1k/ { http2_chunk_size 1k; alias html/; }
        location /c64k/ { http2_chunk_size 64k; alias html/; }
        location /ret { return 200 "short answer\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        http2 on;
        keepalive_timeout 0;
        http2_body_preread_size 1k;
        location /ret { return 200 "short answer\\n"; }
        location / { }
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        http2 on;
        keepalive_timeout 1s;
        location /ret { return 200 "short answer\\n"; }
    }
}
EOF

my ($rc, $out, $err) = $t->ringx('-t');
is $rc, 0, '-t accepts the obsolete http2_* directives';
for my $d (qw(http2_push http2_push_preload http2_max_concurrent_pushes
              http2_pool_size http2_streams_index_size)) {
    like $err, qr/\[warn\] the "$d" directive is obsolete, ignored in \S+:\d+/,
        "$d: nginx's warning, with file:line";
}
like $err, qr/\[warn\] the "http2_recv_buffer_size" directive is not used by ringx \(HTTP\/2 is read into the ring's buffers\), ignored in \S+:\d+/,
    'http2_recv_buffer_size: a warning that it is not used';

$t->write_file('conf/bad.conf', "events { } http { http2_recv_buffer_size 10; }\n");
($rc, $out, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/bad.conf');
like $err, qr/\[emerg\] .*"http2_recv_buffer_size".* in \S+:1/, 'http2_recv_buffer_size 10: too small, as for nginx';
$t->write_file('conf/bad.conf', "events { } http { http2_chunk_size 0; }\n");
($rc, $out, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/bad.conf');
isnt $rc, 0, 'http2_chunk_size 0: refused';

$t->run;
my ($p0, $p1, $p2) = ($t->port(0), $t->port(1), $t->port(2));

sub h2 {
    my ($port, @args) = @_;
    open my $fh, '-|', '/usr/bin/python3', $H2C, $port, 'request', @args or die "h2client: $!";
    my $o = do { local $/; <$fh> };
    close $fh;
    return eval { decode_json($o) } || { error => $o, responses => [] };
}

# --- keepalive_requests ---------------------------------------------------------

my $r = h2($p0, '--path', '/p/slow/100000?pieces=4&ms=200', '--streams', 5, '--linger', 10);
my @ok = grep { ($_->{status} // 0) == 200 && $_->{ended} && $_->{body_len} == 100_000 }
         @{$r->{responses}};
is scalar(@ok), 3, 'keepalive_requests 3, 5 streams at once: 3 answered in full';
is scalar(grep { ($_->{reset} // -1) == REFUSED_STREAM } @{$r->{responses}}), 2,
    '... the other 2 refused (REFUSED_STREAM: safe to retry)';
is $r->{goaway}, NO_ERROR, '... GOAWAY NO_ERROR';
is $r->{last_stream_id}, 5, '... naming stream 5 (the third) as the last';
ok $r->{closed}, '... and the connection closed after the streams in flight';

$r = h2($p0, '--path', '/ret', '--streams', 2);
is scalar(grep { ($_->{status} // 0) == 200 && $_->{ended} } @{$r->{responses}}), 2,
    'under the count: both streams answered';
is $r->{goaway}, undef, '... and no GOAWAY';

$r = h2($p1, '--path', '/ret', '--streams', 2);
is scalar(grep { ($_->{status} // 0) == 200 } @{$r->{responses}}), 1,
    'keepalive_timeout 0: one stream answered';
is $r->{goaway}, NO_ERROR, '... then GOAWAY NO_ERROR';
is $r->{last_stream_id}, 1, '... naming stream 1';

# the connection lingers after its GOAWAY, as nginx's: frames the client
# still sends are read, not answered with a reset that could destroy the
# responses it has not read yet
open my $fh, '-|', '/usr/bin/python3', "$FindBin::Bin/lib/h2raw.py", $p2, 'late_frames',
    '--path', '/ret' or die;
my $late = eval { decode_json(do { local $/; <$fh> }) } || {};
close $fh;
is $late->{status}{1}, 200, 'keepalive_timeout 1s, raw frames: answered';
is $late->{goaway}, NO_ERROR, '... GOAWAY NO_ERROR once idle';
ok $late->{closed}, '... the server\'s side closed';
is $late->{late_send_error}, undef, '... frames sent after it are read, no reset (lingering close)';

# --- http2_chunk_size per location ---------------------------------------------

is h2($p0, '--path', '/c1k/big.bin')->{responses}[0]{max_frame}, 1024,
    'http2_chunk_size 1k in a location: DATA frames of 1 KiB';
is h2($p0, '--path', '/big.bin')->{responses}[0]{max_frame}, 8192,
    '... the default (8k) in the others of its server';
is h2($p0, '--path', '/c64k/big.bin')->{responses}[0]{max_frame}, 16384,
    'http2_chunk_size 64k: cut to 16k, as nginx';

# --- a request body nobody waited for --------------------------------------------

$r = h2($p1, '--method', 'POST', '--path', '/ret', '--body-size', 1_000_000,
        '--linger', 5);
is $r->{responses}[0]{status}, 200, 'a 1 MB body to a return: 200';
is $r->{responses}[0]{body}, "short answer\n", '... the whole response';
ok $r->{responses}[0]{ended}, '... ended (END_STREAM)';
is $r->{responses}[0]{reset}, NO_ERROR, '... then RST_STREAM NO_ERROR: the body is not wanted';

$t->stop;
done_testing;
