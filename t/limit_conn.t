#!/usr/bin/perl
# limit_conn.t: limit_conn_zone / limit_conn with two workers counting in
# one shared zone (reuseport spreads the connections over both): slow
# requests through a proxy hold their count until they end, the ones over
# the limit get 503 (or limit_conn_status) at once with nginx's log line,
# counts come back when requests end (also when the client leaves
# mid-request), dry run, $limit_conn_status, an empty key, a zone too
# small for its keys ("could not allocate node"), counts kept across a
# reload, and configuration errors in nginx's words.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(time sleep);
use Test::Ringx;
use Test::Upstream;

my $u = Test::Upstream->new;
$u->start;
my $up = $u->url;

my $t = Test::Ringx->new;
my $conf = <<"EOF";
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 1024; }
http {
    log_format l '\$uri \$status \$limit_conn_status \$pid \$msec \$request_time';
    access_log logs/access.log l;
    limit_conn_zone \$binary_remote_addr zone=addr:1m;
    limit_conn_zone \$http_x_key zone=bykey:1m;
    limit_conn_zone \$http_x_key zone=tiny:32k;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        # for the reload: a connection to a reuseport socket made while an
        # old worker still serves a request may wait for the next reload
        # (a fault of the reload, not of the zones; see the report)
        listen 127.0.0.1:%%PORT_1%%;
        location /three/ { limit_conn addr 3; proxy_pass $up; }
        location /dry/ { limit_conn bykey 1; limit_conn_dry_run on; proxy_pass $up; }
        location /st/ {
            limit_conn bykey 1;
            limit_conn_status 429;
            limit_conn_log_level warn;
            proxy_pass $up;
        }
        location /key/ { limit_conn bykey 1; proxy_pass $up; }
        location /tiny/ { limit_conn tiny 100; proxy_pass $up; }
    }
}
EOF
$t->write_config($conf);
$t->run;

# $n requests at once, each on its own connection; returns the responses
my $port = $t->port(0);

sub concurrent {
    my ($n, $path, $hdr) = @_;
    my @c = map { $t->raw($port) } 1 .. $n;
    for my $i (0 .. $#c) {
        my $h = $hdr ? $hdr->($i) : '';
        $c[$i]->send("GET $path HTTP/1.1\r\nHost: x\r\n${h}Connection: close\r\n\r\n");
    }
    my @r = map { $_->read_response(timeout => 15) } @c;
    $_->close for @c;
    return @r;
}

sub statuses { my %n; $n{ defined $_ ? $_->{status} : 'none' }++ for @_; return %n }

