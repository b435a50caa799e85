#!/usr/bin/perl
# event_epoll_files.t: the epoll backend's file operations (issue #23). A
# file whose path is in the dentry cache is opened, statx'ed and read from
# the page cache on the worker's own thread, as nginx does: the pool's
# threads (ringx-files) do not even wake up. What would wait still goes to
# the pool and completes there while the worker serves others: an open
# that must break a lease first (the lease holder is this test), data
# that is not in the page cache (evicted with fadvise), read or spliced
# (sendfile_splice: a splice from a file is always the pool's). A FIFO in
# the docroot opens at once, non-blocking, and gets nginx's 404 ("is not a
# regular file"): a blocking open held a pool thread until some writer
# came, and five such requests held the whole pool and every static file
# behind it.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Fcntl;
use IO::Handle;
use POSIX ();
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

# this test chooses the backend itself
delete $ENV{RINGX_EVENTS};

use constant { F_SETLEASE => 1024, F_RDLCK => 0, F_WRLCK => 1, F_UNLCK => 2 };

my $t = Test::Ringx->new;
my $prefix = $t->prefix;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use epoll; }
http {
    access_log off;
    default_type application/octet-stream;
    sendfile off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
        location /t/ { alias html/; try_files $uri =404; }
        location /ds/ { alias html/; disable_symlinks on; }
        location /df/ { alias html/; disable_symlinks on from=%%PREFIX%%/html; }
        location /do/ { alias html/; disable_symlinks if_not_owner; }
        location /z/ { alias html/; sendfile on; sendfile_splice on; }
    }
}
EOF

sub pattern {
    my ($size, $seed) = @_;
    my ($data, $i) = ('', $seed);
    $data .= pack('N', ($i++ * 2654435761) % 4294967296) while length($data) < $size;
    return substr($data, 0, $size);
}

my $small = "abcdefghijklmnopqrstuvwxyz012\n";
my $big = pattern(1048576 + 3, 1);
my $cold = pattern(1048576 + 5, 2);
$t->write_file_raw('html/small.txt', $small);
$t->write_file_raw('html/big.bin', $big);
$t->write_file_raw('html/leased.txt', $small);
for my $i (0 .. 4) {
    POSIX::mkfifo("$prefix/html/fifo$i", 0644) or die "mkfifo: $!";
}
$t->run;
my $P = $t->port(0);
my ($w) = $t->worker_pids;

# The worker's threads other than its loop's: the file pool.
sub pool_switches {
    my $n = 0;
    opendir(my $d, "/proc/$w/task") or return undef;
    for my $tid (grep { /^\d+$/ && $_ != $w } readdir $d) {
        open(my $f, '<', "/proc/$w/task/$tid/status") or next;
        while (<$f>) {
            $n += $1 if /^(?:non)?voluntary_ctxt_switches:\s+(\d+)/;
        }
    }
    return $n;
}

sub get_all {
    my ($c, @paths) = @_;
    my @bodies;
    for my $path (@paths) {
        $c->send("GET $path HTTP/1.1\r\nHost: x\r\n\r\n") or return;
        my $r = $c->read_response(timeout => 10) or return;
        push @bodies, $r->{status} == 200 ? $r->{body} : "status $r->{status}";
    }
    return @bodies;
}

ok(defined pool_switches(), 'the worker\'s threads are listed in /proc');
{
    my @threads;
    for my $dir (glob("/proc/$w/task/*")) {
        next if $dir =~ m{/$w$};
        open(my $h, '<', "$dir/comm") or next;
        push @threads, scalar <$h>;
    }
    chomp @threads;
    is(scalar(grep { /^ringx-files$/ } @threads), 4, 'four pool threads, named ringx-files');
}

# --- cached files: the pool stays asleep -------------------------------------

{
    my $c = $t->raw($P);
    # warm: a name never looked up is not in the dentry cache (the pool's)
    get_all($c, '/small.txt', '/big.bin', '/t/small.txt', '/df/small.txt',
            '/missing.txt', '/t/missing.txt');
    my $before = pool_switches();
    my @paths = (('/small.txt') x 100, ('/big.bin') x 10, ('/t/small.txt') x 20,
                 '/missing.txt', '/t/missing.txt',
                 ('/ds/small.txt', '/df/small.txt', '/do/small.txt') x 5);
    my @got = get_all($c, @paths);
    my $woken = pool_switches() - $before;
    is(scalar(@got), scalar(@paths), 'cached: every response arrived');
    is(scalar(grep { $got[$_] eq $small } 0 .. 99), 100, 'cached: 100 small files whole');
    is(scalar(grep { $got[$_] eq $big } 100 .. 109), 10, 'cached: 10 files of 1 MiB whole (read path)');
    is(scalar(grep { $got[$_] eq $small } 110 .. 129), 20, 'cached: try_files (statx) then the file');
    is_deeply([@got[130, 131]], ['status 404', 'status 404'], 'cached: a missing file is a 404');
    is(scalar(grep { $got[$_] eq $small } 132 .. 146), 15,
       'cached: disable_symlinks on, on from=, if_not_owner (openat2, O_PATH, statx)');
    cmp_ok($woken, '<', 5, 'cached: open, statx and read did not go to the pool')
        or diag("the pool's threads switched $woken times for 147 requests");
    note("the pool's threads switched $woken times for 147 requests");
}

