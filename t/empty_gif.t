#!/usr/bin/perl
# empty_gif.t: nginx's empty_gif: a 43-byte 1x1 transparent GIF89a as
# image/gif for GET and HEAD (nginx's Last-Modified), 405 for others, and
# the directive's context.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location = /pixel.gif { empty_gif; }
        location /nested/ { empty_gif; location /nested/in/ { } }
    }
}
EOF
$t->run;

sub req {
    my ($method, $uri, $extra) = @_;
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("$method $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
             . ($extra // '')
             . ($method eq 'POST' ? "Content-Length: 3\r\n\r\nabc" : "\r\n"));
    my $r = $c->read_response(timeout => 3, head => $method eq 'HEAD');
    $c->close;
    return $r // {};
}

my $r = req('GET', '/pixel.gif');
is($r->{status}, 200, 'GET: 200');
is($r->{headers}{'content-type'}, 'image/gif', 'GET: image/gif');
is($r->{headers}{'content-length'}, 43, 'GET: Content-Length 43');
is(length $r->{body}, 43, 'GET: 43 bytes');
like($r->{body}, qr/\AGIF89a\x01\x00\x01\x00/, 'GET: a GIF89a of 1x1');
is(substr($r->{body}, -1), ';', 'GET: ends with the GIF trailer');
is($r->{headers}{'last-modified'}, 'Mon, 28 Sep 1970 06:00:00 GMT',
   'GET: nginx\'s Last-Modified');
$r = req('HEAD', '/pixel.gif');
is("$r->{status} $r->{headers}{'content-length'}", '200 43', 'HEAD: 200, length 43');
is($r->{body} // '', '', 'HEAD: no body');
is(req('POST', '/pixel.gif')->{status}, 405, 'POST: 405');

# its Last-Modified answers the preconditions, as nginx's not-modified filter
$r = req('GET', '/pixel.gif', "If-Modified-Since: Mon, 28 Sep 1970 06:00:00 GMT\r\n");
is($r->{status}, 304, 'If-Modified-Since its date: 304');
is($r->{body} // '', '', '... without a body');
is($r->{headers}{'content-type'}, undef, '... nor a type');
is(req('GET', '/pixel.gif', "If-Modified-Since: Sun, 27 Sep 1970 06:00:00 GMT\r\n")->{status},
   200, 'If-Modified-Since an earlier date: 200');
is(req('GET', '/pixel.gif', "If-None-Match: *\r\n")->{status}, 304, 'If-None-Match: *: 304');
is(req('GET', '/pixel.gif', "If-None-Match: \"x\"\r\n")->{status}, 200,
   'If-None-Match another tag: 200 (it has no ETag)');
is(req('GET', '/pixel.gif', "If-Match: \"x\"\r\n")->{status}, 412, 'If-Match: 412');
is(req('GET', '/pixel.gif', "If-Unmodified-Since: Sun, 27 Sep 1970 06:00:00 GMT\r\n")->{status},
   412, 'If-Unmodified-Since an earlier date: 412');
is(req('GET', '/nested/x')->{headers}{'content-type'}, 'image/gif',
   'any URI of the location');
is(req('GET', '/nested/in/x')->{status}, 404, 'a nested location has its own handler');
$t->stop;

my $u = Test::Ringx->new;
$u->write_config(<<'EOF');
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; empty_gif; } }
EOF
my ($code, undef, $err) = $u->ringx('-t');
like($err, qr/"empty_gif" directive is not allowed here/, 'only in a location');

done_testing;
