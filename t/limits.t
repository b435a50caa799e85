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

done_testing;
