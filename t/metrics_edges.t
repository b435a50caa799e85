#!/usr/bin/perl
# metrics_edges.t: the figures metrics.t does not reach: TLS handshakes by
# result and protocol (full, resumed, failed), accepts refused for want of
# descriptors (EMFILE: counted, logged, and the worker serves again once
# they are given back), the descriptor alarm of a worker near its
# worker_rlimit_nofile, and the alarm of accepts skewed between workers.
# ENFILE (the system's file table full) is not provoked: that takes root
# and starves every process on the machine; it is counted by the same
# code as EMFILE.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Time::HiRes qw(sleep);

# name{labels} value, by "name{labels}" as written
sub samples {
    my ($text) = @_;
    my %s;
    for (split /\n/, $text // '') {
        next if /^#/ || !/\S/;
        my ($k, $v) = /^(\S+(?:\{[^}]*\})?) (\S+)$/ or next;
        $s{$k} = $v;
    }
    return \%s;
}

sub scrape {
    my ($t, $port) = @_;
    my $raw = $t->http($port, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n") // '';
    return samples((split /\r\n\r\n/, $raw, 2)[1]);
}

# --- TLS handshakes ---------------------------------------------------------------

{
    my $t = Test::Ringx->new;
    Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
    $t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location = /metrics { metrics; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        ssl_session_cache shared:SSL:1m;
        ssl_session_tickets off;
        location / { return 200 "ok\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%% ssl;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        location / { return 200 "ok\n"; }
    }
}
EOF
    $t->run;
    my $sess = $t->prefix . '/sess';
    my $req = "GET / HTTP/1.0\r\n\r\n";
    Test::Ringx::Certs::s_client($t->port(1), "-tls1_3", $req);
    Test::Ringx::Certs::s_client($t->port(1), "-tls1_2 -no_ticket -sess_out $sess", $req);
    my $o = Test::Ringx::Certs::s_client($t->port(1), "-tls1_2 -no_ticket -sess_in $sess", $req);
    like($o, qr/^Reused, /m, 'a session resumed');
    # plain HTTP to the TLS port: answered as nginx does, no handshake
    my $plain = $t->http($t->port(1), "GET / HTTP/1.0\r\n\r\n") // '';
    like($plain, qr{^HTTP/1\.1 400 .*plain HTTP request was sent to HTTPS port}s,
         'a plain request to a TLS port: 400, as nginx');
    # a ClientHello record whose message is cut: a failed handshake
    $t->expect_log(qr/SSL_do_handshake\(\) failed/);
    my $bad = $t->raw($t->port(1));
    $bad->send("\x16\x03\x01\x00\x04\x01\x00\x00\x00");
    $bad->read_all(timeout => 5);
    $bad->close;
    my $s;
    ok(Test::Ringx::wait_for(sub {
        $s = scrape($t, $t->port(0));
        ($s->{'ringx_tls_handshakes_total{result="failed"}'} // 0) >= 1
    }, 3), 'a broken ClientHello is a failed handshake');
    is($s->{'ringx_tls_handshakes_total{result="failed"}'}, 1,
       'one (the plain request and the harness\'s port probe are none)');
    is($s->{'ringx_tls_handshakes_total{result="new"}'}, 2, 'two full handshakes');
    is($s->{'ringx_tls_handshakes_total{result="resumed"}'}, 1, 'one resumed');
    is($s->{'ringx_tls_handshakes_protocol_total{protocol="TLSv1.3"}'}, 1, 'TLSv1.3: one');
    is($s->{'ringx_tls_handshakes_protocol_total{protocol="TLSv1.2"}'}, 2,
       'TLSv1.2: two (the full and the resumed)');

    # a session ticket (TLSv1.3, no cache): resumed too
    my $tick = $t->prefix . '/ticket';
    Test::Ringx::Certs::s_client($t->port(2), "-tls1_3 -sess_out $tick", $req);
    $o = Test::Ringx::Certs::s_client($t->port(2), "-tls1_3 -sess_in $tick", $req);
    like($o, qr/^Reused, /m, 'a session resumed from its ticket');
    $s = scrape($t, $t->port(0));
    is($s->{'ringx_tls_handshakes_total{result="new"}'}, 3, 'ticket: one more full handshake');
    is($s->{'ringx_tls_handshakes_total{result="resumed"}'}, 2, 'ticket: one more resumed');
    is($s->{'ringx_tls_handshakes_protocol_total{protocol="TLSv1.3"}'}, 3,
       'TLSv1.3: three');
    is($s->{'ringx_tls_handshakes_total{result="failed"}'}, 1,
       'failed: still the one broken ClientHello');

    # closed before its first byte (a port probe, a health check): no
    # handshake began, so none failed; logged in nginx's words
    my $closed = sub {
        my @l = ($t->read_file('logs/error.log') // '')
                =~ /\[info\] .*client closed connection while SSL handshaking/g;
        scalar @l
    };
    my $before = $closed->();
    my $c = $t->raw($t->port(2));
    $c->close;
    ok(Test::Ringx::wait_for(sub { $closed->() > $before }, 5),
       'a bare connect and close: "client closed connection while SSL handshaking"');
    $s = scrape($t, $t->port(0));
    is($s->{'ringx_tls_handshakes_total{result="failed"}'}, 1,
       'and not counted as a failed handshake');
    $t->stop;
}

# --- out of descriptors -------------------------------------------------------------

{
    my $t = Test::Ringx->new;
    $t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 40;
error_log logs/error.log info;
events { worker_connections 200; }
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
    # -t's arithmetic says the table cannot be filled: expected here
    $t->expect_log(qr/file descriptors/);
    $t->run;
    my $s = scrape($t, $t->port(0));
    is($s->{'ringx_worker_fds_limit{worker="0"}'}, 40, 'the limit is worker_rlimit_nofile');
    is($s->{'ringx_accept_errors_total{error="EMFILE"}'} // 0, 0, 'no EMFILE yet');

    # held connections, each with a request under way, until accepts fail
    $t->expect_log(qr/accept4?\(\) failed \(24: Too many open files\)/);
    my @held;
    for (1 .. 45) {
        my $c = $t->raw($t->port(0)) or last;
        $c->send("GET / HTTP/1.1\r\nHost: x\r\n");
        push @held, $c;
    }
    ok(Test::Ringx::wait_for(sub {
        $t->log_contains(qr/\[crit\] .*accept4?\(\) failed \(24: Too many open files\)/)
    }, 5), 'accept4() failed (24: Too many open files) is logged, at crit (nginx)');
    ok(Test::Ringx::wait_for(sub {
        $t->log_contains(qr/\[warn\] .*worker 0: \d+ file descriptors open of its limit 40 \((?:9\d|100)%\): raise worker_rlimit_nofile/)
    }, 5), 'the descriptor alarm names the worker, the figures and what to raise');
    # give half back: the worker accepts again (after its pause) and counted it
    $_->close for splice(@held, 0, 20);
    ok(Test::Ringx::wait_for(sub {
        $s = scrape($t, $t->port(0));
        ($s->{'ringx_accept_errors_total{error="EMFILE"}'} // 0) >= 1
    }, 5), 'then serves again, and EMFILE accepts were counted');
    cmp_ok($s->{'ringx_worker_fds_used{worker="0"}'}, '<=', 40, 'fds in use within the limit');
    $_->close for @held;
    $t->stop;
}

# --- accepts skewed between workers ---------------------------------------------------
# Two workers on one shared socket (worker_reuseport off) take turns at
# accepting: an even load raises no alarm. Then worker 1 is stopped
# (SIGSTOP: a stalled worker, as one stuck in a blocking call would be):
# its armed accept takes one connection and holds it, worker 0 accepts
# the rest, and worker 0's tick, at the end of a metrics_alarm_interval
# (the window, 2 s here, 60 s by default), says so with the figures.

sub one_request {
    my ($t, $port, $timeout) = @_;
    my $c = $t->raw($port) or return undef;
    $c->send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => $timeout);
    return $r ? $r->{status} : $c;          # the connection, if unanswered
}

{
    my $t = Test::Ringx->new;
    $t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 2;
worker_reuseport off;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    metrics_alarm_interval 2s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location = /metrics { metrics; }
        location / { return 200 "ok\n"; }
    }
}
EOF
    $t->run;
    my $P = $t->port(0);
    my $skew = qr/\[warn\] .*accepts are skewed between workers: worker (\d+) accepted (\d+) connections in the last (\d+) s, worker (\d+) (\d+): consider "listen \.\.\. reuseport"/;

    # the worker pids, as the workers report them
    my $s;
    ok(Test::Ringx::wait_for(sub {
        $s = scrape($t, $P);
        $s->{'ringx_worker_pid{worker="0"}'} && $s->{'ringx_worker_pid{worker="1"}'}
    }, 5), 'both workers report their pid');
    my $w1 = $s->{'ringx_worker_pid{worker="1"}'};

    my $ok = grep { (one_request($t, $P, 5) // 0) eq '200' } 1 .. 150;
    is($ok, 150, 'an even load: 150 answered');
    sleep 5;                                # two whole windows
    ok(!$t->log_contains($skew), 'workers taking turns: no skew alarm');

    kill 'STOP', $w1;
    my ($held, $ok1) = (undef, 0);
    for (1 .. 150) {
        my $r = one_request($t, $P, $held ? 5 : 3);
        if (ref $r) { $held //= $r } elsif (($r // 0) eq '200') { $ok1++ }
    }
    my @fig;
    my $alarm = Test::Ringx::wait_for(sub {
        @fig = ($t->read_file('logs/error.log') // '') =~ $skew;
        @fig
    }, 10);
    kill 'CONT', $w1;
    cmp_ok($ok1, '>=', 149, 'worker 1 stopped: worker 0 answers (all but the one worker 1 took)');
    ok($alarm, 'the skew alarm is written at warn');
    is($fig[0], 0, 'it names the busy worker (0)');
    cmp_ok($fig[1] // 0, '>=', 100, 'with its accepts (at least 100)');
    cmp_ok($fig[2] // 0, '>=', 1, 'the window in seconds');
    is($fig[3], 1, 'and the idle worker (1)');
    cmp_ok($fig[1] // 0, '>', 2 * ($fig[4] // 0), 'more than twice its accepts');
    if ($held) {
        # nothing is lost: worker 1, running again, serves what it took
        my $r = $held->read_response(timeout => 10);
        is($r && $r->{status}, 200, 'the connection worker 1 took is answered once it runs');
    }
    $t->stop;
}

done_testing;

