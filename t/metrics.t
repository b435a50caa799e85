#!/usr/bin/perl
# metrics.t: the `metrics` location with two workers: figures summed over
# both (requests by server, location and status class, accepts per
# worker), a failing upstream's failures by kind (connect refused, reset,
# timeout, 5xx), limit_req rejections, reloads and respawns; the text
# passes `promtool check metrics`, OpenMetrics when asked; JSON for
# scripts. Then one worker at its connection table's limit: zero headroom
# and the alarm line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(sleep);

my $u = Test::Upstream->new;
$u->start;
my $UP = $u->port;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    limit_req_zone \$binary_remote_addr zone=one:1m rate=1r/m;
    upstream good { server 127.0.0.1:$UP; }
    upstream closed { server 127.0.0.1:1; }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        server_name metrics.test;
        location = /metrics { metrics; }
        location = /json { metrics json; }
        location /ok { metrics_location on; return 200 "ok\\n"; }
        location = /limited { limit_req zone=one; root html; }
        location /up/ {
            proxy_pass http://good/;
            proxy_read_timeout 300ms;
            proxy_next_upstream off;
        }
        location /closed/ { proxy_pass http://closed/; }
    }
}
EOF
$t->write_file('html/limited', "ok\n");
$t->run;
my $P = $t->port(0);

