#!/usr/bin/perl

# Keepalive and pipelining: pipelined requests answered in order on one
# connection (also with a request body in between, and fed in small
# pieces), Connection: close from the client, HTTP/1.0 with and without
# keep-alive, keepalive_requests, keepalive_timeout (idle close, 0, the
# Keep-Alive header), keepalive_time and keepalive_disable msie6.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;

events {
    worker_connections 64;
}

http {
    access_log off;
    client_header_timeout 5s;
    client_body_timeout 5s;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { return 200 "uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name localhost;
        keepalive_requests 2;
        location / { return 200 "uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name localhost;
        keepalive_timeout 1s;
        location / { return 200 "uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_3%%;
        server_name localhost;
        keepalive_timeout 0;
        location / { return 200 "uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_4%%;
        server_name localhost;
        keepalive_timeout 5 3;
        location / { return 200 "uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_5%%;
        server_name localhost;
        keepalive_disable none;
        location / { return 200 "uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_6%%;
        server_name localhost;
        keepalive_time 1s;
        location / { return 200 "uri=$uri\n"; }
    }
}
EOF
$t->run;

my @P = map { $t->port($_) } 0 .. 6;

sub get11 {
    my ($path, %h) = @_;
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    return "GET $path HTTP/1.1\r\nHost: localhost\r\n$extra\r\n";
}

sub bodies { join '|', map { $_->{body} } @_ }

###########################################################################
# pipelining

{
    my $c = $t->raw($P[0]);
    $c->send(get11('/one') . get11('/two') . get11('/three'));
    my @r = $c->read_responses(3);
    is(scalar @r, 3, 'three pipelined GETs in one write: three responses');
    is(bodies(@r), "uri=/one\n|uri=/two\n|uri=/three\n", 'pipelined: in order');
    is(scalar(grep { $_->{status} == 200 } @r), 3, 'pipelined: all 200');
    is(scalar(grep { ($_->{headers}{connection} // '') eq 'keep-alive' } @r), 3,
       'pipelined: all Connection: keep-alive');
    ok($c->still_open(0.3), 'pipelined: the connection stays open');
    is($c->buffer, '', 'pipelined: nothing more was sent');

    # the same connection goes on serving
    $c->send(get11('/four'));
    my $r = $c->read_response;
    is($r && $r->{body}, "uri=/four\n", 'a fourth request on the same connection');
    $c->close;
}

{
    my $c = $t->raw($P[0]);
    $c->send(get11('/a')
             . "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\n\r\nhello world"
             . get11('/c'));
    my @r = $c->read_responses(3);
    is(bodies(@r), "uri=/a\n|uri=/b\n|uri=/c\n",
       'pipelined GET, POST with a body, GET: answered in order');
    ok($c->still_open(0.2), 'pipelined with a body: still open');
    $c->close;
}

{
    my $c = $t->raw($P[0]);
    $c->send(get11('/a')
             . "POST /b HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
             . "3\r\nabc\r\n0\r\n\r\n"
             . get11('/c'));
    my @r = $c->read_responses(3);
    is(bodies(@r), "uri=/a\n|uri=/b\n|uri=/c\n",
       'pipelined GET, POST with a chunked body, GET: answered in order');
    $c->close;
}

{
    # the body looks like a request: it must not be answered
    my $c = $t->raw($P[0]);
    my $fake = get11('/fake');
    $c->send("POST /p HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
             . length($fake) . "\r\n\r\n$fake" . get11('/real'));
    my @r = $c->read_responses(3, timeout => 1);
    is(bodies(@r), "uri=/p\n|uri=/real\n", 'a body that looks like a request is not served');
    $c->close;
}

{
    my $c = $t->raw($P[0]);
    my $all = join '', map { get11("/n$_") } 1 .. 50;
    $c->send($all);
    my @r = $c->read_responses(50);
    is(scalar @r, 50, '50 pipelined requests in one write: 50 responses');
    is(bodies(@r), join('|', map { "uri=/n$_\n" } 1 .. 50), '50 pipelined: in order');
    $c->close;
}

{
    my $c = $t->raw($P[0]);
    my $all = get11('/x') . "POST /y HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc"
              . get11('/z');
    $c->send_slow($all, size => 5, delay => 0.005);
    my @r = $c->read_responses(3);
    is(bodies(@r), "uri=/x\n|uri=/y\n|uri=/z\n",
       'pipelined requests fed in 5-byte pieces: answered in order');
    $c->close;
}

{
    my $c = $t->raw($P[0]);
    $c->send(get11('/a') . get11('/b', Connection => 'close') . get11('/never'));
    my @r = $c->read_responses(3, timeout => 2);
    is(bodies(@r), "uri=/a\n|uri=/b\n",
       'pipelined with Connection: close in the middle: answered up to it');
    is($r[1] && $r[1]{headers}{connection}, 'close', 'the Connection: close request: Connection: close');
    ok($c->wait_closed(2), 'closed after the Connection: close request');
}

###########################################################################
# Connection: close, HTTP/1.0

{
    my $c = $t->raw($P[0]);
    $c->send(get11('/', Connection => 'close'));
    my $r = $c->read_response;
    is($r && $r->{status}, 200, 'Connection: close: 200');
    is($r && $r->{headers}{connection}, 'close', 'Connection: close: echoed');
    ok($c->wait_closed(2), 'Connection: close: the server closes');
}

{
    my $c = $t->raw($P[0]);
    $c->send("GET /old HTTP/1.0\r\n\r\n");
    my $r = $c->read_response;
    is($r && $r->{body}, "uri=/old\n", 'HTTP/1.0: answered');
    is($r && $r->{headers}{connection}, 'close', 'HTTP/1.0: Connection: close');
    ok($c->wait_closed(2), 'HTTP/1.0: the server closes');
}

{
    my $c = $t->raw($P[0]);
    $c->send("GET /ka1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    my $r = $c->read_response;
    is($r && $r->{body}, "uri=/ka1\n", 'HTTP/1.0 keep-alive: answered');
    is($r && $r->{headers}{connection}, 'keep-alive', 'HTTP/1.0 keep-alive: Connection: keep-alive');
    is($r && $r->{headers}{'content-length'}, 9, 'HTTP/1.0 keep-alive: Content-Length');
    ok($c->still_open(0.3), 'HTTP/1.0 keep-alive: the connection stays');
    $c->send("GET /ka2 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
    $r = $c->read_response;
    is($r && $r->{body}, "uri=/ka2\n", 'HTTP/1.0 keep-alive: a second request');
    $c->send("GET /ka3 HTTP/1.0\r\n\r\n");
    $r = $c->read_response;
    is($r && $r->{headers}{connection}, 'close', 'HTTP/1.0 without keep-alive on it: close');
    ok($c->wait_closed(2), 'HTTP/1.0: closed after the request without keep-alive');
}

###########################################################################
# keepalive_requests 2

{
    my $c = $t->raw($P[1]);
    $c->send(get11('/1'));
    my $r1 = $c->read_response;
    is($r1 && $r1->{headers}{connection}, 'keep-alive', 'keepalive_requests 2: 1st keep-alive');
    $c->send(get11('/2'));
    my $r2 = $c->read_response;
    is($r2 && $r2->{body}, "uri=/2\n", 'keepalive_requests 2: 2nd answered');
    is($r2 && $r2->{headers}{connection}, 'close', 'keepalive_requests 2: 2nd Connection: close');
    ok($c->wait_closed(2), 'keepalive_requests 2: closed after the 2nd');
}

{
    my $c = $t->raw($P[1]);
    $c->send(get11('/1') . get11('/2') . get11('/3'));
    my @r = $c->read_responses(3, timeout => 2);
    is(bodies(@r), "uri=/1\n|uri=/2\n", 'keepalive_requests 2, three pipelined: two answered');
    ok($c->eof || $c->wait_closed(2), 'keepalive_requests 2, three pipelined: closed');
}

###########################################################################
# keepalive_timeout

{
    my $c = $t->raw($P[2]);
    $c->send(get11('/idle'));
    my $r = $c->read_response;
    is($r && $r->{headers}{connection}, 'keep-alive', 'keepalive_timeout 1s: keep-alive');
    my $t0 = time;
    ok($c->still_open(0.3), 'keepalive_timeout 1s: open at 0.3 s');
    ok($c->wait_closed(2.2), 'keepalive_timeout 1s: closed by 2.5 s');
    my $took = time - $t0;
    cmp_ok($took, '>=', 0.7, 'keepalive_timeout 1s: not closed before ~1 s')
        or diag(sprintf "closed after %.2fs", $took);
    is($c->buffer, '', 'keepalive_timeout: closed without sending anything');
}

{
    # a request within the timeout resets it
    my $c = $t->raw($P[2]);
    $c->send(get11('/r1'));
    $c->read_response;
    sleep 0.6;
    $c->send(get11('/r2'));
    my $r = $c->read_response;
    is($r && $r->{body}, "uri=/r2\n", 'keepalive_timeout 1s: a request at 0.6 s served');
    ok($c->still_open(0.6), 'keepalive_timeout 1s: timer restarted by the request');
    $c->close;
}

{
    my $c = $t->raw($P[3]);
    $c->send(get11('/z'));
    my $r = $c->read_response;
    is($r && $r->{status}, 200, 'keepalive_timeout 0: 200');
    is($r && $r->{headers}{connection}, 'close', 'keepalive_timeout 0: Connection: close');
    ok($c->wait_closed(2), 'keepalive_timeout 0: closed');

    $c = $t->raw($P[3]);
    $c->send("GET /z HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    $r = $c->read_response;
    is($r && $r->{headers}{connection}, 'close', 'keepalive_timeout 0: HTTP/1.0 keep-alive refused');
    ok($c->wait_closed(2), 'keepalive_timeout 0: HTTP/1.0 closed');
}

{
    my $c = $t->raw($P[4]);
    $c->send(get11('/h'));
    my $r = $c->read_response;
    is($r && $r->{headers}{connection}, 'keep-alive', 'keepalive_timeout 5 3: keep-alive');
    is($r && $r->{headers}{'keep-alive'}, 'timeout=3', 'keepalive_timeout 5 3: Keep-Alive: timeout=3');
    $c->close;

    $c = $t->raw($P[0]);
    $c->send(get11('/h'));
    $r = $c->read_response;
    ok($r && !exists $r->{headers}{'keep-alive'}, 'no Keep-Alive header without the second parameter');
    $c->close;
}

###########################################################################
# keepalive_time 1s: no new request on a connection older than 1 s

{
    my $c = $t->raw($P[6]);
    $c->send(get11('/t1'));
    my $r = $c->read_response;
    is($r && $r->{headers}{connection}, 'keep-alive', 'keepalive_time 1s: 1st keep-alive');
    sleep 1.2;
    $c->send(get11('/t2'));
    $r = $c->read_response;
    is($r && $r->{body}, "uri=/t2\n", 'keepalive_time 1s: a request after 1.2 s still served');
    is($r && $r->{headers}{connection}, 'close', 'keepalive_time 1s: then Connection: close');
    ok($c->wait_closed(2), 'keepalive_time 1s: closed');
}

###########################################################################
# keepalive_disable msie6 (the default): POST requests from MSIE 4-6
# (without SV1) get no keepalive

my $MSIE6 = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)';
my $MSIE6_SV1 = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)';

sub post_ua {
    my ($port, $ua) = @_;
    my $c = $t->raw($port);
    $c->send("POST /p HTTP/1.1\r\nHost: localhost\r\nUser-Agent: $ua\r\n"
             . "Content-Length: 2\r\n\r\nhi");
    my $r = $c->read_response;
    my $closed = $c->wait_closed(1);
    return ($r ? $r->{headers}{connection} : 'no response', $closed);
}

{
    my ($conn, $closed) = post_ua($P[0], $MSIE6);
    is($conn, 'close', 'keepalive_disable msie6: POST from MSIE 6: Connection: close');
    ok($closed, 'keepalive_disable msie6: POST from MSIE 6: closed');

    ($conn) = post_ua($P[0], $MSIE6_SV1);
    is($conn, 'keep-alive', 'keepalive_disable msie6: MSIE 6 with SV1: keep-alive');

    ($conn) = post_ua($P[0], 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0');
    is($conn, 'keep-alive', 'keepalive_disable msie6: other browsers: keep-alive');

    ($conn) = post_ua($P[5], $MSIE6);
    is($conn, 'keep-alive', 'keepalive_disable none: POST from MSIE 6: keep-alive');

    my $c = $t->raw($P[0]);
    $c->send(get11('/g', 'User-Agent' => $MSIE6));
    my $r = $c->read_response;
    is($r && $r->{headers}{connection}, 'keep-alive', 'keepalive_disable msie6: GET from MSIE 6: keep-alive');
    $c->close;
}

###########################################################################
# fuzzing findings, kept as regressions (t/fuzz/README.md F1, F2)

{
    # an Upgrade request is an ordinary request here: the pipelined one
    # after it is answered (it used to stall the connection)
    my $c = $t->raw($P[0]);
    $c->send("GET /up HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
             . "Connection: Upgrade\r\n\r\n" . get11('/after-upgrade'));
    my @r = $c->read_responses(2, timeout => 3);
    is(scalar @r, 2, 'Upgrade request then a pipelined one: two responses');
    is($r[1] && $r[1]{status}, 200, 'the request after the Upgrade request is answered');
    $c->close;
}

{
    # a chunked body whose trailer arrives in two reads; the trailer is
    # dropped and the next request answered
    my $c = $t->raw($P[0]);
    $c->send("POST /tr HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
             . "3\r\nabc\r\n0\r\nX-Tr");
    sleep 0.2;
    $c->send("ailer: v\r\n\r\n" . get11('/after-trailer'));
    my @r = $c->read_responses(2, timeout => 3);
    is(scalar @r, 2, 'trailer across reads: two responses');
    is($r[0] && $r[0]{status}, 200, 'trailer across reads: the chunked request answered');
    is($r[1] && $r[1]{status}, 200, 'trailer across reads: the next request answered');
    $c->close;
}

$t->stop;
done_testing;
