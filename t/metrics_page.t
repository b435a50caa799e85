#!/usr/bin/perl
# metrics_page.t: the status page of `metrics html` in headless Chromium:
# it loads with no external asset, its script reads ?json and draws the
# figures of the running server (requests per worker, a peer's failures),
# and a screenshot is kept as a test artifact
# (objs/test-artifacts/metrics_page.png, or $RINGX_ARTIFACTS/).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use Test::More;
use Test::Ringx;

my $chromium = '';
for my $c (qw(chromium chromium-browser google-chrome)) {
    $chromium = `command -v $c 2>/dev/null`;
    chomp $chromium;
    last if $chromium;
}
plan skip_all => 'no chromium (Debian: apt-get install chromium; auto/deps test installs it)'
    unless $chromium;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    upstream closed { server 127.0.0.1:1; }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        server_name page.test;
        location = /status { metrics html; }
        location /ok { return 200 "ok\n"; }
        location /closed/ { proxy_pass http://closed/; }
    }
}
EOF
$t->run;
my $P = $t->port(0);

$t->http_get($P, '/ok') for 1 .. 30;
$t->http_get($P, '/closed/x') for 1 .. 2;

my $raw = $t->http_get($P, '/status') // '';
like $raw, qr{\r\nContent-Type: text/html}i, 'the page is HTML';
unlike $raw, qr{(?:src|href)="?(?:https?:)?//}i, 'and loads nothing from elsewhere';
my ($json) = ($t->http_get($P, '/status?json') // '') =~ /\r\n\r\n(.*)\z/s;
like $json, qr/^\{"time":\d+,"workers":\[/, '?json: the figures the page draws';
my %req = $json =~ /"worker":(\d+),"pid":\d+,"active":\d+,"reading":\d+,"writing":\d+,"accepted":\d+,"requests":(\d+)/g;

my $home = $t->prefix . '/chromium';
make_path($home);
my @cmd = ($chromium, '--headless', '--no-sandbox', '--disable-gpu',
    '--disable-dev-shm-usage', '--no-first-run', "--user-data-dir=$home",
    '--virtual-time-budget=4000');
my $url = "http://127.0.0.1:$P/status";
local $ENV{HOME} = $home;
my $dom = `@cmd --dump-dom $url 2>/dev/null`;
like $dom, qr{<td id="w0-requests">(\d+)</td>}, 'the page drew worker 0';
my %shown = $dom =~ m{<td id="w(\d+)-requests">(\d+)</td>}g;
# the page's own fetch of ?json is one more request of a worker, and so
# was our own; at least the figures seen before
cmp_ok(($shown{0} // 0) + ($shown{1} // 0), '>=', ($req{0} // 0) + ($req{1} // 0),
    'with the requests the server counted (both workers)');
cmp_ok(($shown{0} // 0) + ($shown{1} // 0), '>=', 32, 'thirty-two requests at least');
like $dom, qr{<td class="n">127\.0\.0\.1:1</td>(?:<td[^>]*>[^<]*</td>){4}<td[^>]*>2</td><td class="bad">2</td>},
    'the closed peer: two tries, two connect failures, marked';
like $dom, qr{<td id="w\d+-headroom"[^>]*>6\d</td>}, 'the table headroom';

my $dir = $ENV{RINGX_ARTIFACTS} // "$Test::Ringx::ROOT/objs/test-artifacts";
make_path($dir);
my $png = "$dir/metrics_page.png";
unlink $png;
system("@cmd --window-size=1200,900 --screenshot=$png $url >/dev/null 2>&1");
ok -s $png && -s $png > 5000, "a screenshot: $png";
open my $fh, '<:raw', $png;
my $magic = '';
read $fh, $magic, 8 if $fh;
is $magic, "\x89PNG\r\n\x1a\n", 'a PNG';

$t->stop;
done_testing;
