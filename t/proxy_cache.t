#!/usr/bin/perl
# proxy_cache.t: proxy_cache against Test::Upstream (which counts what
# reaches it): MISS then HIT with the same bytes, EXPIRED after
# proxy_cache_valid, the headers that decide (Cache-Control, Expires,
# X-Accel-Expires, Set-Cookie, Vary) and proxy_ignore_headers,
# $upstream_cache_status, HEAD from a hit, levels, a cache that survives a
# restart, an unwritable cache directory (the response is whole, one log
# line, nothing cached), and the directives ringx refuses by name at -t.

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
(my $UP_LOCALHOST = $UP) =~ s/^127\.0\.0\.1/localhost/;

my $t = Test::Ringx->new;
my $conf = <<"EOF";
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    log_format c '\$request_uri \$upstream_cache_status';
    map \$request_method \$purge_method { PURGE 1; default ""; }
    access_log logs/access.log c;
    proxy_cache_path %%PREFIX%%/cache levels=1:2 keys_zone=one:1m inactive=1h;
    proxy_cache_path %%PREFIX%%/flat keys_zone=flat:64k;
    proxy_cache_path %%PREFIX%%/ro keys_zone=ro:64k;
    proxy_cache_path %%PREFIX%%/small keys_zone=small:64k max_size=50k;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 404 1m;
            proxy_cache_purge \$purge_method;
            limit_except GET HEAD POST { allow 127.0.0.1; deny all; }
        }
        location = /metrics { metrics; }
        location ~ ^/purge(/.*)\$ {
            allow 127.0.0.1;
            deny all;
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_key \$scheme\$proxy_host\$1;
            proxy_cache_purge 1;
        }
        location /short/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 2s;
        }
        location /nokey/ {
            proxy_pass http://$UP/;
            proxy_cache one;
        }
        location /cookie/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 1m;
            proxy_ignore_headers Set-Cookie;
        }
        location /flat/ {
            proxy_pass http://$UP/;
            proxy_cache flat;
            proxy_cache_valid any 1m;
        }
        location /ro/ {
            proxy_pass http://$UP/;
            proxy_cache ro;
            proxy_cache_valid 1m;
        }
        location /bp/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 1m;
            proxy_cache_bypass \$http_x_bypass;
            proxy_no_cache \$http_x_nostore \$arg_nostore;
        }
        location /post/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 1m;
            proxy_cache_methods POST;
            proxy_cache_key \$request_method\$request_uri;
        }
        location /nohead/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 1m;
            proxy_cache_convert_head off;
        }
        location /twice/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 1m;
            proxy_cache_min_uses 2;
        }
        location /small/ {
            proxy_pass http://$UP/;
            proxy_cache small;
            proxy_cache_valid 1m;
        }
        location /off/ {
            proxy_pass http://$UP/;
            proxy_cache off;
        }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP_LOCALHOST;
            proxy_cache one;
            proxy_cache_valid 1m;
        }
    }
}
EOF
$t->write_config($conf);
$t->run;
my $port = $t->port(0);

sub get {
    my ($path, %h) = @_;
    my $method = delete $h{method} // 'GET';
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    my $raw = $t->http($port, "$method $path HTTP/1.1\r\nHost: x\r\n$extra"
                       . "Connection: close\r\n\r\n");
    my ($r) = Test::Ringx::parse_responses($raw // '',
                                           head => [$method eq 'HEAD']);
    return $r // { status => 0, headers => {}, body => '' };
}

sub hdr { my ($r, $n) = @_; my $v = $r->{headers}{lc $n}; ref $v ? $v->[0] : $v }

sub upstream_count {
    my ($uri) = @_;
    return scalar grep { $_->{uri} eq $uri } $up->requests;
}

# MISS, then HIT with the very same bytes and no second upstream request
my $a = get('/len/20000');
is $a->{status}, 200, 'first request: 200';
is hdr($a, 'x-cache'), 'MISS', 'first request: MISS';
is length($a->{body}), 20000, 'first request: whole body';
my $b = get('/len/20000');
is hdr($b, 'x-cache'), 'HIT', 'second request: HIT';
is $b->{body}, $a->{body}, 'the hit has the same body';
is hdr($b, 'content-length'), 20000, 'the hit has its Content-Length';
is upstream_count('/len/20000'), 1, 'one request reached the upstream';
ok(-f "${\$t->prefix}/cache/" . do {
    my @f = glob("${\$t->prefix}/cache/*/*/*"); @f ? substr($f[0],
        length("${\$t->prefix}/cache/")) : 'none' },
   'levels=1:2: the file is two directories down');
