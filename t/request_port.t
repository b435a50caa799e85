#!/usr/bin/perl
# request_port.t: $request_port and $is_request_port (nginx 1.29.3): the
# port of the absolute-form request target's authority, else of the Host
# header, else empty; $is_request_port is ":" when there is one.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF2');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "[$request_port][$is_request_port][$host$is_request_port$request_port]\n"; }
    }
}
EOF2
$t->run;
my $P = $t->port(0);

sub body {
    my ($raw) = @_;
    my $r = $t->http($P, $raw) // '';
    $r =~ s/^.*?\r\n\r\n//s;
    return $r;
}

is body("GET / HTTP/1.1\r\nHost: example.com:8080\r\nConnection: close\r\n\r\n"),
    "[8080][:][example.com:8080]\n", 'the Host header\'s port';
is body("GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"),
    "[][][example.com]\n", 'no port: empty, and $is_request_port empty';
is body("GET / HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n"),
    "[81][:][[::1]:81]\n", 'an IPv6 literal\'s port';
is body("GET http://a.example:9000/x HTTP/1.1\r\nHost: b.example:7000\r\nConnection: close\r\n\r\n"),
    "[9000][:][a.example:9000]\n", 'the absolute-form authority wins over Host';
is body("GET http://a.example/x HTTP/1.1\r\nHost: b.example:7000\r\nConnection: close\r\n\r\n"),
    "[7000][:][a.example:7000]\n", 'an authority without a port: the Host header\'s';
is body("GET / HTTP/1.0\r\n\r\n"), "[][][localhost]\n" =~ s/localhost//r,
    'HTTP/1.0 without Host: empty';

$t->stop;
done_testing;
