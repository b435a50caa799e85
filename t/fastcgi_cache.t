#!/usr/bin/perl
# fastcgi_cache.t: micro-caching a PHP page with a real php-fpm pool: 100
# concurrent clients, one request reaches PHP (each run of the script
# writes a line to a file and prints a unique id, so both are counted);
# then a HIT without PHP, EXPIRED after fastcgi_cache_valid, a response
# with Set-Cookie not cached, and the cache still there after a restart.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Time::HiRes qw(sleep);

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";
Test::PhpFpm->start($t, [
    { name => 'pool', sock => $SOCK,
      pm => "pm = static\npm.max_children = 8" },
]);

# each run: a line in html/runs, a unique id in the body
$t->write_file_raw('html/page.php', <<'EOF');
<?php
file_put_contents(__DIR__ . '/runs', "run\n", FILE_APPEND | LOCK_EX);
usleep((int) ($_GET['ms'] ?? 0) * 1000);
if (isset($_GET['cookie'])) { setcookie('s', 'v'); }
header('Content-Type: text/plain');
echo 'id=', uniqid('', true), "\n", str_repeat('x', 16384), "\n";
EOF

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 512; }
http {
    access_log off;
    fastcgi_cache_path %%PREFIX%%/fcache levels=1 keys_zone=php:1m;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        root html;
        add_header X-Cache \$upstream_cache_status always;
        location /p {
            fastcgi_pass unix:$SOCK;
            fastcgi_param SCRIPT_FILENAME \$document_root/page.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_cache php;
            fastcgi_cache_key \$request_uri;
            fastcgi_cache_valid 200 2s;
        }
        location /k {
            fastcgi_pass unix:$SOCK;
            fastcgi_param SCRIPT_FILENAME \$document_root/page.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_cache php;
            fastcgi_cache_key \$request_uri;
            fastcgi_cache_valid 200 1h;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub runs { my $s = $t->read_file('html/runs') // ''; scalar(() = $s =~ /run/g) }
sub hdr { my ($r, $n) = @_; $r && $r->{headers}{lc $n} }
sub get {
    my $raw = $t->http($port, "GET $_[0] HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my ($r) = Test::Ringx::parse_responses($raw // '');
    return $r;
}

# 100 clients at once, PHP takes 500 ms: one run
my @c = grep { defined } map { $t->raw($port) } 1 .. 100;
is scalar @c, 100, '100 clients connected';
$_->send("GET /p?ms=500 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    for @c;
my @r = map { $_->read_response(timeout => 30) } @c;
is scalar(grep { $_ && $_->{status} == 200 } @r), 100, 'all 100 got 200';
my %ids = map { (($_->{body} // '') =~ /id=(\S+)/)[0] // 'none' => 1 } @r;
is scalar(keys %ids), 1, 'all 100 got the same page';
is runs(), 1, 'PHP ran once for 100 concurrent clients';
$_->close for @c;

# a hit without PHP, then EXPIRED after fastcgi_cache_valid
my $h = get('/p?ms=500');
is hdr($h, 'x-cache'), 'HIT', 'then: HIT';
is runs(), 1, 'the hit did not run PHP';
sleep 2.3;
my $e = get('/p?ms=500');
is hdr($e, 'x-cache'), 'EXPIRED', 'after fastcgi_cache_valid: EXPIRED';
is runs(), 2, 'the refresh ran PHP once more';
isnt((($e->{body} =~ /id=(\S+)/)[0]), (keys %ids)[0], 'a new page');

# Set-Cookie: not cached
get('/p?cookie=1');
my $k = get('/p?cookie=1');
is hdr($k, 'x-cache'), 'MISS', 'a page with Set-Cookie is not cached';
is runs(), 4, 'both ran PHP';

# the cache survives a restart of ringx
get('/k?keep=1');
$t->stop;
$t->run;
my $after = get('/k?keep=1');
is hdr($after, 'x-cache'), 'HIT', 'after a restart: HIT';
is runs(), 5, 'after a restart: PHP did not run';

$t->stop;
done_testing;
