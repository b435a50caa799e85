#!/usr/bin/perl
# static_allocs.t: the heap allocations a static response costs the worker
# (counted by gdb on malloc and calloc). A request's pool (4 KiB, and a
# second block when the request outgrows it) comes from a stack of spare
# pools (core/pool.c, rx_pool_create_spare), so keepalive requests of a
# small file make no allocation of 2 KiB or more: before, every request
# made two (glibc serves them from its bins, above its per-thread cache,
# which showed in the profile of a small response). Also: a spare pool
# comes back empty: responses stay whole with several requests on one
# connection, and ranges on a reused pool. (With sendfile off, a 16 KiB
# body is read into a buffer of its own, a large allocation each: not
# counted here.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Time::HiRes ();

my $N = 50;

my ($gdb) = grep { -x $_ } map { "$_/gdb" } split /:/, $ENV{PATH} // '';
plan(skip_all => 'gdb not found (Debian: apt-get install gdb): it counts '
    . 'the worker\'s allocations') unless $gdb;
my %arg = (x86_64 => ['$rdi', '$rsi'], aarch64 => ['$x0', '$x1']);
chomp(my $arch = `uname -m`);
plan(skip_all => "no register names for the first arguments on $arch here")
    unless $arg{$arch};
my ($a0, $a1) = @{ $arg{$arch} };

my $t = Test::Ringx->new;
plan(skip_all => 'an ASan build keeps no spare pools (it must see each '
    . 'pool freed to catch a use after it)') if $t->sanitized;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { root html; sendfile on; }
    }
}
EOF
my $small = "Hello, this is a 30-byte file\n";
my $mid = join '', map { chr(($_ * 7) % 251) } 1 .. 16384;
$t->write_file_raw('html/small.txt', $small);
$t->write_file_raw('html/mid.bin', $mid);
$t->run;
# small_file_cache keeps a file only once it has not changed for 2 s
# (http/http_file_content.c); until then the 16 KiB file is read into a
# buffer of its own for each request, which is not what is counted here
# (with gdb slowing the worker the first requests of the count could
# still find it fresh)
Time::HiRes::sleep(0.1) while time - (stat "${\ $t->prefix}/html/mid.bin")[9] < 3;
my ($w) = $t->worker_pids;
my $port = $t->port(0);

my $probe = `$gdb -nx -batch -p $w -ex detach 2>&1`;
if ($? != 0 || $probe =~ /ptrace: |could not attach|not permitted/i) {
    $t->stop;
    plan(skip_all => 'gdb cannot attach to a process here: '
        . ((grep { /ptrace|attach|permit/i } split /\n/, $probe)[0] // $probe));
}

# $N keepalive requests of PATH (after one to warm the spares) with gdb
# counting the allocations of 2 KiB or more; a 404 afterwards stops gdb at
# its log line (gdb's own interrupt would reach the worker as SIGINT).
sub count_allocs {
    my ($path) = @_;
    my $prefix = $t->prefix;
    my $gate = "$prefix/gdb.armed";
    unlink $gate;
    $t->write_file_raw('gdb.cmd', <<"EOF");
set pagination off
set confirm off
break *malloc if $a0 >= 2048
break *calloc if $a0 * $a1 >= 2048
break *malloc if $a0 >= 512 && $a0 < 2048
break *calloc if $a0 * $a1 >= 512 && $a0 * $a1 < 2048
break *realloc if $a1 >= 512
ignore 1 1000000
ignore 2 1000000
ignore 3 1000000
ignore 4 1000000
ignore 5 1000000
break rx_http_request_log_error
shell touch $gate
continue
info breakpoints
detach
quit
EOF
    my $c = $t->raw($port) or return;
    $c->send("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
    my $warm = $c->read_response;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', "$prefix/logs/gdb.out";
        open STDERR, '>&', \*STDOUT;
        { exec $gdb, '-nx', '-batch', '-x', "$prefix/gdb.cmd", '-p', $w };
        POSIX::_exit(127);
    }
    Test::Ringx::wait_for(sub { -e $gate }, 30) or return;
    my @bodies;
    for (1 .. $N) {
        $c->send("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
        my $r = $c->read_response(timeout => 30) or last;
        push @bodies, $r->{body};
    }
    $c->send("GET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
    my $miss = $c->read_response(timeout => 30);
    waitpid $pid, 0;
    my $out = $t->read_file("$prefix/logs/gdb.out") // '';
    my (%hits, $n);
    for (split /\n/, $out) {
        $n = $1 if /^(\d+)\s+breakpoint/;
        $hits{$n} = $1 if defined $n && /already hit (\d+) time/;
    }
    return { bodies => \@bodies, miss => $miss, out => $out,
             malloc => $hits{1} // 0, calloc => $hits{2} // 0,
             small => ($hits{3} // 0) + ($hits{4} // 0) + ($hits{5} // 0) };
}

my $r = count_allocs('/small.txt');
ok($r && $r->{out} =~ /^6\s+breakpoint/m, 'gdb counted on the worker')
    or diag($r ? $r->{out} : 'no connection');
is(join('', @{ $r->{bodies} }), $small x $N,
   "$N keepalive responses of a 30 B file, whole");
is($r->{miss} && $r->{miss}{status}, 404, 'the 404 that stopped gdb went out');
# the spares may have gone back to the heap while gdb attached (a quiet
# worker gives them back): the first request may allocate a pool again
cmp_ok($r->{malloc} + $r->{calloc}, '<=', 2,
       "30 B: no request pool malloc'd per request ($N requests)")
    or diag($r->{out});
# the connection's input buffer (client_header_buffer_size) and parser
# come from spares (core/pool.c, rx_spare_block_get) when it leaves its
# idle wait: no malloc, calloc or realloc of 512 B to 2 KiB per request
cmp_ok($r->{small}, '<=', 4,
       "30 B: no input buffer or parser allocated per request ($N requests)")
    or diag($r->{out});

$r = count_allocs('/mid.bin');
is(join('', @{ $r->{bodies} }), $mid x $N,
   "$N keepalive responses of a 16 KiB file, whole");
cmp_ok($r->{malloc} + $r->{calloc}, '<=', 2,
       "16 KiB: no request pool malloc'd per request ($N requests)")
    or diag($r->{out});

# a reused pool starts empty: ranges and whole files alternate on one
# connection, each response what it should be
my $c = $t->raw($port);
my $ok = 1;
for my $i (1 .. 20) {
    my $from = $i * 100;
    $c->send("GET /mid.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=$from-"
             . ($from + 9) . ",0-4\r\n\r\n");
    my $p = $c->read_response;
    $ok &&= $p && $p->{status} == 206
            && index($p->{body}, substr($mid, $from, 10)) >= 0
            && index($p->{body}, substr($mid, 0, 5)) >= 0;
    $c->send("GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    $p = $c->read_response;
    $ok &&= $p && $p->{status} == 200 && $p->{body} eq $small;
}
ok($ok, 'ranges (multipart) and whole files alternating on reused pools');
$c->close;

$t->stop;
done_testing;
