#!/usr/bin/perl

# Request parsing: HTTP/1.0, 1.1, 0.9 and 2.0 request lines, Host (missing,
# invalid, absolute-form), URI normalisation, the header size limits (414,
# "Request Header Or Cookie Too Large"), request smuggling guards
# (Content-Length with Transfer-Encoding, duplicate Content-Length, bad
# chunk sizes), underscores_in_headers, strict line endings, NUL bytes,
# CONNECT and TRACE. Every error that ends the connection must close it,
# and the worker must survive all of them.

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

        location / { return 200 "root host=$host uri=$uri\n"; }
        location /a/ { return 200 "a uri=$uri\n"; }
        location = /a/c { return 200 "exact /a/c\n"; }
        location /hdr { return 200 "foo=[$http_x_foo] bar=[$http_x_bar]\n"; }
        location /args { return 200 "ru=[$request_uri] args=[$args] a=[$arg_a]\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name example.com;
        location / { return 200 "example host=$host uri=$uri\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name localhost;
        underscores_in_headers on;
        location / { return 200 "foo=[$http_x_foo]\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name localhost;
        large_client_header_buffers 2 1k;
        location / { return 200 "small\n"; }
    }
}
EOF
$t->run;

my ($P0, $P1, $P2) = map { $t->port($_) } 0 .. 2;
my ($worker) = $t->wait_workers(1);
ok($worker, 'one worker');

# Sends $raw on a new connection; returns (first response or undef, true
# when the server closed the connection within $close_wait seconds after
# it, the connection object).
sub exchange {
    my ($port, $raw, %o) = @_;
    my $c = $t->raw($port) or return (undef, 0, undef);
    $c->send($raw);
    my $r = $c->read_response(timeout => $o{timeout} // 3);
    my $closed = $c->wait_closed($o{close_wait} // 2);
    return ($r, $closed, $c);
}

# A request error: status, Connection: close, the connection closed, the
# nginx-style page.
sub error_case {
    my ($name, $port, $raw, $status, %o) = @_;
    my ($r, $closed) = exchange($port, $raw);
    ok($r, "$name: a response") or return;
    is($r->{status}, $status, "$name: status $status")
        or diag($r->{head});
    is($r->{headers}{connection}, 'close', "$name: Connection: close");
    ok($closed, "$name: connection closed after the response");
    if ($o{page}) {
        like($r->{body}, qr{<center><h1>\Q$o{page}\E</h1></center>},
             "$name: built-in page '$o{page}'");
    }
    return $r;
}

sub ok_case {
    my ($name, $port, $raw, $body) = @_;
    my ($r) = exchange($port, $raw, close_wait => 0.01);
    ok($r, "$name: a response") or return;
    is($r->{status}, 200, "$name: 200") or diag($r->{head});
    is($r->{body}, $body, "$name: body");
    return $r;
}

###########################################################################
# versions

{
    my $r = ok_case('HTTP/1.0', $P0, "GET / HTTP/1.0\r\n\r\n",
                    "root host=localhost uri=/\n");
    is($r->{proto}, 'HTTP/1.1', 'HTTP/1.0: answered with an HTTP/1.1 status line');
    is($r->{headers}{connection}, 'close', 'HTTP/1.0: Connection: close');
    is($r->{headers}{'content-length'}, length($r->{body}), 'HTTP/1.0: Content-Length');
    is($r->{headers}{'content-type'}, 'text/plain', 'HTTP/1.0: Content-Type');

    my $c = $t->raw($P0);
    $c->send("GET /a/x HTTP/1.1\r\nHost: localhost\r\n\r\n");
    $r = $c->read_response;
    is($r && $r->{status}, 200, 'HTTP/1.1: 200');
    is($r && $r->{body}, "a uri=/a/x\n", 'HTTP/1.1: body');
    is($r && $r->{headers}{connection}, 'keep-alive', 'HTTP/1.1: Connection: keep-alive');
    ok($c->still_open(0.3), 'HTTP/1.1: the connection stays open');
    $c->close;
}

# HTTP/0.9 has no version: nginx answers with a bare body, an llhttp-strict
# server with 400; either way the connection is closed at once (not after
# client_header_timeout, 5 s here).
{
    my $c = $t->raw($P0);
    $c->send("GET /\r\n");
    my $t0 = time;
    my $closed = $c->wait_closed(1.5);
    ok($closed, 'HTTP/0.9: connection closed at once')
        or diag(sprintf "still open after %.1fs", time - $t0);
    my $data = $c->buffer;
    if ($data =~ m{^HTTP/}) {
        my ($r) = Test::Ringx::parse_responses($data);
        is($r && $r->{status}, 400, 'HTTP/0.9: 400 when answered with a status line');
    } else {
        pass('HTTP/0.9: no status line (a 0.9 response or nothing)');
    }
    $c->close;
}

error_case('HTTP/2.0 request line', $P0, "GET / HTTP/2.0\r\nHost: localhost\r\n\r\n",
           505, page => '505 HTTP Version Not Supported');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent unsupported HTTP version/) }, 1),
   'HTTP/2.0: info "client sent unsupported HTTP version"');

