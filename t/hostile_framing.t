#!/usr/bin/perl

# Hostile request framing, end to end through the proxy to a recording
# upstream (t/lib/Test/Hostile.pm): Content-Length with Transfer-Encoding,
# Transfer-Encoding obfuscations, duplicate, conflicting and malformed
# Content-Length, malformed chunk sizes and line ends, chunk extensions,
# trailers. Each case checks the status, that the upstream received
# nothing smuggled, and that the pipelined request behind it is served
# (request accepted) or not (connection closed). RFC 9112 6-7 is the
# reference; the choices are in docs/reliability.md, "Hostile input".

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Hostile;

my $h = Test::Hostile->new(server =>
    '        location /small/ { proxy_pass http://pool; client_max_body_size 10; }');

my $H = "Host: localhost\r\n";
my $SMUG = "GET /smuggled HTTP/1.1\r\n$H\r\n";
sub post { my ($hdrs, $body) = @_; "POST /x HTTP/1.1\r\n$H$hdrs\r\n$body" }
my $CH = "Transfer-Encoding: chunked\r\n";

###########################################################################
# Content-Length and Transfer-Encoding together: rejected (RFC 9112 6.3
# lets a server process TE and close; nginx rejects too)

$h->case('CL.TE', post("Content-Length: 6\r\n$CH", "0\r\n\r\n$SMUG"), 400);
$h->case('TE.CL', post("${CH}Content-Length: 3\r\n", "8\r\nSMUGGLED\r\n0\r\n\r\n"), 400);
$h->case('CL.TE, CL 0', post("Content-Length: 0\r\n$CH", "5\r\nhello\r\n0\r\n\r\n"), 400);
$h->case('TE and CL in HTTP/1.0',
         "POST /x HTTP/1.0\r\n${H}Content-Length: 3\r\n$CH\r\nabc", 400);
$h->logged(qr/client sent "Content-Length" and "Transfer-Encoding" headers at the same time/,
           'log: CL and TE at the same time');

###########################################################################
# Transfer-Encoding spellings

# accepted: OWS around the value, and coding names are case-insensitive
for my $v ('chunked ', '  chunked', 'Chunked', 'CHUNKED') {
    $h->case("TE \"$v\"", post("Transfer-Encoding: $v\r\n", "3\r\nabc\r\n0\r\n\r\n"),
             200, up => [['POST', '/x', 'abc']]);
}
# rejected: chunked not last, chunked twice, unknown codings, empty
$h->case('TE "chunked, identity"',
         post("Transfer-Encoding: chunked, identity\r\n", "3\r\nabc\r\n0\r\n\r\n"), 400);