sub log_lines {
    my ($re, $n) = @_;
    my @l;
    $t->wait_for(sub {
        @l = grep { /$re/ } split /\n/, ($t->read_file('logs/access.log') // '');
        @l >= $n;
    }, 5);
    return @l;
}

# ---- three at once, across both workers --------------------------------------------

# reuseport picks a worker's socket at random per connection: ten may all
# land on one worker (2 in 1024); such a batch tests nothing across
# workers, so it is sent again (its log lines told apart by the sleep's ms)
my (@r, %st, @l, %pids);
for my $try (1 .. 5) {
    @r = concurrent(10, "/three/sleep/150$try");
    %st = statuses(@r);
    @l = log_lines(qr{^/three/sleep/150$try }, 10);
    %pids = map { (split / /)[3] => 1 } @l;
    last if keys %pids == 2;
}
is($st{200}, 3, 'limit_conn 3: three of ten concurrent requests are served');
is($st{503}, 7, 'seven get 503');
is(scalar keys %pids, 2, 'both workers took part');
is(scalar(grep { / 200 PASSED / } @l), 3, '$limit_conn_status PASSED');
is(scalar(grep { / 503 REJECTED / } @l), 7, '$limit_conn_status REJECTED');
ok($t->log_contains(qr/\[error\] .*limiting connections by zone "addr", client: 127\.0\.0\.1/),
   'nginx\'s log line');
ok(!grep({ defined $_ && exists $_->{headers}{'retry-after'} } @r),
   'no Retry-After: when a slot frees is not known');

@r = concurrent(3, '/three/sleep/200');
%st = statuses(@r);
is($st{200}, 3, 'the counts came back when the requests ended');

# ---- a client that leaves mid-request gives its count back ---------------------------

{
    my $seen = $u->requests;
    my $c = $t->raw($t->port(0));
    $c->send("GET /key/sleep/1500 HTTP/1.1\r\nHost: x\r\nX-Key: gone\r\n\r\n");
    $u->wait_requests($seen + 1);
    my ($busy) = concurrent(1, '/key/len/1', sub { "X-Key: gone\r\n" });
    is($busy && $busy->{status}, 503, 'the key is busy while its request runs');
    $c->close;
    my $ok = $t->wait_for(sub {
        my ($x) = concurrent(1, '/key/len/1', sub { "X-Key: gone\r\n" });
        $x && $x->{status} == 200;
    }, 5);
    ok($ok, 'the key is free again once the request ended');
}

# ---- limit_conn_status, limit_conn_log_level, dry run, an empty key ----------------------

@r = concurrent(3, '/st/sleep/500', sub { "X-Key: st\r\n" });
%st = statuses(@r);
is($st{200}, 1, 'limit_conn 1: one served');
is($st{429}, 2, 'the others get limit_conn_status 429');
ok($t->log_contains(qr/\[warn\] .*limiting connections by zone "bykey"/),
   'at limit_conn_log_level warn');

@r = concurrent(3, '/dry/sleep/500', sub { "X-Key: dry\r\n" });
%st = statuses(@r);
is($st{200}, 3, 'dry run: all served');
@l = log_lines(qr{^/dry/}, 3);
is(scalar(grep { / 200 REJECTED_DRY_RUN / } @l), 2, 'two would have been REJECTED');
ok($t->log_contains(qr/limiting connections, dry run, by zone "bykey"/),
   'the dry run log line');

@r = concurrent(3, '/key/sleep/300');
%st = statuses(@r);
is($st{200}, 3, 'no X-Key: not counted');
@l = log_lines(qr{^/key/sleep/300 }, 3);
is(scalar(grep { m{ 200 - } } @l), 3, '$limit_conn_status empty');

# ---- a zone too small for its keys -----------------------------------------------------

{
    $t->expect_log(qr/could not allocate node in limit_conn zone "tiny"/);
    # 250-byte keys take 512 bytes each: a 32k zone holds about fifty
    @r = concurrent(80, '/tiny/sleep/1500',
                    sub { 'X-Key: ' . sprintf('%03d', $_[0]) . ('k' x 247) . "\r\n" });
    %st = statuses(@r);
    ok(($st{200} // 0) >= 20 && ($st{503} // 0) >= 1,
       "tiny zone: $st{200} served, " . ($st{503} // 0) . ' refused (no room)');
    is(($st{200} // 0) + ($st{503} // 0), 80, 'every request answered');
    ok($t->log_contains(qr/\[crit\] .*could not allocate node in limit_conn zone "tiny"/),
       'the zone running out is logged');
    # every node went with its request: the zone has room again
    @r = concurrent(20, '/tiny/len/1',
                    sub { 'X-Key: ' . sprintf('n%02d', $_[0]) . ('k' x 247) . "\r\n" });
    %st = statuses(@r);
    is($st{200}, 20, 'after they ended, the zone has room again');
}

# ---- a reload keeps the counts -----------------------------------------------------------

{
    $port = $t->port(1);
    my $seen = $u->requests;
    my $c = $t->raw($port);
    $c->send("GET /key/sleep/2000 HTTP/1.1\r\nHost: x\r\nX-Key: rl\r\nConnection: close\r\n\r\n");
    $u->wait_requests($seen + 1);
    my ($pre) = concurrent(1, '/key/len/1', sub { "X-Key: rl\r\n" });
    is($pre && $pre->{status}, 503, 'reload: the key is busy');
    $t->signal('HUP');
    my $reloaded = $t->wait_for(sub { $t->log_contains(qr/start worker process/) >= 4 }, 10);
    ok($reloaded, 'reloaded');
    my ($busy) = concurrent(1, '/key/len/1', sub { "X-Key: rl\r\n" });
    is($busy && $busy->{status}, 503,
       'the new workers see the count of the old worker\'s request');
    my $done = $c->read_response(timeout => 10);
    is($done && $done->{status}, 200, 'the old worker finishes it');
    my $ok = $t->wait_for(sub {
        my ($x) = concurrent(1, '/key/len/1', sub { "X-Key: rl\r\n" });
        $x && $x->{status} == 200;
    }, 5);
    ok($ok, 'and its count goes back to the zone the new workers use');
}

$t->stop;

# ---- configuration errors -------------------------------------------------------------

sub conf_error {
    my ($http, $re, $name) = @_;
    $t->write_file('conf/bad.conf', <<"EOF");
events { }
http {
$http
    server { listen 127.0.0.1:%%PORT_2%%; location / { } }
}
EOF
    my ($rc, $out, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/bad.conf');
    isnt($rc, 0, "$name: refused");
    like($err, $re, "$name: the message");
}

my $bad = qr{ in \S+/conf/bad\.conf:(\d+)};
conf_error("    limit_conn nowhere 1;",
           qr/\[emerg\] zero size shared memory zone "nowhere" in \S+bad\.conf:3/,
           'an undeclared zone');
conf_error("    limit_conn_zone \$a zone=z:16k;",
           qr/\[emerg\] zone "zone=z:16k" is too small$bad/, 'a zone under 32k');
conf_error("    limit_conn_zone \$a z:1m;",
           qr/\[emerg\] invalid parameter "z:1m"$bad/, 'no zone=');
conf_error("    limit_conn_zone \$a zone=z:1m;\n    limit_conn z 0;",
           qr/\[emerg\] invalid number of connections "0"$bad/, 'limit_conn 0');
conf_error("    limit_conn_zone \$a zone=z:1m;\n    limit_conn z 65536;",
           qr/\[emerg\] connection limit must be less 65536$bad/, 'limit_conn 65536');
conf_error("    limit_conn_zone \$a zone=z:1m;\n    limit_conn z 1;\n    limit_conn z 2;",
           qr/\[emerg\] "limit_conn" directive is duplicate$bad/, 'a zone twice in a level');
conf_error("    limit_conn_zone \$a zone=z:1m;\n    limit_conn_zone \$b zone=z:1m;",
           qr/\[emerg\] limit_conn_zone "z" is already bound to key "\$a"$bad/,
           'a zone declared twice');
conf_error("    limit_conn_status 399;",
           qr/\[emerg\].*limit_conn_status/, 'limit_conn_status 399');

done_testing;