sub get {
    my ($path, $accept) = @_;
    my $raw = $t->http($P, "GET $path HTTP/1.0\r\nHost: metrics.test\r\n"
        . ($accept ? "Accept: $accept\r\n" : '') . "Connection: close\r\n\r\n") // '';
    my ($head, $body) = split /\r\n\r\n/, $raw, 2;
    my ($status) = ($head // '') =~ m{^HTTP/1\.\d (\d+)};
    return ($status // 0, $head // '', $body // '');
}

# name{labels} value, by "name{labels}" as written
sub samples {
    my ($text) = @_;
    my %s;
    for (split /\n/, $text) {
        next if /^#/ || !/\S/;
        my ($k, $v) = /^(\S+(?:\{[^}]*\})?) (\S+)$/ or next;
        $s{$k} = $v;
    }
    return \%s;
}

sub sum_of {
    my ($s, $re) = @_;
    my $n = 0;
    $n += $s->{$_} for grep { /$re/ } keys %$s;
    return $n;
}

# --- traffic -----------------------------------------------------------------

my %st;
for (1 .. 40) { my ($c) = get('/ok'); $st{$c}++ }
is $st{200}, 40, 'forty requests to /ok';
for (1 .. 3) { get('/closed/x') }
get('/up/echo') for 1 .. 3;
get('/up/status/503') for 1 .. 2;
get('/up/reset');
get('/up/stall-header');
my @lim = map { (get('/limited'))[0] } 1 .. 3;
is_deeply [sort @lim], [200, 503, 503], 'limit_req: one passes, two are refused';

# --- the text ----------------------------------------------------------------

my ($code, $head, $body) = get('/metrics');
is $code, 200, 'metrics: 200';
like $head, qr{\r\nContent-Type: text/plain; version=0\.0\.4}i, 'Prometheus text format 0.0.4';
my $s = samples($body);

is $s->{'ringx_http_location_requests_total{location="/ok",code="2xx"}'}, 40,
    'the location counts its 40 requests, summed over both workers';
cmp_ok $s->{'ringx_http_server_requests_total{server="metrics.test",code="2xx"}'}, '>=', 44,
    'the server counts them too, with the others that succeeded';
is $s->{'ringx_http_server_requests_total{server="metrics.test",code="5xx"}'}, 9,
    'and the 5xx answers: 3 refused, 2 relayed, 1 reset, 1 timeout, 2 limited';
is $s->{'ringx_http_location_request_duration_seconds_count{location="/ok"}'}, 40,
    'a duration histogram per location that asks';
cmp_ok $s->{'ringx_connections_accepted_total{worker="0"}'}, '>', 0, 'worker 0 accepted connections';
cmp_ok $s->{'ringx_connections_accepted_total{worker="1"}'}, '>', 0, 'so did worker 1 (reuseport)';
is $s->{'ringx_worker_connections_limit{worker="1"}'}, 64, 'worker_connections per worker';
cmp_ok $s->{'ringx_worker_fds_used{worker="0"}'}, '>', 3, 'fds in use per worker';
cmp_ok $s->{'ringx_worker_fds_limit{worker="0"}'}, '>=', $s->{'ringx_worker_fds_used{worker="0"}'},
    'against the limit';

my $good = 'upstream="good",peer="127.0.0.1:' . $UP . '"';
is $s->{"ringx_upstream_peer_requests_total{$good}"}, 7, 'seven tries at the good peer';
is $s->{"ringx_upstream_peer_failures_total{$good,kind=\"5xx\"}"}, 2, 'two 5xx';
is $s->{"ringx_upstream_peer_failures_total{$good,kind=\"error\"}"}, 1, 'one reset';
is $s->{"ringx_upstream_peer_failures_total{$good,kind=\"timeout\"}"}, 1, 'one timeout';
is $s->{"ringx_upstream_peer_failures_total{$good,kind=\"connect\"}"}, 0, 'no refused connect';
is $s->{"ringx_upstream_peer_response_seconds_count{$good}"}, 7, 'a response time per try';
cmp_ok $s->{"ringx_upstream_peer_response_seconds_sum{$good}"}, '>=', 0.29,
    'the timeout is in the sum';
my $closed = 'upstream="closed",peer="127.0.0.1:1"';
is $s->{"ringx_upstream_peer_failures_total{$closed,kind=\"connect\"}"}, 3,
    'a closed port: three connect failures';
is $s->{'ringx_limit_req_rejected_total'}, 2, 'limit_req rejections';
is $s->{'ringx_reloads_total'}, 0, 'no reload yet';

SKIP: {
    my $promtool = `command -v promtool 2>/dev/null`;
    chomp $promtool;
    skip 'no promtool (Debian: apt-get install prometheus; auto/deps test installs it)', 1
        unless $promtool;
    my $file = $t->prefix . '/metrics.txt';
    open my $fh, '>', $file or die $!;
    print $fh $body;
    close $fh;
    my $out = `$promtool check metrics < $file 2>&1`;
    is $?, 0, 'promtool check metrics: no problems' or diag $out;
}

# every family is in docs/metrics.md, and the dashboard names only real ones
{
    my %fam = map { $_ => 1 } $body =~ /^# TYPE (\S+?)(?:_total)? \S+$/mg;
    my $doc = $t->read_file("$Test::Ringx::ROOT/docs/metrics.md") // '';
    my @undoc = grep { my $f = $_; $doc !~ /`\Q$f\E(?:_total)?`/ } sort keys %fam;
    is "@undoc", '', 'docs/metrics.md names every metric family';
    my $dash = $t->read_file("$Test::Ringx::ROOT/contrib/grafana-ringx.json") // '';
    my @unknown = grep { my $n = $_; !grep { $n =~ /^\Q$_\E(?:_total|_bucket)?$/ } keys %fam }
        $dash =~ /\b(ringx_[a-z_]+)/g;
    is "@unknown", '', 'contrib/grafana-ringx.json uses only metrics that exist';
}

# --- OpenMetrics, JSON ---------------------------------------------------------

($code, $head, $body) = get('/metrics', 'application/openmetrics-text; version=1.0.0,text/plain;q=0.5');
like $head, qr{\r\nContent-Type: application/openmetrics-text; version=1\.0\.0}i,
    'OpenMetrics when the scraper asks';
like $body, qr/\n# EOF\n\z/, 'ends with # EOF';
like $body, qr/^# TYPE ringx_connections_accepted counter$/m, 'a counter family without _total';
like $body, qr/^ringx_connections_accepted_total\{worker="0"\} \d+$/m, 'its samples with it';

($code, $head, $body) = get('/json');
like $head, qr{\r\nContent-Type: application/json}i, 'JSON';
like $body, qr/"workers":\[\{"worker":0,"pid":\d+/, 'per worker';
like $body, qr/"name":"127\.0\.0\.1:1".*?"failures":\{"connect":3,/, 'per peer';

# --- reloads and respawns --------------------------------------------------------

my @w = $t->worker_pids;
$t->expect_log(qr/worker process \d+ exited on signal 9/);
kill 'KILL', $w[0];
$t->wait_workers(2, not => [$w[0]]);
my @gen1 = $t->worker_pids;
$t->signal('HUP');
# the old workers leave once their connections are done: then every
# scrape is the new configuration's
$t->wait_workers(2, not => \@gen1);
ok Test::Ringx::wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @gen1 }),
    'the old workers left';
$s = samples((get('/metrics'))[2]);
is $s->{'ringx_reloads_total'}, 1, 'a reload is counted';
is $s->{'ringx_worker_respawns_total'}, 1, 'a respawn is counted';
is $s->{'ringx_worker_crashes_total'}, 1, 'and the crash';
is $s->{'ringx_http_location_requests_total{location="/ok",code="2xx"}'}, 0,
    'series of the configuration start again at a reload';
cmp_ok $s->{'ringx_connections_accepted_total{worker="0"}'}
    + $s->{'ringx_connections_accepted_total{worker="1"}'}, '>=', 50,
    'the process-wide ones do not';
$t->stop;
$u->stop;

# --- a worker at its connection table's limit ----------------------------------------

my $t2 = Test::Ringx->new;
$t2->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 12; }
http {
    access_log off;
    metrics_alarm_interval 1s;
    client_header_timeout 30s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location = /metrics { metrics; }
        location / { return 200 "ok\n"; }
    }
}
EOF
$t2->run;
my @held;
for (1 .. 11) {
    my $c = $t2->raw($t2->port(0)) or last;
    $c->send("GET / HTTP/1.1\r\nHost: x\r\n");     # a request under way
    push @held, $c;
}
sleep 0.3;
my $raw = $t2->http($t2->port(0), "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n") // '';
my $s2 = samples((split /\r\n\r\n/, $raw, 2)[1] // '');
is $s2->{'ringx_worker_connections_used{worker="0"}'}, 12, 'the table is full (eleven held, the scrape)';
is $s2->{'ringx_worker_connections_headroom{worker="0"}'}, 0, 'zero headroom';
ok Test::Ringx::wait_for(sub {
    $t2->log_contains(qr/\[warn\] .*worker 0: its connection table is (?:9\d|100)% full \(1[12] of 12 worker_connections in use\)/)
}, 5), 'the alarm names the worker and the figures';
$_->close for @held;
$t2->stop;

done_testing;
