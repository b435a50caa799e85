#!/usr/bin/perl
# http_parse_split.t: the answer to a request does not depend on how its
# bytes are cut across reads. Each request is sent in one write, and cut in
# two at every byte (the halves 0.2 s apart, so that the worker reads them
# separately); every answer must be the one-read answer, which is nginx's.
# Small buffers (client_header_buffer_size 64, large_client_header_buffers
# 2 128) put the limits a few bytes away. Fuzz finding F13 (t/fuzz/README.md):
# a long HTTP/0.9-style request line was 400 in one read, 414 when a read
# ended past the limit; a bad byte past the header's last buffer was 400 in
# one read, 494 when a read ended before it. F14: a request line longer
# than a large buffer, then a bad byte in the first header name: 400 in one
# read, 494 when a read ended in that name; nginx answers 414.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Time::HiRes qw(sleep);

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 1024; }
http {
    access_log off;
    client_header_buffer_size 64;
    large_client_header_buffers 2 128;
    client_header_timeout 10s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { return 200 "ok\n"; }
    }
}
EOF
$t->run;
my $P = $t->port(0);

# "status title" of a response, or "none"
sub answer {
    my ($r) = @_;
    return 'none' unless $r;
    my ($title) = $r->{body} =~ m{<title>(.*?)</title>};
    return "$r->{status} " . ($title // 'no page');
}

# The one-read answer, and for each cut the answers that differ from it.
sub by_cut {
    my ($req) = @_;
    my $c = $t->raw($P);
    $c->send($req);
    my $whole = answer($c->read_response(timeout => 3));
    my @conns;
    for my $cut (1 .. length($req) - 1) {
        my $k = $t->raw($P) or next;
        $k->send(substr($req, 0, $cut));
        push @conns, [$cut, $k];
    }
    sleep 0.2;                  # setup: the worker reads the first halves
    my %odd;
    for (@conns) {
        my ($cut, $k) = @$_;
        $k->send(substr($req, $cut));
        my $a = answer($k->read_response(timeout => 3));
        push @{ $odd{$a} }, $cut if $a ne $whole;
        $k->close;
    }
    return ($whole, \%odd);
}

my $H = "Host: localhost\r\n";
my @cases = (
    # the request line: 4 + URL + ... ; the URL limit is 128
    ['an HTTP/0.9 line with a URL over the limit',
     "GET /" . ('x' x 200) . "\r\n\r\n", '414 414 Request-URI Too Large'],
    ['a bad byte past the URL limit',
     "GET /" . ('x' x 200) . "\x01 HTTP/1.1\r\n$H\r\n", '414 414 Request-URI Too Large'],
    ['a URL just below the limit', "GET /" . ('x' x 100) . " HTTP/1.1\r\n$H\r\n", '200 no page'],
    # fuzz finding F14: the URL within its limit, the line over a large
    # buffer (nginx: 414), then a bad byte in the first field's name: 400
    # in one read, 494 when a read ended in that name
    ['a request line over a large buffer, a bad byte in the next line',
     "GET /" . ('x' x 115) . " HTTP/1.1\r\nTransfer-Encodi\x07ng: chunked\r\n$H\r\n",
     '414 414 Request-URI Too Large'],
    ['a request line over a large buffer', "GET /" . ('x' x 115) . " HTTP/1.1\r\n$H\r\n",
     '414 414 Request-URI Too Large'],
    ['a request line as long as a large buffer', "GET /" . ('x' x 112) . " HTTP/1.1\r\n$H\r\n",
     '200 no page'],
    ['two spaces before the version, the line over the limit',
     "GET /" . ('x' x 60) . (' ' x 100) . "HTTP/1.1\r\n$H\r\n", '400 400 Bad Request'],
    # header lines: one over 128, and the header over 64 + 2 x 128 = 320
    ['a bad byte past a header line limit',
     "GET / HTTP/1.1\r\n${H}X: " . ('v' x 200) . "\x01\r\n\r\n",
     '400 400 Request Header Or Cookie Too Large'],
    ['a bad byte past the last header buffer',
     "GET / HTTP/1.1\r\n$H" . join('', map { "A$_: " . ('a' x 114) . "\r\n" } 1 .. 2)
     . "B: " . ('b' x 50) . "\x01\r\n\r\n", '400 400 Request Header Or Cookie Too Large'],
    ['a bad byte in the last header buffer',
     "GET / HTTP/1.1\r\n$H" . join('', map { "A$_: " . ('a' x 114) . "\r\n" } 1 .. 2)
     . "B: \x01\r\n\r\n", '400 400 Bad Request'],
    # bare LFs end the head's lines (RFC 9112 2.2, as nginx): whichever
    # read the LF or the byte before it comes in; a bare CR does not
    ['bare LF line ends', "GET / HTTP/1.1\nHost: localhost\nX: 1 \nY:\n\n",
     '200 no page'],
    ['bare LF and CRLF mixed', "\nGET / HTTP/1.1\r\nHost: localhost\nX: 1\r\n\n",
     '200 no page'],
    ['a bare CR among bare LFs', "GET / HTTP/1.1\nHost: localhost\rX: 1\n\n",
     '400 400 Bad Request'],
    ['a bare-LF header line as long as a large buffer',
     "GET / HTTP/1.1\n${H}X: " . ('v' x 124) . "\n\n", '200 no page'],
    ['a bare-LF header line one byte over',
     "GET / HTTP/1.1\n${H}X: " . ('v' x 125) . "\n\n",
     '400 400 Request Header Or Cookie Too Large'],
);

for my $case (@cases) {
    my ($name, $req, $want) = @$case;
    my ($whole, $odd) = by_cut($req);
    is($whole, $want, "$name: one read: $want");
    is_deeply($odd, {}, "$name: the same answer at each of the "
                        . (length($req) - 1) . " cuts")
        or diag(join "\n", map { "$_ at cuts @{ $odd->{$_} }" } sort keys %$odd);
}

ok($t->log_contains(qr/\[info\] .*client sent too long URI/), 'log: client sent too long URI');
ok($t->log_contains(qr/\[info\] .*client sent too large request while reading client request headers/),
   'log: client sent too large request (nginx\'s words)');
$t->stop;
done_testing;
