#!/usr/bin/perl

# Hostile request lines and header sections, end to end through the proxy
# to a recording upstream (t/lib/Test/Hostile.pm): line endings (bare CR,
# bare LF), NUL and control bytes, obs-fold, invalid field names, header
# size and count limits (large_client_header_buffers), bad request lines
# and versions, Host (missing, duplicate, empty, against absolute-form).
# Each case checks the status, that nothing malformed or smuggled reached
# the upstream, and that the pipelined request behind it is served
# (accepted) or not (connection closed). The choices are in
# docs/reliability.md, "Hostile input".

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Hostile;

my $h = Test::Hostile->new(http => <<'EOF');
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name other.test;
        location / { return 200 "other host\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name localhost;
        client_header_buffer_size 1k;
        large_client_header_buffers 4 1k;
        location / { proxy_pass http://pool; }
    }
EOF

my $H = "Host: localhost\r\n";
sub get { my ($hdrs) = @_; "GET /x HTTP/1.1\r\n$H$hdrs\r\n" }

###########################################################################
# line endings

# RFC 9112 2.2: a bare LF may end the request line and the header lines
# (nginx takes it); the upstream gets a CRLF head (the harness checks)
$h->case('bare LF ends the request line', "GET /x HTTP/1.1\n$H\r\n", 200,
         up => [['GET', '/x', '']]);
# (no Host: the default server answers)
$h->case('bare LF ends the request line, no headers', "GET /x HTTP/1.0\n\r\n", 200,
         follow => 0,
         check => sub { is($_[0]{body}, "other host\n", 'the default server') });
sub headers_up {
    my (@want) = @_;
    return sub {
        my $e = Test::Hostile::echo_of($_[0]);
        my %got = map { (lc $_->[0] => $_->[1]) } @{ $e ? $e->{headers} : [] };
        is_deeply([map { $got{$_->[0]} } @want], [map { $_->[1] } @want],
                  'the header lines reached the upstream as sent');
    };
}
$h->case('bare LF ends a header line', get("X-A: 1\nX-B: 2\r\n"), 200,
         up => [['GET', '/x', '']],
         check => headers_up(['x-a', '1'], ['x-b', '2']));
$h->case('bare LF ends the header', "GET /x HTTP/1.1\r\n$H\n", 200,
         up => [['GET', '/x', '']]);
$h->case('all bare LF', "GET /x HTTP/1.1\nX-A: 1\n${\ ($H =~ s/\r//r)}X-B: 2\n\n",
         200, up => [['GET', '/x', '']],
         check => headers_up(['x-a', '1'], ['x-b', '2']));
$h->case('bare LF after an empty value', get("X-A:\nX-B: 2 \n"), 200,
         up => [['GET', '/x', '']],
         check => headers_up(['x-a', ''], ['x-b', '2']));
$h->case('bare LF before the request line', "\n\nGET /x HTTP/1.1\n$H\n", 200,
         up => [['GET', '/x', '']]);
$h->case('bare LF ends an obs-fold line', get("X-A: 1\n 2\r\n"), 400);
$h->case('bare LF ends the target (HTTP/0.9)', "GET /x\n$H\r\n", 400);
$h->case('bare LF ends a name without colon', get("X-A\n"), 400);
$h->case('bare CR ends the request line', "GET /x HTTP/1.1\r$H\r\n", 400);
$h->case('bare CR in a header line', get("X-A: 1\rX-B: 2\r\n"), 400);
$h->case('bare CR ends the header', "GET /x HTTP/1.1\r\n$H\rX", 400);
$h->case('CR CR LF', get("X-A: 1\r\r\n"), 400);
# RFC 9112 2.2: empty lines before a request line are ignored
$h->case('CRLF before the request line', "\r\n\r\nGET /x HTTP/1.1\r\n$H\r\n", 200,
         up => [['GET', '/x', '']]);

###########################################################################
# NUL and control bytes

$h->case('NUL in the target', "GET /x\0y HTTP/1.1\r\n$H\r\n", 400);
$h->case('NUL after the target', "GET /x\0 HTTP/1.1\r\n$H\r\n", 400);
$h->case('NUL in the method', "GE\0T /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('NUL in the version', "GET /x HTTP/1.\0\r\n$H\r\n", 400);
$h->case('NUL in a header name', get("X-\0A: 1\r\n"), 400);
$h->case('NUL in a header value', get("X-A: 1\0 2\r\n"), 400);
$h->case('NUL after a header value', get("X-A: 1\0\r\n"), 400);
for my $c (1, 8, 0x0b, 0x0c, 0x1b, 0x7f) {
    my $b = chr $c;
    my $hex = sprintf '0x%02x', $c;
    $h->case("$hex in the target", "GET /x${b}y HTTP/1.1\r\n$H\r\n", 400);
    $h->case("$hex in a header value", get("X-A: 1${b}2\r\n"), 400);
    $h->case("$hex in a header name", get("X-${b}A: 1\r\n"), 400);
}
$h->case('TAB in the target', "GET /x\ty HTTP/1.1\r\n$H\r\n", 400);
$h->case('TAB in a header value (allowed)', get("X-A: 1\t2\r\n"), 200,
         up => [['GET', '/x', '']]);
$h->case('obs-text in a header value (allowed)', get("X-A: caf\xc3\xa9\r\n"), 200,
         up => [['GET', '/x', '']]);
$h->case('8-bit byte in the target', "GET /caf\xc3\xa9 HTTP/1.1\r\n$H\r\n", 400);

###########################################################################
# obs-fold (RFC 9112 5.2: reject with 400, or replace by SP)

$h->case('obs-fold with SP', get("X-A: 1\r\n 2\r\n"), 400);
$h->case('obs-fold with TAB', get("X-A: 1\r\n\t2\r\n"), 400);
$h->case('obs-fold of an empty value', get("X-A:\r\n 2\r\n"), 400);
$h->case('obs-fold hiding a header', get("X-A: 1\r\n Host: evil\r\n"), 400);
$h->case('obs-fold of the first header', "GET /x HTTP/1.1\r\n X-A: 1\r\n$H\r\n", 400);
$h->case('obs-fold of Host', "GET /x HTTP/1.1\r\nHost: local\r\n host\r\n\r\n", 400);
# a blank continuation line adds nothing: the value stays empty (which is
# what replacing the fold with SP gives), nothing odd goes upstream
$h->case('blank continuation line', get("X-A:\r\n   \r\n"), 200, up => [['GET', '/x', '']]);

###########################################################################
# field names

for my $n ('X A', "X\tA", 'X(A)', '"X"', 'X@A', 'X/A', 'X[A]', 'X{A}', 'X=A',
           'X,A', 'X;A', 'X?A', "X\xc3\xa9") {
    (my $shown = $n) =~ s/([^\x21-\x7e])/sprintf '\\x%02x', ord $1/ge;
    $h->case("field name \"$shown\"", get("$n: 1\r\n"), 400);
}
$h->case('space before the colon', get("X-A : 1\r\n"), 400);
$h->case('TAB before the colon', get("X-A\t: 1\r\n"), 400);
$h->logged(qr/\[info\] .*client sent invalid header line while reading client request headers/,
           'log: invalid header line');
$h->case('empty field name', get(": 1\r\n"), 400);
$h->case('empty field name, empty value', get(":\r\n"), 400);
$h->logged(qr/client sent invalid header line: empty name/, 'log: empty name');
$h->case('no colon', get("X-A 1\r\n"), 400);
$h->case('a name alone', get("X-A\r\n"), 400);
# a token with every tchar: fine, and forwarded as sent
{
    my $tchars = "!#\$%&'*+-.^`|~09azAZ";
    $h->case('field name of every tchar', get("$tchars: 1\r\n"), 200,
             up => [['GET', '/x', '']]);
    my ($r) = grep { $_->{uri} eq '/x' } $h->up->requests;
    ok($r && grep({ $_->[0] eq $tchars } @{ $r->{headers} }),
       'every tchar: the header forwarded');
}

###########################################################################
# size and count limits: port 1 has client_header_buffer_size 1k and
# large_client_header_buffers 4 1k (a line over 1k, or more than the
# buffers hold, is "Request Header Or Cookie Too Large", sent as 400)

my $P1 = { port => 1 };
my $too_large = sub {
    my ($r) = @_;
    like($r->{body}, qr{<center>Request Header Or Cookie Too Large</center>},
         'the "Request Header Or Cookie Too Large" page');
};
$h->case('request line over 1k', "GET /" . ('u' x 1100) . " HTTP/1.1\r\n$H\r\n", 414,
         %$P1, check => sub { is($_[0]{reason}, 'Request-URI Too Large', '414 reason') });
$h->case('header line over 1k', get("X-A: " . ('v' x 1100) . "\r\n"), 400,
         %$P1, check => $too_large);
$h->case('header name over 1k', get(('N' x 1100) . ": 1\r\n"), 400, %$P1, check => $too_large);
$h->case('700 small headers (over 1k + 4 x 1k)',
         get(join '', map { "X-$_: v\r\n" } 1 .. 700), 400, %$P1, check => $too_large);
$h->logged(qr/client sent too long header line/, 'log: too long header line');
$h->case('6 headers of 900 bytes', get(join '', map { "X-$_: " . ('v' x 900) . "\r\n" } 1 .. 6),
         400, %$P1, check => $too_large);
$h->case('200 small headers fit', get(join '', map { "X-$_: v\r\n" } 1 .. 200), 200,
         %$P1, up => [['GET', '/x', '']]);
{
    my ($r) = grep { $_->{uri} eq '/x' } $h->up->requests;
    is($r && scalar(grep { $_->[0] =~ /^X-\d+$/ } @{ $r->{headers} }), 200,
       '200 small headers: all forwarded');
}
$h->case('a large cookie', get("Cookie: " . ('c' x 7000) . "\r\n"), 200,
         up => [['GET', '/x', '']]);
$h->case('a cookie over 8k', get("Cookie: " . ('c' x 9000) . "\r\n"), 400, check => $too_large);
$h->case('header over 4 x 8k in 8k lines',
         get(join '', map { "X-$_: " . ('v' x 7000) . "\r\n" } 1 .. 6), 400, check => $too_large);

###########################################################################
# request lines

$h->case('lower-case method', "get /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('mixed-case method', "Get /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('unknown method', "FOO /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('space in the method', "G ET /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('TAB after the method', "GET\t/x HTTP/1.1\r\n$H\r\n", 400);
$h->case('two spaces after the method', "GET  /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('two spaces before the version', "GET /x  HTTP/1.1\r\n$H\r\n", 400);
$h->logged(qr/client sent invalid request: more than one space in the request line/,
           'log: more than one space');
$h->case('space after the version', "GET /x HTTP/1.1 \r\n$H\r\n", 400);
$h->case('space before the method', " GET /x HTTP/1.1\r\n$H\r\n", 400);
$h->case('space inside the target', "GET /x y HTTP/1.1\r\n$H\r\n", 400);
$h->case('no target', "GET HTTP/1.1\r\n$H\r\n", 400);
$h->case('no version (HTTP/0.9)', "GET /x\r\n$H\r\n", 400);
{
    # the same, its line end in a read of its own: refused at once, not
    # after client_header_timeout
    my $c = $h->t->raw($h->t->port(0));
    $c->send_slow(["GET /x", "\r\n"], delay => 0.05);
    ok($c->wait_closed(1), 'HTTP/0.9 line end in a separate read: closed at once');
    like($c->buffer, qr{^HTTP/1\.1 400 }, 'HTTP/0.9 in pieces: 400');
    $c->close;
}
$h->case('HTTP/0.9 version', "GET /x HTTP/0.9\r\n$H\r\n", 400);
$h->case('HTTP/1.2', "GET /x HTTP/1.2\r\n$H\r\n", 400);
$h->case('HTTP/1.10', "GET /x HTTP/1.10\r\n$H\r\n", 400);
$h->case('HTTP/01.1', "GET /x HTTP/01.1\r\n$H\r\n", 400);
$h->case('lower-case http/1.1', "GET /x http/1.1\r\n$H\r\n", 400);
$h->case('HTTP/2.0', "GET /x HTTP/2.0\r\n$H\r\n", 505,
         check => sub { like($_[0]{body}, qr/505 HTTP Version Not Supported/, '505 page') });
$h->case('HTTP/3.0', "GET /x HTTP/3.0\r\n$H\r\n", 400);
$h->case('the HTTP/2 preface', "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, follow => 0);
$h->case('CONNECT', "CONNECT localhost:80 HTTP/1.1\r\n$H\r\n", 400);
$h->case('TRACE', "TRACE /x HTTP/1.1\r\n$H\r\n", 405);
$h->case('asterisk-form on a GET', "GET * HTTP/1.1\r\n$H\r\n", 400);
$h->case('authority-form on a GET', "GET localhost:80 HTTP/1.1\r\n$H\r\n", 400);
$h->case('a fragment is not sent upstream', "GET /x#frag HTTP/1.1\r\n$H\r\n", 200,
         up => [['GET', '/x#frag', '']]);

###########################################################################
# Host

$h->case('HTTP/1.1 without Host', "GET /x HTTP/1.1\r\n\r\n", 400);
$h->case('empty Host', "GET /x HTTP/1.1\r\nHost:\r\n\r\n", 400);
$h->case('two Host headers', "GET /x HTTP/1.1\r\n${H}Host: evil\r\n\r\n", 400);
$h->case('two equal Host headers', "GET /x HTTP/1.1\r\n$H$H\r\n", 400);
$h->logged(qr/client sent duplicate header line: "Host: evil", previous value: "Host: localhost"/,
           'log: duplicate Host');
$h->case('Host list', "GET /x HTTP/1.1\r\nHost: localhost, evil\r\n\r\n", 400);
$h->case('Host with a path', "GET /x HTTP/1.1\r\nHost: localhost/evil\r\n\r\n", 400);
$h->case('Host with ".."', "GET /x HTTP/1.1\r\nHost: a..b\r\n\r\n", 400);
# absolute-form: its host wins over Host (RFC 9112 3.2.2), and the
# upstream gets the origin-form with the proxy's own Host
$h->case('absolute-form names another server', "GET http://other.test/x HTTP/1.1\r\n$H\r\n",
         200, check => sub { is($_[0]{body}, "other host\n", 'absolute-form: its server') });
$h->case('absolute-form, Host names another server',
         "GET http://localhost/x HTTP/1.1\r\nHost: other.test\r\n\r\n", 200,
         up => [['GET', '/x', '']]);
{
    my ($r) = grep { $_->{uri} eq '/x' } $h->up->requests;
    is($r && join(',', map { $_->[1] } grep { lc $_->[0] eq 'host' } @{ $r->{headers} }),
       'pool', 'absolute-form: one Host upstream, the proxy\'s');
}
$h->case('absolute-form without Host (HTTP/1.1)', "GET http://localhost/x HTTP/1.1\r\n\r\n",
         200, up => [['GET', '/x', '']]);
$h->case('absolute-form with userinfo', "GET http://u\@localhost/x HTTP/1.1\r\n$H\r\n", 400);
$h->case('absolute-form without host', "GET http:///x HTTP/1.1\r\n$H\r\n", 400);
$h->case('absolute-form with a bad port', "GET http://localhost:99999/x HTTP/1.1\r\n$H\r\n", 400);

$h->done;
done_testing;
