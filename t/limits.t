#!/usr/bin/perl

# File descriptor limits: worker_rlimit_nofile applied by workers, and the
# -t arithmetic of worker_connections against the fd limit a worker gets.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

sub config {
    my (%o) = @_;
    my $rlimit = defined $o{rlimit} ? "worker_rlimit_nofile $o{rlimit};\n" : '';
    return <<"EOF";
daemon off;
master_process on;
worker_processes $o{workers};
${rlimit}error_log logs/error.log notice;

events {
    worker_connections $o{connections};
}

http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { }
    }
}
EOF
}

# Soft "Max open files" of a process.
sub nofile_soft {
    my ($pid) = @_;
    open(my $fh, '<', "/proc/$pid/limits") or return undef;
    while (<$fh>) {
        return $1 if /^Max open files\s+(\d+|unlimited)\s+/;
    }
    return undef;
}

my $WARN = qr/^ringx: \[warn\] 8192 worker_connections exceed open file resource limit: 1024$/m;

###########################################################################
# worker_rlimit_nofile is applied in each worker

{
    my $t = Test::Ringx->new;
    $t->write_config(config(workers => 2, rlimit => 4096, connections => 512));
    $t->run;
    my @w = $t->wait_workers(2);
    is(scalar @w, 2, 'two workers');
    for my $pid (@w) {
        is(nofile_soft($pid), 4096, "worker $pid: Max open files soft limit 4096");
    }
    $t->stop;
}

###########################################################################
# -t: worker_connections against the fd limit

{
    my $t = Test::Ringx->new;

    # limit from worker_rlimit_nofile
    $t->write_config(config(workers => 1, rlimit => 1024, connections => 8192));
    my ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, 'too many connections is a warning, -t exit 0') or diag($err);
    like($err, $WARN, 'nginx warning: worker_connections exceed the limit');
    my @lines = split /\n/, $err;
    my ($i) = grep { $lines[$_] =~ $WARN } 0 .. $#lines;
    like(defined $i ? ($lines[$i + 1] // '') : '',
         qr/^(?:ringx: )?\[(?:warn|notice)\] .*worker_rlimit_nofile/,
         'the next line says what to change (worker_rlimit_nofile)')
        or diag($err);
    like($err, qr/test is successful$/m, 'test still successful');

    # no worker_rlimit_nofile: the soft limit the workers inherit
    $t->write_config(config(workers => 1, connections => 8192));
    ($rc, $out, $err) = $t->ringx({ ulimit_n => 1024 }, '-t');
    is($rc, 0, 'soft limit 1024: -t exit 0') or diag($err);
    like($err, $WARN, 'soft RLIMIT_NOFILE used when worker_rlimit_nofile is unset');
    like($err, qr/worker_rlimit_nofile/, 'hint names worker_rlimit_nofile');

    # enough descriptors: no warning
    $t->write_config(config(workers => 1, rlimit => 4096, connections => 512));
    ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, '512 connections, 4096 fds: exit 0');
    unlike($err, qr/exceed open file resource limit/, '512 connections, 4096 fds: no warning');
    unlike($err, qr/\[warn\]/, '512 connections, 4096 fds: no [warn] at all');
}

###########################################################################
# -t prints the capacity, -q does not

{
    my $t = Test::Ringx->new;
    $t->write_config(config(workers => 2, rlimit => 4096, connections => 1024));
    my ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, 'capacity: -t exit 0');
    like($err, qr/^ringx: .*\b2 workers\b.*\b1024 worker_connections\b/m,
         'capacity line: workers x worker_connections') or diag($err);

    ($rc, $out, $err) = $t->ringx('-t', '-q');
    is($rc, 0, 'capacity: -t -q exit 0');
    unlike($err, qr/\bworkers\b.*\bworker_connections\b/, '-q: no capacity line');
}

###########################################################################
# -t's whole budget: files and open_file_cache counted, upstream connections
# and keepalive pools in the capacity line, backlogs against somaxconn

sub budget_config {
    my (%o) = @_;
    return <<"EOF";
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile $o{rlimit};
error_log logs/error.log notice;
events { worker_connections $o{connections}; }
http {
    $o{http}
    upstream capped { server 127.0.0.1:9 max_conns=8; server 127.0.0.1:10 max_conns=4; keepalive $o{keepalive}; }
    server {
        listen 127.0.0.1:%%PORT_0%% $o{listen};
        location / { proxy_pass http://capped; }
    }
}
EOF
}

{
    my $t = Test::Ringx->new;
    # 300 connections + 300 files + 500 cached + fixed > 1000
    $t->write_config(budget_config(rlimit => 1000, connections => 300,
        keepalive => 4, listen => '', http => 'open_file_cache max=500;'));
    my ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, 'budget: -t exit 0');
    like($err, qr/\[warn\] each worker may need 11\d\d file descriptors \(300 connections, 300 files being sent or buffered, 500 in open_file_cache, \d+ for listeners, logs and the ring\) but will get 1000/,
         'open_file_cache and the files a request holds count against the limit') or diag($err);
    like($err, qr/upstream connections at most 12 \(max_conns\), 4 kept idle/,
         'the capacity line: upstream connections bounded by max_conns, the keepalive pool')
        or diag($err);

    # without open_file_cache it fits: 300 + 300 + fixed < 1000
    $t->write_config(budget_config(rlimit => 1000, connections => 300,
        keepalive => 4, listen => '', http => ''));
    ($rc, $out, $err) = $t->ringx('-t');
    unlike($err, qr/\[warn\]/, 'budget that fits: no warning') or diag($err);

    # keepalive pools that can hold most of the table
    $t->write_config(budget_config(rlimit => 4000, connections => 100,
        keepalive => 80, listen => '', http => ''));
    ($rc, $out, $err) = $t->ringx('-t');
    like($err, qr/\[warn\] the keepalive pools may keep 80 idle upstream connections per worker, more than half of the 100 worker_connections/,
         'keepalive pools against the table') or diag($err);
}

SKIP: {
    open(my $fh, '<', '/proc/sys/net/core/somaxconn')
        or skip('no /proc/sys/net/core/somaxconn here', 2);
    my ($max) = <$fh> =~ /(\d+)/;
    my $t = Test::Ringx->new;
    $t->write_config(budget_config(rlimit => 4000, connections => 100,
        keepalive => 4, listen => 'backlog=' . ($max + 1), http => ''));
    my ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, 'backlog above somaxconn: -t exit 0');
    like($err, qr/\[warn\] listen 127\.0\.0\.1:\d+ backlog=@{[ $max + 1 ]} is above net\.core\.somaxconn $max: the kernel keeps $max/,
         'a backlog the kernel would shorten is named') or diag($err);
}

done_testing;
