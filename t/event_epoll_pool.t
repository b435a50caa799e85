#!/usr/bin/perl
# event_epoll_pool.t: on the epoll backend, pooled FastCGI connections to a
# real php-fpm stay pooled. While a pool's size is learned, a connection's
# first request goes in two sends, the second the empty STDIN record, and
# php-fpm answers before it reads that record: the backend must hand out
# the first send's completion (which starts the second) before the answer
# it polls for afterwards, as io_uring's submit-and-wait does, or the
# response ends while the request "still goes out" and the connection is
# dropped, nothing logged (issue #23: t/fastcgi.t 72-73 failed on epoll).
# A peer woken by our send often runs first on this CPU: over many new
# connections the old order lost some; one is enough to fail here.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::PhpFpm;

# this test chooses the backend itself
delete $ENV{RINGX_EVENTS};

my $N = 100;

my $t = Test::Ringx->new;
my $prefix = $t->prefix;
my $FPM = Test::PhpFpm::free_port();
my $SOCK = "$prefix/php.sock";
Test::PhpFpm->start($t, [
    { name => 'tcp', tcp => "127.0.0.1:$FPM",
      pm => "pm = static\npm.max_children = 3" },
    { name => 'unix', sock => $SOCK,
      pm => "pm = static\npm.max_children = 3" } ]);

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use epoll; }
http {
    access_log off;
    upstream tcp { server 127.0.0.1:$FPM; keepalive 2; keepalive_requests 2; }
    upstream unix { server unix:$SOCK; keepalive 2; keepalive_requests 2; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
        location /tcp/ {
            rewrite ^ /hello.php break;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
            fastcgi_keep_conn on;
            fastcgi_pass tcp;
        }
        location /unix/ {
            rewrite ^ /hello.php break;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
            fastcgi_keep_conn on;
            fastcgi_pass unix;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

# Each connection serves two requests (keepalive_requests 2): the first
# is its split one, after which it must be pooled; the second then goes
# over it, to the php-fpm child that holds it. A connection dropped after
# its first request sends the second over a new one, which the child that
# waited longest accepts (another one: php-fpm's children wait in accept()
# in turn). 50 pairs: 50 chances to lose the race.
for my $name (qw(tcp unix)) {
    my $c = $t->raw($P) or BAIL_OUT("connect to ringx failed");
    my ($pairs, @split, $bad) = (0);
    PAIR: for my $i (1 .. $N / 2) {
        my @pid;
        for my $j (1, 2) {
            $c->send("GET /$name/$i.$j HTTP/1.1\r\nHost: p\r\n\r\n") or last;
            my $r = $c->read_response(timeout => 10);
            if (!$r || $r->{status} != 200 || $r->{body} !~ /^hello (\d+)$/) {
                $bad = $r ? "status $r->{status}: $r->{body}" : 'no response';
                last PAIR;
            }
            push @pid, $1;
        }
        $pairs++;
        push @split, "$i: $pid[0] then $pid[1]" if $pid[0] != $pid[1];
    }
    is $pairs, $N / 2, "$name: $N requests over one client connection answered"
        or diag $bad;
    is scalar(@split), 0, "$name: each pooled connection served its second "
                          . "request too (the same php-fpm child)"
        or diag explain \@split;
}
ok !$t->log_contains(qr/saturated/), 'php-fpm never seemed saturated';

$t->stop;
done_testing;