# --- a FIFO: not a regular file, answered at once ----------------------------

{
    my @c = map { $t->raw($P) } 0 .. 4;
    $c[$_]->send("GET /fifo$_ HTTP/1.1\r\nHost: x\r\n\r\n") for 0 .. 4;
    my @st = map { my $r = $_->read_response(timeout => 5); $r ? $r->{status} : 'none' } @c;
    is_deeply(\@st, [(404) x 5], 'five FIFOs: a 404 each, at once');
    my ($body) = get_all($t->raw($P), '/small.txt');
    is($body, $small, 'five FIFOs: a file is served after them');
    ok($t->log_contains(qr/\[crit\].*"[^"]*fifo0" is not a regular file/),
       'FIFO: nginx\'s [crit] line');
    # an open that did block waits for a writer: one comes, and goes
    for my $i (0 .. 4) {
        my $f;
        close $f if sysopen($f, "$prefix/html/fifo$i", O_WRONLY | O_NONBLOCK);
    }
}
$t->expect_log(qr/is not a regular file/);

# --- an open that must break a lease: the pool, the worker free -------------

SKIP: {
    local $SIG{IO} = 'IGNORE';      # the lease break's signal, to the holder
    open(my $lh, '+<', "$prefix/html/leased.txt") or die "open: $!";
    skip "no leases here (fcntl F_SETLEASE: $!)", 5
        unless fcntl($lh, F_SETLEASE, F_WRLCK);
    my $before = pool_switches();
    my $c = $t->raw($P);
    $c->send("GET /leased.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    my $t0 = time;
    my ($body) = get_all($t->raw($P), '/small.txt');
    is($body, $small, 'lease: another file is served while the open waits');
    cmp_ok(time - $t0, '<', 5, 'lease: ... without waiting for the lease');
    ok(!defined $c->read_response(timeout => 0.5), 'lease: no answer while the lease holds');
    fcntl($lh, F_SETLEASE, F_UNLCK) or die "F_UNLCK: $!";
    my $r = $c->read_response(timeout => 10);
    is($r && $r->{body}, $small, 'lease: the file once the lease is given up');
    cmp_ok(pool_switches() - $before, '>', 0, 'lease: the open went to the pool');
    close $lh;
}

# --- a read of data out of the page cache: the pool -------------------------

SKIP: {
    my $file = "$prefix/html/cold.bin";
    open(my $f, '>', $file) or die "$file: $!";
    print $f $cold;
    $f->flush;
    $f->sync or die "fsync: $!";
    close $f;
    # the path stays in the dentry cache; the data leaves the page cache
    system('dd', "if=$file", 'iflag=nocache', 'count=0', 'status=none');
    my $resident = `fincore --bytes --noheadings --output RES '$file' 2>/dev/null`;
    $resident =~ s/\s+//g;
    skip "could not evict $file from the page cache (fincore: '$resident')", 4
        unless $resident eq '0';
    my $before = pool_switches();
    my ($body) = get_all($t->raw($P), '/cold.bin');
    ok(defined $body && $body eq $cold, 'evicted: the file arrives whole');
    my $switched = pool_switches() - $before;
    # A RWF_NOWAIT read of evicted pages starts their readahead and fails
    # only if the pages are not there by the time it looks again; a disk
    # that answers from the host's cache can have them there at once (a
    # CI run and about one run in three here). Then the worker rightly
    # reads inline, and a read of our own, as the worker's, says so.
    my $inline_ok = 0;
    if ($switched == 0) {
        my $probe = "$prefix/html/probe.bin";
        open(my $pf, '>', $probe) or die "$probe: $!";
        print $pf $cold;
        close $pf;
        system('sync');
        system('dd', "if=$probe", 'iflag=nocache', 'count=0', 'status=none');
        # five tries, each on pages evicted again: one that reads is enough
        my $got = `python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); b=bytearray(65536); got="EAGAIN"
for i in range(5):
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    try:
        got = str(os.preadv(fd, [b], 0, os.RWF_NOWAIT)); break
    except BlockingIOError:
        pass
print(got)' '$probe' 2>&1`;
        chomp $got;
        $inline_ok = $got =~ /^\d+$/ && $got > 0;
        diag("evicted: read inline; RWF_NOWAIT reads of another evicted file here got: $got");
    }
    SKIP: {
        skip 'this machine answers a RWF_NOWAIT read of evicted pages at once '
             . '(the readahead it starts is done before it looks): the worker read inline', 1
            if $inline_ok;
        cmp_ok($switched, '>', 0, 'evicted: its read went to the pool');
    }
    system('dd', "if=$file", 'iflag=nocache', 'count=0', 'status=none');
    $before = pool_switches();
    ($body) = get_all($t->raw($P), '/z/cold.bin');
    ok(defined $body && $body eq $cold, 'evicted, spliced: the file arrives whole');
    cmp_ok(pool_switches() - $before, '>', 0, 'evicted, spliced: the pool splices it');
}

$t->stop;
done_testing;
