#!/usr/bin/perl
# http2_conformance.t: RFC 9113 cases in the style of h2spec, each sent as
# raw frames (t/lib/h2raw.py: hyperframe and an unchecking hpack) to a
# server whose locations proxy to a recording origin: frame size errors,
# frames on stream 0, idle and closed streams, stream ids, malformed
# requests (pseudo-header fields missing, unknown, repeated or late;
# uppercase names; connection-specific fields; content-length against
# DATA), field names and values with CR, LF or NUL (a stream error, and
# never a second header line or request in the HTTP/1.1 text a stream's
# request is parsed from: the origin is asked what it received), SETTINGS
# with invalid values, WINDOW_UPDATE overflow and zero, PRIORITY on
# itself. Each case asserts the error (a GOAWAY's code, or the stream's
# RST_STREAM) and that the worker still answers.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use JSON::PP;

plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import hyperframe, hpack" 2>/dev/null');

use constant { NO_ERROR => 0, PROTOCOL_ERROR => 1, FLOW_CONTROL_ERROR => 3,
               STREAM_CLOSED => 5, FRAME_SIZE_ERROR => 6 };

my $RAW = "$FindBin::Bin/lib/h2raw.py";
my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        location / { proxy_pass http://$UP; }
    }
}
EOF
$t->run;
my $port = $t->port(0);
my ($worker) = $t->worker_pids;

sub raw {
    my ($case) = @_;
    open my $fh, '-|', '/usr/bin/python3', $RAW, $port, $case, '--path', '/echo'
        or die "h2raw: $!";
    my $o = do { local $/; <$fh> };
    close $fh;
    return eval { decode_json($o) } || { error => $o, resets => {}, status => {} };
}

my $r = raw('ok');
is $r->{status}{1}, 200, 'a correct request: 200 (the harness works)';