###########################################################################
# Host

error_case('HTTP/1.1 without Host', $P0, "GET / HTTP/1.1\r\n\r\n", 400,
           page => '400 Bad Request');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent HTTP\/1.1 request without "Host" header/) }, 1),
   'no Host: info line');

error_case('Host a..b', $P0, "GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", 400,
           page => '400 Bad Request');
error_case('Host a/b', $P0, "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400,
           page => '400 Bad Request');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent invalid host header/) }, 1),
   'invalid Host: info "client sent invalid host header"');

ok_case('HTTP/1.0 without Host: the default server', $P0,
        "GET /x HTTP/1.0\r\n\r\n", "root host=localhost uri=/x\n");
ok_case('Host example.com', $P0,
        "GET /x HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n",
        "example host=example.com uri=/x\n");
ok_case('absolute-form: the request line host wins over Host', $P0,
        "GET http://example.com/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        "example host=example.com uri=/x\n");
ok_case('absolute-form with a port', $P0,
        "GET http://example.com:8080/y?z=1 HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n",
        "example host=example.com uri=/y\n");

###########################################################################
# URI normalisation

ok_case('/a/./b/../c reaches location = /a/c', $P0,
        "GET /a/./b/../c HTTP/1.0\r\n\r\n", "exact /a/c\n");
ok_case('//a//b merged (merge_slashes on)', $P0,
        "GET //a//b HTTP/1.0\r\n\r\n", "a uri=/a/b\n");
ok_case('%2e%2e inside the tree resolved', $P0,
        "GET /a/b/%2e%2e/x HTTP/1.0\r\n\r\n", "a uri=/a/x\n");
ok_case('percent-decoded $uri', $P0,
        "GET /a/%7Ex%20y HTTP/1.0\r\n\r\n", "a uri=/a/~x y\n");
error_case('/../x', $P0, "GET /../x HTTP/1.0\r\n\r\n", 400);
error_case('/a/../../x', $P0, "GET /a/../../x HTTP/1.0\r\n\r\n", 400);
error_case('/%2e%2e/x', $P0, "GET /%2e%2e/x HTTP/1.0\r\n\r\n", 400);
error_case('/a/%2E%2E/%2e%2e/x', $P0, "GET /a/%2E%2E/%2e%2e/x HTTP/1.0\r\n\r\n", 400);

###########################################################################
# size limits (large_client_header_buffers 4 8k by default)

{
    my $uri = '/a/' . ('u' x 7000);
    ok_case('request line of 7000 bytes', $P0, "GET $uri HTTP/1.0\r\n\r\n",
            "a uri=$uri\n");

    $uri = '/a/' . ('u' x 9000);
    my $r = error_case('request line over 8k', $P0, "GET $uri HTTP/1.1\r\nHost: localhost\r\n\r\n",
                       414, page => '414 Request-URI Too Large');
    is($r && $r->{reason}, 'Request-URI Too Large', '414: reason phrase');

    my $long = 'X-Long: ' . ('v' x 9000);
    $r = error_case('header line over 8k', $P0,
                    "GET / HTTP/1.1\r\nHost: localhost\r\n$long\r\n\r\n", 400);
    like($r && $r->{body}, qr{<center>Request Header Or Cookie Too Large</center>},
         'header line over 8k: "Request Header Or Cookie Too Large" page');
    like($r && $r->{body}, qr{<title>400 Request Header Or Cookie Too Large</title>},
         'header line over 8k: page title');
    is($r && $r->{reason}, 'Bad Request', 'header line over 8k: reason phrase');

    my $many = join '', map { "X-H$_: " . ('v' x 7000) . "\r\n" } 1 .. 6;
    $r = error_case('6 header lines of 7000 bytes (over 4 x 8k)', $P0,
                    "GET / HTTP/1.1\r\nHost: localhost\r\n$many\r\n", 400);
    like($r && $r->{body}, qr{Request Header Or Cookie Too Large},
         'headers over 4 x 8k: "Request Header Or Cookie Too Large"');

    $many = join '', map { "X-H$_: " . ('v' x 5000) . "\r\n" } 1 .. 3;
    ok_case('3 header lines of 5000 bytes', $P0,
            "GET / HTTP/1.0\r\n$many\r\n", "root host=localhost uri=/\n");
}

# large_client_header_buffers 2 1k on port 2
{
    ok_case('1k buffers: small request', $P2, "GET / HTTP/1.0\r\n\r\n", "small\n");
    error_case('1k buffers: request line of 1100 bytes', $P2,
               "GET /" . ('u' x 1100) . " HTTP/1.0\r\n\r\n", 414);
    my $r = error_case('1k buffers: header line of 1100 bytes', $P2,
               "GET / HTTP/1.0\r\nX-Long: " . ('v' x 1100) . "\r\n\r\n", 400);
    like($r && $r->{body}, qr{Request Header Or Cookie Too Large},
         '1k buffers: "Request Header Or Cookie Too Large"');
    my $many = join '', map { "X-H$_: " . ('v' x 900) . "\r\n" } 1 .. 4;
    $r = error_case('1k buffers: 4 header lines of 900 bytes', $P2,
               "GET / HTTP/1.0\r\n$many\r\n", 400);
    like($r && $r->{body}, qr{Request Header Or Cookie Too Large},
         '1k buffers: too much header in total');
}

###########################################################################
# bodies: smuggling guards

error_case('Content-Length with Transfer-Encoding', $P0,
           "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
           . "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400);
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent "Content-Length" and "Transfer-Encoding" headers at the same time/) }, 1),
   'log: client sent "Content-Length" and "Transfer-Encoding" headers at the same time');
