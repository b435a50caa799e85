#!/usr/bin/perl
# proxy_cache_h2.t: proxy_cache over HTTP/2 (h2c, curl and h2load as the
# clients): MISS then HIT with the same bytes, a Range on a hit, and 50
# concurrent streams of one connection for one slow key coalesced into one
# origin request, every stream getting the whole body.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');
plan(skip_all => 'curl without HTTP/2') if `curl --version` !~ /\bHTTP2\b/;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    proxy_cache_path %%PREFIX%%/cache levels=1:2 keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 1m;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub curl { my $cmd = shift; return scalar `curl -s --max-time 20 --http2-prior-knowledge $cmd` }
sub count { my ($uri) = @_; scalar grep { $_->{uri} eq $uri } $up->requests }

my $h1 = curl("-D - http://127.0.0.1:$port/len/40000");
like $h1, qr{^HTTP/2 200}m, 'h2: 200';
like $h1, qr/^x-cache: MISS\r?$/m, 'h2: MISS';
my $h2 = curl("-D - http://127.0.0.1:$port/len/40000");
like $h2, qr/^x-cache: HIT\r?$/m, 'h2: then HIT';
my ($b1) = $h1 =~ /\r\n\r\n(.*)\z/s;
my ($b2) = $h2 =~ /\r\n\r\n(.*)\z/s;
is length($b2), 40000, 'h2 hit: the whole body';
ok $b1 eq $b2, 'h2 hit: the same bytes';
is curl("-r 100-199 http://127.0.0.1:$port/len/40000"), substr($b1, 100, 100),
   'h2: a Range of a hit';
is count('/len/40000'), 1, 'one origin request';

# 50 concurrent streams on one connection, one slow key
SKIP: {
    skip 'no h2load', 3 if system('h2load --version >/dev/null 2>&1');
    my $slow = '/slow/20000?pieces=4&ms=200';
    my $out = `h2load -n 50 -c 1 -m 50 'http://127.0.0.1:$port$slow' 2>&1`;
    like $out, qr/requests: 50 total, 50 started, 50 done, 50 succeeded/,
         'h2load: 50 streams succeeded' or diag $out;
    like $out, qr/status codes: 50 2xx/, '... all 2xx';
    is count($slow), 1, '50 concurrent streams: one origin request';
}

$t->stop;
$up->stop;
done_testing;
