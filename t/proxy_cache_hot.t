#!/usr/bin/perl
# proxy_cache_hot.t: a worker keeps small cache files in memory
# (modules/cache_hot.c), so a hit of a hot entry does no file operation:
# it is answered even when its file can no longer be opened. A copy is
# read again from its file once it is a second old (a file removed behind
# ringx's back is noticed), and it is the entry's only while the index
# names the same file: an entry replaced (bypass, expiry) or purged is
# never answered from an old copy, in any worker.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time sleep);

plan skip_all => 'not root: the workers cannot switch to another user' if $> != 0;
plan skip_all => 'no user nobody' unless defined getpwnam('nobody');

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
my $CACHE = $t->prefix . '/cache';
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes %%WORKERS%%;
user nobody;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    map \$request_method \$purge_method { PURGE 1; default ""; }
    proxy_cache_path $CACHE keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_key \$uri;
            proxy_cache_valid 200 1m;
            proxy_cache_bypass \$http_x_bypass;
            proxy_cache_purge \$purge_method;
        }
        location /short/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_key \$uri;
            proxy_cache_valid 200 1s;
        }
    }
}
EOF

# one worker first: every request meets the same worker's copies
my $conf = $t->read_file('conf/ringx.conf');
$t->write_file('conf/ringx.conf', $conf =~ s/%%WORKERS%%/1/r);
$t->run;
my $port = $t->port(0);

sub get {
    my ($uri, %h) = @_;
    my $c = $t->raw($port) or return;
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n");
    return $c->read_response(timeout => 10);
}
sub tag { my ($r) = @_; return $r && $r->{body} =~ /uri: \S+\?v=(\w+)/ ? $1 : '' }
sub status { my ($r) = @_; return $r ? ($r->{headers}{'x-cache'} // '') : 'none' }

# 1. a hot entry's hit does no file operation: the worker (nobody) can
# no longer open the file, and the hit is still answered, byte for byte
my $r = get('/echo/a?v=1');
is status($r), 'MISS', 'first: a miss';
my $kept = time;
$r = get('/echo/a?v=2');
is status($r) . tag($r), 'HIT1', 'second: a hit, read from the file';
my ($file) = grep { -f } glob("$CACHE/*");
ok $file, 'the entry has its file';
chmod 0000, $file;
chown 0, 0, $file;
$r = get('/echo/a?v=3');
SKIP: {
    # the copy is trusted for a second (RX_CACHE_HOT_VALID_MS); a machine
    # slow enough to take that long between the two requests tests nothing
    skip 'the machine took over 0.8 s between two requests', 2
        if time - $kept > 0.8;
    is status($r) . tag($r), 'HIT1', 'a hot hit while the file cannot be opened';
    ok !$t->log_contains(qr/could not be opened/), 'no open was tried';
}
chmod 0600, $file;

# 1b. a file removed behind ringx's back (an operator's rm of the cache
# tree): within a second the copy is dropped and the entry fetched again
get('/echo/rm?v=1');
get('/echo/rm?v=2') for 1 .. 2;              # hot now
is tag(get('/echo/rm?v=3')), '1', 'rm: served from the copy';
unlink grep { -f } glob("$CACHE/*") or die "no cache file: $!";
sleep 1.2;
$r = get('/echo/rm?v=4');
is tag($r), '4', 'rm: a removed file is fetched again after its second';
# the request that found the file gone refetched it; the entry is
# stored again by the next miss at the latest, then hit
my $v = 5;
ok $t->wait_for(sub { $r = get('/echo/rm?v=' . $v++);
                      status($r) eq 'HIT' && tag($r) ne '1' }, 10),
    'rm: the refetched response is hit again';

# 2. a replaced entry: the new file's bytes, never the old copy's
$r = get('/echo/a?v=4', 'X-Bypass' => 1);
is status($r) . tag($r), 'BYPASS4', 'bypass: a fresh response replaces it';
$r = get('/echo/a?v=5');
is status($r) . tag($r), 'HIT4', 'then a hit of the new file';
$r = get('/echo/a?v=6');
is status($r) . tag($r), 'HIT4', 'and again (now from memory)';

# 3. a purged entry: fetched again
my $c = $t->raw($port);
$c->send("PURGE /echo/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
$r = $c->read_response(timeout => 10);
is $r && $r->{status}, 204, 'purged';
$r = get('/echo/a?v=7');
is status($r) . tag($r), 'MISS7', 'after the purge: a miss';
$r = get('/echo/a?v=8');
is status($r) . tag($r), 'HIT7', 'then a hit of the new file';

# 4. an expired entry: refetched, and the new file is served
$r = get('/short/echo/b?v=1');
is status($r), 'MISS', 'short: a miss';
get('/short/echo/b?v=2') for 1 .. 2;         # hot now
ok $t->wait_for(sub { status(get('/short/echo/b?v=9')) eq 'EXPIRED' }, 10),
    'short: expired after its second';
$r = get('/short/echo/b?v=10');
is status($r) . tag($r), 'HIT9', 'short: a hit of the refetched file';
$t->stop;

# 5. two workers: one replaces the entry, the other never answers from
# its older copy
$t->write_file('conf/ringx.conf', $conf =~ s/%%WORKERS%%/2/r);
$t->run;
$port = $t->port(0);
my $bad = 0;
for my $round (1 .. 6) {
    my $v = "r$round";
    $r = get("/echo/c?v=$v", 'X-Bypass' => 1);
    $bad++ unless tag($r) eq $v;
    # many connections: both workers answer some (reuseport)
    for (1 .. 12) {
        $r = get("/echo/c?v=x$round");
        $bad++ unless status($r) eq 'HIT' && tag($r) eq $v;
    }
}
is $bad, 0, 'two workers: every hit is of the latest file';
$t->stop;

done_testing;
