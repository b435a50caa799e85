#!/usr/bin/perl
# limit_req.t: limit_req_zone / limit_req with two workers counting in one
# shared zone (reuseport spreads the connections over both): the rate
# without burst (counted over the window the requests took), burst with
# nodelay, burst with delay (the delayed ones succeed later), delay=,
# dry run, $limit_req_status, Retry-After, limit_req_status and the log
# lines, several limits and inheritance, a client that closes while
# delayed, the zone's state kept across a reload (and not when its size
# changes), eviction of the least recently used key from a full zone, a
# key that cannot fit ("could not allocate node"), and configuration
# errors in nginx's words.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Time::HiRes qw(time sleep);
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_file('html/index.html', "hello\n");
mkdir $t->prefix . '/html/' . $_ for qw(fast burst delay delay2 dry two
    inherit own close tiny huge nokey reload);
$t->write_file("html/$_/f", "ok\n") for qw(fast burst delay delay2 dry two
    inherit own close tiny huge nokey reload);

my $conf = <<'EOF';
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 512; }
http {
    log_format l '$uri $status $limit_req_status $pid';
    access_log logs/access.log l;
    default_type text/plain;
    limit_req_zone $binary_remote_addr zone=fast:1m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/m;
    limit_req_zone $http_x_key zone=bykey:1m rate=1r/m;
    limit_req_zone $http_x_key zone=bykey2:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=d:1m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=d2:1m rate=5r/s;
    limit_req_zone $http_x_key zone=tiny:32k rate=1r/m;
    limit_req_zone $http_x_a$http_x_a$http_x_a$http_x_a zone=huge:32k rate=1r/m;
    limit_req_zone $http_x_key zone=kept:RELOADSIZE rate=1r/m;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        # for the reloads: a connection to a reuseport socket made while an
        # old worker still serves a request may wait for the next reload
        # (a fault of the reload, not of the zones)
        listen 127.0.0.1:%%PORT_2%%;
        root html;
        location /fast/ { limit_req zone=fast; }
        location /burst/ { limit_req zone=slow burst=5 nodelay; }
        location /delay/ { limit_req zone=d burst=10; }
        location /delay2/ { limit_req zone=d2 burst=10 delay=2; }
        location /dry/ { limit_req zone=bykey; limit_req_dry_run on; }
        location /two/ {
            limit_req zone=bykey;
            limit_req zone=bykey2 burst=1 nodelay;
            limit_req_status 429;
            limit_req_log_level warn;
        }
        location /close/ { limit_req zone=bykey burst=5; }
        location /tiny/ { limit_req zone=tiny; }
        location /huge/ { limit_req zone=huge; limit_req_status 507; }
        location /nokey/ { limit_req zone=bykey; }
        location /reload/ { limit_req zone=kept; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% reuseport;
        root html;
        limit_req zone=bykey2;
        location /inherit/ { }
        location /own/ { limit_req zone=bykey; }
    }
}
EOF
(my $c1 = $conf) =~ s/RELOADSIZE/64k/;
$t->write_config($c1);
$t->run;

# $n requests at once, each on its own connection (so both workers get
# some): all connected, then all sent, then all read.
sub flood {
    my ($port, $n, $path, %h) = @_;
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    my @c = map { $t->raw($port) } 1 .. $n;
    my $start = time;
    $_->send("GET $path HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n")
        for @c;
    my @r = map { $_->read_response(timeout => 10) } @c;
    my $took = time - $start;
    $_->close for @c;
    return ($took, @r);
}

sub statuses { my %n; $n{ defined $_ ? $_->{status} : 'none' }++ for @_; return %n }

