#!/usr/bin/perl
# upstream_limit_rate.t: proxy_limit_rate, fastcgi_limit_rate and
# scgi_limit_rate (uwsgi_limit_rate: t/uwsgi.t): the rate at which a
# response is read from the upstream, with buffering on (nginx's rule: a
# second's worth at once, then the rate), a value with variables (nginx
# 1.27), none with buffering off. 4 MB at 1 MB/s take about 3 s; what the
# kernel holds for the connection when reading pauses (its receive
# buffer, the worker's provided buffers) still comes at once, so the
# floor asserted is 1 s. Unlimited, the same body takes milliseconds; at
# 100k it would take 40 s: "under 10 s" tells them apart on a loaded
# machine too. Every byte is checked each time.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha1_hex);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::Scgi;
use Test::Upstream;
use Time::HiRes qw(time);

Test::PhpFpm::binary();            # skips, saying why, without php-fpm

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;
my $sc = Test::Scgi->new->start;
my $SC = '127.0.0.1:' . $sc->port;

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";
my $MB4 = 4 * 1024 * 1024;

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /p/ { proxy_limit_rate 1m; proxy_pass http://$UP/; }
        location /pv/ { proxy_limit_rate \$arg_r; proxy_pass http://$UP/; }
        location /poff/ {
            proxy_buffering off;
            proxy_limit_rate 100k;
            proxy_pass http://$UP/;
        }
        location = /f.php {
            fastcgi_limit_rate 1m;
            fastcgi_param SCRIPT_FILENAME %%PREFIX%%/html/big.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_pass unix:$SOCK;
        }
        location = /fast.php {
            fastcgi_param SCRIPT_FILENAME %%PREFIX%%/html/big.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_pass unix:$SOCK;
        }
        location /s/ { scgi_limit_rate 1m; scgi_param REQUEST_URI \$request_uri; scgi_pass $SC; }
    }
}
EOF
$t->write_file_raw('html/big.php', "<?php echo str_repeat('0123456789abcdef', $MB4 / 16);\n");
Test::PhpFpm->start($t, [ { name => 'pool', sock => $SOCK,
    pm => "pm = static\npm.max_children = 2\n" } ]);
$t->run;
my $P = $t->port(0);

sub timed_get {
    my ($uri) = @_;
    my $start = time;
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 60);
    $c->close;
    return ($r, time - $start);
}

my $PAT = Test::Upstream::pattern($MB4, 0);

my ($r, $s) = timed_get("/p/len/$MB4");
ok($r && $r->{body} eq $PAT, 'proxy_limit_rate 1m: every byte');
cmp_ok($s, '>=', 1.0, 'proxy_limit_rate 1m: 4 MB take their time');
($r, $s) = timed_get("/pv/len/$MB4?r=1m");
ok($r && $r->{body} eq $PAT, 'proxy_limit_rate $arg_r: every byte');
cmp_ok($s, '>=', 1.0, 'proxy_limit_rate $arg_r (1m): limited');
($r, $s) = timed_get("/pv/len/$MB4");
ok($r && $r->{body} eq $PAT, 'proxy_limit_rate $arg_r empty: every byte');
cmp_ok($s, '<', 10, 'proxy_limit_rate $arg_r empty: no limit');
($r, $s) = timed_get("/poff/len/$MB4");
ok($r && $r->{body} eq $PAT, 'proxy_buffering off: every byte');
cmp_ok($s, '<', 10, 'proxy_buffering off: proxy_limit_rate does not apply, as nginx');

my $FPHP = '0123456789abcdef' x ($MB4 / 16);
($r, $s) = timed_get('/f.php');
ok($r && $r->{body} eq $FPHP, 'fastcgi_limit_rate 1m: every byte') or diag($r ? substr($r->{raw}, 0, 300) : 'none');
cmp_ok($s, '>=', 1.0, 'fastcgi_limit_rate 1m: 4 MB take their time');
($r, $s) = timed_get('/fast.php');
cmp_ok($s, '<', 10, 'without fastcgi_limit_rate: no limit');

my $want = '';
for (my ($n, $i) = ($MB4, 0); $n > 0; $n -= 4096, $i++) {
    $want .= substr(sprintf('%08d', $i) x 512, 0, $n < 4096 ? $n : 4096);
}
($r, $s) = timed_get("/s/stream/$MB4");
ok($r && $r->{body} eq $want, 'scgi_limit_rate 1m: every byte');
cmp_ok($s, '>=', 1.0, 'scgi_limit_rate 1m: 4 MB take their time');

$t->stop;
$sc->stop;
$up->stop;
done_testing;
