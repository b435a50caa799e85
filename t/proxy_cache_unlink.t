#!/usr/bin/perl
# proxy_cache_unlink.t: a cache file a worker removes (an entry evicted by
# max_size, purged, or found inactive and fetched again) is unlinked on the
# ring (io_uring, or the epoll backend's threads), never in the worker's
# own thread: a directory entry's removal may wait for the disk. A shim
# (LD_PRELOAD) makes unlink under the cache's path take 2 s and records
# which thread called it: the worker's own (its tid is its pid) must never.
# That the files are gone is checked on the disk (io_uring's unlink is the
# kernel's: the shim does not see it). A store's temporary file dropped
# (the upstream cut the body short) is removed the same way. And a late unlink never removes a newer file: a purge's unlink
# stalls, the entry is fetched again meanwhile, and the new file is still
# there (a HIT) once the unlink completed (epoll: its threads' unlink is
# the shim's; io_uring's cannot be slowed here, so there the test only
# checks the same outcome).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::SlowFs;
use File::Find;

# the shim: unlink under the cache takes 2 s, and says when it was made (t/lib/Test/SlowFs.pm)
my ($SHIM, $LOG) = Test::SlowFs::build(match => '/slowdisk/', seconds => 2,
    calls => <<'C');
int unlink(const char *p)
{ slow("unlink", p); return made(p, REAL(unlink)(p)); }
int unlinkat(int d, const char *p, int fl)
{ slow("unlinkat", p); return made(p, REAL(unlinkat)(d, p, fl)); }
C

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

