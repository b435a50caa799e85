#!/usr/bin/perl
# listen_range.t: a port range in listen ("listen 127.0.0.1:8000-8002"), as
# nginx 1.22 has it: one listening socket for each port of the range, each
# serving the server ($server_port tells which), and nginx's errors for a
# reversed range or a port out of 1..65535.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::IP;

# Three consecutive free ports: a base is tried until all three bind.
sub free_range {
    for (1 .. 200) {
        my $base = 20000 + int(rand(40000));
        my @s = map {
            IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => $_,
                                Proto => 'tcp', Listen => 1)
        } $base .. $base + 2;
        next if grep { !defined } @s;
        close $_ for @s;
        return $base;
    }
    die "no three consecutive free ports\n";
}

my $t = Test::Ringx->new;
my $b = free_range();
my $e = $b + 2;
$t->write_config(<<EOF);
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$b-$e;
        location / { return 200 "port=\$server_port\\n"; }
    }
}
EOF
$t->run({ ports => [$b .. $e] });
for my $p ($b .. $e) {
    like $t->http_get($p, '/') // '', qr/\r\n\r\nport=$p\n\z/,
        "port $p of the range serves the server";
}
$t->stop;

# nginx's errors, with file:line
for my $c (['20002-20000', qr/invalid port range in "20002-20000" of the "listen" directive in \S+:4/],
           ['20000-70000', qr/invalid port in "20000-70000" of the "listen" directive in \S+:4/],
           ['127.0.0.1:0-3', qr/invalid port in "127.0.0.1:0-3" of the "listen" directive/]) {
    my $u = Test::Ringx->new;
    $u->write_config(<<EOF);
events { }
http {
    server {
        listen $c->[0];
    }
}
EOF
    my ($rc, $out, $err) = $u->ringx('-t');
    isnt $rc, 0, "-t refuses listen $c->[0]";
    like $err, $c->[1], "listen $c->[0]: nginx's error";
}

done_testing;
