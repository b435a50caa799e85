#!/usr/bin/perl

# client_max_body_size: a declared Content-Length over the limit gets 413
# (also with Expect: 100-continue, and per location), bodies under the limit
# are discarded by a `return` location and the next pipelined request on
# the connection is answered; chunked bodies are discarded the same way.

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
    client_header_timeout 2s;
    client_body_timeout 2s;
    lingering_timeout 1s;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        client_max_body_size 1k;

        location / { return 200 "uri=$uri\n"; }
        location /big/ {
            client_max_body_size 10k;
            return 200 "big uri=$uri\n";
        }
        location /nolimit/ {
            client_max_body_size 0;
            return 200 "nolimit uri=$uri\n";
        }
    }
}
EOF
$t->run;

my $P = $t->port(0);
my ($worker) = $t->wait_workers(1);

sub post {
    my ($path, $len, $body, %h) = @_;
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    return "POST $path HTTP/1.1\r\nHost: localhost\r\nContent-Length: $len\r\n$extra\r\n"
           . ($body // '');
}

sub get11 { "GET $_[0] HTTP/1.1\r\nHost: localhost\r\n\r\n" }

sub chunked {
    my ($path, @chunks) = @_;
    return "POST $path HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        . join('', map { sprintf("%x\r\n%s\r\n", length $_, $_) } @chunks) . "0\r\n\r\n";
}

sub too_large {
    my ($name, $raw, $len) = @_;
    my $c = $t->raw($P);
    $c->send($raw);
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{status}, 413, "$name: 413") or diag($r ? $r->{head} : 'no response');
    is($r && $r->{reason}, 'Request Entity Too Large', "$name: reason phrase");
    like($r && $r->{body}, qr{<center><h1>413 Request Entity Too Large</h1></center>},
         "$name: the 413 page");
    is($r && $r->{headers}{connection}, 'close', "$name: Connection: close");
    ok($c->wait_closed(3), "$name: connection closed");
    ok($t->wait_for(sub { $t->log_contains(
        qr/\[error\] .*client intended to send too large body: $len bytes, client: 127\.0\.0\.1, server: localhost, request: "POST \S+ HTTP\/1\.1"/) }, 1),
       "$name: log [error] client intended to send too large body: $len bytes");
    return $r;
}

###########################################################################
# Content-Length against client_max_body_size 1k

too_large('Content-Length 2000', post('/up', 2000, 'x' x 2000), 2000);
too_large('Content-Length 1025', post('/up', 1025, 'x' x 1025), 1025);
too_large('Content-Length 2000, body not sent', post('/up', 2000), 2000);

{
    # Expect: 100-continue over the limit: 413 straight away, no 100
    my $c = $t->raw($P);
    $c->send(post('/up', 5000, undef, Expect => '100-continue'));
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{status}, 413, 'Expect: 100-continue over the limit: 413, no 100 Continue first');
    ok($c->wait_closed(3), 'Expect: 100-continue over the limit: closed');
}

{
    my $c = $t->raw($P);
    $c->send(post('/exact', 1024, 'y' x 1024) . get11('/after-exact'));
    my @r = $c->read_responses(2);
    is(join('|', map { "$_->{status} $_->{body}" } @r),
       "200 uri=/exact\n|200 uri=/after-exact\n",
       'Content-Length 1024 (the limit): 200, then the pipelined request');
    $c->close;
}

{
    my $c = $t->raw($P);
    $c->send(post('/small', 500, 'z' x 500) . get11('/after-small')
             . post('/zero', 0) . get11('/after-zero'));
    my @r = $c->read_responses(4);
    is(join('|', map { $_->{body} } @r),
       "uri=/small\n|uri=/after-small\n|uri=/zero\n|uri=/after-zero\n",
       'bodies under the limit discarded; pipelined requests answered in order');
    ok($c->still_open(0.2), 'bodies under the limit: connection kept');
    $c->close;
}

{
    # the body in pieces, the next request right behind it
    my $c = $t->raw($P);
    $c->send(post('/pieces', 900));
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{body}, "uri=/pieces\n", 'body in pieces: answered');
    $c->send_slow([ ('p' x 300) x 3 ], delay => 0.1);
    $c->send(get11('/after-pieces'));
    $r = $c->read_response(timeout => 2);
    is($r && $r->{body}, "uri=/after-pieces\n", 'body in pieces: the next request answered');
    $c->close;
}

###########################################################################
# per location

{
    my $c = $t->raw($P);
    $c->send(post('/big/a', 5000, 'b' x 5000) . get11('/big/b'));
    my @r = $c->read_responses(2);
    is(join('|', map { "$_->{status} $_->{body}" } @r),
       "200 big uri=/big/a\n|200 big uri=/big/b\n",
       'location client_max_body_size 10k: 5000 bytes accepted');
    $c->close;
}

too_large('location 10k: Content-Length 20000', post('/big/c', 20000, 'b' x 20000), 20000);

{
    my $c = $t->raw($P);
    $c->send(post('/nolimit/a', 100_000_000));
    my $r = $c->read_response(timeout => 2);
    is($r && $r->{status}, 200, 'client_max_body_size 0: Content-Length 100000000 accepted');
    $c->close;
}

###########################################################################
# chunked bodies

{
    my $c = $t->raw($P);
    $c->send(chunked('/ch-small', 'a' x 300, 'b' x 300) . get11('/after-ch-small'));
    my @r = $c->read_responses(2);
    is(join('|', map { "$_->{status} $_->{body}" } @r),
       "200 uri=/ch-small\n|200 uri=/after-ch-small\n",
       'chunked 600 bytes: 200, then the pipelined request');
    $c->close;
}

# nginx checks client_max_body_size on chunked bodies when it reads them
# (ngx_http_request_body_chunked_filter), not when it discards them: a
# `return` location answers and discards the whole chunked body, and the
# connection goes on.
{
    my $c = $t->raw($P);
    $c->send(chunked('/ch-big', ('c' x 500) x 4) . get11('/after-ch-big'));
    my @r = $c->read_responses(2, timeout => 2);
    is($r[0] && "$r[0]{status} $r[0]{body}", "200 uri=/ch-big\n",
       'chunked 2000 bytes on a return location: its response');
    is($r[1] && "$r[1]{status} $r[1]{body}", "200 uri=/after-ch-big\n",
       'chunked 2000 bytes on a return location: discarded, next request answered (as nginx)');
    $c->close;
}

###########################################################################
# an over-long URI with a bad byte past the limit: 414 whatever the cuts
# (fuzz finding F5; nginx answers 414 either way)

{
    my $long = 'GET /' . ('a' x 9000) . "\x01 HTTP/1.1\r\nHost: localhost\r\n\r\n";
    for my $cut (0, 8500) {
        my $c = $t->raw($P);
        if ($cut) {
            $c->send(substr($long, 0, $cut));
            sleep 0.1;
            $c->send(substr($long, $cut));
        } else {
            $c->send($long);
        }
        my $r = $c->read_response;
        is($r && $r->{status}, 414, "too long URI then a bad byte, "
           . ($cut ? "cut at $cut" : 'one read') . ': 414');
    }
}

###########################################################################

# let the lingering timers of the 413 connections (lingering_timeout 1s) run
sleep 1.5;
ok(!$t->log_contains(qr/\(null\)/), 'no "(null)" in the error log')
    or diag(join "\n", $t->log_contains(qr/\(null\)/));
is_deeply([ $t->worker_pids ], [ $worker ], 'the worker survived');
$t->stop;
done_testing;