my @files = glob("${\$t->prefix}/cache/*/*/*");
like $files[0] // '', qr{/cache/([0-9a-f])/([0-9a-f]{2})/[0-9a-f]{29}\2\1$},
     'the levels are the name\'s last characters, as nginx';

# a cached 404 (listed in proxy_cache_valid) and its status line
get('/status/404');
my $n = get('/status/404');
is $n->{status}, 404, 'a cached 404 is a 404';
is hdr($n, 'x-cache'), 'HIT', '404 listed in proxy_cache_valid: HIT';
# a status not listed is not stored
get('/status/500');
is hdr(get('/status/500'), 'x-cache'), 'MISS', '500 not listed: MISS again';
is upstream_count('/status/500'), 2, 'both 500s reached the upstream';

# HEAD from a hit: the header, no body
my $h = get('/len/20000', method => 'HEAD');
is $h->{status}, 200, 'HEAD of a cached entry: 200';
is hdr($h, 'x-cache'), 'HIT', 'HEAD: HIT';
is $h->{body} // '', '', 'HEAD: no body';
is upstream_count('/len/20000'), 1, 'HEAD did not reach the upstream';

# EXPIRED after proxy_cache_valid's time, then HIT again
is hdr(get('/short/len/10'), 'x-cache'), 'MISS', 'valid 2s: MISS';
is hdr(get('/short/len/10'), 'x-cache'), 'HIT', 'valid 2s: HIT at once';
sleep 2.3;
is hdr(get('/short/len/10'), 'x-cache'), 'EXPIRED', 'after 2.3 s: EXPIRED';
is hdr(get('/short/len/10'), 'x-cache'), 'HIT', 'the new copy: HIT';
is upstream_count('/len/10'), 2, 'the upstream saw the miss and the refresh';

# the upstream's headers decide before proxy_cache_valid
for my $case (['Cache-Control=no-store', 'MISS', 'Cache-Control: no-store'],
              ['Cache-Control=private', 'MISS', 'Cache-Control: private'],
              ['Cache-Control=no-cache', 'MISS', 'Cache-Control: no-cache'],
              ['Cache-Control=max-age%3D0', 'MISS', 'max-age=0'],
              ['X-Accel-Expires=0', 'MISS', 'X-Accel-Expires: 0'],
              ['Expires=Thu,%2001%20Jan%201970%2000:00:01%20GMT', 'MISS',
               'Expires in the past'],
              ['Set-Cookie=a%3D1', 'MISS', 'Set-Cookie'],
              ['Vary=*', 'MISS', 'Vary: *']) {
    my ($q, $want, $name) = @$case;
    get("/headers?$q");
    is hdr(get("/headers?$q"), 'x-cache'), $want, "$name: not stored";
}
# without proxy_cache_valid, the upstream's own word stores it
get('/nokey/headers?Cache-Control=max-age%3D60');
is hdr(get('/nokey/headers?Cache-Control=max-age%3D60'), 'x-cache'), 'HIT',
   'Cache-Control: max-age=60 without proxy_cache_valid: HIT';
get('/nokey/headers?X-Accel-Expires=60');
my $xa = get('/nokey/headers?X-Accel-Expires=60');
is hdr($xa, 'x-cache'), 'HIT', 'X-Accel-Expires: 60: HIT';
ok !defined hdr($xa, 'x-accel-expires'), 'X-Accel-Expires is not passed on';
get('/nokey/len/5');
is hdr(get('/nokey/len/5'), 'x-cache'), 'MISS',
   'no proxy_cache_valid and no header: not stored';
# proxy_ignore_headers Set-Cookie: stored, and the cookie kept
get('/cookie/headers?Set-Cookie=a%3D1');
my $ck = get('/cookie/headers?Set-Cookie=a%3D1');
is hdr($ck, 'x-cache'), 'HIT', 'proxy_ignore_headers Set-Cookie: HIT';
is hdr($ck, 'set-cookie'), 'a=1', '... with the stored Set-Cookie';

