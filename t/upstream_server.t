#!/usr/bin/perl

# Self-test of t/lib/Test/Upstream.pm, the origin server of the proxy
# tests, with raw client sockets and no ringx: request recording, keepalive
# and connection counting, pipelining, chunked request bodies,
# 100-continue, every response mode's bytes, /sleep not blocking other
# connections, server options, refuse/resume, unix sockets, stop.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Select;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);
use Test::More;
use Test::Ringx;            # for Test::Ringx::Conn (no binary needed)
use Test::Upstream;
use Time::HiRes qw(time sleep);

sub pattern { Test::Upstream::pattern(@_) }

my $u = Test::Upstream->new;
$u->start;
like $u->addr, qr/^127\.0\.0\.1:\d+$/, 'addr';
is $u->url, 'http://' . $u->addr, 'url';
my $port = $u->port;

sub conn { Test::Ringx::Conn->new('127.0.0.1', $port) or die "connect: $!" }

sub get {
    my ($path, %o) = @_;
    my $c = conn();
    my $m = $o{method} // 'GET';
    $c->send("$m $path HTTP/1.1\r\nHost: up\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(head => $m eq 'HEAD');
    return wantarray ? ($r, $c) : $r;
}

###########################################################################
# recording, keepalive, pipelining, request bodies

{
    my $c = conn();
    my $chunked = "POST /echo/c HTTP/1.1\r\nHost: up\r\n"
        . "Transfer-Encoding: chunked\r\n\r\n"
        . "5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\nX-T: t\r\n\r\n";
    $c->send("GET /echo?a=1 HTTP/1.1\r\nHost: up\r\nX-One: 1\r\nx-one: 2\r\n\r\n"
        . "POST /echo/cl HTTP/1.1\r\nHost: up\r\nContent-Length: 3\r\n\r\nabc"
        . $chunked);
    my @r = $c->read_responses(3);
    is scalar(@r), 3, 'three pipelined responses';
    is_deeply [map { $_->{headers}{'x-upstream-req'} } @r], [1, 2, 3],
        'request numbers on the connection';
    is_deeply [map { $_->{headers}{'x-upstream-conn'} } @r], [1, 1, 1],
        'one connection';
    my $e = Test::Upstream::parse_echo($r[0]{body});
    is $e->{uri}, '/echo?a=1', 'echo uri';
    is_deeply $e->{headers}, [['Host', 'up'], ['X-One', '1'], ['x-one', '2']],
        'echo headers in order, as sent';
    is Test::Upstream::parse_echo($r[1]{body})->{body}, 'abc', 'echo body';
    $e = Test::Upstream::parse_echo($r[2]{body});
    is $e->{body}, 'hello world!', 'chunked request body decoded';
    is $e->{chunked}, 1, 'echo says chunked';
    is_deeply $e->{trailers}, [['X-T', 't']], 'echo trailers';
    ok $c->still_open, 'connection kept';

    is $u->connections, 1, 'connections: 1';
    my @q = $u->requests;
    is scalar(@q), 3, 'three requests recorded';
    is_deeply [map { "$_->{method} $_->{uri} $_->{conn}/$_->{n}" } @q],
        ['GET /echo?a=1 1/1', 'POST /echo/cl 1/2', 'POST /echo/c 1/3'],
        'recorded method, uri, conn, n';
    is $q[0]{raw}, "GET /echo?a=1 HTTP/1.1\r\nHost: up\r\nX-One: 1\r\n"
        . "x-one: 2\r\n\r\n", 'raw head';
    is $q[0]{version}, 'HTTP/1.1', 'version';
    is_deeply $q[1]{headers}, [['Host', 'up'], ['Content-Length', '3']],
        'recorded headers';
    is $q[2]{body}, 'hello world!', 'recorded chunked body';
    is $q[2]{body_raw}, substr($chunked, index($chunked, "\r\n\r\n") + 4),
        'recorded raw chunked body';
    is_deeply $q[2]{trailers}, [['X-T', 't']], 'recorded trailers';

    $c->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n");
    is $c->read_response->{headers}{'x-upstream-req'}, 4, 'fourth on it';
    my $c2 = conn();
    $c2->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n");
    is $c2->read_response->{headers}{'x-upstream-conn'}, 2, 'second conn';
    is $u->connections, 2, 'connections: 2';
    $c->close;
    $u->wait_for(sub { grep { $_->{conn} == 1 } $u->closes });
    my ($cl) = grep { $_->{conn} == 1 } $u->closes;
    is $cl->{by}, 'peer', 'close by the peer recorded';
    is $cl->{requests}, 4, 'with its request count';

    $u->reset;
    is $u->connections, 0, 'reset: no connections';
    is scalar($u->requests), 0, 'reset: no requests';
    $c2->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n");
    $c2->read_response;
    is scalar($u->requests), 1, 'recording goes on after reset';
    is(($u->requests)[0]{conn}, 2, 'serials go on after reset');

    # a big chunked upload fed in pieces
    my $big = pattern(300_000);
    my $body = join '', map { sprintf("%x\r\n%s\r\n", length $_, $_) }
                            unpack('(a7000)*', $big);
    $c2->send("PUT /echo HTTP/1.1\r\nHost: up\r\nTransfer-Encoding: chunked\r\n\r\n");
    $c2->send_slow([unpack('(a65536)*', $body . "0\r\n\r\n")], delay => 0.01);
    my $r = $c2->read_response;
    is length(Test::Upstream::parse_echo($r->{body})->{body}), 300_000,
        'big chunked body';
    is((($u->requests)[-1]{body} eq $big), 1, 'big chunked body recorded');
}

###########################################################################
# 100-continue

{
    my $c = conn();
    $c->send("POST /echo HTTP/1.1\r\nHost: up\r\nContent-Length: 4\r\n"
        . "Expect: 100-continue\r\n\r\n");
    my $r = $c->read_response;
    is $r && $r->{status}, 100, '100 Continue before the body';
    is $r && $r->{raw}, "HTTP/1.1 100 Continue\r\n\r\n", '100 bytes';
    $c->send("data");
    $r = $c->read_response;
    is $r->{status}, 200, 'then the final response';
    is Test::Upstream::parse_echo($r->{body})->{body}, 'data', 'body read';
    is((($u->requests)[-1]{continue_sent}), 1, 'continue_sent recorded');

    $c->send("POST /echo?no100=1 HTTP/1.1\r\nHost: up\r\nContent-Length: 4\r\n"
        . "Expect: 100-continue\r\n\r\n");
    ok !defined $c->read_response(timeout => 0.3), 'no100=1: no 100';
    $c->send("data");
    is $c->read_response->{status}, 200, 'no100=1: final response';

    $c->send("POST /echo HTTP/1.1\r\nHost: up\r\nContent-Length: 4\r\n"
        . "Expect: 100-continue\r\n\r\ndata");
    $r = $c->read_response;
    is $r->{status}, 200, 'body sent with the head: no 100';

    $c->send("POST /len/3?early=1 HTTP/1.1\r\nHost: up\r\nContent-Length: 1000\r\n"
        . "Expect: 100-continue\r\n\r\n");
    $r = $c->read_response;
    is $r->{status}, 200, 'early=1: answered without the body';
    is $r->{headers}{connection}, 'close', 'early=1: Connection: close';
    ok $c->wait_closed(2), 'early=1: closed';
    is((($u->requests)[-1]{early}), 1, 'early recorded');
}

###########################################################################
# response modes

{
    my $r = get('/status/404');
    is $r->{status}, 404, 'status/404';
    is $r->{body}, "status 404\n", 'status body';
    $r = get('/prefix/status/201');
    is $r->{status}, 201, 'mode after a prefix segment';
    my ($r204, $c) = get('/status/204');
    is $r204->{status}, 204, 'status/204';
    ok !exists $r204->{headers}{'content-length'}, '204: no Content-Length';
    is $c->read_all, '', '204: nothing after the head';

    $r = get('/len/100000');
    is $r->{headers}{'content-length'}, 100000, 'len: Content-Length';
    ok $r->{body} eq pattern(100000), 'len: pattern bytes';
    is pattern(20), "0000000\n0000008\n0000", 'pattern';
    is pattern(6, 13), "08\n000", 'pattern with offset';

    $c = conn();
    $c->send("HEAD /len/100 HTTP/1.1\r\nHost: up\r\n\r\nGET /len/5 HTTP/1.1\r\nHost: up\r\n\r\n");
    my @r = $c->read_responses(2, head => [1, 0]);
    is $r[0]{headers}{'content-length'}, 100, 'HEAD: Content-Length';
    is $r[0]{body}, '', 'HEAD: no body';
    is $r[1]{body}, pattern(5), 'next response after a HEAD';

    $r = get('/chunked/20000?trailers=1&ext=1');
    ok $r->{chunked}, 'chunked';
    ok $r->{body} eq pattern(20000), 'chunked: pattern bytes';
    like $r->{raw}, qr/\r\n1;name=value\r\n.*\r\na;name=value\r\n/s,
        'chunked: mixed sizes and extensions';
    like $r->{raw}, qr/\r\n0;name=value\r\nX-Trailer-One: 1\r\nX-Trailer-Two: two\r\n\r\n\z/,
        'chunked: trailers';
    $r = get('/chunked/10?size=4');
    like $r->{raw}, qr/\r\n\r\n4\r\n0000\r\n4\r\n000\n\r\n2\r\n00\r\n0\r\n\r\n\z/,
        'chunked: size=4';

    ($r, $c) = get('/close/3000');
    ok $r->{body} eq pattern(3000), 'close: body';
    ok !exists $r->{headers}{'content-length'}, 'close: no length';
    is $r->{headers}{connection}, 'close', 'close: Connection: close';
    ok $c->eof, 'close: closed';
    ($r, $c) = get('/close/10?v=1.0');
    is $r->{proto}, 'HTTP/1.0', 'close?v=1.0: HTTP/1.0 status line';
    is $r->{body}, pattern(10), 'close?v=1.0: body';

    # /slow: the head and the first piece first, the rest later
    $c = conn();
    my $t0 = time;
    $c->send("GET /slow/400?ms=300&pieces=3 HTTP/1.1\r\nHost: up\r\n\r\n");
    $c->_fill(5) while $c->buffer !~ /\r\n\r\n(.*)/s || length($1) < 134;
    $c->buffer =~ /\r\n\r\n(.*)/s;
    is length($1), 134, 'slow: only the first piece at first';
    $r = $c->read_response;
    ok $r->{body} eq pattern(400), 'slow: all bytes';
    cmp_ok time - $t0, '>=', 0.59, 'slow: two pauses of 300 ms';
    $c->send("GET /slow/10?ms=10&pieces=3&chunked=1 HTTP/1.1\r\nHost: up\r\n\r\n");
    $r = $c->read_response;
    is $r->{body}, pattern(10), 'slow chunked: body';
    like $r->{raw}, qr/\r\n\r\n4\r\n0000\r\n4\r\n000\n\r\n2\r\n00\r\n0\r\n\r\n\z/,
        'slow chunked: one chunk per piece';

    $c = conn();
    $c->send("GET /stall-header HTTP/1.1\r\nHost: up\r\n\r\n");
    ok $c->still_open(0.3), 'stall-header: open';
    is $c->buffer, '', 'stall-header: nothing sent';
    ok scalar(grep { $_->{uri} eq '/stall-header' } $u->requests),
        'stall-header: request recorded';

    $c = conn();
    $c->send("GET /stall-body/100 HTTP/1.1\r\nHost: up\r\n\r\n");
    ok $c->still_open(0.3), 'stall-body: open';
    like $c->buffer, qr/Content-Length: 100\r\n.*\r\n\r\n\Q${\ pattern(50)}\E\z/s,
        'stall-body: head and half the body';

    $c = conn();
    $c->send("GET /close-mid/100 HTTP/1.1\r\nHost: up\r\n\r\n");
    my $all = $c->read_all;
    ok $c->eof, 'close-mid: closed';
    like $all, qr/Content-Length: 100\r\n.*\r\n\r\n\Q${\ pattern(50)}\E\z/s,
        'close-mid: head and half the body';
    $c = conn();
    $c->send("GET /close-mid/100?chunked=1 HTTP/1.1\r\nHost: up\r\n\r\n");
    like $c->read_all, qr/chunked\r\n.*\r\n\r\n32\r\n\Q${\ pattern(50)}\E\r\n\z/s,
        'close-mid chunked: one chunk, no last chunk';

    $c = conn();
    $c->send("GET /drop HTTP/1.1\r\nHost: up\r\n\r\n");
    is $c->read_all, '', 'drop: nothing';
    ok $c->eof, 'drop: closed';
    $c = conn();
    $c->send("GET /reset HTTP/1.1\r\nHost: up\r\n\r\n");
    is $c->read_all, '', 'reset: nothing';
    ok $c->reset, 'reset: RST';

    $c = conn();
    $c->send("GET /garbage HTTP/1.1\r\nHost: up\r\n\r\n");
    like $c->read_all, qr/^this is not an HTTP response\r\n/, 'garbage';
    $c = conn();
    $c->send("GET /bad-header HTTP/1.1\r\nHost: up\r\n\r\n");
    like $c->still_open(0.2) && $c->buffer,
        qr/\r\nThis line has no colon\r\n\r\nok\n\z/, 'bad-header';
    $c = conn();
    $c->send("GET /bad-header?kind=space HTTP/1.1\r\nHost: up\r\n\r\n");
    $c->still_open(0.2);
    like $c->buffer, qr/\r\nX-Bad : value\r\n/, 'bad-header kind=space';
    $c = conn();
    $c->send("GET /bad-status HTTP/1.1\r\nHost: up\r\n\r\n");
    like $c->read_all, qr/^HTTP\/1\.1 2x0 Broken\r\n/, 'bad-status';

    $r = get('/huge-header/20000');
    is length($r->{headers}{'x-huge'}), 20000, 'huge-header';

    $c = conn();
    $c->send("GET /1xx?codes=100,103 HTTP/1.1\r\nHost: up\r\n\r\n");
    @r = $c->read_responses(3);
    is_deeply [map { $_->{status} } @r], [100, 103, 200], '1xx: 100, 103, 200';
    like $r[1]{raw}, qr/^HTTP\/1\.1 103 Early Hints\r\nLink: /, '1xx: 103 with Link';
    is $r[2]{body}, "final\n", '1xx: final body';

    $r = get('/headers?Set-Cookie=a%3D1&Set-Cookie=b%3D2;+Path=/&X-Sp=a%20b');
    is_deeply [map { $_->[1] } grep { $_->[0] eq 'Set-Cookie' } @{ $r->{header_list} }],
        ['a=1', 'b=2;+Path=/'], 'headers: repeated Set-Cookie, decoded';
    is $r->{headers}{'x-sp'}, 'a b', 'headers: %20';
    $r = get('/headers/302?Location=/there&close=1');
    is $r->{status}, 302, 'headers/302';
    is $r->{headers}{location}, '/there', 'headers: Location';
    ok !exists $r->{headers}{close}, 'headers: generic keys left out';

    $c = conn();
    $c->send("GET /ws HTTP/1.1\r\nHost: up\r\nConnection: Upgrade\r\n"
        . "Upgrade: websocket\r\n\r\nearly");
    $r = $c->read_response;
    is $r->{status}, 101, 'ws: 101';
    is $r->{headers}{upgrade}, 'websocket', 'ws: Upgrade echoed';
    $c->send("hello");
    $c->_fill(2) while length($c->buffer) < 10 && !$c->eof;
    is $c->buffer, 'earlyhello', 'ws: raw bytes echoed';
    $r = get('/ws');
    is $r->{status}, 426, 'ws without Upgrade: 426';

    $c = conn();
    $c->send("GET /keepalive-close HTTP/1.1\r\nHost: up\r\n\r\n");
    $r = $c->read_response;
    is $r->{headers}{connection}, 'close', 'keepalive-close: header';
    ok $c->wait_closed(2), 'keepalive-close: closed';

    $c = conn();
    $c->send("GET /echo?close=1 HTTP/1.1\r\nHost: up\r\n\r\n");
    is $c->read_response->{headers}{connection}, 'close', 'close=1';
    ok $c->wait_closed(2), 'close=1: closed';

    $c = conn();
    $c->send("GET /echo HTTP/1.0\r\n\r\n");
    $r = $c->read_response;
    is $r->{headers}{connection}, 'close', 'HTTP/1.0: close';
    ok $c->wait_closed(2), 'HTTP/1.0: closed';
    $c = conn();
    $c->send("GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    is $c->read_response->{headers}{connection}, 'keep-alive',
        'HTTP/1.0 keep-alive';
    ok $c->still_open, 'HTTP/1.0 keep-alive: open';

    $c = conn();
    $c->send("GARBAGE\r\n\r\n");
    $r = $c->read_response;
    is $r->{status}, 400, 'bad request line: 400';
    ok $c->wait_closed(2), 'bad request: closed';
    ok scalar(grep { $_->{type} eq 'bad' } $u->events), 'bad request logged';
}

###########################################################################
# /sleep does not block other connections; pipelined order kept

{
    # a server that blocked in the sleep would have sent a's answer before
    # b's: it would be in a's socket by the time b's arrives
    $u->reset;
    my $a = conn();
    my $t0 = time;
    $a->send("GET /sleep/1000 HTTP/1.1\r\nHost: up\r\n\r\n"
        . "GET /len/3 HTTP/1.1\r\nHost: up\r\n\r\n");
    $u->wait_requests(1);
    my $b = conn();
    $b->send("GET /echo?b HTTP/1.1\r\nHost: up\r\n\r\n");
    my $rb = $b->read_response;
    is $rb && $rb->{status}, 200, 'other connection answered during a sleep';
    $a->_fill(0.05);
    is $a->buffer, '', 'the sleeping one not yet';
    my @r = $a->read_responses(2);
    is $r[0]{body}, "slept 1000\n", 'sleep: answer';
    is $r[1]{body}, pattern(3), 'pipelined request after it, in order';
    cmp_ok time - $t0, '>=', 0.99, 'after the sleep';

    my $c = conn();
    $t0 = time;
    $c->send("GET /echo?delay=200 HTTP/1.1\r\nHost: up\r\n\r\n");
    $c->read_response;
    cmp_ok time - $t0, '>=', 0.19, 'delay=200';

    # many connections at once
    my @c = map { conn() } 1 .. 40;
    $_->send("GET /len/1000 HTTP/1.1\r\nHost: up\r\n\r\n") for @c;
    my @ok = grep { my $r = $_->read_response; $r && $r->{body} eq pattern(1000) } @c;
    is scalar(@ok), 40, '40 concurrent connections answered';
}

###########################################################################
# refuse, resume, stop

{
    my $c = conn();
    $u->refuse;
    ok !Test::Ringx::Conn->new('127.0.0.1', $port), 'refuse: connect refused';
    $c->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n");
    is $c->read_response->{status}, 200, 'refuse: open connection served';
    $u->resume;
    my $d = Test::Ringx::Conn->new('127.0.0.1', $port);
    ok $d, 'resume: connect works';
    $d->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n");
    is $d->read_response->{status}, 200, 'resume: served';

    my $pid = $u->pid;
    $u->stop;
    ok !kill(0, $pid), 'stop: process gone';
    ok !Test::Ringx::Conn->new('127.0.0.1', $port), 'stop: connect refused';
}

###########################################################################
# options

{
    my $k = Test::Upstream->new(keepalive_max => 2, idle_timeout_ms => 300);
    $k->start;
    my $c = Test::Ringx::Conn->new('127.0.0.1', $k->port);
    $c->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n" x 3);
    my @r = $c->read_responses(3, timeout => 1);
    is scalar(@r), 2, 'keepalive_max 2: two answers';
    is $r[1]{headers}{connection}, 'close', 'keepalive_max: close on the 2nd';
    ok $c->eof, 'keepalive_max: closed';

    $c = Test::Ringx::Conn->new('127.0.0.1', $k->port);
    $c->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\n");
    $c->read_response;
    ok $c->wait_closed(3), 'idle_timeout_ms: idle connection closed';
    is((grep { $_->{by} eq 'idle' } $k->closes) + 0, 1, 'closed as idle');
    $k->stop;

    my $n = Test::Upstream->new(no_continue => 1, response_delay_ms => 150);
    $n->start;
    $c = Test::Ringx::Conn->new('127.0.0.1', $n->port);
    my $t0 = time;
    $c->send("POST /echo HTTP/1.1\r\nHost: up\r\nContent-Length: 2\r\n"
        . "Expect: 100-continue\r\n\r\n");
    ok !defined $c->read_response(timeout => 0.3), 'no_continue: no 100';
    $c->send("ok");
    is $c->read_response->{status}, 200, 'no_continue: answered';
    cmp_ok time - $t0, '>=', 0.44, 'response_delay_ms';
}

###########################################################################
# unix socket

{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $x = Test::Upstream->new(unix => "$dir/up.sock");
    $x->start;
    is $x->addr, "unix:$dir/up.sock", 'unix: addr';
    is $x->url, "http://unix:$dir/up.sock:", 'unix: url';
    my $s = IO::Socket::UNIX->new(Peer => "$dir/up.sock", Type => SOCK_STREAM)
        or die "unix connect: $!";
    my $c = bless { sock => $s, buf => '', eof => 0, reset => 0,
                    sel => IO::Select->new($s) }, 'Test::Ringx::Conn';
    $c->send("GET /echo HTTP/1.1\r\nHost: up\r\n\r\nGET /len/7 HTTP/1.1\r\nHost: up\r\n\r\n");
    my @r = $c->read_responses(2);
    is Test::Upstream::parse_echo($r[0]{body})->{method}, 'GET', 'unix: echo';
    is $r[1]{body}, pattern(7), 'unix: keepalive';
    is $x->connections, 1, 'unix: one connection';
    $x->refuse;
    ok !IO::Socket::UNIX->new(Peer => "$dir/up.sock", Type => SOCK_STREAM),
        'unix: refused';
    $x->resume;
    ok(IO::Socket::UNIX->new(Peer => "$dir/up.sock", Type => SOCK_STREAM),
        'unix: resumed');
    $x->stop;
    ok !-e "$dir/up.sock", 'unix: socket removed at stop';
}

done_testing;
