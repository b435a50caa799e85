#!/usr/bin/perl

# Timeouts: client_header_timeout (a stalled or trickling request header is
# dropped without a response, slowloris does not starve other clients),
# the wait for a request body that never comes, send_timeout with a client
# that stops reading, and lingering close after a 413 with an unread body.

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
    client_header_timeout 1s;
    client_body_timeout 1s;
    lingering_timeout 1s;
    send_timeout 1s;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { return 200 "uri=$uri\n"; }
        location /files/ { root html; }
    }

    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name localhost;
        client_max_body_size 1k;
        location / { return 200 "small body uri=$uri\n"; }
    }
}
EOF
my $BIG = 16 * 1024 * 1024;
$t->write_file_raw('html/files/big.bin', 'x' x $BIG);
$t->run;

my ($P0, $P1) = map { $t->port($_) } 0, 1;
my ($worker) = $t->wait_workers(1);

sub get11 { "GET $_[0] HTTP/1.1\r\nHost: localhost\r\n\r\n" }

# The worker must survive each section; a crash is reported there and the
# respawned worker is followed from then on.
sub same_worker {
    my ($name) = @_;
    my @w = $t->worker_pids;
    my $ok = is("@w", $worker, "$name: the worker survived");
    ($worker) = $t->wait_workers(1) unless $ok;
    return $ok;
}

###########################################################################
# client_header_timeout 1s

# three stalled clients at once: half a request line, half the headers,
# nothing at all
{
    my $t0 = time;
    my $line = $t->raw($P0);
    my $hdrs = $t->raw($P0);
    my $none = $t->raw($P0);
    $line->send("GET /half HT");
    $hdrs->send("GET /hdr HTTP/1.1\r\nHost: localhost\r\nX-Partial: ab");
    ok($line->still_open(0.5), 'half a request line: still open at 0.5 s');
    ok($line->wait_closed(1.5), 'half a request line: closed within ~2 s');
    my $took = time - $t0;
    cmp_ok($took, '>=', 0.8, 'half a request line: not before ~1 s')
        or diag(sprintf "closed after %.2fs", $took);
    is($line->buffer, '', 'half a request line: closed without a response (no 408 sent)');
    ok($hdrs->wait_closed(2.5 - (time - $t0)), 'request line and half the headers: closed within ~2 s');
    is($hdrs->buffer, '', 'half the headers: no response');
    ok($none->wait_closed(2.5 - (time - $t0)), 'a connection that sends nothing: closed within ~2 s');
    ok($t->wait_for(sub { $t->log_contains(
        qr/\[info\] .*client timed out \(110: Connection timed out\) while reading client request line/) }, 1),
       'log: client timed out (110: Connection timed out) while reading client request line');
    ok($t->wait_for(sub { $t->log_contains(
        qr/\[info\] .*client timed out \(110: Connection timed out\) while reading client request headers, client: 127\.0\.0\.1, server: localhost, request: "GET \/hdr HTTP\/1\.1"/) }, 1),
       'log: client timed out (110: Connection timed out) while reading client request headers, client: ..., request: ...');
    sleep 1.2;    # past a second timer period
    same_worker('header timeouts');
}

# The header timeout bounds the whole header, it is not restarted by every
# byte: a client trickling a byte every 0.2 s is dropped after ~1 s.
{
    my $c = $t->raw($P0);
    my $t0 = time;
    $c->send("GET /trickle HTTP/1.1\r\nHost: localhost\r\nX-Slow: ");
    my $closed_at;
    while (time - $t0 < 3) {
        $c->send('a');
        unless ($c->still_open(0.2)) { $closed_at = time - $t0; last; }
    }
    ok(defined $closed_at && $closed_at < 2,
       'a header trickled a byte every 0.2 s: dropped within ~1 s (whole-header timeout)')
        or diag(defined $closed_at ? sprintf("closed at %.2fs", $closed_at) : 'still open after 3 s');
}

# the second request on a keepalive connection gets the header timeout too
{
    my $c = $t->raw($P0);
    $c->send(get11('/first'));
    my $r = $c->read_response;
    is($r && $r->{body}, "uri=/first\n", 'keepalive: first request');
    $c->send("GET /second HTTP/1.1\r\nHo");
    ok($c->wait_closed(2.5), 'keepalive: a stalled second request header is dropped');
    same_worker('trickle and keepalive header timeouts');
}

