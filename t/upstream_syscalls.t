#!/usr/bin/perl
# upstream_syscalls.t: the system calls a proxied request costs the worker
# (counted by strace on the worker). On a plain upstream connection the
# request goes out as a quiet send (event/conn_quiet.c): inside the
# io_uring_enter that then waits for the answer, with no syscall and no
# completion of its own; where the kernel cannot tell a quiet send's
# short sends (the worker's log says "quiet sends off"), it goes to the
# socket on the worker's own thread (sendmsg, as nginx's writev). Either
# way not through a ring send whose completion took a loop turn of its own
# before the answer could be waited for: fewer than 3.6 io_uring_enter a
# request, where that made it 4. A request the socket cannot take at once
# still goes out whole (the ring's send takes the rest), and the
# connection serves the next requests.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

# the counts are the io_uring backend's
delete $ENV{RINGX_EVENTS};

my $N = 40;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use io_uring; }
http {
    access_log off;
    upstream pool { server $UP; keepalive 4; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        client_max_body_size 64m;
        client_body_buffer_size 64m;
        location / {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
$t->run;
my ($w) = $t->worker_pids;
my $P = $t->port(0);

SKIP: {
    skip 'no strace here (apt-get install strace)', 7
        if system('strace -V >/dev/null 2>&1') != 0;
    skip 'the kernel refused io_uring: the worker runs epoll', 7
        if $t->log_contains(qr/uses epoll instead/);

    my $url = "http://127.0.0.1:$P/len/30";
    my ($got, $calls) = $t->syscalls_during($w, $url, sub {
        `curl -s --max-time 30 ${\ join ' ', ($url) x $N}`;
    });
    my %calls = %$calls;
    skip 'strace could not attach to the worker (ptrace refused)', 7
        unless %calls;

    is($got, Test::Upstream::pattern(30) x $N,
       "$N proxied responses on one keepalive connection, whole");
    if ($t->log_contains(qr/quiet sends on/)) {
        # one sendmsg a request: the response's, made at once in a light
        # turn (conn.c); none for the request to the upstream
        cmp_ok($calls{sendmsg} // 0, '<=', $N + 2,
               'the requests went to the upstream without a syscall of '
               . 'their own (quiet sends)')
            or diag(explain \%calls);
    } else {
        ok($t->log_contains(qr/quiet sends off/),
           'the worker says why quiet sends are off');
        cmp_ok($calls{sendmsg} // 0, '>=', $N,
               'each request went to the upstream socket on the worker\'s '
               . 'thread') or diag(explain \%calls);
    }
    cmp_ok($calls{io_uring_enter} // 0, '<', 3.6 * ($N + 1),
           'fewer than 3.6 io_uring_enter per proxied request (4 with the '
           . 'ring\'s send)')
        or diag(explain \%calls);

    # a request larger than the socket takes at once: the rest goes by
    # the ring's send, nothing lost or sent twice
    my $body = join '', map { chr(($_ * 7) % 251) } 1 .. 8 * 1024 * 1024;
    $t->write_file_raw('big.body', $body);
    my $file = $t->prefix . '/big.body';
    my $echo = `curl -s --max-time 60 --data-binary \@$file http://127.0.0.1:$P/echo`;
    my ($len) = $echo =~ /^body-length: (\d+)$/m;
    is($len, length $body, 'an 8 MiB request body reached the upstream whole');
    my @r = $up->requests;
    ok($r[-1] && $r[-1]{body} eq $body, '... byte for byte');
    # the connection it went on (its quiet send came back short: its
    # sends wait for room from now on) serves the next ones whole
    is(`curl -s --max-time 30 ${\ join ' ', ($url) x 5}`,
       Test::Upstream::pattern(30) x 5, 'the requests after it, whole');
    is(scalar(() = $up->requests), scalar(@r) + 5, '... each once');
}

$t->stop;
$up->stop;
done_testing;