# Vary: a variant per value of the named request header
my $v = '/headers?Vary=Accept-Language&X-V=1';
is hdr(get($v, 'Accept-Language' => 'en'), 'x-cache'), 'MISS', 'Vary: en MISS';
is hdr(get($v, 'Accept-Language' => 'en'), 'x-cache'), 'HIT', 'Vary: en HIT';
is hdr(get($v, 'Accept-Language' => 'fr'), 'x-cache'), 'MISS',
   'Vary: fr is another variant (MISS)';
is hdr(get($v, 'Accept-Language' => 'fr'), 'x-cache'), 'HIT', 'Vary: fr HIT';

# proxy_cache_bypass: a fresh response, which replaces the stored one
is hdr(get('/bp/len/11'), 'x-cache'), 'MISS', 'bypass location: MISS';
is hdr(get('/bp/len/11'), 'x-cache'), 'HIT', 'bypass location: HIT';
is hdr(get('/bp/len/11', 'X-Bypass' => '0'), 'x-cache'), 'HIT',
   'proxy_cache_bypass "0": HIT';
is hdr(get('/bp/len/11', 'X-Bypass' => '1'), 'x-cache'), 'BYPASS',
   'proxy_cache_bypass set: BYPASS';
is upstream_count('/len/11'), 2, 'the bypass went upstream';
is hdr(get('/bp/len/11'), 'x-cache'), 'HIT', 'after a bypass: HIT';
# proxy_no_cache: the response is not stored
is hdr(get('/bp/len/12', 'X-Nostore' => 'yes'), 'x-cache'), 'MISS',
   'proxy_no_cache set: MISS';
is hdr(get('/bp/len/12'), 'x-cache'), 'MISS', '... and nothing was stored';
is hdr(get('/bp/len/12'), 'x-cache'), 'HIT', 'without it: stored';

# proxy_cache_methods POST: stored and served (the key says the method)
is hdr(get('/post/len/13', method => 'POST'), 'x-cache'), 'MISS', 'POST: MISS';
my $p2 = get('/post/len/13', method => 'POST');
is hdr($p2, 'x-cache'), 'HIT', 'proxy_cache_methods POST: HIT';
is length($p2->{body}), 13, '... with its body';
ok !defined hdr(get('/len/13', method => 'POST'), 'x-cache'),
   'POST without proxy_cache_methods: not looked up';

# proxy_cache_convert_head (on by default): a HEAD miss fetches a GET
my $hm = get('/len/14', method => 'HEAD');
is hdr($hm, 'x-cache'), 'MISS', 'HEAD miss: MISS';
is $hm->{body} // '', '', '... no body to the client';
is hdr($hm, 'content-length'), 14, '... the GET\'s length';
my ($hreq) = grep { $_->{uri} eq '/len/14' } $up->requests;
is $hreq->{method}, 'GET', 'the origin got a GET';
my $hg = get('/len/14');
is hdr($hg, 'x-cache'), 'HIT', 'then a GET: HIT';
is length($hg->{body}), 14, '... with the body';
# proxy_cache_convert_head off: the HEAD goes as it is, nothing stored
get('/nohead/len/15', method => 'HEAD');
my ($nreq) = grep { $_->{uri} eq '/len/15' } $up->requests;
is $nreq->{method}, 'HEAD', 'convert_head off: the origin got the HEAD';
is hdr(get('/nohead/len/15'), 'x-cache'), 'MISS', '... and nothing was stored';

# proxy_cache_min_uses 2: stored at the second request
is hdr(get('/twice/len/16'), 'x-cache'), 'MISS', 'min_uses 2: MISS';
is hdr(get('/twice/len/16'), 'x-cache'), 'MISS', 'min_uses 2: MISS again';
is hdr(get('/twice/len/16'), 'x-cache'), 'HIT', 'min_uses 2: then HIT';

# max_size: the least recently used files go
get("/small/len/20000?$_") for qw(a b c);
# the evicted file is unlinked on the ring, after the response
my @small;
Test::Ringx::wait_for(sub { @small = glob("${\$t->prefix}/small/*");
                            @small == 2 }, 10);