error_case('two different Content-Length', $P0,
           "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
           . "Content-Length: 6\r\n\r\nhello!", 400);
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent duplicate header line: "Content-Length: 6", previous value: "Content-Length: 5"/) }, 1),
   'log: client sent duplicate header line: "Content-Length: 6", previous value: "Content-Length: 5"');
error_case('Content-Length not a number', $P0,
           "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5x\r\n\r\nhello", 400);
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent invalid "Content-Length" header/) }, 1),
   'log: client sent invalid "Content-Length" header');
error_case('unknown Transfer-Encoding', $P0,
           "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
           page => '501 Not Implemented');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent unknown "Transfer-Encoding": "gzip"/) }, 1),
   'log: client sent unknown "Transfer-Encoding": "gzip"');
error_case('HTTP/1.0 with Transfer-Encoding', $P0,
           "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400);
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent HTTP\/1.0 request with "Transfer-Encoding" header/) }, 1),
   'log: client sent HTTP/1.0 request with "Transfer-Encoding" header');

# A bad chunk size in a body that arrived with the header: a `return`
# location discards the body before it answers (ngx_http_send_response ->
# ngx_http_discard_request_body), the discard filter fails, and the request
# ends with 400 instead; the connection is closed.
{
    my ($r, $closed) = exchange($P0,
        "POST /a/bad HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        . "zz\r\nhello\r\n0\r\n\r\n"
        . "GET /a/smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n");
    is($r && $r->{status}, 400, 'bad chunk size: 400') or diag($r ? $r->{head} : 'no response');
    like($r && $r->{body}, qr{<center><h1>400 Bad Request</h1></center>}, 'bad chunk size: the 400 page');
    is($r && $r->{headers}{connection}, 'close', 'bad chunk size: Connection: close');
    ok($closed, 'bad chunk size: connection closed');
    unlike($r ? $r->{raw} : '', qr/smuggled/, 'bad chunk size: nothing after it is served');
    ok($t->wait_for(sub { $t->log_contains(qr/\[error\] .*client sent invalid chunked body/) }, 1),
       'log: [error] client sent invalid chunked body');
}