# slowloris: 20 stalled connections do not stop a normal client
{
    my $t0 = time;
    my @slow = grep { $_ } map { $t->raw($P0) } 1 .. 20;
    is(scalar @slow, 20, 'slowloris: 20 connections open');
    $_->send("GET /slowloris HTTP/1.1\r\nHost: loc") for @slow;
    sleep 0.2;
    my $c = $t->raw($P0);
    $c->send("GET /normal HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 1);
    is($r && $r->{body}, "uri=/normal\n", 'slowloris: a normal client is served meanwhile');
    cmp_ok(time - $t0, '<', 1, 'slowloris: ... at once');
    my $closed = 0;
    for my $s (@slow) {
        my $left = 3 - (time - $t0);
        $closed++ if $s->wait_closed($left > 0 ? $left : 0.01);
    }
    is($closed, 20, 'slowloris: all 20 closed by 3 s');
    $c = $t->raw($P0);
    $c->send("GET /after HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    $r = $c->read_response(timeout => 1);
    is($r && $r->{body}, "uri=/after\n", 'slowloris: served afterwards');
    same_worker('slowloris');
}

###########################################################################
# a request body that never comes (a return location discards the body:
# the response goes out at once, then the wait for the rest of the body is
# bounded by 1 s here)

{
    my $c = $t->raw($P0);
    my $t0 = time;
    $c->send("POST /nobody HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nhello");
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{status}, 200, 'body never completed: the return response');
    is($r && $r->{body}, "uri=/nobody\n", 'body never completed: its body');
    ok($c->wait_closed(2.5), 'body never completed: connection closed by ~2.5 s');
    my $took = time - $t0;
    cmp_ok($took, '>=', 0.7, 'body never completed: not closed before ~1 s')
        or diag(sprintf "closed after %.2fs", $took);
}

{
    # a body that keeps coming, slower than the timeouts in total but with
    # each piece in time, then a pipelined request on the same connection
    my $c = $t->raw($P0);
    $c->send("POST /slowbody HTTP/1.1\r\nHost: localhost\r\nContent-Length: 8\r\n\r\n");
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{body}, "uri=/slowbody\n", 'slow body: response');
    my $ok = $c->send_slow([qw(ab cd ef gh)], delay => 0.5);
    ok($ok, 'slow body: the pieces 0.5 s apart are accepted');
    $c->send(get11('/next'));
    $r = $c->read_response(timeout => 2);
    is($r && $r->{body}, "uri=/next\n", 'slow body: the next request on the connection is answered');
    $c->close;
    same_worker('request body waits');
}

###########################################################################
# send_timeout 1s: a client that stops reading a large response

{
    my $c = $t->raw($P0);
    $c->send(get11('/files/big.bin'));
    sleep 2.5;
    my $data = $c->read_all(timeout => 3);
    ok($c->eof, 'send_timeout: the server closed the connection');
    cmp_ok(length $data, '<', $BIG, 'send_timeout: the response was cut')
        or diag(length($data) . " bytes read");
    like($data, qr{^HTTP/1\.1 200 OK\r\n}, 'send_timeout: it had started');
    ok($t->wait_for(sub { $t->log_contains(
        qr/\[info\] .*client timed out \(110: Connection timed out\) while sending response to client, client: 127\.0\.0\.1, server: localhost, request: "GET \/files\/big\.bin HTTP\/1\.1"/) }, 1),
       'log: client timed out (110: Connection timed out) while sending response to client, client: ...');
}

{
    # the same file read at once arrives whole
    my $c = $t->raw($P0);
    $c->send("GET /files/big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 5);
    is($r && length($r->{body}), $BIG, 'a reading client gets the whole 16 MB');
    same_worker('send_timeout');
}

###########################################################################
# lingering close: 413 with an unread body, the client keeps sending

{
    my $c = $t->raw($P1);
    $c->send("POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n"
             . ('b' x 5000));
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{status}, 413, 'lingering: 413 delivered to a client still sending');
    like($r && $r->{body}, qr{<center><h1>413 Request Entity Too Large</h1></center>},
         'lingering: the 413 page');
    is($r && $r->{headers}{connection}, 'close', 'lingering: Connection: close');
    ok($t->wait_for(sub { $t->log_contains(
        qr/\[error\] .*client intended to send too large body: 100000 bytes/) }, 1),
       'log: [error] client intended to send too large body: 100000 bytes');

    # the server reads and drops what still comes: no reset for 0.5 s
    my $sent_ok = 1;
    for (1 .. 10) {
        $sent_ok &&= $c->send('b' x 1000);
        sleep 0.05;
    }
    ok($sent_ok, 'lingering: the rest of the body is read and dropped (no reset)');
    ok(!$c->reset, 'lingering: no connection reset seen');

    # then, once the client is quiet, the server closes after lingering_timeout
    sleep 2.5;
    my $gone = !$c->send('b') || do { sleep 0.2; !$c->send('b') };
    ok($gone, 'lingering: closed for good once the client was quiet for lingering_timeout');
    $c->close;
    same_worker('lingering close');
}

{
    my $c = $t->raw($P1);
    $c->send("POST /small HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n" . ('s' x 100)
             . get11('/small2'));
    my @r = $c->read_responses(2);
    is(join('|', map { $_->{status} } @r), '200|200', 'under client_max_body_size: both answered');
    $c->close;
}

###########################################################################

same_worker('the end');
$t->stop;
done_testing;