# the access log's lines for a location, once the workers wrote them
sub log_lines {
    my ($uri_re, $n) = @_;
    my @l;
    $t->wait_for(sub {
        @l = grep { /^$uri_re / } split /\n/, ($t->read_file('logs/access.log') // '');
        @l >= $n;
    }, 5);
    return @l;
}

# ---- rate without burst, counted by both workers ----------------------------------

my ($took, @r) = flood($t->port(0), 40, '/fast/f');
my %st = statuses(@r);
my $passed = $st{200} // 0;
# 10 r/s: one request, then one more for every 100 ms the flood lasted
my $most = 2 + int($took * 10);
ok($passed >= 1 && $passed <= $most,
   "rate=10r/s: $passed of 40 passed in ${took}s (1 .. $most allowed)");
is(($st{503} // 0) + $passed, 40, 'the others got 503');
my ($rej) = grep { defined $_ && $_->{status} == 503 } @r;
is($rej && $rej->{headers}{'retry-after'}, '1', 'Retry-After: 1 (100 ms rounded up)');
my @fast = log_lines('/fast/f', 40);
my %pids = map { (split / /)[3] => 1 } @fast;
is(scalar keys %pids, 2, 'both workers served the flood');
is(scalar(grep { / 200 PASSED / } @fast), $passed, '$limit_req_status PASSED for those');
is(scalar(grep { / 503 REJECTED / } @fast), 40 - $passed, 'and REJECTED for the others');
ok($t->log_contains(qr/\[error\] .*limiting requests, excess: \d+\.\d{3} by zone "fast", client: 127\.0\.0\.1/),
   'the log line in nginx\'s words, at error');

# ---- burst=5 nodelay -------------------------------------------------------------------

($took, @r) = flood($t->port(0), 12, '/burst/f');
%st = statuses(@r);
is($st{200}, 6, 'burst=5 nodelay: six pass at once');
is($st{503}, 6, 'the rest are refused');
($rej) = grep { defined $_ && $_->{status} == 503 } @r;
my $ra = $rej ? $rej->{headers}{'retry-after'} // '' : '';
ok($ra =~ /^\d+$/ && $ra >= 55 && $ra <= 64, "Retry-After $ra: about a minute at 1r/m");

# ---- burst with delay --------------------------------------------------------------------

my $t0 = time;
($took, @r) = flood($t->port(0), 4, '/delay/f');
%st = statuses(@r);
is($st{200}, 4, 'burst=10: all four succeed');
# the fourth waits 300 ms after the first at 10 r/s
cmp_ok($took, '>=', 0.25, 'the last was delayed (a lower bound)');
my @d = log_lines('/delay/f', 4);
is(scalar(grep { / 200 PASSED / } @d), 1, 'one passed at once');
is(scalar(grep { / 200 DELAYED / } @d), 3, 'three were DELAYED');
ok($t->log_contains(qr/\[warn\] .*delaying request, excess: \d+\.\d{3}, by zone "d"/),
   'delaying is logged one level below limit_req_log_level');

($took, @r) = flood($t->port(0), 5, '/delay2/f');
%st = statuses(@r);
is($st{200}, 5, 'delay=2: all five succeed');
@d = log_lines('/delay2/f', 5);
is(scalar(grep { / PASSED / } @d), 3, 'the first three without delay');
is(scalar(grep { / DELAYED / } @d), 2, 'then delayed');

# ---- dry run -------------------------------------------------------------------------------

($took, @r) = flood($t->port(0), 5, '/dry/f', 'X-Key' => 'dry');
%st = statuses(@r);
is($st{200}, 5, 'dry run: every request passes');
@d = log_lines('/dry/f', 5);
is(scalar(grep { / 200 REJECTED_DRY_RUN / } @d), 4, 'four would have been REJECTED');
ok(!grep({ defined $_ && exists $_->{headers}{'retry-after'} } @r), 'no Retry-After');
ok($t->log_contains(qr/limiting requests, dry run, excess: \d+\.\d{3} by zone "bykey"/),
   'the dry run log line');

# ---- an empty key is not accounted ------------------------------------------------------

($took, @r) = flood($t->port(0), 4, '/nokey/f');
%st = statuses(@r);
is($st{200}, 4, 'no X-Key: nothing is counted');
@d = log_lines('/nokey/f', 4);
is(scalar(grep { m{^/nokey/f 200 - } } @d), 4, '$limit_req_status is empty');

# ---- two limits; limit_req_status; inheritance ---------------------------------------

# bykey (no burst) refuses the second; bykey2 (burst=1) would take two
($took, @r) = flood($t->port(0), 1, '/two/f', 'X-Key' => 'two');
($took, my @r2) = flood($t->port(0), 1, '/two/f', 'X-Key' => 'two');
is($r[0]{status}, 200, 'two limits: the first passes');
is($r2[0]{status}, 429, 'the second is refused by the first zone, with limit_req_status');
ok($t->log_contains(qr/\[warn\] .*limiting requests, excess: [\d.]+ by zone "bykey"/),
   'at limit_req_log_level warn');

($took, @r) = flood($t->port(1), 2, '/inherit/f', 'X-Key' => 'inh');
%st = statuses(@r);
is($st{200}, 1, 'a location without limit_req inherits the server\'s');
($took, @r) = flood($t->port(1), 1, '/own/f', 'X-Key' => 'own');
($took, @r2) = flood($t->port(1), 1, '/own/f', 'X-Key' => 'own');
is($r[0]{status}, 200, 'a location with its own limit_req ...');
is($r2[0]{status}, 503, '... uses its zone (bykey) ...');
($took, @r) = flood($t->port(1), 1, '/inherit/f', 'X-Key' => 'own');
is($r[0]{status}, 200, '... and not the server\'s (bykey2 never saw the key)');

# ---- a client that closes while delayed ends the request -------------------------------

{
    my $a = $t->raw($t->port(0));
    $a->send("GET /close/f HTTP/1.1\r\nHost: x\r\nX-Key: cl\r\n\r\n");
    my $ra1 = $a->read_response;
    is($ra1 && $ra1->{status}, 200, 'the first passes');
    # the second waits about a minute (1r/m, burst=5)
    $a->send("GET /close/f HTTP/1.1\r\nHost: x\r\nX-Key: cl\r\nConnection: close\r\n\r\n");
    ok($a->still_open(0.3), 'the second is delayed');
    $a->close;
    my @l = log_lines('/close/f 499', 1);
    is(scalar @l, 1, 'closing ends it at once: 499 in the access log');
    like($l[0] // '', qr/ 499 DELAYED /, 'as DELAYED');
}

# ---- the least recently used key goes when the zone is full ----------------------------

{
    my $v1 = $t->http($t->port(0), "GET /tiny/f HTTP/1.0\r\nX-Key: victim\r\n\r\n");
    my $v2 = $t->http($t->port(0), "GET /tiny/f HTTP/1.0\r\nX-Key: victim\r\n\r\n");
    like($v1, qr{^HTTP/1\.1 200 }, 'tiny zone: the victim passes');
    like($v2, qr{^HTTP/1\.1 503 }, 'then is limited');
    # a few hundred other keys over keepalive connections fill 32k
    my @c = map { $t->raw($t->port(0)) } 1 .. 4;
    my $ok = 0;
    for my $i (1 .. 100) {
        for my $j (0 .. $#c) {
            $c[$j]->send("GET /tiny/f HTTP/1.1\r\nHost: x\r\nX-Key: k$i-$j\r\n\r\n");
        }
        for my $j (0 .. $#c) {
            my $x = $c[$j]->read_response;
            $ok++ if $x && $x->{status} == 200;
        }
    }
    $_->close for @c;
    is($ok, 400, 'every new key passes: older ones make room');
    my $v3 = $t->http($t->port(0), "GET /tiny/f HTTP/1.0\r\nX-Key: victim\r\n\r\n");
    like($v3, qr{^HTTP/1\.1 200 }, 'the victim\'s state was evicted');
    ok(!$t->log_contains(qr/could not allocate node in limit_req zone "tiny"/),
       'without running out of room');
}

# ---- a key that cannot fit ------------------------------------------------------------

{
    $t->expect_log(qr/could not allocate node in limit_req zone "huge"/);
    my $v = 'v' x 7000;
    my $r = $t->http($t->port(0), "GET /huge/f HTTP/1.0\r\nX-A: $v\r\n\r\n");
    like($r, qr{^HTTP/1\.1 507 }, 'a 28000-byte key in a 32k zone: limit_req_status');
    unlike($r, qr/Retry-After/i, 'no Retry-After: nobody knows when');
    ok($t->log_contains(qr/\[alert\] .*could not allocate node in limit_req zone "huge"/),
       'logged as nginx does');
    $r = $t->http($t->port(0), "GET /huge/f HTTP/1.0\r\nX-A: short\r\n\r\n");
    like($r, qr{^HTTP/1\.1 200 }, 'a short key still fits');
}

# ---- a reload keeps the zone's state ----------------------------------------------------

{
    my $g = $t->http($t->port(2), "GET /reload/f HTTP/1.0\r\nX-Key: rl\r\n\r\n");
    like($g, qr{^HTTP/1\.1 200 }, 'reload zone: the first passes');
    my @w = $t->worker_pids;
    $t->signal('HUP');
    @w = $t->wait_workers(2, not => \@w, timeout => 10);
    is(scalar @w, 2, 'reloaded');
    $g = $t->http($t->port(2), "GET /reload/f HTTP/1.0\r\nX-Key: rl\r\n\r\n");
    like($g, qr{^HTTP/1\.1 503 }, 'after the reload the key is still limited') or diag($g);

    # another size: a new zone (as nginx), so the state starts afresh
    (my $c2 = $conf) =~ s/RELOADSIZE/128k/;
    $t->write_config($c2);
    $t->signal('HUP');
    @w = $t->wait_workers(2, not => \@w, timeout => 10);
    is(scalar @w, 2, 'reloaded with another zone size');
    $g = $t->http($t->port(2), "GET /reload/f HTTP/1.0\r\nX-Key: rl\r\n\r\n");
    like($g, qr{^HTTP/1\.1 200 }, 'a resized zone starts empty');

    # a changed key fails the reload, as nginx
    $t->expect_log(qr/limit_req "kept" uses the "\$http_x_other" key while previously it used the "\$http_x_key" key/);
    (my $c3 = $c2) =~ s/\$http_x_key zone=kept/\$http_x_other zone=kept/;
    $t->write_config($c3);
    $t->signal('HUP');
    ok($t->wait_for(sub { $t->log_contains(qr/uses the "\$http_x_other" key while previously/) }, 5),
       'a new key for a kept zone: the reload fails with nginx\'s line');
    $g = $t->http($t->port(2), "GET /reload/f HTTP/1.0\r\nX-Key: rl\r\n\r\n");
    like($g, qr{^HTTP/1\.1 503 }, 'the running configuration keeps its zone');
}

$t->stop;

# ---- configuration errors ---------------------------------------------------------------

sub conf_error {
    my ($http, $re, $name) = @_;
    $t->write_file('conf/bad.conf', <<"EOF");
events { }
http {
$http
    server { listen 127.0.0.1:%%PORT_3%%; location / { } }
}
EOF
    my ($rc, $out, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/bad.conf');
    isnt($rc, 0, "$name: refused");
    like($err, $re, "$name: the message");
}

my $bad = qr{ in \S+/conf/bad\.conf:(\d+)};
conf_error("    limit_req zone=nowhere;",
           qr/\[emerg\] zero size shared memory zone "nowhere" in \S+bad\.conf:3/,
           'an undeclared zone');
conf_error("    limit_req_zone \$binary_remote_addr zone=z:1k rate=1r/s;",
           qr/\[emerg\] zone "zone=z:1k" is too small$bad/, 'a zone under 32k');
conf_error("    limit_req_zone \$binary_remote_addr zone=z:10m rate=10r/h;",
           qr/\[emerg\] invalid rate "rate=10r\/h"$bad/, 'a bad rate');
conf_error("    limit_req_zone \$binary_remote_addr zone=z rate=1r/s;",
           qr/\[emerg\] invalid zone size "zone=z"$bad/, 'a zone without size');
conf_error("    limit_req_zone \$binary_remote_addr rate=1r/s x=1;",
           qr/\[emerg\] invalid parameter "x=1"$bad/, 'an unknown parameter');
conf_error("    limit_req_zone \$binary_remote_addr rate=1r/s rate=2r/s;",
           qr/\[emerg\] "limit_req_zone" must have "zone" parameter$bad/, 'no zone=');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_req_zone \$b zone=z:1m rate=1r/s;",
           qr/\[emerg\] limit_req_zone "z" is already bound to key "\$a"$bad/,
           'a zone declared twice');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_req_zone \$b zone=z:2m rate=1r/s;",
           qr/\[emerg\] the size 2097152 of shared memory zone "z" conflicts with already declared size 1048576$bad/,
           'a zone with two sizes');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_req zone=z burst=0;",
           qr/\[emerg\] invalid burst value "burst=0"$bad/, 'burst=0');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_req zone=z delay=x;",
           qr/\[emerg\] invalid delay value "delay=x"$bad/, 'a bad delay');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_req zone=z;\n    limit_req zone=z;",
           qr/\[emerg\] "limit_req" directive is duplicate$bad/, 'the same zone twice in a level');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_req_status 600;",
           qr/\[emerg\].*limit_req_status/, 'limit_req_status 600');
conf_error("    limit_req_log_level debug;",
           qr/\[emerg\] invalid value "debug" in "limit_req_log_level"/, 'limit_req_log_level debug');
conf_error("    limit_req_zone \$a zone=z:1m rate=1r/s;\n    limit_conn z 1;",
           qr/\[emerg\] the shared memory zone "z" is already declared for a different use$bad/,
           'a limit_req zone used by limit_conn');

done_testing;