# a well-formed chunked body on a return location: answered, connection kept
{
    my $c = $t->raw($P0);
    $c->send("POST /a/chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
             . "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
             . "GET /a/next HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my @r = $c->read_responses(2);
    is(scalar @r, 2, 'chunked body then a pipelined GET: two responses');
    is($r[0] && $r[0]{body}, "a uri=/a/chunked\n", 'chunked body: first response');
    is($r[1] && $r[1]{body}, "a uri=/a/next\n", 'chunked body: the next request answered');
    $c->close;
}

###########################################################################
# underscores_in_headers

{
    ok_case('underscores_in_headers off: X_Foo dropped, X-Bar kept', $P0,
            "GET /hdr HTTP/1.0\r\nX_Foo: one\r\nX-Bar: two\r\n\r\n",
            "foo=[] bar=[two]\n");
    ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent invalid header line: "X_Foo: one"/) }, 1),
       'underscores_in_headers off: info "client sent invalid header line: "X_Foo: one""');
    ok_case('$http_x_foo from X-Foo', $P0,
            "GET /hdr HTTP/1.0\r\nX-Foo: one\r\n\r\n", "foo=[one] bar=[]\n");
    ok_case('underscores_in_headers on: X_Foo kept', $P1,
            "GET / HTTP/1.0\r\nX_Foo: one\r\n\r\n", "foo=[one]\n");
}

###########################################################################
# strict syntax

# RFC 9112 2.2, as nginx: a bare LF ends a line of the head; a bare CR
# does not
ok_case('bare LF line endings', $P0, "GET / HTTP/1.1\nHost: localhost\n\n",
        "root host=localhost uri=/\n");
error_case('bare CR line endings', $P0, "GET / HTTP/1.1\rHost: localhost\r\r", 400);
error_case('NUL in a header value', $P0,
           "GET / HTTP/1.1\r\nHost: localhost\r\nX-Foo: a\0b\r\n\r\n", 400);
error_case('NUL in the request line', $P0, "GET /a\0b HTTP/1.1\r\nHost: localhost\r\n\r\n", 400);
error_case('space before the colon', $P0,
           "GET / HTTP/1.1\r\nHost: localhost\r\nX-Foo : a\r\n\r\n", 400);
error_case('garbage request line', $P0, "HELLO\r\n\r\n", 400);

###########################################################################
# methods

error_case('CONNECT', $P0, "CONNECT / HTTP/1.1\r\nHost: localhost\r\n\r\n",
           405, page => '405 Not Allowed');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent CONNECT method/) }, 1),
   'CONNECT: info "client sent CONNECT method"');
{
    # authority-form: nginx's request line parser already refuses it (400)
    my ($r, $closed) = exchange($P0,
        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    like($r && $r->{status}, qr/^(?:400|405)$/, 'CONNECT host:port: refused (400 or 405)');
    ok($closed, 'CONNECT host:port: connection closed');
}
error_case('TRACE', $P0, "TRACE / HTTP/1.1\r\nHost: localhost\r\n\r\n",
           405, page => '405 Not Allowed');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent TRACE method/) }, 1),
   'TRACE: info "client sent TRACE method"');

###########################################################################
# the worker survived everything

{
    is_deeply([ $t->worker_pids ], [ $worker ], 'same worker after all the errors');
    ok_case('a request on a fresh connection after the errors', $P0,
            "GET /a/after HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            "a uri=/a/after\n");
}

###########################################################################
# a header that arrives in many small pieces: the input buffer grows (and
# moves) under the already-parsed request line; what was taken from it
# must survive that

{
    my $c = $t->raw($P0);
    my $req = "GET /args/x?a=1&b=" . ('y' x 200) . " HTTP/1.1\r\nHost: localhost\r\n"
            . join('', map { "X-Pad-$_: " . ('p' x 300) . "\r\n" } 1 .. 20) . "\r\n";
    $c->send_slow($req, size => 97, delay => 0.005);
    my $r = $c->read_response(timeout => 3);
    is($r && $r->{status}, 200, 'header in pieces: 200');
    is($r && $r->{body}, "ru=[/args/x?a=1&b=" . ('y' x 200) . "] args=[a=1&b=" . ('y' x 200)
       . "] a=[1]\n", 'header in pieces: $request_uri and $args intact');
    $c->close;
}

$t->stop;
done_testing;
