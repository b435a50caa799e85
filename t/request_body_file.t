#!/usr/bin/perl
# request_body_file.t: client_body_in_file_only (on | clean | off),
# $request_body_file and $request_body. With on or clean, a proxied body
# (small or large) goes whole to a named file in client_body_temp_path:
# $request_body_file names it, the file holds the body while the request
# runs, the upstream still gets the body, $request_body is empty; on keeps
# the file after the request, clean removes it. off: no name, and
# $request_body has the body when it fits in memory, not a part of it when
# it spilled. client_body_in_single_buffer, connection_pool_size and
# request_pool_size are accepted, and so are proxy_headers_hash_max_size
# and proxy_headers_hash_bucket_size.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
my $P = $t->prefix;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    connection_pool_size 512;
    proxy_headers_hash_max_size 1024;
    proxy_headers_hash_bucket_size 128;
    client_body_temp_path $P/body;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        request_pool_size 4k;
        client_max_body_size 10m;
        client_body_buffer_size 16k;
        client_body_in_single_buffer on;
        proxy_set_header X-Body-File \$request_body_file;
        proxy_set_header X-Body \$request_body;
        location /on/ { client_body_in_file_only on; proxy_pass http://$UP/echo; }
        location /clean/ { client_body_in_file_only clean; proxy_pass http://$UP/echo; }
        location /off/ { proxy_pass http://$UP/echo; }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub post {
    my ($path, $body) = @_;
    my $c = $t->raw($port) or return;
    $c->send("POST $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
             . "Content-Length: " . length($body) . "\r\n\r\n$body");
    return $c->read_response(timeout => 10);
}

sub last_request { my @r = $up->requests; return $r[-1] }

sub header_of {
    my ($req, $name) = @_;
    for my $h (@{ $req->{headers} || [] }) {
        return $h->[1] if lc $h->[0] eq lc $name;
    }
    return;
}

for my $case (['small', 'hello body'], ['large', 'x' x (200 * 1024)]) {
    my ($kind, $body) = @$case;
    for my $mode ('on', 'clean') {
        my $r = post("/$mode/$kind", $body);
        ok $r && $r->{status} == 200, "$mode $kind: 200";
        my $req = last_request();
        is $req && $req->{body}, $body, "$mode $kind: the upstream got the body";
        my $file = $req && header_of($req, 'X-Body-File');
        like $file // '', qr{^\Q$P\E/body/\d{10}$}, "$mode $kind: \$request_body_file names a file";
        ok !defined header_of($req, 'X-Body'), "$mode $kind: \$request_body is empty";
        if ($mode eq 'on') {
            ok $file && -f $file, "on $kind: the file stays";
            is $t->read_file($file // ''), $body, "on $kind: it holds the body";
        } else {
            ok Test::Ringx::wait_for(sub { !-e $file }, 5), "clean $kind: the file is removed";
        }
    }
}

{
    my $r = post('/off/small', 'short');
    my $req = last_request();
    ok !defined header_of($req, 'X-Body-File'), 'off: no $request_body_file';
    is header_of($req, 'X-Body'), 'short', 'off: $request_body has a body in memory';
    post('/off/large', 'y' x (100 * 1024));
    $req = last_request();
    is length($req->{body} // ''), 100 * 1024, 'off large: the upstream got it whole';
    ok !defined header_of($req, 'X-Body'), 'off large: $request_body is not a part of a spilled body';
}

$t->stop;
$up->stop;
done_testing;