# connection errors: GOAWAY with the code
my @conn = (
    [ data_too_large       => FRAME_SIZE_ERROR, 'DATA beyond SETTINGS_MAX_FRAME_SIZE' ],
    [ settings_bad_length  => FRAME_SIZE_ERROR, 'SETTINGS of a length not a multiple of 6' ],
    [ ping_bad_length      => FRAME_SIZE_ERROR, 'PING of 7 bytes' ],
    [ data_idle            => PROTOCOL_ERROR,   'DATA on an idle stream' ],
    [ headers_stream0      => PROTOCOL_ERROR,   'HEADERS on stream 0' ],
    [ data_stream0         => PROTOCOL_ERROR,   'DATA on stream 0' ],
    [ even_stream          => PROTOCOL_ERROR,   'a client stream with an even id' ],
    [ settings_push_2      => PROTOCOL_ERROR,   'SETTINGS_ENABLE_PUSH 2' ],
    [ settings_window_big  => FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE 2^31' ],
    [ settings_frame_small => PROTOCOL_ERROR,   'SETTINGS_MAX_FRAME_SIZE 16383' ],
    [ settings_frame_big   => PROTOCOL_ERROR,   'SETTINGS_MAX_FRAME_SIZE 2^24' ],
    [ window_overflow_conn => FLOW_CONTROL_ERROR, 'WINDOW_UPDATE beyond 2^31-1 (connection)' ],
    [ window_zero_conn     => PROTOCOL_ERROR,   'WINDOW_UPDATE of 0 on the connection' ],
);
for my $c (@conn) {
    my ($case, $code, $what) = @$c;
    $r = raw($case);
    is $r->{goaway}, $code, "$what: GOAWAY $code";
    ok $r->{closed}, "... the connection closed";
}

# stream errors: RST_STREAM PROTOCOL_ERROR (malformed, RFC 9113 8.1.1)
my @stream = (
    [ missing_path         => 'no :path' ],
    [ missing_method       => 'no :method' ],
    [ empty_path           => 'an empty :path' ],
    [ unknown_pseudo       => 'an unknown pseudo-header field' ],
    [ pseudo_after_regular => 'a pseudo-header field after a regular one' ],
    [ duplicate_path       => ':path twice' ],
    [ uppercase_name       => 'an uppercase field name' ],
    [ connection_header    => 'Connection (connection-specific, 8.2.2)' ],
    [ transfer_encoding    => 'Transfer-Encoding' ],
    [ te_gzip              => 'TE other than "trailers"' ],
    [ length_short         => 'content-length 10 with 5 bytes of DATA' ],
    [ length_long          => 'content-length 3 with 5 bytes of DATA' ],
    [ value_crlf           => 'a value with CR LF' ],
    [ value_lf_request     => 'a value with LF and a second request' ],
    [ value_nul            => 'a value with NUL' ],
    [ value_space          => 'a value starting with a space (8.2.1)' ],
    [ name_space           => 'a name with a space' ],
    [ name_crlf            => 'a name with CR LF' ],
    [ name_colon           => 'a name with a colon' ],
    [ cookie_crlf          => 'a cookie with CR LF' ],
);
for my $c (@stream) {
    my ($case, $what) = @$c;
    $r = raw($case);
    is $r->{resets}{1}, PROTOCOL_ERROR, "$what: RST_STREAM PROTOCOL_ERROR";
    ok !exists $r->{status}{1}, '... and no response';
}
ok $t->log_contains(qr/client sent invalid HTTP\/2 HEADERS frame on stream 1: Invalid HTTP header field was received/),
    'a malformed request is logged, naming the frame and the problem';
ok $t->log_contains(qr/client sent invalid header "x a" in HTTP\/2 stream 1/),
    'a field name with bytes HTTP does not allow is logged, escaped';
ok $t->log_contains(qr/client sent invalid HTTP\/2, closing connection with GOAWAY PROTOCOL_ERROR: DATA frame for an idle stream/),
    'a connection error is logged with its reason (DATA on an idle stream)';
ok $t->log_contains(qr/HTTP\/2 stream 1 reset with PROTOCOL_ERROR: the client broke HTTP\/2's rules/),
    'a content-length against the DATA sent is logged';

# the pseudo-header fields that make the request line and Host: a stream
# error or a 400 from the request line's parser, never an injection
for my $case (qw(path_crlf path_space method_crlf authority_crlf)) {
    $r = raw($case);
    ok(($r->{resets}{1} // -1) == PROTOCOL_ERROR || ($r->{status}{1} // 0) == 400,
       "$case: RST_STREAM PROTOCOL_ERROR or 400");
}

# HEADERS on a stream id below the last one: RFC 9113 5.1.1's connection
# error PROTOCOL_ERROR, logged in nginx's words (nghttp2 alone ignored it)
$r = raw('stream_id_down');
is $r->{goaway}, PROTOCOL_ERROR, 'HEADERS on stream 3 after stream 5: GOAWAY PROTOCOL_ERROR';
is $r->{last_stream_id}, 5, '... naming stream 5 the last';
ok !exists $r->{status}{3}, '... no request runs for stream 3';
ok $t->log_contains(qr/\[info\].*client sent HEADERS frame with incorrect identifier 3, the last was 5/),
    '... logged as nginx does';

$r = raw('te_trailers');
is $r->{status}{1}, 200, 'TE: trailers is allowed';

$r = raw('data_closed');
ok(($r->{resets}{1} // -1) == STREAM_CLOSED || ($r->{goaway} // -1) == STREAM_CLOSED,
   'DATA on a stream closed both ways: STREAM_CLOSED');

$r = raw('window_overflow_stream');
is $r->{resets}{1}, FLOW_CONTROL_ERROR, 'WINDOW_UPDATE beyond 2^31-1 (stream): RST_STREAM FLOW_CONTROL_ERROR';

for my $case (qw(priority_self headers_priority_self)) {
    $r = raw($case);
    ok(($r->{resets}{1} // -1) == PROTOCOL_ERROR || ($r->{goaway} // -1) == PROTOCOL_ERROR,
       "$case: a stream depending on itself is a PROTOCOL_ERROR");
}

# what reached the origin: no field or request made of a value's bytes
my @req = $up->requests;
ok !(grep { $_->{uri} =~ /smuggled/ } @req), 'the origin never saw a smuggled request';
ok !(grep { grep { lc($_->[0]) eq 'x-injected' || lc($_->[0]) =~ /^x-a.+/ } @{$_->{headers}} } @req),
    '... nor an injected header line';
ok !(grep { join('', map { "$_->[0]: $_->[1]\n" } @{$_->{headers}}) =~ /[\r\0]/ } @req),
    '... nor a CR or NUL in a field';

my ($now) = $t->worker_pids;
is $now, $worker, 'the same worker after every case';
is raw('ok')->{status}{1}, 200, '... and it answers';
$t->stop;
done_testing;
