package Test::CgiApp;

# Test::CgiApp: what t/scgi.t and t/uwsgi.t share. Their application
# servers (Test::Scgi, Test::Uwsgi) answer alike: an unknown URI echoes the
# request as "NAME=VALUE" lines and "len=N sha=SHA1" of the body read,
# /stream/N sends N bytes in 4 KiB pieces with no length. So:
#
#   my $r = Test::CgiApp::get($t, $port, $raw_request, %read_options);
#   Test::CgiApp::var($r, 'REQUEST_URI')      # a line of the echo, or undef
#   Test::CgiApp::request_bodies($t, $port, '/loc/', 'uWSGI');
#       # small, 1 MiB, chunked and split bodies POSTed to /loc/body, each
#       # checked byte for byte (length, SHA-1, CONTENT_LENGTH): 16 tests
#   Test::CgiApp::stream_body(500000)         # what /stream/N sends
#   Test::CgiApp::chunked_of($body)           # $body chunked: 1000 bytes,
#       # 3000, the rest, then the last chunk (also request_body_routes.t)

use strict;
use warnings;

use Digest::SHA qw(sha1_hex);
use Test::More;
use Time::HiRes ();

sub get {
    my ($t, $port, $raw, %o) = @_;
    my $c = $t->raw($port);
    $c->send($raw);
    my $r = $c->read_response(timeout => 10, %o);
    $c->close;
    return $r;
}

sub var {
    my ($r, $name) = @_;
    return undef unless $r && defined $r->{body};
    return $r->{body} =~ /^\Q$name\E=(.*)$/m ? $1 : undef;
}

my $SMALL = join '', 'a' .. 'z';
my $BIG = join '', map { chr(32 + ($_ * 7 + int($_ / 251)) % 95) } 0 .. 1048575;
my $CHUNKED = ('0123456789abcdef' x 300) . "end";

sub chunked_of {
    my ($body) = @_;
    my @parts = (substr($body, 0, 1000), substr($body, 1000, 3000),
                 substr($body, 4000));
    return join('', map { sprintf("%x\r\n%s\r\n", length $_, $_) } @parts)
           . "0\r\n\r\n";
}

# $app names the application in the test names ("every byte reached $app")
sub request_bodies {
    my ($t, $port, $loc, $app) = @_;
    my @kinds = (
        [ 'small', "Content-Length: 26\r\n", $SMALL, [ $SMALL ] ],
        [ '1 MiB (spilled)', "Content-Length: " . length($BIG) . "\r\n", $BIG,
          [ $BIG ] ],
        [ 'chunked', "Transfer-Encoding: chunked\r\n", $CHUNKED,
          [ chunked_of($CHUNKED) ] ],
        [ 'split across reads', "Content-Length: 20\r\n",
          '0123456789ABCDEFGHIJ', [ '0123456789', 'ABCDEFGHIJ' ] ],
    );
    for my $k (@kinds) {
        my ($name, $h, $body, $pieces) = @$k;
        my $c = $t->raw($port);
        $c->send("POST ${loc}body HTTP/1.1\r\nHost: x\r\n$h"
                 . "Connection: close\r\n\r\n" . shift @$pieces);
        for (@$pieces) { Time::HiRes::sleep(0.3); $c->send($_); }
        my $resp = $c->read_response(timeout => 15);
        $c->close;
        is($resp && $resp->{status}, 200, "$loc $name: 200")
            or diag($resp ? $resp->{raw} : 'none');
        my ($len, $sha) = ($resp && $resp->{body} // '') =~ /len=(\d+) sha=(\w+)/;
        is($len, length $body, "$loc $name: every byte reached $app");
        is($sha, sha1_hex($body), "$loc $name: the bytes sent");
        is(var($resp, 'CONTENT_LENGTH'), length $body,
           "$loc $name: CONTENT_LENGTH");
    }
}

# /stream/N: 4 KiB pieces, each the piece's number as 8 digits repeated
sub stream_body {
    my ($n) = @_;
    my $want = '';
    for (my $i = 0; $n > 0; $n -= 4096, $i++) {
        $want .= substr(sprintf('%08d', $i) x 512, 0, $n < 4096 ? $n : 4096);
    }
    return $want;
}

1;
