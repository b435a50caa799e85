#!/usr/bin/perl
# proxy_cache_revalidate.t: after a 304 to a revalidation, the entry's new
# expiry is written into its file's head too, so it survives a restart
# (the loader reads it from there): the entry is a HIT after the restart,
# not EXPIRED. The same when the revalidation was a background update.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(sleep);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    access_log off;
    proxy_cache_path %%PREFIX%%/cache keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-Cache \$upstream_cache_status always;
        # the key is ?k=: the origin's answer (its path) changes under it
        proxy_cache_key \$arg_k;
        location /reval/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 2s;
            proxy_cache_revalidate on;
        }
        location /bg/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 2s;
            proxy_cache_revalidate on;
            proxy_cache_use_stale updating;
            proxy_cache_background_update on;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub get {
    my ($path) = @_;
    my $raw = $t->http($port, "GET $path HTTP/1.1\r\nHost: x\r\n"
                       . "Connection: close\r\n\r\n");
    my ($r) = Test::Ringx::parse_responses($raw // '');
    return $r // { status => 0, headers => {}, body => '' };
}
sub st { $_[0]{headers}{'x-cache'} // '' }
sub count { my ($re) = @_; scalar grep { $_->{uri} =~ $re } $up->requests }

my $etag = 'ETag=%22v1%22';
is st(get("/reval/headers?$etag&k=r")), 'MISS', 'stored';
is st(get("/bg/headers?$etag&k=b")), 'MISS', 'stored (background)';
sleep 2.3;                                  # both expire
# the 304 says how long from now: a minute
my $fresh = 'Cache-Control=max-age%3D60';
my $r = get("/reval/headers/304?$etag&$fresh&k=r");
is st($r), 'REVALIDATED', 'the origin said 304: REVALIDATED';
is $r->{body}, "ok\n", '... the stored body';
$r = get("/bg/headers/304?$etag&$fresh&k=b");
is st($r), 'STALE', 'background: the stale copy';
ok Test::Ringx::wait_for(sub { count(qr{^/headers/304\?.*k=b}) == 1 }, 10),
   'background: the revalidation went upstream';
ok Test::Ringx::wait_for(sub { st(get('/bg/status/500?k=b')) eq 'HIT' }, 10),
   'background: refreshed';
is st(get('/reval/status/500?k=r')), 'HIT', 'refreshed: a HIT';

# a restart: the index is rebuilt from the files' heads
$t->stop;
$t->run;
$r = get('/reval/status/500?k=r');
is st($r), 'HIT', 'after a restart: still a HIT (the file has the new expiry)';
is $r->{body}, "ok\n", '... with the stored body';
$r = get('/bg/status/500?k=b');
is st($r), 'HIT', 'background: after a restart, a HIT';
is count(qr{^/status/500}), 0, 'nothing went upstream after the refreshes';

$t->stop;
$up->stop;
done_testing;
