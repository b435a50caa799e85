#!/usr/bin/perl
# proxy_cache_stale.t: an expired copy standing in for its refresh:
# proxy_cache_use_stale (http_500, error when the origin is down, updating
# while another request refreshes it), and the origin's own say in
# Cache-Control: stale-if-error and stale-while-revalidate; where none
# allows it, the error (or the wait for the refresh) is what the client
# gets.

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
my $up2 = Test::Upstream->new;
$up2->start;
my $UP2 = $up2->addr;

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
    upstream two { server $UP2; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-Cache \$upstream_cache_status always;
        # the key is ?k=: the origin's answer (its path) changes under it
        proxy_cache_key \$arg_k;
        location /stale/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 1s;
            proxy_cache_use_stale error timeout http_500 updating;
        }
        location /down/ {
            proxy_pass http://two/;
            proxy_cache one;
            proxy_cache_valid 200 1s;
            proxy_cache_use_stale error timeout;
        }
        # the same entries, stored for longer (a refresh that must stay)
        location /long/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 1m;
        }
        location /downlong/ {
            proxy_pass http://two/;
            proxy_cache one;
            proxy_cache_valid 200 1m;
        }
        location /reval/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 2s;
            proxy_cache_revalidate on;
        }
        location /plain/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 1s;
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

# http_500: the expired copy instead of the origin's 500
is get('/stale/len/10?k=a')->{status}, 200, 'stored';
sleep 1.3;
my $s = get('/stale/status/500?k=a');
is $s->{status}, 200, 'expired, the origin says 500: the stale copy (200)';
is st($s), 'STALE', '... as STALE';
is length($s->{body}), 10, '... with its body';
# a status the location does not list goes to the client
my $n = get('/stale/status/404?k=a');
is $n->{status}, 404, 'a 404 (not in use_stale): the origin\'s 404';

# error: the origin is down
is get('/down/len/20?k=b')->{status}, 200, 'stored (origin up)';
sleep 1.3;
$up2->refuse;
my $d = get('/down/len/20?k=b');
is $d->{status}, 200, 'origin down: the stale copy';
is st($d), 'STALE', '... as STALE';
is length($d->{body}), 20, '... whole';
$up2->resume;
my $back = get('/downlong/len/20?k=b');
is st($back), 'EXPIRED', 'origin back: refreshed (EXPIRED)';
is st(get('/down/len/20?k=b')), 'HIT', 'then a HIT';
$t->expect_log(qr/connect\(\) failed/);

# without use_stale the error goes out
is get('/plain/len/30?k=c')->{status}, 200, 'stored (no use_stale)';
sleep 1.3;
my $e = get('/plain/status/500?k=c');
is $e->{status}, 500, 'no use_stale: the 500';

# stale-if-error from the origin, without use_stale
get('/plain/headers?Cache-Control=max-age%3D1,%20stale-if-error%3D60&k=d');
sleep 1.3;
my $sie = get('/plain/status/502?k=d');
is $sie->{status}, 200, 'stale-if-error=60: the stale copy for a 502';
is st($sie), 'STALE', '... as STALE';
is $sie->{body}, "ok\n", '... with its body';

# updating: another request refreshes the entry (slowly): the expired copy
get('/stale/len/40?k=e');
sleep 1.3;
my $slow = $t->raw($port);
$slow->send("GET /long/slow/50?pieces=2&ms=700&k=e HTTP/1.1\r\nHost: x\r\n"
            . "Connection: close\r\n\r\n");
sleep 0.3;
my $u = get('/stale/len/40?k=e');
is st($u), 'UPDATING', 'while refreshed: UPDATING';
is length($u->{body}), 40, '... the old copy, at once';
my $sr = $slow->read_response(timeout => 10);
is length($sr->{body} // ''), 50, 'the refresh got the new response';
my $after = get('/stale/len/40?k=e');
is length($after->{body}), 50, 'and it is stored' or diag explain $after->{headers};

# stale-while-revalidate from the origin, without use_stale updating
get('/plain/headers?Cache-Control=max-age%3D1,%20stale-while-revalidate%3D60&k=f');
sleep 1.3;
my $slow2 = $t->raw($port);
$slow2->send("GET /plain/slow/70?pieces=2&ms=700&k=f HTTP/1.1\r\nHost: x\r\n"
             . "Connection: close\r\n\r\n");
sleep 0.3;
my $w = get('/plain/len/1?k=f');
is st($w), 'UPDATING', 'stale-while-revalidate=60: UPDATING';
is $w->{body}, "ok\n", '... the old copy';
$slow2->read_response(timeout => 10);

# without either, a request waits for the refresh and gets the new copy
get('/plain/len/5?k=g');
sleep 1.3;
my $slow3 = $t->raw($port);
$slow3->send("GET /plain/slow/60?pieces=2&ms=500&k=g HTTP/1.1\r\nHost: x\r\n"
             . "Connection: close\r\n\r\n");
sleep 0.3;
my $wait = get('/plain/len/5?k=g');
is length($wait->{body}), 60, 'no stale allowed: the waiter gets the refresh';
$slow3->read_response(timeout => 10);

# proxy_cache_revalidate: the expired entry's validators go to the origin;
# its 304 refreshes the entry and the client gets the stored response
my $v1 = get('/reval/headers?ETag=%22v1%22&Last-Modified=Tue,%2001%20Dec%202026%2010:00:00%20GMT&k=r');
is $v1->{status}, 200, 'revalidate: stored';
sleep 2.3;
my $client_inm = $t->http($port, "GET /reval/headers/304?ETag=%22v1%22&k=r "
    . "HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"client\"\r\nConnection: close\r\n\r\n");
my ($rv) = Test::Ringx::parse_responses($client_inm // '');
is $rv->{status}, 200, 'the origin said 304: the client gets the stored 200';
is st($rv), 'REVALIDATED', '... as REVALIDATED';
is $rv->{body}, "ok\n", '... with the stored body';
my ($req) = grep { $_->{uri} =~ m{^/headers/304} } $up->requests;
my %h = map { lc($_->[0]) => $_->[1] } @{ $req->{headers} };
is $h{'if-none-match'}, '"v1"', 'the origin got the entry\'s ETag';
is $h{'if-modified-since'}, 'Tue, 01 Dec 2026 10:00:00 GMT',
   '... and its Last-Modified';
is scalar(grep { lc($_->[0]) eq 'if-none-match' } @{ $req->{headers} }), 1,
   '... and not the client\'s own condition';
is st(get('/reval/headers/500?k=r')), 'HIT', 'refreshed: a HIT again';

$t->stop;
$up->stop;
$up2->stop;
done_testing;
