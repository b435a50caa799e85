#!/usr/bin/perl
# t/bench/cache_stampede.pl: 100 concurrent misses for one slow key (the
# origin takes SLOW_MS, longer than nginx's proxy_cache_lock_timeout of
# 5 s), for ringx and for nginx, both with proxy_cache_lock on: how many
# requests reach the origin (Test::Upstream counts them), and how long the
# clients waited. ringx coalesces for as long as the fetch runs; nginx's
# waiters give up after the lock timeout and go to the origin themselves.
#
#   perl t/bench/cache_stampede.pl            # RINGX_BIN, NGINX_BIN, N, SLOW_MS
#
# Prints one line per server; exit status 1 if ringx's origin saw more
# than one request.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../lib";
use File::Temp qw(tempdir);
use IO::Socket::IP;
use POSIX ();
use Time::HiRes qw(time sleep);
use Test::Upstream;

my $N = $ENV{N} // 100;
my $SLOW = $ENV{SLOW_MS} // 6500;
my %bin = (ringx => $ENV{RINGX_BIN} // "$FindBin::Bin/../../objs/ringx",
           nginx => $ENV{NGINX_BIN} // '/usr/sbin/nginx');

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

sub free_port {
    my $s = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 1) or die "listen: $!";
    my $p = $s->sockport;
    close $s;
    return $p;
}

sub run_one {
    my ($name) = @_;
    my $bin = $bin{$name};
    return printf("%-6s skipped: %s not executable\n", $name, $bin) unless -x $bin;
    my $dir = tempdir('ringx-stampede-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    mkdir "$dir/$_" for qw(conf logs temp);
    chmod 0777, $dir, "$dir/temp";
    my $port = free_port();
    open my $fh, '>', "$dir/conf/ringx.conf" or die $!;
    print $fh <<"EOF";
daemon off;
master_process on;
worker_processes 2;
pid logs/server.pid;
error_log logs/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    proxy_temp_path $dir/temp;
    proxy_cache_path $dir/cache levels=1:2 keys_zone=one:10m;
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 1h;
            proxy_cache_lock on;
        }
    }
}
EOF
    close $fh;
    my $pid = fork // die;
    if (!$pid) {
        open STDOUT, '>', "$dir/logs/stdout.log";
        open STDERR, '>&', \*STDOUT;
        { exec $bin, '-p', "$dir/", '-c', "$dir/conf/ringx.conf" };
        POSIX::_exit(127);
    }
    for (1 .. 100) {
        last if IO::Socket::IP->new(PeerAddr => "127.0.0.1:$port");
        sleep 0.05;
    }
    my $uri = "/slow/1000?pieces=2&ms=$SLOW&server=$name";
    my $t0 = time;
    my @c = map {
        my $s = IO::Socket::IP->new(PeerAddr => "127.0.0.1:$port") or die;
        print $s "GET $uri HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        $s;
    } 1 .. $N;
    my ($ok, $max) = (0, 0);
    for my $s (@c) {
        local $/;
        my $resp = <$s> // '';
        $ok++ if $resp =~ m{^HTTP/1\.1 200} && $resp =~ /\r\n\r\n.{1000}\z/s;
        $max = time - $t0 if time - $t0 > $max;
    }
    my $origin = grep { $_->{uri} eq $uri } $up->requests;
    printf "%-6s %d clients: %d whole 200s, origin requests %d, last client "
           . "done after %.1f s\n", $name, $N, $ok, $origin, $max;
    kill 'QUIT', $pid;
    waitpid $pid, 0;
    return $origin;
}

my $ringx = run_one('ringx');
run_one('nginx');
$up->stop;
exit(($ringx // 0) == 1 ? 0 : 1);
