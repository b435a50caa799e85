#!/usr/bin/perl

# A module that a configuration does not name costs a request nothing
# (issue #25): core/modules.c's on-demand modules (headers, gzip, ssi,
# access, rewrite, limit_*, realip ...) register their phase handlers and
# filters only in a cycle whose configuration names one of their
# directives. Checked here: the counts a worker reports (fewer handlers and
# filters for a static-only config than for one naming every module); a
# module named in one server only still applies there (and not in the
# other); a module's variable alone works without the module; a reload
# that names a module unused before turns it on (registration is per
# cycle); a reload that fails after the http block leaves the running
# cycle's filters to the worker the master forks next.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_file('html/index.html', "hello " x 40 . "\n");
$t->write_file('html/d/index.html', "d\n");

my $head = <<'EOF';
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
EOF

# static only; $realip_remote_addr used in a log format, realip unnamed
my $conf1 = $head . <<'EOF';
http {
    log_format r "$realip_remote_addr $status";
    access_log logs/r.log r;
    server { listen 127.0.0.1:%%PORT_0%%; location / { } }
    server { listen 127.0.0.1:%%PORT_1%%; location / { } }
}
EOF

# headers and gzip named in server 0 only, access in one location of 1
my $conf2 = $head . <<'EOF';
http {
    log_format r "$realip_remote_addr $status";
    access_log logs/r.log r;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-On-Demand yes;
        gzip on; gzip_min_length 1; gzip_types text/html;
        location / { }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location / { }
        location /d/ { deny all; }
    }
}
EOF

# every on-demand module named, each with a value that changes nothing
my $conf_all = $head . <<'EOF';
http {
    set_real_ip_from 192.0.2.1;
    limit_req_status 503; limit_conn_status 503;
    satisfy all; auth_basic off; auth_request off;
    slice 0; expires off; userid off; gunzip off; add_before_body "";
    sub_filter_once on; charset off; ssi off; gzip off; mirror off;
    autoindex off; gzip_static off; dav_methods off; rewrite_log off;
    allow all;
    server { listen 127.0.0.1:%%PORT_0%%; location / { try_files $uri $uri/ =404; } }
    server { listen 127.0.0.1:%%PORT_1%%; location / { } }
}
EOF

# The last "N phase handlers, M filter modules" a worker logged, once at
# least $n such lines are there.
sub wait_counts {
    my ($n) = @_;
    my @l;
    $t->wait_for(sub {
        @l = $t->log_contains(qr/http: \d+ phase handlers, \d+ filter modules/);
        @l >= $n;
    }, 10);
    return () if @l < $n;
    return $l[-1] =~ /http: (\d+) phase handlers, (\d+) filter modules/;
}

sub get {
    my ($port, $path, $extra) = @_;
    return $t->http($t->port($port), "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        . ($extra // '') . "\r\n") // '';
}

# --- the counts: all named vs. static only ---------------------------------
$t->write_config($conf_all);
$t->run;
my @w = $t->wait_workers(1);
my ($h_all, $f_all) = wait_counts(1);
ok(defined $h_all, 'a worker reports its phase handlers and filters');
like(get(0, '/'), qr{^HTTP/1\.[01] 200}, 'every module named: 200');

$t->write_config($conf1);
$t->signal('HUP');
@w = $t->wait_workers(1, not => \@w);
my ($h1, $f1) = wait_counts(2);
ok(defined $h1 && defined $h_all && $h1 < $h_all && $h1 <= 4,
   'static only: fewer phase handlers ('
   . ($h1 // 'none') . ' vs ' . ($h_all // 'none') . ')');
ok(defined $f1 && defined $f_all && $f1 < $f_all && $f1 <= 2,
   'static only: fewer filter modules ('
   . ($f1 // 'none') . ' vs ' . ($f_all // 'none') . ')');

my $r = get(0, '/', "Accept-Encoding: gzip\r\n");
like($r, qr{^HTTP/1\.[01] 200}, 'static only: 200');
unlike($r, qr/X-On-Demand/i, 'no add_header yet');
unlike($r, qr/Content-Encoding/i, 'no gzip yet');
like(get(1, '/d/'), qr{^HTTP/1\.[01] 200}, 'no deny yet');
ok($t->wait_for(sub {
       ($t->read_file('logs/r.log') // '') =~ /^127\.0\.0\.1 200$/m }, 5),
   '$realip_remote_addr alone (realip unnamed) logs the client');

# --- a reload that names headers, gzip and access turns them on ----------
$t->write_config($conf2);
$t->signal('HUP');
@w = $t->wait_workers(1, not => \@w);
my ($h2, $f2) = wait_counts(3);
is($f2, defined $f1 ? $f1 + 2 : -1, 'reload: headers and gzip filters added');
is($h2, defined $h1 ? $h1 + 1 : -1, 'reload: the access handler added');
$r = get(0, '/', "Accept-Encoding: gzip\r\n");
like($r, qr/^X-On-Demand: yes\r$/mi, 'server 0: add_header applies');
like($r, qr/^Content-Encoding: gzip\r$/mi, 'server 0: gzip applies');
$r = get(1, '/', "Accept-Encoding: gzip\r\n");
like($r, qr{^HTTP/1\.[01] 200}, 'server 1: 200');
unlike($r, qr/X-On-Demand/i, 'server 1: no add_header (not named there)');
unlike($r, qr/Content-Encoding/i, 'server 1: no gzip');
like(get(1, '/d/'), qr{^HTTP/1\.[01] 403}, 'server 1: deny in its location');

# --- a reload that fails after the http block changes nothing --------------
# (it would drop headers and gzip); a worker the master forks afterwards
# still runs the running cycle's filters.
$t->write_config($conf1 . "no_such_directive_here on;\n");
$t->expect_log(qr/unknown directive "no_such_directive_here"/);
$t->signal('HUP');
ok($t->wait_for(sub { $t->log_contains(qr/reload failed/) }, 10),
   'the broken reload failed');
$t->expect_log(qr/signal 9/);
kill 'KILL', $w[0];
@w = $t->wait_workers(1, not => \@w);
ok(@w, 'a new worker after the kill');
$r = get(0, '/', "Accept-Encoding: gzip\r\n");
like($r, qr/^X-On-Demand: yes\r$/mi, 'respawned worker: add_header still applies');
like($r, qr/^Content-Encoding: gzip\r$/mi, 'respawned worker: gzip still applies');

$t->stop;
done_testing;
