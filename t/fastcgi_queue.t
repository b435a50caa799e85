#!/usr/bin/perl
# fastcgi_queue.t: pool-aware dispatch in front of a real php-fpm pool of 2
# children, with 2 ringx workers: max_conns holds across workers, requests
# beyond it wait in ringx's queue (FIFO, bounded in size and time, 503 with
# a log line past either), $upstream_queue_time reaches PHP before the
# request is sent, and idle pooled connections in one worker give way when
# the other worker has requests waiting (no child pinned by an idle
# connection: no multi-second stall), and while both workers have requests
# waiting each holds its share of max_conns.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Select;
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::Load;
use Time::HiRes qw(time sleep);

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";
my $SOCK2 = "$PREFIX/php2.sock";     # a pool of its own for the small queue
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
    log_format q '\$uri \$status q=\$upstream_queue_time u=\$upstream_response_time t=\$msec';
    access_log logs/access.log q;
    upstream php {
        server unix:$SOCK max_conns=2;
        keepalive 4;
        queue 64 timeout=20s;
    }
    upstream small {
        server unix:$SOCK2 max_conns=2;
        queue 3 timeout=500ms;
    }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        root html;
        location /q/ {
            fastcgi_pass php;
            fastcgi_keep_conn on;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param QUEUE_TIME \$upstream_queue_time;
            fastcgi_param HTTP_X_REQUEST_START "t=\$request_start_us";
        }
        location /small/ {
            fastcgi_pass small;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
        }
        location = /pid { return 200 "\$pid"; }
        location /hello/ {
            fastcgi_pass php;
            fastcgi_keep_conn on;
            fastcgi_param SCRIPT_FILENAME \$document_root/hello.php;
            fastcgi_param REQUEST_METHOD \$request_method;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub burst { Test::PhpFpm::burst($t, $P, @_) }
sub reset_counters { Test::PhpFpm::reset_counters($t) }

# --- the queue -------------------------------------------------------------

reset_counters();
my $t0 = time;
my @r = burst(10, '/q/?ms=300');
my $took = time - $t0;
is scalar(grep { $_ && $_->{status} == 200 } @r), 10, 'ten requests, two children: all served';
is $t->read_file('html/max'), '2', 'php-fpm never ran more than max_conns=2 at once';
cmp_ok $took, '>=', 1.4, 'five rounds of 300 ms: they really waited';
my @q = map { /queue=(\d+\.\d+)/ ? $1 : -1 } map { $_ ? $_->{body} : '' } @r;
is scalar(grep { $_ < 0 } @q), 0, '$upstream_queue_time reached PHP (fastcgi_param)';
my @waited = sort { $a <=> $b } @q;
cmp_ok $waited[0], '<', 0.1, 'the first ones did not wait';
cmp_ok $waited[-1], '>=', 1.0, 'the last one waited about four rounds';
like $r[0]{body}, qr/start=t=\d{16}\n/, '$request_start_us: microseconds since the epoch';
# The access log line is written once the response is sent, which may be a
# moment after the client has read it: wait for the tenth line.
my @logged;
$t->wait_for(sub {
    @logged = $t->read_file('logs/access.log') =~ m{^/q/ 200 q=(\d+\.\d{3}) u=(\d+\.\d{3}) }mg;
    @logged >= 20 }, 3);
is scalar(@logged), 20, '$upstream_queue_time in the access log';
# four rounds of what PHP took (a loaded machine runs the 300 ms script
# slower): the last one waited for the others' service, two at a time
my @rows = sort { $a->[0] <=> $b->[0] } map { [ @logged[2 * $_, 2 * $_ + 1] ] } 0 .. 9;
my $last_q = pop(@rows)->[0];
my $others_u = 0;
$others_u += $_->[1] for @rows;
cmp_ok $last_q, '<', $others_u / 2 + 0.5,
    sprintf('... and not much more (the others ran %.3f s on two children)', $others_u);

# --- a bounded queue ----------------------------------------------------------

reset_counters();
my $mark = length($t->read_file('logs/access.log') // '');
@r = burst(10, '/small/?ms=300');
my %by;
$by{ $_ ? $_->{status} : 'none' }++ for @r;
# A slot frees when one of the two that ran at once ends: the head of the
# queue takes it if that is within its 500 ms. On a loaded machine PHP
# may take longer than that over its 300 ms, and the waiters time out
# rightly: each of the two that ended in time (400 ms: 100 ms for the
# kick and the worker's turn) let one waiter follow.
my @ran;
$t->wait_for(sub {
    @ran = substr($t->read_file('logs/access.log'), $mark)
        =~ m{^/small/ 200 q=0\.000 u=(\d+\.\d{3}) }mg;
    @ran >= 2 }, 3);
my $in_time = grep { $_ < 0.4 } @ran;
cmp_ok $by{200} // 0, '>=', 2 + $in_time,
    "two run, the waiting ones follow (@ran s: $in_time ended in time)";
cmp_ok $by{503} // 0, '>=', 3, 'beyond the queue size or its timeout: 503';
is(($by{200} // 0) + ($by{503} // 0), 10, 'nothing else');
ok $t->log_contains(qr/\[error\] .*the queue of upstream "small" is full \(3 requests waiting\)/),
    'a full queue is logged, naming the upstream';
ok $t->log_contains(qr/\[error\] .*no connection to upstream "small" became free within 0\.[5-9]\d\d s in its queue/),
    'a queue timeout is logged with the wait';

# --- keepalive pins no child: two workers, two children, short requests -----

# every client makes short requests for 10 s; any request slower than 2 s
# means a child was pinned by an idle connection of the other worker
my $clients = 20;
my $dir = "$PREFIX/logs";
my @kids;
for my $k (1 .. $clients) {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        my ($n, $fail, $slowest, @why) = (0, 0, 0);
        my $end = time + 10;
        while (time < $end) {
            my $c = $t->raw($P) or do { $fail++; push @why, "connect: $!"; next };
            my $s = time;
            $c->send("GET /hello/ HTTP/1.1\r\nHost: q\r\nConnection: close\r\n\r\n");
            my $resp = $c->read_response(timeout => 10);
            my $d = time - $s;
            $slowest = $d if $d > $slowest;
            if ($resp && $resp->{status} == 200) {
                $n++;
            } else {
                $fail++;
                push @why, sprintf('%s after %.2f s', $resp ? "status $resp->{status}"
                                   : 'no response', $d);
            }
        }
        open my $fh, '>', "$dir/client.$k" or POSIX::_exit(1);
        print $fh "$n $fail $slowest @why[0 .. ($#why < 2 ? $#why : 2)]\n";
        close $fh;
        POSIX::_exit(0);
    }
    push @kids, $pid;
}
# meanwhile: the connections php-fpm holds open (its accepted unix
# sockets carry the pool's path in /proc/net/unix, state 03 = connected).
# A connection ringx has just closed stays listed until its child reads
# the end and closes its side, while another child may already have
# accepted the next one: a count over 2 is taken only if it is still
# there 20 ms later.
sub pool_open { Test::PhpFpm::pool_open($SOCK) }
my $max_open = 0;
my $samples = 0;
while (grep { waitpid($_, WNOHANG) == 0 } @kids) {
    my $n = pool_open();
    if (defined $n) {
        if ($n > 2) {
            sleep 0.02;
            my $again = pool_open() // $n;
            $n = $again if $again < $n;
        }
        $max_open = $n if $n > $max_open;
        $samples++;
    }
    sleep 0.05;
}
waitpid($_, 0) for @kids;
my ($total, $failed, $slowest) = (0, 0, 0);
for my $k (1 .. $clients) {
    my ($n, $f, $s, $why) = split ' ', ($t->read_file("logs/client.$k") // '0 1 99 no report'), 4;
    diag("client $k: $f failed: $why") if $f;
    $total += $n;
    $failed += $f;
    $slowest = $s if $s > $slowest;
}
cmp_ok $total, '>', 100, "$clients clients, 2 workers, a pool of 2: requests served ($total)";
is $failed, 0, 'none failed'
    or diag(grep { /\[(?:warn|error|crit|alert)\]/ && !/upstream "small"/ }
            split /\n/, $t->read_file('logs/error.log') // '');
cmp_ok $slowest, '<', 2, 'no request stalled behind an idle pooled connection'
    or diag "slowest: $slowest s";
cmp_ok $samples, '>', 20, 'php-fpm\'s open connections sampled during the run';
cmp_ok $max_open, '<=', 2, "never more connections open to the pool than its 2 children ($max_open)";
cmp_ok $max_open, '>=', 1, 'and they were seen (keepalive)';

# --- both workers get their share of the pool -------------------------------

# One worker takes both connections (two slow requests on two client
# connections it accepted), then keepalive clients on 20 ms scripts keep
# both workers' queues full: a worker whose queue never empties would hand
# every finished connection to its own next request, and the other
# worker's clients would wait for the queue timeout (20 s); each worker
# holds max_conns / 2 while the other has requests waiting.
my (%by_worker, @slow);
for (1 .. 40) {
    my $c = $t->raw($P) or next;
    $c->send("GET /pid HTTP/1.1\r\nHost: q\r\n\r\n");
    my $resp = $c->read_response(timeout => 5) or next;
    push @{ $by_worker{ $resp->{body} } }, $c;
    last if grep { @$_ >= 2 } values %by_worker;
}
@slow = @{ (grep { @$_ >= 2 } values %by_worker)[0] || [] }[0, 1];
is scalar(grep { defined } @slow), 2, 'two client connections on one worker';
$mark = length($t->read_file('logs/access.log') // '');
$_->send("GET /q/?ms=1500 HTTP/1.1\r\nHost: q\r\n\r\n") for grep { defined } @slow;
sleep 0.3;
my $load = Test::Load->start(port => $P, clients => 20, seconds => 8,
    timeout => 30, retry => 0, path => sub { '/q/?ms=20' },
    check => sub { $_[0]{body} =~ /^queue=/ });
my $res = $load->wait;
is $res->{failed}, 0, 'two workers, max_conns=2, full queues: none failed';
# While a request waits, the requests ahead of it get the connections:
# each of the other 19 clients has one outstanding, and each worker holds
# one of the two connections, so at most about 2 x 19 start before it
# (one worker may have more of the clients than the other). A worker that
# kept both for its own queue would start hundreds (20 ms each) while the
# other's requests wait. Counted from the access log (start of service:
# the log time less $upstream_response_time; of waiting: less
# $upstream_queue_time too), which holds on a loaded machine where the
# waits grow with PHP's time (a bound in seconds does not).
my @svc;
$t->wait_for(sub {
    @svc = substr($t->read_file('logs/access.log'), $mark)
        =~ m{^/q/ 200 q=(\d+\.\d{3}) u=(\d+\.\d{3}) t=(\d+\.\d{3})$}mg;
    @svc / 3 >= scalar(@{ $res->{done} }) }, 5);
my @starts = sort { $a <=> $b } map { $svc[3 * $_ + 2] - $svc[3 * $_ + 1] } 0 .. @svc / 3 - 1;
my ($ahead, $worst) = (0, '');
for my $i (0 .. @svc / 3 - 1) {
    my ($q, $u, $end) = @svc[3 * $i .. 3 * $i + 2];
    my ($from, $to) = ($end - $u - $q, $end - $u);
    next if $q < 0.002;
    my $n = grep { $_ > $from + 0.001 && $_ < $to - 0.001 } @starts;
    ($ahead, $worst) = ($n, "waited $q s") if $n > $ahead;
}
cmp_ok $ahead, '<=', 2 * 19 + 2,
    "no worker kept both connections for its own queue (at most $ahead "
    . "started while one waited, $worst; the slowest answer: $res->{max_latency} s)";
my %served;
$served{ $_->[0] }++ for @{ $res->{done} };
my ($least) = sort { $a <=> $b } map { $served{$_} // 0 } 1 .. 20;
my $mean = scalar(@{ $res->{done} }) / 20;
# relative to what the pool managed (a loaded machine runs PHP slower): a
# starved worker's clients would get next to nothing until the 20 s timeout
cmp_ok $least, '>=', $mean / 2,
    "every client was served all along (the least served: $least, the mean: $mean)";
is scalar(grep { $_ && $_->read_response(timeout => 10) } grep { defined } @slow), 2,
    'and the two slow requests were answered';

ok !$t->log_contains(qr/is saturated/),
    'with max_conns, nothing is learned (t/fastcgi_learn.t is without)';

$t->stop;
done_testing;
