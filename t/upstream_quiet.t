#!/usr/bin/perl
# upstream_quiet.t: the request to an upstream as a quiet send
# (event/conn_quiet.c), through the routes a request takes. In a light loop
# turn the request goes out inside the io_uring_enter with which the
# worker then waits for the answer, and posts nothing when it went whole;
# the connection settles it as sent when it next wakes. Checked here:
#
# - the worker says at `info` whether quiet sends are on (the kernel's
#   promises probed at start), and why not when they are off;
# - requests on a warm keepalive connection, with bodies and without,
#   arrive whole and once each, and the answers come back whole;
# - an upstream that takes the request and never answers times out after
#   proxy_read_timeout counted from the send, not proxy_send_timeout
#   first: the quiet send is settled only at the worker's next wake-up,
#   which may be that timeout's. (Ticks of the worker's own, the upstream
#   queue's and the learner's, often wake it sooner; the bound is set to
#   catch the wait for proxy_send_timeout, 8 s, when none does.)
use strict;
use warnings;
use Test::More;
use lib 't/lib';
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    upstream pool { server $UP; keepalive 4; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        client_body_buffer_size 1m;
        location /cold/ {
            proxy_pass http://$UP/;
            proxy_read_timeout 1s;
            proxy_send_timeout 8s;
        }
        location / {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 1s;
            proxy_send_timeout 8s;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

# the worker logs its backend as it starts, which under ASan and a loaded
# machine can come after the port is open (CI's sanitizer run once read
# the log before it)
$t->wait_for(sub { $t->log_contains(qr/io_uring: |uses epoll instead/) }, 10);
my $io_uring = !$t->log_contains(qr/uses epoll instead/)
               && ($ENV{RINGX_EVENTS} // '') ne 'epoll';
SKIP: {
    skip 'the worker runs epoll: no quiet sends there', 1 unless $io_uring;
    ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*io_uring: .*quiet sends (?:on|off \(this kernel does not report their short sends\))/) }, 10),
       'the worker says whether quiet sends are on');
}

# warm, then one after another on the kept connection: each a light turn
my $url = "http://127.0.0.1:$P/len/30";
is(`curl -s --max-time 30 ${\ join ' ', ($url) x 20}`,
   Test::Upstream::pattern(30) x 20, '20 answers, whole');
is(scalar(() = $up->requests), 20, '... 20 requests at the upstream');
ok($up->connections <= 2, '... on kept connections (' . $up->connections . ')');

# bodies: a small one and one of 200 KiB, whole in memory
for my $len (100, 200 * 1024) {
    my $body = join '', map { chr(($_ * 13 + $len) % 251) } 1 .. $len;
    $t->write_file_raw('body.bin', $body);
    my $file = $t->prefix . '/body.bin';
    my $echo = `curl -s --max-time 30 --data-binary \@$file http://127.0.0.1:$P/echo`;
    my ($got) = $echo =~ /^body-length: (\d+)$/m;
    is($got, $len, "a body of $len bytes reached the upstream");
    my @r = $up->requests;
    ok($r[-1] && $r[-1]{body} eq $body, '... byte for byte');
}

# an upstream that reads the request and never answers, on a connection
# of its own (no keepalive: no idle connection, so no tick of the upstream
# queue's), asked of a worker gone quiet (event/mem_tidy.c's tick stops
# after a quiet 250 ms): nothing but that timeout wakes the worker
for my $path ('/stall-header', '/cold/stall-header') {
    $t->mark_logs;
    select(undef, undef, undef, 1.5);
    my $t0 = time;
    my $code = `curl -s -o /dev/null -w '%{http_code}' --max-time 30 http://127.0.0.1:$P$path`;
    my $took = time - $t0;
    is($code, '504', "$path, never answered: 504");
    ok($took < 4, sprintf("... after proxy_read_timeout (1s), not "
                          . "proxy_send_timeout (8s) first: %.1fs", $took));
    ok($t->log_contains(qr/upstream timed out \(110: Connection timed out\) while reading response header from upstream/),
       '... logged as nginx does');
}

$t->stop;
$up->stop;
done_testing;