# the cache files under DIR (the stores' temporary files have 10 digits)
sub files {
    my ($dir, $len) = @_;
    my @f;
    find(sub { push @f, $File::Find::name if -f $_ && length($_) == ($len // 32) },
         $dir) if -d $dir;
    return scalar @f;
}

for my $method (qw(io_uring epoll)) {
    my $t = Test::Ringx->new;
    my $disk = $t->prefix . '/slowdisk';
    mkdir $disk;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use $method; }
http {
    access_log off;
    proxy_cache_path %%PREFIX%%/slowdisk/evict keys_zone=evict:1m max_size=150k;
    proxy_cache_path %%PREFIX%%/slowdisk/purge levels=1:2 keys_zone=purge:1m;
    proxy_cache_path %%PREFIX%%/slowdisk/idle keys_zone=idle:1m inactive=1s;
    proxy_cache_path %%PREFIX%%/slowdisk/abort keys_zone=abort:1m;
    proxy_cache_path %%PREFIX%%/slowdisk/race keys_zone=race:1m;
    map \$request_method \$purge_method { PURGE 1; default ""; }
    proxy_cache_valid 200 1h;
    add_header X-Cache \$upstream_cache_status always;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { proxy_pass http://$UP; proxy_cache evict; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location / { proxy_pass http://$UP; proxy_cache purge;
                     proxy_cache_purge \$purge_method; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        location / { proxy_pass http://$UP; proxy_cache idle; }
    }
    server {
        listen 127.0.0.1:%%PORT_3%%;
        location / { proxy_pass http://$UP; proxy_cache abort; }
    }
    server {
        listen 127.0.0.1:%%PORT_4%%;
        location / { proxy_pass http://$UP; proxy_cache race;
                     proxy_cache_purge \$purge_method; }
    }
}
EOF
    open(my $lf, '>', $LOG) or die "$LOG: $!";
    close $lf;
    chmod 0666, $LOG;
    $t->run({ env => { LD_PRELOAD => $SHIM,
        ASAN_OPTIONS => join(':', grep { length } $ENV{ASAN_OPTIONS} // '',
                             'verify_asan_link_order=0') } });

    my $get = sub {
        my ($port, $uri, $m) = @_;
        my $c = $t->raw($t->port($port), timeout => 20) or return {};
        $c->send(($m // 'GET') . " $uri HTTP/1.1\r\nHost: x\r\n"
                 . "Connection: close\r\n\r\n");
        return $c->read_response(timeout => 20) // {};
    };
    my $hit = sub {
        my ($port, $uri, $len) = @_;
        return Test::Ringx::wait_for(sub {
            my $r = $get->($port, $uri);
            return ($r->{headers}{'x-cache'} // '') eq 'HIT'
                && length($r->{body} // '') == $len;
        }, 20);
    };

    # max_size=150k: a second file of 100 KB evicts the first
    ok $hit->(0, '/len/100000?a', 100000), "$method: the first entry stored";
    ok $hit->(0, '/len/100000?b', 100000), "$method: the second stored";
    ok Test::Ringx::wait_for(sub { files("$disk/evict") == 1 }, 20),
        "$method: the evicted file is gone from the disk";
    is $get->(0, '/len/100000?a')->{headers}{'x-cache'}, 'MISS',
        "$method: the evicted entry is a miss";

    # purge
    ok $hit->(1, '/len/1000?p', 1000), "$method: an entry to purge";
    is $get->(1, '/len/1000?p', 'PURGE')->{status}, 204, "$method: PURGE";
    ok Test::Ringx::wait_for(sub { files("$disk/purge") == 0 }, 20),
        "$method: the purged file is gone from the disk";

    # inactive=1s: the entry is dropped at its next lookup and fetched again
    ok $hit->(2, '/len/1000?i', 1000), "$method: an entry to go inactive";
    select(undef, undef, undef, 2.5);
    is $get->(2, '/len/1000?i')->{headers}{'x-cache'}, 'MISS',
        "$method: the inactive entry is dropped, fetched again";

    # a store dropped: the upstream cuts the body short (a client that
    # goes away does not drop it: the fetch goes on for the cache)
    my $r = $get->(3, '/close-mid/100000');
    ok length($r->{body} // '') < 100000, "$method: a body cut short";
    ok Test::Ringx::wait_for(sub { files("$disk/abort", 10) == 0
                                    && files("$disk/abort") == 0 }, 20),
        "$method: the dropped store's file is gone";
    my @calls = do { open my $f, '<', $LOG; <$f> };
    is scalar(grep { / main .*\/abort\// } @calls), 0,
        "$method: a dropped store's file is not unlinked in the worker's "
        . "own thread" or diag @calls;

    # purge, then the entry fetched again while the purge's unlink stalls
    ok $hit->(4, '/len/1000?race', 1000), "$method: an entry to purge";
    is $get->(4, '/len/1000?race', 'PURGE')->{status}, 204,
        "$method: PURGE (its unlink stalls)";
    is $get->(4, '/len/1000?race')->{headers}{'x-cache'}, 'MISS',
        "$method: fetched again at once";
    ok $method eq 'io_uring' || Test::Ringx::wait_for(sub {
            my @l = do { open my $f, '<', $LOG; <$f> };
            grep { /^made .*\/race\// } @l }, 20),
        "$method: the purge's stalled unlink completed";
    # (io_uring: the kernel's unlink, not stalled; the store's wait, if
    # any, is a poll every few ms)
    Test::Ringx::wait_for(sub { files("$disk/race", 10) == 0 }, 20);
    is files("$disk/race"), 1,
        "$method: the new file is there after the old one's unlink";
    $r = $get->(4, '/len/1000?race');
    is $r->{headers}{'x-cache'}, 'HIT', "$method: the new entry is a HIT";
    is length($r->{body} // ''), 1000, "$method: ... whole";

    @calls = do { open my $f, '<', $LOG; <$f> };
    is scalar(grep { / main / } @calls), 0,
        "$method: no unlink in the worker's own thread"
        or diag @calls;
    if ($method eq 'epoll') {
        cmp_ok scalar(grep { / thread / } @calls), '>=', 3,
            "$method: the unlinks ran on the backend's threads"
            or diag @calls;
    }
    $t->stop;
}

$up->stop;
done_testing;
