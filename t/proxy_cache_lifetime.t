#!/usr/bin/perl
# proxy_cache_lifetime.t: a cache file whose store failed while an open or
# a write of it was still in flight (the disk slower than the upstream)
# outlives the request that made it: its buffer is not freed under the
# write, its fd is not closed and its name not removed before the write
# completed, the worker does not wait for the disk meanwhile, and a file
# whose open completes after the request ended is still removed.
#
# The disk is made slow for sure: the cache is on an ext4 image frozen
# with fsfreeze, so the file's open or write waits (in io_uring's workers,
# or in the epoll backend's threads) until the test thaws it. Both
# backends run (LT_METHODS="epoll": one of them); under SANITIZE=1 the
# epoll backend's pwrite from a freed buffer is what ASan reports.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Select;
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time sleep);

plan skip_all => 'not root: no loop device and no fsfreeze' if $> != 0;
for my $tool (qw(mkfs.ext4 fsfreeze mount umount)) {
    plan skip_all => "$tool not found"
        unless grep { -x "$_/$tool" } qw(/usr/sbin /sbin /usr/bin /bin);
}

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $work = Test::Ringx->new;      # a prefix for the image, not started
my $DISK = $work->prefix . '/disk';
mkdir $DISK or die "mkdir: $!";
my $mounted = system('truncate', '-s', '128M', "$DISK.img") == 0
    && system("mkfs.ext4 -q -F $DISK.img >/dev/null 2>&1") == 0
    && system("mount -o loop $DISK.img $DISK 2>/dev/null") == 0;
plan skip_all => 'cannot mount an ext4 image on a loop device' unless $mounted;
my $frozen = 0;
# thaw before anything else: a frozen disk would leave the workers (and
# this process's clean-up) waiting for ever
END {
    system('fsfreeze', '-u', $DISK) if $frozen;
    system('umount', $DISK) if $mounted;
}
sub freeze { system('fsfreeze', '-f', $DISK) == 0 or die "fsfreeze: $?"; $frozen = 1 }
sub thaw { system('fsfreeze', '-u', $DISK); $frozen = 0 }

# what a store leaves in the cache's directory: temporary files (ten
# digits) and entries (32 hex digits, under the level directories)
sub temp_files {
    my ($dir) = @_;
    opendir(my $d, $dir) or return ();
    return grep { /^\d{10}$/ } readdir $d;
}

sub worker_state {
    my ($pid) = @_;
    open(my $f, '<', "/proc/$pid/stat") or return '';
    my $s = <$f>;
    return $s =~ /\)\s+(\S)/ ? $1 : '';
}

for my $method (split " ", $ENV{LT_METHODS} // "io_uring epoll") {
    my $CACHE = "$DISK/cache-$method";
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use $method; }
http {
    access_log off;
    proxy_cache_path $CACHE keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 1m;
        }
        location = /ping {
            return 200 "pong\\n";
        }
    }
}
EOF
    $t->run;
    my $port = $t->port(0);
    my ($worker) = $t->worker_pids;

    # 1. the open waits: the body overruns the store's 4 MiB backlog
    # meanwhile, the store fails, the response goes out whole and the
    # request ends (keepalive); the open completes after that
    my $size = 6_000_000;
    freeze();
    my $c = $t->raw($port, timeout => 20);
    $c->send("GET /len/$size?$method HTTP/1.1\r\nHost: x\r\n\r\n");
    my $r = $c->read_response(timeout => 20);
    is $r && $r->{status}, 200, "$method, open in flight: the response";
    is $r && length($r->{body}), $size, "$method, open in flight: every byte";
    $c->send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
    $r = $c->read_response(timeout => 10);
    is $r && $r->{body}, "pong\n",
        "$method, open in flight: the next request on the connection";
    ok $t->wait_for(sub { scalar $t->log_contains(qr/written slower than the upstream sends/) }, 10),
        "$method, open in flight: the store failed (said once)";
    thaw();
    # the open completes now, after its request: its file is removed
    ok $t->wait_for(sub { !temp_files($CACHE) }, 10),
        "$method, open in flight: no temporary file left behind"
        or diag "left: " . join(' ', temp_files($CACHE));

    # 2. a write waits: the file is open and its first piece written, then
    # the disk freezes; the next piece's write waits, the last overruns
    # the backlog, the store fails with that write in flight, and the
    # request ends while the write still reads its buffer
    my %before = map { $_ => 1 } temp_files($CACHE);   # (left by 1.)
    my $piece = 2_500_000;
    my $uri = "/slow/" . (3 * $piece) . "?pieces=3&ms=1500&m=$method";
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\n\r\n");
    my $got = '';
    my $deadline = time + Test::Ringx::timeout(10);
    my $sel = IO::Select->new($c->sock);
    while (length($got) < $piece && time < $deadline) {
        next unless $sel->can_read(0.2);
        my $k = sysread($c->sock, my $chunk, 1 << 20);
        last unless $k;
        $got .= $chunk;
    }
    ok $t->wait_for(sub { grep { !$before{$_} } temp_files($CACHE) }, 10),
        "$method, write in flight: the file is being written";
    freeze();
    # the rest of the response, read as it comes
    $deadline = time + Test::Ringx::timeout(20);
    my ($head_end, $want_len);
    while (time < $deadline) {
        if (!defined $want_len && $got =~ /\r\n\r\n/) {
            $head_end = $+[0];
            ($want_len) = $got =~ /Content-Length: (\d+)/i;
        }
        last if defined $want_len && length($got) - $head_end >= $want_len;
        next unless $sel->can_read(0.2);
        my $k = sysread($c->sock, my $chunk, 1 << 20);
        last unless $k;
        $got .= $chunk;
    }
    is $want_len && length($got) - $head_end, 3 * $piece,
        "$method, write in flight: every byte";
    ok $t->wait_for(sub { scalar(() = $t->log_contains(qr/written slower than the upstream sends/)) >= 2 }, 10),
        "$method, write in flight: the store failed";
    # the worker neither removed the file under the write (unlink() would
    # wait for the frozen disk) nor freed the buffer: it answers at once
    $c->send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
    $r = $c->read_response(timeout => 10);
    is $r && $r->{body}, "pong\n",
        "$method, write in flight: the worker answers while the write waits";
    isnt worker_state($worker), 'D', "$method: the worker does not wait for the disk";
    thaw();
    ok $t->wait_for(sub { !grep { !$before{$_} } temp_files($CACHE) }, 10),
        "$method, write in flight: the file is removed after its write"
        or diag "left: " . join(' ', temp_files($CACHE));
    # the cache still works: the next response is stored and served
    $c->send("GET /len/5000?$method HTTP/1.1\r\nHost: x\r\n\r\n");
    $r = $c->read_response(timeout => 10);
    is $r && $r->{headers}{'x-cache'}, 'MISS', "$method: a miss after";
    $c->send("GET /len/5000?$method HTTP/1.1\r\nHost: x\r\n\r\n");
    $r = $c->read_response(timeout => 10);
    is $r && $r->{headers}{'x-cache'}, 'HIT', "$method: then a hit";
    $c->close;
    $t->stop;          # no sanitizer report, no unexpected alert
}

thaw() if $frozen;
$mounted = 0 if system('umount', $DISK) == 0;
done_testing;
