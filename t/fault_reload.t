#!/usr/bin/perl

# Fault drill 1: reloads under load. Ten SIGHUPs to the master, one every
# 300 ms, while 20 keepalive clients send requests that take 200 ms at the
# upstream (proxy_pass to a keepalive pool). Not one request may fail: a
# request in flight on an old worker completes (with "Connection: close"),
# and a keepalive connection that an old worker closes while idle is the
# only thing a client sees, which it handles as a browser does (the request
# that got no byte on a reused connection is sent again; counted apart).
# The upstream must see every answered request exactly once and none of
# the retried ones twice. The figures go to docs/reliability.md
# ("Faults under load"); `prove -v` prints them.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::Load;
use Time::HiRes qw(time sleep);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log notice;
events { worker_connections 256; }
http {
    access_log off;
    upstream pool { server $UP; keepalive 16; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);
my @first = $t->wait_workers(2);
is(scalar @first, 2, 'two workers');

my $warm = $t->http_get($P, '/sleep/1');
like($warm, qr/^HTTP\/1\.1 200 .*slept 1\n\z/s, 'proxied /sleep/1 answers');

my $body = "slept 200\n";
my $load = Test::Load->start(
    port    => $P,
    clients => 20,
    seconds => 4.5,
    path    => sub { "/sleep/200?c=$_[0]&n=$_[1]" },
    check   => sub { $_[0]{body} eq $body },
);

sleep 0.5;
my $t0 = time;
for my $i (1 .. 10) {
    $t->signal('HUP');
    sleep 0.3;
}
my $hup_span = time - $t0;
my $r = $load->wait;

my $reloads = () = $t->log_contains(qr/\[notice\] .*reconfiguring/);
is($reloads, 10, '10 reloads done (10 "reconfiguring" lines)');
cmp_ok($r->{requests}, '>=', 200, "20 clients made at least 200 requests ($r->{requests})");
is($r->{failed}, 0, 'no request failed during the reloads')
    or diag(Test::Load->describe_failures($r));

# The old generations finish their 200 ms requests and leave.
my @now = $t->wait_workers(2, not => \@first, timeout => 5);
is(scalar @now, 2, 'after the reloads: exactly two workers, both new');

# The upstream saw each answered request once, and no retried one twice.
my %seen;
for my $q ($up->requests) {
    $seen{"$1/$2"}++ if $q->{uri} =~ m{^/sleep/200\?c=(\d+)&n=(\d+)$};
}
my $dup = grep { $_ > 1 } values %seen;
is($dup, 0, 'no request reached the upstream twice');
my $missing = grep { !$seen{"$_->[0]/$_->[1]"} } @{ $r->{done} };
is($missing, 0, 'every answered request went through the upstream');
my $retried_once = grep { ($seen{"$_->[0]/$_->[1]"} // 0) == 1 }
                   @{ $r->{retried} };
is($retried_once, $r->{retries},
   'each retried request reached the upstream once (only the retry)');

my $upconns = $up->connections;
note(sprintf "reload drill: %d requests, %d ok, %d failed, %d retries "
     . "(each seen once upstream: %d), %d client connections, "
     . "%d upstream connections, 10 HUPs in %.2f s, slowest answer %.3f s",
     $r->{requests}, $r->{ok}, $r->{failed}, $r->{retries}, $retried_once,
     $r->{connections}, $upconns, $hup_span, $r->{max_latency});

# Still serving afterwards.
like($t->http_get($P, '/sleep/1'), qr/^HTTP\/1\.1 200 /, 'served after the drill');

$t->stop;
$up->stop;
done_testing;