$h->case('TE "chunked, chunked"',
         post("Transfer-Encoding: chunked, chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 400);
$h->case('TE twice',
         post("${CH}Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 400);
$h->case('TE chunked then TE identity',
         post("${CH}Transfer-Encoding: identity\r\n", "3\r\nabc\r\n0\r\n\r\n"), 400);
$h->case('TE "chunked<TAB>" (a tab the parser does not take)',
         post("Transfer-Encoding: chunked\t\r\n", "3\r\nabc\r\n0\r\n\r\n"), 400);
$h->case('TE "identity, chunked"',
         post("Transfer-Encoding: identity, chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 501);
$h->case('TE "x-chunked"',
         post("Transfer-Encoding: x-chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 501);
$h->case('TE "gzip, chunked"',
         post("Transfer-Encoding: gzip, chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 501);
$h->case('TE identity then TE chunked',
         post("Transfer-Encoding: identity\r\n$CH", "3\r\nabc\r\n0\r\n\r\n"), 501);
$h->logged(qr/client sent unknown "Transfer-Encoding": "x-chunked"/,
           'log: unknown Transfer-Encoding');
$h->case('TE empty with CL', post("Transfer-Encoding: \r\nContent-Length: 3\r\n", "abc"), 501);
$h->case('TE in HTTP/1.0',
         "POST /x HTTP/1.0\r\n$H$CH\r\n3\r\nabc\r\n0\r\n\r\n", 400);
$h->logged(qr/client sent HTTP\/1.0 request with "Transfer-Encoding" header/,
           'log: HTTP/1.0 with Transfer-Encoding');
$h->case('TE by obs-fold', post("Transfer-Encoding:\r\n chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 400);
$h->case('TE hidden in a folded line',
         post("X-A: y\r\n Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "abc"), 400);
$h->logged(qr/client sent invalid header line: obsolete line folding/, 'log: obs-fold');
$h->case('Transfer_Encoding (underscore) is no TE: dropped, CL frames',
         post("Transfer_Encoding: chunked\r\nContent-Length: 3\r\n", "abc"),
         200, up => [['POST', '/x', 'abc']]);

###########################################################################
# Content-Length

$h->case('CL twice, same value', post("Content-Length: 3\r\nContent-Length: 3\r\n", "abc"), 400);
$h->case('CL twice, different', post("Content-Length: 3\r\nContent-Length: 30\r\n", "abc"), 400);
$h->logged(qr/client sent duplicate header line: "Content-Length: 30", previous value: "Content-Length: 3"/,
           'log: duplicate Content-Length');
$h->case('CL "3,3"', post("Content-Length: 3,3\r\n", "abc"), 400);
$h->case('CL "3, 3"', post("Content-Length: 3, 3\r\n", "abc"), 400);
$h->case('CL "+3"', post("Content-Length: +3\r\n", "abc"), 400);
$h->case('CL "-3"', post("Content-Length: -3\r\n", "abc"), 400);
$h->case('CL "0x3"', post("Content-Length: 0x3\r\n", "abc"), 400);
$h->case('CL "3 3"', post("Content-Length: 3 3\r\n", "abc"), 400);
$h->case('CL "3a"', post("Content-Length: 3a\r\n", "abc"), 400);
$h->case('CL empty', post("Content-Length: \r\n", "abc"), 400);
$h->case('CL "1e3"', post("Content-Length: 1e3\r\n", "abc"), 400);
$h->logged(qr/client sent invalid "Content-Length" header/, 'log: invalid Content-Length');
$h->case('CL over 2^64', post("Content-Length: 18446744073709551619\r\n", "abc"), 400);
# llhttp holds it, an off_t does not: it must not become "no body"
$h->case('CL over 2^63', post("Content-Length: 9223372036854775810\r\n", "abc"), 400);
$h->case('CL by obs-fold', post("Content-Length:\r\n 3\r\n", "abc"), 400);
$h->case('CL with a space before the colon', post("Content-Length : 3\r\n", "abc"), 400);
$h->case('CL " 3 " (OWS)', post("Content-Length:   3  \r\n", "abc"),
         200, up => [['POST', '/x', 'abc']]);
$h->case('CL "<TAB>3"', post("Content-Length:\t3\r\n", "abc"), 200, up => [['POST', '/x', 'abc']]);
$h->case('CL "003"', post("Content-Length: 003\r\n", "abc"), 200, up => [['POST', '/x', 'abc']]);
$h->case('CL on a GET', "GET /x HTTP/1.1\r\n${H}Content-Length: 3\r\n\r\nabc",
         200, up => [['GET', '/x', 'abc']]);
# an underscore name is not Content-Length: dropped (nginx), so the
# request has no body and its "body" is the next request: garbage, 400
{
    my $t = $h->t;
    $h->up->reset;
    my $c = $t->raw($t->port(0));
    $c->send(post("Content_Length: 3\r\n", "abc") . "GET /follow HTTP/1.1\r\n$H\r\n");
    my @r = $c->read_responses(2, timeout => 3);
    my $e = Test::Hostile::echo_of($r[0]);
    is($e && $e->{body}, '', 'Content_Length: the request went upstream without a body');
    is($r[1] && $r[1]{status}, 400, 'Content_Length: the bytes after it are a bad request');
    ok($c->wait_closed(3), 'Content_Length: then closed');
    is(scalar(() = $h->up->requests), 1, 'Content_Length: one request upstream');
    $h->check_upstream_clean('Content_Length');
    $c->close;
}
$h->case('CL over client_max_body_size',
         "POST /small/x HTTP/1.1\r\n${H}Content-Length: 11\r\n\r\n0123456789a", 413);
$h->case('chunked body over client_max_body_size',
         "POST /small/x HTTP/1.1\r\n$H$CH\r\n6\r\n012345\r\n6\r\n6789ab\r\n0\r\n\r\n", 413);

###########################################################################
# chunk sizes and line ends

my %bad_chunked = (
    'chunk size -1'                 => "-1\r\nabc\r\n0\r\n\r\n",
    'chunk size over 2^64'          => "10000000000000003\r\nabc\r\n0\r\n\r\n",
    'chunk size 0x3'                => "0x3\r\nabc\r\n0\r\n\r\n",
    'chunk size +3'                 => "+3\r\nabc\r\n0\r\n\r\n",
    'chunk size "3 "'               => "3 \r\nabc\r\n0\r\n\r\n",
    'chunk size " 3"'               => " 3\r\nabc\r\n0\r\n\r\n",
    'chunk size empty'              => "\r\nabc\r\n0\r\n\r\n",
    'chunk size not hex'            => "g\r\nabc\r\n0\r\n\r\n",
    'no CRLF after chunk data'      => "3\r\nabcXY0\r\n\r\n",
    'chunk data longer than size'   => "3\r\nabcd\r\n0\r\n\r\n",
    'bare LF after chunk size'      => "3\nabc\r\n0\r\n\r\n",
    'bare LF after chunk data'      => "3\r\nabc\n0\r\n\r\n",
    'bare LF after last chunk'      => "3\r\nabc\r\n0\n\r\n",
    'bare LF ends the trailer'      => "3\r\nabc\r\n0\r\n\n",
    'bare LF ends a trailer line'   => "3\r\nabc\r\n0\r\nX-T: 1\n\r\n",
    'bare CR in chunk size line'    => "3\rabc\r\n0\r\n\r\n",
    'bare CR in a chunk extension'  => "3;foo\rbar\r\nabc\r\n0\r\n\r\n",
    'LF in a chunk extension'       => "3;foo\nbar\r\nabc\r\n0\r\n\r\n",
    'NUL in a chunk extension'      => "3;fo\0o\r\nabc\r\n0\r\n\r\n",
    'space in an extension value'   => "3;a=b c\r\nabc\r\n0\r\n\r\n",
    # valid by RFC 9112 7.1.1, refused by llhttp 8.1: safe, noted in docs
    'name-only extension after a value' => "3;a=b;c\r\nabc\r\n0\r\n\r\n",
    'chunk extension over 8k'       => "3;" . ('x' x 9000) . "\r\nabc\r\n0\r\n\r\n",
    'extensions over 8k in pieces'  => "3;" . join(';', ('e=v') x 2500) . "\r\nabc\r\n0\r\n\r\n",
    'trailer line with a space in its name' => "3\r\nabc\r\n0\r\nX T: 1\r\n\r\n",
    'trailer with an empty name'    => "3\r\nabc\r\n0\r\n: 1\r\n\r\n",
    'folded trailer'                => "3\r\nabc\r\n0\r\nX-T: 1\r\n Host: evil\r\n\r\n",
    'trailer Transfer-Encoding'     => "3\r\nabc\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n",
    'trailers over the header limit' => "3\r\nabc\r\n0\r\n"
                                        . ("X-T: " . ('t' x 100) . "\r\n") x 400 . "\r\n",
);
for my $name (sort keys %bad_chunked) {
    $h->case($name, post($CH, $bad_chunked{$name} . $SMUG), 400);
}
$h->logged(qr/\[error\] .*client sent invalid chunked body/, 'log: [error] invalid chunked body');
$h->logged(qr/\[info\] .*client sent too long chunk extension/, 'log: too long chunk extension');
$h->logged(qr/\[info\] .*client sent too large trailer/, 'log: too large trailer');

# well-formed and accepted; trailers are dropped, never forwarded, and
# never frame anything
my %good_chunked = (
    'chunk extensions'          => "3;a=b\r\nabc\r\n2;q=\"x y;z\"\r\nde\r\n0;end\r\n\r\n",
    'upper-case hex, leading 0s'=> "0003\r\nabc\r\n00A\r\n0123456789\r\n0\r\n\r\n",
    'trailer fields'            => "3\r\nabc\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n",
    'forbidden trailer fields'  => "3\r\nabc\r\n0\r\nContent-Length: 50\r\nHost: evil\r\n\r\n",
    'extension near the limit'  => "3;" . ('x' x 8000) . "\r\nabc\r\n0\r\n\r\n",
);
my %good_body = ('chunk extensions' => 'abcde', 'upper-case hex, leading 0s' => 'abc0123456789');
for my $name (sort keys %good_chunked) {
    $h->case($name, post($CH, $good_chunked{$name}), 200,
             up => [['POST', '/x', $good_body{$name} // 'abc']]);
    next unless $name eq 'forbidden trailer fields';
    my ($last) = grep { $_->{uri} eq '/x' } $h->up->requests;
    like($last && $last->{raw}, qr/^Content-Length: 3\r$/mi,
         "$name: forwarded with Content-Length");
    unlike($last && $last->{raw}, qr/Transfer-Encoding|evil|: 50/i,
           "$name: no Transfer-Encoding, no trailer fields upstream");
}

# the same framing split at every byte: parsed the same
{
    my $t = $h->t;
    $h->up->reset;
    my $c = $t->raw($t->port(0));
    $c->send_slow(post($CH, "3;e=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n")
                  . "GET /after HTTP/1.1\r\n$H\r\n", size => 1, delay => 0.001);
    my @r = $c->read_responses(2, timeout => 3);
    is(scalar @r, 2, 'byte by byte: two responses');
    my @e = map { Test::Hostile::echo_of($_) } @r;
    is($e[0] && $e[0]{body}, 'abc', 'byte by byte: the body');
    is($e[1] && $e[1]{uri}, '/after', 'byte by byte: the next request');
    $c->close;
}
# and a fold split at every byte is still a fold
{
    my $t = $h->t;
    my $c = $t->raw($t->port(0));
    $c->send_slow(post("Content-Length: 3\r\nX-A:\r\n \r\n Transfer-Encoding: chunked\r\n", "abc"),
                  size => 1, delay => 0.001);
    my $r = $c->read_response(timeout => 3);
    is($r && $r->{status}, 400, 'fold byte by byte: 400');
    $c->close;
}

$h->done;
done_testing;
