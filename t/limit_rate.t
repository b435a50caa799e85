#!/usr/bin/perl
# limit_rate.t: limit_rate, limit_rate_after and $limit_rate. A 300 KiB
# file at 100k a second takes about two seconds (a second's worth leaves at
# once, as nginx), with sendfile on and off, over a variable, and through
# `set $limit_rate`; limit_rate_after lets its bytes go first; the body
# arrives whole; $limit_rate reads what `set` gave; two downloads at once
# are paced each on its own (the worker is never asleep: the second one's
# first bytes come at once).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use Time::HiRes qw(time);
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
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location /plain/ { alias html/; }
        location /slow/ { alias html/; limit_rate 100k; }
        location /slowsf/ { alias html/; sendfile on; sendfile_min_size 0;
                            limit_rate 100k; }
        location /after/ { alias html/; limit_rate 50k; limit_rate_after 250k; }
        location /var/ { alias html/; limit_rate $arg_r; }
        location /set/ { alias html/; set $limit_rate 100k; }
        location /show { set $limit_rate 50k; return 200 "rate=$limit_rate\n"; }
        location /zero/ { alias html/; limit_rate 100k;
                          if ($arg_off) { set $limit_rate 0; } }
    }
}
EOF
my $data = join '', map { chr(($_ * 7 + 3) % 251) } 0 .. 300 * 1024 - 1;
$t->write_file_raw('html/big.bin', $data);
$t->run;
my $port = $t->port(0);

sub fetch_timed {
    my ($path) = @_;
    my $c = $t->raw($port) or return;
    my $t0 = time;
    $c->send("GET $path HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 15);
    return ($r, time - $t0);
}

for my $path ('/slow/big.bin', '/slowsf/big.bin', '/var/big.bin?r=100k',
              '/set/big.bin') {
    my ($r, $took) = fetch_timed($path);
    ok $r && $r->{status} == 200, "$path: 200";
    ok $r && length($r->{body}) == length($data)
          && sha256_hex($r->{body}) eq sha256_hex($data), "$path: whole body";
    cmp_ok $took, '>=', 1.5, "$path: paced (took ${\ sprintf '%.2f', $took} s)";
}

# unlimited, and the bytes before limit_rate_after: not paced
for my $path ('/plain/big.bin', '/after/big.bin', '/zero/big.bin?off=1',
              '/var/big.bin') {
    my ($r, $took) = fetch_timed($path);
    ok $r && length($r->{body}) == length($data), "$path: whole body";
    cmp_ok $took, '<', 1.0, "$path: not held back (took ${\ sprintf '%.2f', $took} s)";
}

# $limit_rate reads what `set` gave it, in bytes
like $t->http_get($port, '/show'), qr/rate=51200\n/, '$limit_rate after set';

# two paced downloads on one worker: the second starts at once
{
    my $c1 = $t->raw($port);
    $c1->send("GET /slow/big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    select undef, undef, undef, 0.3;
    my $t0 = time;
    my $c2 = $t->raw($port);
    $c2->send("GET /slow/big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $h = $c2->read_response(timeout => 5, head => 1);
    ok $h && $h->{status} == 200, 'a second paced download answers';
    cmp_ok time - $t0, '<', 1.0, 'while the first one is paced';
    my $r1 = $c1->read_response(timeout => 15);
    ok $r1 && length($r1->{body}) == length($data), 'the first one completes';
}

# a client that leaves during a delay: the worker goes on
{
    my $c = $t->raw($port);
    $c->send("GET /slow/big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    select undef, undef, undef, 0.3;
    $c->close;
    select undef, undef, undef, 0.5;
    like $t->http_get($port, '/show'), qr/rate=/, 'served after a paced client left';
}

$t->stop;
done_testing;
