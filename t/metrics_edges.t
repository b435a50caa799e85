#!/usr/bin/perl
# metrics_edges.t: the figures metrics.t does not reach: TLS handshakes by
# result and protocol (full, resumed, failed), accepts refused for want of
# descriptors (EMFILE: counted, logged, and the worker serves again once
# they are given back), and the descriptor alarm of a worker near its
# worker_rlimit_nofile.

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
}
EOF
    $t->run;
    my $sess = $t->prefix . '/sess';
    my $req = "GET / HTTP/1.0\r\n\r\n";
    Test::Ringx::Certs::s_client($t->port(1), "-tls1_3", $req);
    Test::Ringx::Certs::s_client($t->port(1), "-tls1_2 -no_ticket -sess_out $sess", $req);
    my $o = Test::Ringx::Certs::s_client($t->port(1), "-tls1_2 -no_ticket -sess_in $sess", $req);
    like($o, qr/^Reused, /m, 'a session resumed');
    # plain HTTP to the TLS port: a failed handshake
    $t->expect_log(qr/SSL_do_handshake\(\) failed|wrong version number|http request/i);
    $t->http($t->port(1), "GET / HTTP/1.0\r\n\r\n");
    my $s;
    ok(Test::Ringx::wait_for(sub {
        $s = scrape($t, $t->port(0));
        ($s->{'ringx_tls_handshakes_total{result="failed"}'} // 0) >= 1
    }, 3), 'a plain request to a TLS port is a failed handshake');
    is($s->{'ringx_tls_handshakes_total{result="new"}'}, 2, 'two full handshakes');
    is($s->{'ringx_tls_handshakes_total{result="resumed"}'}, 1, 'one resumed');
    is($s->{'ringx_tls_handshakes_protocol_total{protocol="TLSv1.3"}'}, 1, 'TLSv1.3: one');
    is($s->{'ringx_tls_handshakes_protocol_total{protocol="TLSv1.2"}'}, 2,
       'TLSv1.2: two (the full and the resumed)');
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

done_testing;
