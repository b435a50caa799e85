#!/usr/bin/perl
# static_inline.t: the io_uring backend's static files opened and read on
# the worker's thread when that needs no disk (event/ring_try.c), the ring
# otherwise. Such an fd is opened O_NONBLOCK (a FIFO must not hold the
# loop), and io_uring answers a read or splice of an O_NONBLOCK file that
# needs the disk with -EAGAIN: a body out of the page cache must still
# arrive whole, by read, splice and sendfile, under disable_symlinks too.
# A FIFO is a 404 at once, and an open that must break a lease leaves the
# worker serving others. (The loop turns saved: t/static_syscalls.t.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Fcntl;
use IO::Handle;
use POSIX ();
use Test::More;
use Test::Ringx;

use constant { F_SETLEASE => 1024, F_WRLCK => 1, F_UNLCK => 2 };

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; }
http {
    access_log off;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { root html; }
        location /s/ { alias html/; disable_symlinks on; }
        location /z/ { alias html/; sendfile on; sendfile_splice on;
                       sendfile_min_size 1k; }
        location /f/ { alias html/; sendfile on; sendfile_min_size 1k; }
    }
}
EOF
my $prefix = $t->prefix;
sub pattern { my ($n, $k) = @_; join '', map { chr(($_ * $k) % 251) } 1 .. $n }
my $small = pattern(3000, 7);
my $big = pattern(300_000 + 5, 3);        # more than one 128 KiB chunk
$t->write_file_raw('html/small.bin', $small);
$t->write_file_raw('html/big.bin', $big);
$t->write_file_raw('html/leased.txt', $small);
POSIX::mkfifo("$prefix/html/fifo", 0644) or die "mkfifo: $!";
$t->run;
my $P = $t->port(0);

sub get {
    my ($path) = @_;
    my $c = $t->raw($P) or return undef;
    $c->send("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 20);
    return $r && $r->{status} == 200 ? $r->{body} : undef;
}

# the data out of the page cache, the path still in the dentry cache
sub evict {
    my ($file) = @_;
    open(my $f, '<', $file) or die "$file: $!";
    $f->sync;
    close $f;
    system('dd', "if=$file", 'iflag=nocache', 'count=0', 'status=none');
    my $res = `fincore --bytes --noheadings --output RES '$file' 2>/dev/null`;
    $res =~ s/\s+//g;
    return $res eq '0';
}

# --- bodies out of the page cache --------------------------------------------

is(get('/small.bin'), $small, 'a cached small file');
is(get('/big.bin'), $big, 'a cached file of three chunks');
SKIP: {
    skip 'could not evict a file from the page cache (fincore, dd nocache)', 8
        unless evict("$prefix/html/big.bin");
    for my $case (['/small.bin', $small, 'read'], ['/big.bin', $big, 'read'],
                  ['/s/small.bin', $small, 'read, disable_symlinks on'],
                  ['/s/big.bin', $big, 'read, disable_symlinks on'],
                  ['/z/small.bin', $small, 'splice'],
                  ['/z/big.bin', $big, 'splice'],
                  ['/f/small.bin', $small, 'sendfile'],
                  ['/f/big.bin', $big, 'sendfile']) {
        my ($path, $want, $how) = @$case;
        (my $file = $path) =~ s{^/[szf]/}{/};
        evict("$prefix/html$file");
        my $got = get($path);
        ok(defined $got && $got eq $want,
           "evicted $path ($how): the file arrives whole")
            or diag(defined $got ? length($got) . ' bytes' : 'no 200');
    }
}
ok(!$t->log_contains(qr/read\(\) of|splice\(\) of|fcntl\(\)/),
   'no read, splice or fcntl failed')
    or diag(join '', $t->log_contains(qr/read\(\) of|splice\(\) of|fcntl/));

# --- a FIFO: not a regular file, answered at once ----------------------------

{
    my $c = $t->raw($P);
    $c->send("GET /fifo HTTP/1.1\r\nHost: x\r\n\r\n");
    my $r = $c->read_response(timeout => 10);
    is($r && $r->{status}, 404, 'a FIFO: 404, without a writer');
    is(get('/small.bin'), $small, 'a FIFO: a file is served after it');
    ok($t->log_contains(qr/\[crit\].*"[^"]*fifo" is not a regular file/),
       'FIFO: nginx\'s [crit] line');
    my $f;
    close $f if sysopen($f, "$prefix/html/fifo", O_WRONLY | O_NONBLOCK);
}
$t->expect_log(qr/is not a regular file/);

# --- an open that must break a lease: not on the worker's thread --------------

SKIP: {
    local $SIG{IO} = 'IGNORE';      # the lease break's signal, to the holder
    open(my $lh, '+<', "$prefix/html/leased.txt") or die "open: $!";
    skip "no leases here (fcntl F_SETLEASE: $!)", 3
        unless fcntl($lh, F_SETLEASE, F_WRLCK);
    my $c = $t->raw($P);
    $c->send("GET /leased.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    is(get('/small.bin'), $small, 'lease: another file is served while the open waits');
    ok(!defined $c->read_response(timeout => 0.5), 'lease: no answer while the lease holds');
    fcntl($lh, F_SETLEASE, F_UNLCK) or die "F_UNLCK: $!";
    my $r = $c->read_response(timeout => 20);
    is($r && $r->{body}, $small, 'lease: the file once the lease is given up');
    close $lh;
}

$t->stop;
done_testing;