is scalar(@small), 2, 'max_size=50k: two files of 20 KB stay';
is hdr(get('/small/len/20000?c'), 'x-cache'), 'HIT', 'the newest: HIT';
is hdr(get('/small/len/20000?b'), 'x-cache'), 'HIT', 'the next: HIT';
is hdr(get('/small/len/20000?a'), 'x-cache'), 'MISS', 'the oldest went: MISS';
is hdr(get('/small/len/20000?c'), 'x-cache'), 'MISS',
   'storing it again evicted the least recently used';

# a 304 (an answer to a condition) is never stored, even with "any"
get('/flat/status/304');
is hdr(get('/flat/status/304'), 'x-cache'), 'MISS', '304: not stored';

# a hit answers the client's own conditions (as nginx's not_modified
# filter): If-None-Match against the stored ETag, If-Modified-Since (exact)
my $cond = '/headers?ETag=%22e1%22&Last-Modified=Tue,%2001%20Dec%202026%2010:00:00%20GMT';
get($cond);
my $c304 = get($cond, 'If-None-Match' => 'W/"e1"');
is $c304->{status}, 304, 'a hit with a matching If-None-Match: 304';
is hdr($c304, 'x-cache'), 'HIT', '... from the cache';
is $c304->{body} // '', '', '... no body';
is get($cond, 'If-None-Match' => '"other"')->{status}, 200,
   'another ETag: 200';
is get($cond, 'If-Modified-Since' => 'Tue, 01 Dec 2026 10:00:00 GMT')->{status},
   304, 'If-Modified-Since equal to the stored Last-Modified: 304';
is get($cond, 'If-Modified-Since' => 'Tue, 01 Dec 2026 11:00:00 GMT')->{status},
   200, 'If-Modified-Since another time: 200 (if_modified_since exact)';

# a hit answers a Range (one range) from the stored body
for my $len (30001, 100000) {          # read whole, and sent from the file
    my $full = get("/len/$len")->{body};
    my $r206 = get("/len/$len", Range => 'bytes=10-19');
    is $r206->{status}, 206, "$len: a Range on a hit: 206";
    is $r206->{body}, substr($full, 10, 10), "$len: ... the right bytes";
    is hdr($r206, 'content-range'), "bytes 10-19/$len", "$len: ... Content-Range";
    is hdr($r206, 'x-cache'), 'HIT', "$len: ... from the cache";
    my $tail = get("/len/$len", Range => 'bytes=-5');
    is $tail->{body}, substr($full, -5), "$len: a suffix range";
}
is get('/len/30001', Range => 'bytes=40000-')->{status}, 416,
   'an unsatisfiable range: 416';
