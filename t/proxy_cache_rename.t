#!/usr/bin/perl
# proxy_cache_rename.t: a store's rename into place and the mkdir of its
# level directories are directory-entry operations that may wait for the
# disk; they run on the ring (io_uring, or the epoll backend's threads),
# never in the worker's own thread, so a slow one holds up no other
# request. A shim (LD_PRELOAD) makes rename/mkdir under the cache's path
# take 3 s and records which thread called them: the worker's own (its
# tid is its pid) must never; then the entry is a HIT, whole. (That another
# request is answered meanwhile is not asserted: the shim cannot pin the
# moment of the slow call.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::SlowFs;
use Time::HiRes qw(time sleep);

# the shim: rename and mkdir under the cache take 3 s (t/lib/Test/SlowFs.pm)
my ($SHIM, $LOG) = Test::SlowFs::build(match => '/slowdisk/cache/', seconds => 3,
    calls => <<'C');
int rename(const char *a, const char *b)
{ slow("rename", b); return REAL(rename)(a, b); }
int renameat(int da, const char *a, int db, const char *b)
{ slow("renameat", b); return REAL(renameat)(da, a, db, b); }
int renameat2(int da, const char *a, int db, const char *b, unsigned fl)
{ slow("renameat2", b); return REAL(renameat2)(da, a, db, b, fl); }
int mkdir(const char *p, mode_t m)
{ slow("mkdir", p); return REAL(mkdir)(p, m); }
int mkdirat(int d, const char *p, mode_t m)
{ slow("mkdirat", p); return REAL(mkdirat)(d, p, m); }
C

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

for my $method (qw(io_uring epoll)) {
    my $t = Test::Ringx->new;
    mkdir $t->prefix . '/slowdisk';
    $t->write_file('html/static.txt', "static\n");
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use $method; }
http {
    access_log off;
    proxy_cache_path %%PREFIX%%/slowdisk/cache levels=1:2 keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 1m;
        }
        location /static.txt {
            root html;
        }
    }
}
EOF
    # the workers run as another user: the log is theirs to append to
    open(my $lf, '>', $LOG) or die "$LOG: $!";
    close $lf;
    chmod 0666, $LOG;
    $t->run({ env => { LD_PRELOAD => $SHIM,
        ASAN_OPTIONS => join(':', grep { length } $ENV{ASAN_OPTIONS} // '',
                             'verify_asan_link_order=0') } });
    my $port = $t->port(0);
    my $uri = "/len/100000?$method";

    # a miss whose store ends now: its level directories are made and its
    # file renamed (3 s each under the shim)
    my $c = $t->raw($port, timeout => 30);
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\n\r\n");
    my $r = $c->read_response(timeout => 30);
    is $r && length($r->{body} // ''), 100000, "$method: the miss, whole";

    my $stored = Test::Ringx::wait_for(sub {
        my $h = $t->raw($port, timeout => 10) or return 0;
        $h->send("GET $uri HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        my $x = $h->read_response(timeout => 10);
        return $x && ($x->{headers}{'x-cache'} // '') eq 'HIT'
            && length($x->{body} // '') == 100000;
    }, 30);
    ok $stored, "$method: then the entry is a HIT, whole";
    my @calls = do { open my $f, '<', $LOG; <$f> };
    is scalar(grep { / main / } @calls), 0,
        "$method: no rename or mkdir in the worker's own thread"
        or diag @calls;
    $c->close;
    $t->stop;
}

$up->stop;
done_testing;
