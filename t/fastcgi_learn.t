#!/usr/bin/perl
# fastcgi_learn.t: a php-fpm pool on a unix socket behind an upstream with
# keepalive and no max_conns (http/http_upstream_learn.c). A connection
# beyond the pool's children waits in the socket's backlog while the
# pooled ones hold every child; ringx sees its request stay unread, logs
# that the pool is saturated, closes a pooled connection so that a child
# takes the waiting one, and keeps no more connections than the pool took,
# queueing the rest. Without this (nginx), the waiting requests stall for
# keepalive_timeout. A pool that grows is followed up. The same for a
# pool on a loopback TCP address (sock_diag).
# The same with max_conns: t/fastcgi_queue.t.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::Load;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);
use Time::HiRes qw(time sleep);

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";
my $GROW = "$PREFIX/grow.sock";
my $TCP = '127.0.0.1:' . Test::PhpFpm::free_port();
my @pools = (
    { name => 'pool', sock => $SOCK, pm => "pm = static\npm.max_children = 2" },
    { name => 'grow', sock => $GROW, pm => "pm = static\npm.max_children = 3" },
    { name => 'tcp', tcp => $TCP, pm => "pm = static\npm.max_children = 2" },
);
Test::PhpFpm->start($t, \@pools);

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    log_format q '\$uri \$status q=\$upstream_queue_time';
    access_log logs/access.log q;
    upstream php {
        server unix:$SOCK;
        keepalive 4;
    }
    upstream grow {
        server unix:$GROW;
        keepalive 8;
    }
    upstream tcp {
        server $TCP;
        keepalive 4;
    }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        root html;
        fastcgi_keep_conn on;
        # (a location's fastcgi_param replaces the server's, as in nginx)
        location /q/ {
            fastcgi_pass php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
            fastcgi_param QUEUE_TIME \$upstream_queue_time;
        }
        location /hello/ {
            fastcgi_pass php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SCRIPT_FILENAME \$document_root/hello.php;
        }
        location /tcp/ {
            fastcgi_pass tcp;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
        }
        location /grow/ {
            fastcgi_pass grow;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

# --- more requests than children at once ------------------------------------

Test::PhpFpm::reset_counters($t);
my $t0 = time;
my @r = Test::PhpFpm::burst($t, $P, 10, '/q/?ms=300');
my $took = time - $t0;
is scalar(grep { $_ && $_->{status} == 200 } @r), 10, 'ten requests, two children: all served';
is $t->read_file('html/max'), '2', 'two ran at once';
cmp_ok $took, '>=', 1.4, 'in five rounds of 300 ms';
# without the learning, the eight connections in the backlog wait until
# the two pooled ones close: keepalive_timeout, 60 s
cmp_ok $took, '<', 6, 'and no waiting for pooled connections to time out'
    or diag "took $took s";
ok $t->log_contains(qr/\[warn\] .*upstream "php" server unix:\Q$SOCK\E is saturated: a new connection's request waited \d+ ms unread in its listen backlog; this worker keeps at most [12] connections? to it and queues the requests beyond/),
    'the saturated pool is logged, naming the upstream and the wait';
my @q = map { /queue=(\d+\.\d+)/ ? $1 : -1 } map { $_ ? $_->{body} : '' } @r;
is scalar(grep { $_ < 0 } @q), 0, '$upstream_queue_time reached PHP';

# --- the same over TCP on a loopback address --------------------------------

# the kernel acknowledges what a connection waiting in the backlog receives;
# sock_diag shows the far end's socket, and what it holds unread
Test::PhpFpm::reset_counters($t);
$t0 = time;
@r = Test::PhpFpm::burst($t, $P, 10, '/tcp/?ms=300');
$took = time - $t0;
is scalar(grep { $_ && $_->{status} == 200 } @r), 10, 'TCP: ten requests, two children: all served';
is $t->read_file('html/max'), '2', 'TCP: two ran at once';
cmp_ok $took, '<', 6, 'TCP: and no waiting for pooled connections to time out'
    or diag "took $took s";
ok $t->log_contains(qr/\[warn\] .*upstream "tcp" server \Q$TCP\E is saturated/),
    'TCP: the saturated pool is logged';

# --- keepalive pins no child: two workers, two children, short requests -----

# 20 keepalive clients, 8 s; a request slower than 2 s means a child was
# pinned by a pooled connection while a request waited in the backlog
my $load = Test::Load->start(port => $P, clients => 20, seconds => 8,
    timeout => 10, retry => 0, path => sub { '/hello/' },
    check => sub { $_[0]{body} =~ /^hello \d+$/ });
my $res = $load->wait;
cmp_ok $res->{ok}, '>', 200, "20 clients, a pool of 2: requests served ($res->{ok})";
is $res->{failed}, 0, 'none failed'
    or diag(join "\n", map { "client $_->{client}: $_->{why}" }
            @{ $res->{failures} }[0 .. 4]);
cmp_ok $res->{max_latency}, '<', 2, 'no request stalled behind a pooled connection'
    or diag "slowest: $res->{max_latency} s";
my @waited = grep { $_ > 0 } $t->read_file('logs/access.log') =~ m{^/hello/ 200 q=(\d+\.\d{3})$}mg;
cmp_ok scalar(@waited), '>', 0, 'requests beyond the pool waited in ringx\'s queue ($upstream_queue_time)';

# --- a pool that grows ------------------------------------------------------

# three children, two of them held by connections of the test (a child
# serves the connection it accepted until it closes), then let go: the
# connections beyond what each worker learned probe for more, once a second
my @held = map { IO::Socket::UNIX->new(Peer => $GROW, Type => SOCK_STREAM)
                 or die "$GROW: $!" } 1 .. 2;
Test::Ringx::wait_for(sub { (Test::PhpFpm::pool_open($GROW) // 0) >= 2 }, 5);
Test::PhpFpm::reset_counters($t);
$load = Test::Load->start(port => $P, clients => 6, seconds => 6,
    timeout => 10, retry => 0, path => sub { '/grow/?ms=100' },
    check => sub { $_[0]{body} =~ /^queue=/ });
sleep 2;
is $t->read_file('html/max'), '1', 'one child free: one request at a time';
close $_ for @held;
$res = $load->wait;
is $res->{failed}, 0, 'none failed'
    or diag(join "\n", map { "client $_->{client}: $_->{why}" }
            @{ $res->{failures} }[0 .. 4]);
is $t->read_file('html/max'), '3', 'the children let go were used';
ok $t->log_contains(qr/\[info\] .*upstream "grow" server unix:\Q$GROW\E took [23] connections of this worker/),
    'what a worker takes followed the pool up (logged)';

$t->check_logs;
$t->stop;
done_testing;