# several ranges: multipart/byteranges, as static sends them
for my $len (30001, 100000) {
    my $full = get("/len/$len")->{body};
    my $m = get("/len/$len", Range => 'bytes=0-1,5-6,-3');
    is $m->{status}, 206, "$len: several ranges on a hit: 206";
    is hdr($m, 'x-cache'), 'HIT', "$len: ... from the cache";
    my ($b) = (hdr($m, 'content-type') // '')
              =~ m{^multipart/byteranges; boundary=(\S+)$};
    ok defined $b, "$len: ... multipart/byteranges";
    my @parts = map { [ /Content-Range: bytes (\d+)-(\d+)\/(\d+)\r\n\r\n(.*)\r\n\z/s ] }
                split /--\Q${\($b \/\/ 'none')}\E(?:--)?\r\n/, $m->{body} // '';
    @parts = grep { @$_ } @parts;
    is_deeply [ map { "$_->[0]-$_->[1]/$_->[2]" } @parts ],
              [ '0-1/' . $len, '5-6/' . $len, ($len - 3) . '-' . ($len - 1) . "/$len" ],
              "$len: ... the three parts' Content-Range";
    is_deeply [ map { $_->[3] } @parts ],
              [ substr($full, 0, 2), substr($full, 5, 2), substr($full, -3) ],
              "$len: ... the right bytes";
    is hdr($m, 'content-length'), length($m->{body}),
       "$len: ... its Content-Length";
}

# purge: the PURGE method (limit_except lets only 127.0.0.1 use it), and
# an endpoint (allow/deny)
sub raw_req {
    my ($req, %o) = @_;
    my $c = $t->raw($port, %o) or return { status => 0 };
    $c->send($req);
    return $c->read_response(timeout => 5) // { status => 0 };
}
is hdr(get('/len/20000'), 'x-cache'), 'HIT', 'before the purge: HIT';
is raw_req("PURGE /len/20000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
           local => '127.0.0.2')->{status}, 403, 'PURGE from a denied address: 403';
is hdr(get('/len/20000'), 'x-cache'), 'HIT', '... and the entry stays';
is get('/len/20000', method => 'PURGE')->{status}, 204, 'PURGE: 204';
is hdr(get('/len/20000'), 'x-cache'), 'MISS', 'after the purge: MISS';
is get('/len/777', method => 'PURGE')->{status}, 404, 'PURGE of no entry: 404';
is hdr(get('/len/20000'), 'x-cache'), 'HIT', 'stored again: HIT';
is get('/purge/len/20000')->{status}, 204, 'the purge endpoint: 204';
is raw_req("GET /purge/len/20000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
           local => '127.0.0.2')->{status}, 403, 'the endpoint denied: 403';
is hdr(get('/len/20000'), 'x-cache'), 'MISS', 'purged through the endpoint';
ok $t->log_contains(qr/cache entry "http127\.0\.0\.1:\d+\/len\/20000" purged/),
   'a purge is logged (info)';

# the default key holds \$proxy_host, known before the exchange: the same
# URI behind another proxy_pass host is another entry
is hdr(get('/len/22'), 'x-cache'), 'MISS', 'port 0: MISS';
my $other = $t->http($t->port(1), "GET /len/22 HTTP/1.1\r\nHost: x\r\n"
                     . "Connection: close\r\n\r\n");
like $other, qr/X-Cache: MISS/, 'another proxy_pass host: its own entry (MISS)';
# a method limit_except takes is proxied as its location is (the Host)
my $del = get('/echo', method => 'DELETE');
like $del->{body}, qr/header: Host: \Q$UP\E/,
     'limit_except inherits proxy_pass: the Host is the upstream\'s';

# no levels; proxy_cache off
get('/flat/len/7');
is hdr(get('/flat/len/7'), 'x-cache'), 'HIT', 'a cache without levels: HIT';
ok scalar(glob("${\$t->prefix}/flat/*")), 'its file is in the directory itself';
get('/off/len/8');
ok !defined hdr(get('/off/len/8'), 'x-cache'), 'proxy_cache off: no status';

# an unwritable cache directory: the response is whole, nothing cached
chown 0, 0, "${\$t->prefix}/ro";
chmod 0700, "${\$t->prefix}/ro";
$t->expect_log(qr/cannot create files in proxy_cache_path/);
my $ro = get('/ro/len/30000');
is $ro->{status}, 200, 'unwritable cache: 200';
is length($ro->{body}), 30000, 'unwritable cache: the whole body';
my $ro2 = get('/ro/len/30000');
is length($ro2->{body}), 30000, 'unwritable cache: again whole';
is hdr($ro2, 'x-cache'), 'MISS', 'unwritable cache: nothing was cached';
ok $t->log_contains(qr/cannot create files in proxy_cache_path/),
   'one line names the directory';

# the metrics: each cache's responses by status, entries, bytes
my $m = $t->http_get($port, '/metrics');
my ($hits) = $m =~ /^ringx_cache_responses_total\{zone="one",status="HIT"\} (\d+)$/m;
my ($miss) = $m =~ /^ringx_cache_responses_total\{zone="one",status="MISS"\} (\d+)$/m;
cmp_ok $hits // 0, '>=', 10, 'metrics: the HITs of zone "one" are counted';
cmp_ok $miss // 0, '>=', 10, 'metrics: its MISSes too';
like $m, qr/^ringx_cache_responses_total\{zone="one",status="BYPASS"\} [1-9]/m,
     'metrics: BYPASS';
my ($ent) = $m =~ /^ringx_cache_entries\{zone="small"\} (\d+)$/m;
is $ent, 2, 'metrics: the entries of a cache';
my ($bytes) = $m =~ /^ringx_cache_size_bytes\{zone="small"\} (\d+)$/m;
cmp_ok $bytes // 0, '>', 40000, 'metrics: the bytes of its files';
cmp_ok $bytes // 1e9, '<=', 51200, '... within max_size';

# the cache survives a restart: the master's loader rebuilds the index
$t->stop;
$up->reset;
# a broken file under an entry's name goes; a fresh temporary one stays
my $junk = "${\$t->prefix}/cache/0/00/" . ('0' x 32);
mkdir "${\$t->prefix}/cache/0";
mkdir "${\$t->prefix}/cache/0/00";
open(my $jf, '>', $junk) or die; print $jf "junk"; close $jf;
my $tmpf = "${\$t->prefix}/cache/0123456789";
open(my $tf, '>', $tmpf) or die; print $tf "being written"; close $tf;
$t->run;
ok !-e $junk, 'the loader removed a broken file';
ok -e $tmpf, '... and left a temporary file a worker may still write';
my $after = get('/len/20000');
is hdr($after, 'x-cache'), 'HIT', 'after a restart: HIT';
is $after->{body}, $a->{body}, 'after a restart: the same body';
is upstream_count('/len/20000'), 0, 'after a restart: no upstream request';
ok $t->log_contains(qr/entries loaded from/), 'the loader says what it found';
# and a reload keeps the index
$t->signal('HUP');
Test::Ringx::wait_for(sub { $t->log_contains(qr/reconfiguring|reload/i) }, 5);
sleep 0.5;
is hdr(get('/short/len/10'), 'x-cache') =~ /HIT|EXPIRED/ ? 1 : 0, 1,
   'after a reload the entries are still known';
$t->stop;

# -t: the background updates are accepted (t/proxy_cache_background.t)
for my $d ('proxy_cache_background_update on;',
           'fastcgi_cache_background_update on;') {
    my $t2 = Test::Ringx->new;
    $t2->write_config("events {} http { $d }");
    my ($rc, $out, $err) = $t2->ringx('-t');
    my ($name) = $d =~ /^(\S+)/;
    is $rc, 0, "$name: -t accepts it" or diag $err;
}
for my $case (['min_free=1g', qr/"min_free" parameter is not supported/],
              ['max_size=x', qr/invalid max_size value "max_size=x"/],
              ['levels=3', qr/invalid "levels" "levels=3"/],
              ['bogus=1', qr/invalid parameter "bogus=1"/]) {
    my $t2 = Test::Ringx->new;
    $t2->write_config("events {} http { proxy_cache_path %%PREFIX%%/c "
                      . "keys_zone=z:1m $case->[0]; }");
    my ($rc, $out, $err) = $t2->ringx('-t');
    like $err, $case->[1], "proxy_cache_path $case->[0]: refused";
}
{
    my $t2 = Test::Ringx->new;
    $t2->write_config("events {} http { fastcgi_cache_path %%PREFIX%%/c "
        . "keys_zone=z:1m; server { location / { fastcgi_pass 127.0.0.1:9; "
        . "fastcgi_cache z; } } }");
    my ($rc, $out, $err) = $t2->ringx('-t');
    like $err, qr/no "fastcgi_cache_key" for "fastcgi_cache"/,
         'fastcgi_cache without a key: refused as nginx';
    $t2->write_config("events {} http { server { location / { proxy_pass "
        . "http://127.0.0.1:9; proxy_cache nozone; } } }");
    ($rc, $out, $err) = $t2->ringx('-t');
    like $err, qr/zero size shared memory zone "nozone"/,
         'proxy_cache of an undeclared zone: refused';
    $t2->write_config("events {} http { fastcgi_cache_path %%PREFIX%%/c "
        . "keys_zone=z:1m; server { location / { fastcgi_pass 127.0.0.1:9; "
        . "fastcgi_cache z; fastcgi_cache_key \$uri; "
        . "fastcgi_cache_convert_head on; } } }");
    ($rc, $out, $err) = $t2->ringx('-t');
    like $err, qr/"fastcgi_cache_convert_head on" is not supported/,
         'fastcgi_cache_convert_head on: refused (the application sees HEAD)';
}

$up->stop;
done_testing;
