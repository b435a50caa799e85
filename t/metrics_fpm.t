#!/usr/bin/perl
# metrics_fpm.t: a saturated real php-fpm pool as the metrics show it,
# with two workers: the pool's learned size, the queue's depth while
# requests wait and their waits afterwards; a small queue's overflows and
# timeouts; and the saturation alarms in the error log (queue refusing,
# wait p95 above the threshold, a pool at its size).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Time::HiRes qw(time sleep);

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";
my $SOCK2 = "$PREFIX/php2.sock";
Test::PhpFpm->start($t, [
    { name => 'pool', sock => $SOCK, pm => "pm = static\npm.max_children = 2" },
    { name => 'pool2', sock => $SOCK2, pm => "pm = static\npm.max_children = 2" },
]);

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    metrics_alarm_interval 1s;
    metrics_alarm_queue_wait 200ms;
    metrics_alarm_pool_full 500ms;
    upstream php {
        server unix:$SOCK;
        keepalive 4;
    }
    upstream small {
        server unix:$SOCK2 max_conns=2;
        queue 3 timeout=500ms;
    }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        root html;
        fastcgi_keep_conn on;
        location = /metrics { metrics; }
        location /q/ {
            fastcgi_pass php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
        }
        location /small/ {
            fastcgi_pass small;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub scrape {
    my $raw = $t->http($P, "GET /metrics HTTP/1.0\r\nHost: m\r\n\r\n") // '';
    my %s;
    for (split /\n/, (split /\r\n\r\n/, $raw, 2)[1] // '') {
        next if /^#/;
        $s{$1} = $2 if /^(\S+(?:\{[^}]*\})?) (\S+)$/;
    }
    return \%s;
}

# Starts n requests; returns their connections.
sub start {
    my ($n, $uri) = @_;
    my @c = map { $t->raw($P) } 1 .. $n;
    $_->send("GET $uri HTTP/1.1\r\nHost: q\r\nConnection: close\r\n\r\n") for @c;
    return @c;
}

# --- a pool learned, saturated -----------------------------------------------------

my $Q = 'upstream="php"';
my $PEER = "upstream=\"php\",peer=\"unix:$SOCK\"";
my $s = scrape();
is $s->{"ringx_upstream_queue_depth{$Q}"}, 0, 'nothing waits at first';
# the first burst teaches each worker the pool's size (until then the
# connections beyond it wait in the socket's backlog, where no queue sees
# them); the second one queues in ringx
# (a burst teaches a worker only when one of its requests waited unread
# past the threshold: on a loaded machine that may take another burst).
# Both workers are taught before the queue is measured: the connections a
# worker that has not learned gets wait in the backlog, not in its queue
# (under ASan, one worker taught of two left a depth of 3 of the 4 asked)
Test::PhpFpm::reset_counters($t);
my ($learned, @c) = (0);
for my $burst (1 .. 8) {
    @c = start(8, '/q/?ms=200');
    $_->read_response(timeout => 30) for @c;
    $s = scrape();
    my @per = map { $s->{"ringx_upstream_peer_learned_connections{$PEER,worker=\"$_\"}"} // 0 }
              0, 1;
    $learned = $per[0] + $per[1];
    note "burst $burst: learned @per";
    last if $per[0] && $per[1];
}
cmp_ok $learned, '>=', 1, 'the learned pool size is shown (per worker)';
cmp_ok $learned, '<=', 4, '... and it is the pool, two children per worker at most';
my $tries = $s->{"ringx_upstream_peer_requests_total{$PEER}"};

@c = start(12, '/q/?ms=400');
my ($depth, $active) = (0, 0);
my $end = time + 4;
while (time < $end) {
    $s = scrape();
    $depth = $s->{"ringx_upstream_queue_depth{$Q}"} if $s->{"ringx_upstream_queue_depth{$Q}"} > $depth;
    $active = $s->{"ringx_upstream_peer_active_connections{$PEER}"}
        if $s->{"ringx_upstream_peer_active_connections{$PEER}"} > $active;
    last if $depth >= 4;
    sleep 0.1;
}
cmp_ok $depth, '>=', 4, 'requests wait in the queue of the saturated pool: depth shown'
    or diag "depth $depth";
cmp_ok $active, '>=', 1, 'and the peer has connections busy';
my @r = map { $_->read_response(timeout => 30) } @c;
is scalar(grep { $_ && $_->{status} == 200 } @r), 12, 'all twelve served';
$s = scrape();
my $waited = $s->{"ringx_upstream_queue_wait_seconds_count{$Q}"};
cmp_ok $waited, '>=', 4, 'the waits are counted';
cmp_ok $s->{"ringx_upstream_queue_wait_seconds_sum{$Q}"} / $waited, '>=', 0.2,
    'and they were long';
cmp_ok $s->{"ringx_upstream_queue_wait_seconds_bucket{$Q,le=\"0.25\"}"}, '<', $waited,
    'some beyond 250 ms in the histogram';
is $s->{"ringx_upstream_peer_requests_total{$PEER}"} - $tries, 12, 'twelve tries more';
# the depth is a gauge each worker publishes once a second
ok Test::Ringx::wait_for(sub { (scrape()->{"ringx_upstream_queue_depth{$Q}"} // -1) == 0 }, 3),
    'nobody waits now (by the next tick)';
ok Test::Ringx::wait_for(sub {
    $t->log_contains(qr/\[warn\] .*upstream "php": requests waited in its queue up to \d+ ms \(p95\), above metrics_alarm_queue_wait 200 ms/)
}, 3), 'the wait p95 alarm names the upstream and the figures';
ok $t->log_contains(qr/\[warn\] .*upstream "php" server unix:\Q$SOCK\E has been at its learned size of [12] connections for \d+ s/),
    'the pool at its learned size for longer than metrics_alarm_pool_full';

# --- a small queue refusing --------------------------------------------------------

@r = map { $_->read_response(timeout => 30) } start(10, '/small/?ms=300');
my $refused = grep { $_ && $_->{status} == 503 } @r;
cmp_ok $refused, '>=', 3, 'the small queue refuses some';
$Q = 'upstream="small"';
$s = scrape();
is $s->{"ringx_upstream_queue_overflows_total{$Q}"} + $s->{"ringx_upstream_queue_timeouts_total{$Q}"},
    $refused, 'each 503 is an overflow or a timeout';
is $s->{"ringx_upstream_queue_limit{$Q}"}, 3, 'the queue size';
is $s->{"ringx_upstream_peer_max_connections{$Q,peer=\"unix:$SOCK2\"}"}, 2, 'max_conns';
ok Test::Ringx::wait_for(sub {
    $t->log_contains(qr/\[warn\] .*upstream "small": its queue refused \d+ requests \(full\) and timed out \d+ within \d+ s, \d+ waiting of 3: the pool serves fewer requests than arrive/)
}, 3), 'the refusing queue is an alarm';

$t->stop;
done_testing;
