#!/usr/bin/perl
# proxy_cache_background.t: proxy_cache_background_update with
# proxy_cache_use_stale updating: the request that finds its entry expired
# is answered from the expired copy at once (STALE), then refreshes the
# entry with its output dropped; the origin sees one update, and the next
# request is a HIT with the new body. A request pipelined behind it on the
# same connection waits for the update (as nginx's request waits for its
# background subrequest), so it is answered from the refreshed entry.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time sleep);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    log_format cs '\$request_uri \$status \$upstream_cache_status';
    access_log logs/access.log cs;
    proxy_cache_path %%PREFIX%%/cache keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            # one entry for every path: the body says which fetch made it
            proxy_cache_key k\$arg_k;
            proxy_cache_valid 200 1s;
            proxy_cache_use_stale updating;
            proxy_cache_background_update on;
        }
        location /off/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_key k\$arg_k;
            proxy_cache_valid 200 1s;
            proxy_cache_use_stale updating;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub count { my ($uri) = @_; scalar grep { $_->{uri} eq $uri } $up->requests }

sub get {
    my ($path) = @_;
    my $c = $t->raw($port) or return;
    $c->send("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 20);
    $c->close;
    return $r;
}

my $r = get('/len/1000?k=1');
is $r->{headers}{'x-cache'}, 'MISS', 'first: MISS';
is length($r->{body}), 1000, 'first: 1000 bytes';
sleep 1.5;                                  # the entry expires

# the update is slow at the origin (4 s before its header); the client
# has the stale copy long before. The update is kept 4 s (X-Accel-Expires)
# where proxy_cache_valid gives 1 s: on a loaded machine the checks below
# came later than a second after it, found it expired again, and so a new
# update (and another body) instead of the HIT they look for
my $upd = '/len/2000?k=1&delay=4000&xae=4';
my $t0 = time;
$r = get($upd);
my $took = time - $t0;
is $r->{status}, 200, 'expired: 200';
is $r->{headers}{'x-cache'}, 'STALE', 'expired: STALE';
is length($r->{body}), 1000, 'expired: the stale body';
cmp_ok $took, '<', 3, 'the stale copy did not wait for the origin';
ok Test::Ringx::wait_for(sub { count($upd) == 1 }, 10),
   'the update went upstream';

# meanwhile the entry is being updated: others get the stale copy too
$r = get('/len/3000?k=1');
is $r->{headers}{'x-cache'}, 'UPDATING', 'during the update: UPDATING';
is length($r->{body}), 1000, 'during the update: the stale body';

ok Test::Ringx::wait_for(sub {
    my $x = get('/len/4000?k=1');
    $x && ($x->{headers}{'x-cache'} // '') eq 'HIT' && length($x->{body}) == 2000
}, 15), 'after the update: HIT with the new body';
is count($upd), 1, 'the origin saw one update';
is count('/len/3000?k=1') + count('/len/4000?k=1'), 0,
   'and nothing else went upstream';

# keepalive: a request pipelined behind the stale one is answered after
# the update, from the refreshed entry (once the update's 4 s are over)
sleep 4.5;
my $c = $t->raw($port);
$c->send("GET /len/5000?k=1&delay=1000 HTTP/1.1\r\nHost: x\r\n\r\n"
         . "GET /len/6000?k=1 HTTP/1.1\r\nHost: x\r\n\r\n");
my $a = $c->read_response(timeout => 20);
my $b = $c->read_response(timeout => 20);
is $a->{headers}{'x-cache'}, 'STALE', 'keepalive: the first is STALE';
is length($a->{body} // ''), 2000, 'keepalive: with the stale body';
is $b->{headers}{'x-cache'}, 'HIT', 'keepalive: the next one a HIT';
is length($b->{body} // ''), 5000, 'keepalive: with the updated body';
$c->close;

# a failed update (the origin refuses): the stale copy was sent, the
# entry stays as it was, the next request fetches again
sleep 1.5;
$r = get('/status/500?k=1');
is $r->{headers}{'x-cache'}, 'STALE', 'failed update: STALE';
is length($r->{body} // ''), 5000, 'failed update: the stale body';
ok Test::Ringx::wait_for(sub { count('/status/500?k=1') == 1 }, 10),
   'failed update: it went upstream';

# without proxy_cache_background_update, the request that refreshes waits
$r = get('/off/len/100?k=2');
sleep 1.5;
$t0 = time;
$r = get('/off/len/200?k=2&delay=1500');
is $r->{headers}{'x-cache'}, 'EXPIRED', 'off: EXPIRED';
is length($r->{body}), 200, 'off: the new body';

ok $t->log_contains(qr{^/len/2000\?k=1&delay=4000&xae=4 200 STALE$}m,
                    $t->prefix . '/logs/access.log'),
   'the access log has the client\'s response: 200 STALE';

$t->stop;
$up->stop;

# fastcgi_cache_background_update is accepted as well
my $t2 = Test::Ringx->new;
$t2->write_config("events {} http { fastcgi_cache_background_update on; "
                  . "proxy_cache_background_update off; }");
my ($rc, $out, $err) = $t2->ringx('-t');
is $rc, 0, 'fastcgi_cache_background_update: -t accepts it' or diag $err;

done_testing;
