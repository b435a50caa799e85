#!/usr/bin/perl

# Fault drill 2: a worker crashes under load. Two workers, 20 keepalive
# clients sending 200 ms requests through proxy_pass (keepalive pool);
# SIGSEGV to the worker that holds the most client connections. The master
# logs "[alert] worker process N exited on signal 11" and starts another;
# only the requests in flight on the dead worker are lost (counted: at most
# the client connections it had, every failure on one of them), the other
# worker answers throughout, and new connections are served after the
# respawn. Clients do not retry here: each lost request is a failure.
# The listener has reuseport so that the kernel spreads the clients over
# both workers (with one shared listening socket a burst of connections
# tends to land on one worker, and the "other worker" would have none).
#
# Part 2: max_conns after a crash. The shared count of open upstream
# connections must not keep what the dead worker had: one worker, an
# upstream with max_conns=10, SIGSEGV while 10 requests hold all 10
# connections, then 10 concurrent requests to the respawned worker must
# all be answered (with the leak, the group stayed "full" for ever: every
# request got 502 "no live upstreams").
# Figures: docs/reliability.md ("Faults under load"); `prove -v` prints them.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::Load;
use Time::HiRes qw(time sleep);

# The client side of the established connections to $port that process
# $pid holds: their remote (client) ports, from /proc/PID/fd and
# /proc/net/tcp.
sub client_ports_of {
    my ($pid, $port) = @_;
    my %inode;
    opendir(my $d, "/proc/$pid/fd") or return ();
    for my $fd (readdir $d) {
        my $l = readlink("/proc/$pid/fd/$fd") // next;
        $inode{$1} = 1 if $l =~ /^socket:\[(\d+)\]$/;
    }
    closedir $d;
    open(my $fh, '<', '/proc/net/tcp') or return ();
    my @ports;
    while (my $l = <$fh>) {
        my @f = split ' ', $l;
        next unless @f > 9 && $f[1] =~ /:([0-9A-F]{4})$/;
        next unless hex($1) == $port && $f[3] eq '01' && $inode{$f[9]};
        push @ports, hex((split /:/, $f[2])[1]);
    }
    close $fh;
    return @ports;
}

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
        listen 127.0.0.1:%%PORT_0%% reuseport;
        location / {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
# An ASan build would catch the SIGSEGV and report it as its own error.
my $asan = join ':', grep { length } $ENV{ASAN_OPTIONS} // '', 'handle_segv=0';
$t->run({ env => { ASAN_OPTIONS => $asan } });
my $P = $t->port(0);
my @workers = $t->wait_workers(2);
is(scalar @workers, 2, 'two workers');

my $body = "slept 200\n";
my $load = Test::Load->start(
    port    => $P,
    clients => 20,
    seconds => 5,
    retry   => 0,
    path    => sub { "/sleep/200?c=$_[0]&n=$_[1]" },
    check   => sub { $_[0]{body} eq $body },
);

# Let every client connect and settle, then find who holds what.
sleep 1;
my %ports = map { $_ => [ client_ports_of($_, $P) ] } @workers;
my ($victim, $other) = sort { @{ $ports{$b} } <=> @{ $ports{$a} } } @workers;
my $held = @{ $ports{$victim} };
my %victim_port = map { $_ => 1 } @{ $ports{$victim} };
cmp_ok($held + @{ $ports{$other} }, '>=', 18,
       'the clients are connected (' . ($held + @{ $ports{$other} }) . ' seen)');

$t->expect_log(qr/\[alert\] .*worker process $victim exited on signal 11/);
my $t_kill = time;
kill 'SEGV', $victim;
ok($t->wait_for(sub { $t->log_contains(
       qr/\[alert\] .*worker process $victim exited on signal 11/) }, 3),
   "[alert] worker process $victim exited on signal 11");
my @after = $t->wait_workers(2, not => [$victim], timeout => 3);
my $respawn = time - $t_kill;
is(scalar @after, 2, 'a new worker replaced it');
ok((grep { $_ == $other } @after), 'the other worker lives on');

# A new connection is served after the respawn.
my $fresh_ok = 0;
for (1 .. 4) {
    my $c = $t->raw($P) or next;
    $c->send("GET /sleep/1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $fresh_ok++ if $r && $r->{status} == 200 && $r->{body} eq "slept 1\n";
}
is($fresh_ok, 4, 'new connections after the respawn are served (4 of 4)');

my $r = $load->wait;
my @lost = @{ $r->{failures} };
my $on_victim = grep { $victim_port{ $_->{port} } } @lost;
cmp_ok(scalar @lost, '>=', 1, 'the crash cost requests (' . scalar(@lost) . ')');
cmp_ok(scalar @lost, '<=', $held,
       "at most one lost request per connection the dead worker had ($held)")
    or diag(Test::Load->describe_failures($r));
is($on_victim, scalar @lost, 'every lost request was on the dead worker')
    or diag(Test::Load->describe_failures($r));
my @late = grep { $_->{time} > $t_kill + 0.5 } @lost;
is(scalar @late, 0, 'no request failed later than 0.5 s after the crash')
    or diag(Test::Load->describe_failures($r));
my $during = grep { $_->[2] > $t_kill && $_->[2] < $t_kill + 0.5 }
             @{ $r->{done} };
cmp_ok($during, '>', 0, "requests answered in the 0.5 s after the crash ($during)");
my $late_ok = grep { $_->[2] > $t_kill + 1 } @{ $r->{done} };
cmp_ok($late_ok, '>', 0, "requests answered a second after the crash ($late_ok)");

note(sprintf "crash drill: %d requests, %d ok, %d lost (dead worker held %d "
     . "of %d client connections), respawned in %.3f s, %d answered in the "
     . "0.5 s after the crash", $r->{requests}, $r->{ok}, scalar @lost, $held,
     $held + @{ $ports{$other} }, $respawn, $during);

$t->stop;

###########################################################################
# part 2: max_conns after a crash

my $t2 = Test::Ringx->new;
$t2->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log notice;
events { worker_connections 256; }
http {
    access_log off;
    upstream limited { server $UP max_conns=10; keepalive 16; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            proxy_pass http://limited;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
$t2->run({ env => { ASAN_OPTIONS => $asan } });
my $P2 = $t2->port(0);
my ($w) = $t2->wait_workers(1);

# n concurrent requests (one connection each); how many got 200.
sub concurrent {
    my ($n, $path) = @_;
    my @c = map { $t2->raw($P2) } 1 .. $n;
    $_ && $_->send("GET $path HTTP/1.1\r\nHost: localhost\r\n"
                   . "Connection: close\r\n\r\n") for @c;
    my @r = map { $_ ? $_->read_response(timeout => 3) : undef } @c;
    return (scalar(grep { $_ && $_->{status} == 200 } @r),
            join ' ', map { $_ ? $_->{status} : '-' } @r);
}

my ($before) = concurrent(10, '/sleep/300');
is($before, 10, 'max_conns=10: 10 concurrent requests answered');

my @held = map { $t2->raw($P2) } 1 .. 10;
$_->send("GET /sleep/2000 HTTP/1.1\r\nHost: localhost\r\n\r\n") for @held;
ok($up->wait_for(sub { (grep { $_->{uri} eq '/sleep/2000' } $up->requests) == 10 }, 3),
   'the upstream holds 10 requests, one per allowed connection');
$t2->expect_log(qr/\[alert\] .*worker process $w exited on signal 11/);
kill 'SEGV', $w;
my ($w2) = $t2->wait_workers(1, not => [$w], timeout => 3);
ok($w2, 'the worker was respawned');
$_->close for @held;
ok($t2->wait_for(sub { $t2->log_contains(
       qr/\[notice\] .*upstream "limited": 10 connections and 0 queued requests of a dead worker no longer counted/) }, 3),
   'log: the new worker uncounts the 10 connections of the dead one');
my ($after, $statuses) = concurrent(10, '/sleep/300');
is($after, 10, 'after the crash: 10 concurrent requests answered again')
    or diag("statuses: $statuses");
note("max_conns after a crash: $after of 10 concurrent requests answered "
     . "(before the fix: 0, all 502)");

$t2->stop;
$up->stop;
done_testing;
