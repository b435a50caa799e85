#!/usr/bin/perl
# resolver.t: `resolver` and `resolver_timeout` end to end against a
# scripted DNS server (Test::DNS): proxy_pass with variables resolving to
# Test::Upstream, the per-worker cache proven by query counts (TTL, valid=),
# failures with nginx's log lines, the fall back to TCP for truncated
# answers, CNAME chains, stray answers ignored, one query for concurrent
# lookups, ipv6=off, `server NAME resolve` picking up a changed answer
# without a reload, and -t's errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::DNS;
use Time::HiRes qw(sleep);

my $up = Test::Upstream->new;
$up->start;
my $UPORT = $up->port;
my $up2 = Test::Upstream->new(host => '127.0.0.2', port => $UPORT);
$up2->start;

my $dns = Test::DNS->new;
$dns->set('app.test' => { A => ['127.0.0.1'] });
$dns->set('both.test' => { A => ['127.0.0.1'], AAAA => [] });
$dns->set('short.test' => { A => ['127.0.0.1'], ttl => 1 });
$dns->set('keep.test' => { A => ['127.0.0.1'], ttl => 1 });
$dns->set('servfail.test' => { rcode => 2 });
$dns->set('silent.test' => { drop => 1 });
$dns->set('big.test' => { A => ['127.0.0.1'], tc => 1 });
$dns->set('chain.test' => { cname => 'mid.test' });
$dns->set('mid.test' => { cname => 'end.test' });
$dns->set('end.test' => { A => ['127.0.0.1'] });
$dns->set('wrongid.test' => { A => ['127.0.0.1'], wrong_id => 1 });
$dns->set('wrongq.test' => { A => ['127.0.0.1'], wrong_q => 1 });
$dns->set('slow.test' => { A => ['127.0.0.1'], delay_ms => 500 });
$dns->set('dyn.test' => { A => ['127.0.0.1'], ttl => 1 });
$dns->set('fcgi.test' => { A => ['127.0.0.1'] });
$dns->start;
my $NS = '127.0.0.1:' . $dns->port;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    access_log off;
    upstream dyn {
        server dyn.test:$UPORT resolve;
        resolver $NS ipv6=off;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        resolver $NS ipv6=off;
        resolver_timeout 1s;
        location /p/ { proxy_pass http://\$arg_h:$UPORT; }
        location /valid/ {
            resolver $NS ipv6=off valid=30s;
            proxy_pass http://\$arg_h:$UPORT;
        }
        location /v6/ {
            resolver $NS;
            proxy_pass http://\$arg_h:$UPORT;
        }
        location /fcgi/ { fastcgi_read_timeout 1s; fastcgi_pass \$arg_h:$UPORT; }
        location /dyn/ { proxy_pass http://dyn; }
        location /none/ {
            resolver_timeout 1s;
            proxy_pass http://\$arg_h:$UPORT;
        }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location / { proxy_pass http://\$arg_h:$UPORT; }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri, $port) = @_;
    my $c = $t->raw($port // $P);
    $c->send("GET $uri HTTP/1.1\r\nHost: resolver.test\r\nConnection: close\r\n\r\n");
    return $c->read_response(timeout => 8) // { status => 0 };
}

# --- answers, the cache -----------------------------------------------------

my $r = get('/p/echo?h=app.test');
is $r->{status}, 200, 'a name resolved by the resolver reaches the upstream';
is $dns->count('app.test', 'A'), 1, 'one A query';
is $dns->count('app.test', 'AAAA'), 0, 'ipv6=off: no AAAA query';
$r = get('/p/echo?h=App.Test.');
is $r->{status}, 200, 'the same name again (case, trailing dot)';
is $dns->count('app.test'), 1, 'answered from the cache: no second query';

$r = get('/v6/echo?h=both.test');
is $r->{status}, 200, 'with ipv6 on';
is $dns->count('both.test', 'A'), 1, 'an A query';
is $dns->count('both.test', 'AAAA'), 1, 'and an AAAA query';

$r = get('/p/echo?h=short.test');
is $r->{status}, 200, 'TTL 1';
sleep 1.3;
$r = get('/p/echo?h=short.test');
is $r->{status}, 200, 'TTL 1, later';
is $dns->count('short.test', 'A'), 2, 'asked again once the TTL passed';

$r = get('/valid/echo?h=keep.test');
is $r->{status}, 200, 'valid=30s';
sleep 1.3;
$r = get('/valid/echo?h=keep.test');
is $r->{status}, 200, 'valid=30s, later';
is $dns->count('keep.test', 'A'), 1, 'valid= overrides the TTL: no second query';

# --- the wire ---------------------------------------------------------------

$r = get('/p/echo?h=big.test');
is $r->{status}, 200, 'a truncated answer';
is $dns->count('big.test', 'A', 'udp'), 1, 'asked over UDP';
is $dns->count('big.test', 'A', 'tcp'), 1, 'then over TCP';

$r = get('/p/echo?h=chain.test');
is $r->{status}, 200, 'a CNAME chain in one answer';
is $dns->count('end.test'), 0, 'followed within the answer: no query for its end';

$r = get('/p/echo?h=wrongid.test');
is $r->{status}, 200, 'an answer with another id is ignored, the right one taken';
ok $t->log_contains(qr/wrong ident \d+ in DNS response for wrongid\.test/),
    'the wrong id is logged';
$r = get('/p/echo?h=wrongq.test');
is $r->{status}, 200, 'an answer to another question is ignored';
ok $t->log_contains(qr/unexpected DNS response for other-wrongq\.test/),
    'logged';

{
    my @c = map { $t->raw($P) } 1 .. 3;
    $_->send("GET /p/echo?h=slow.test HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        for @c;
    my @s = map { ($_->read_response(timeout => 8) // {})->{status} // 0 } @c;
    is_deeply \@s, [200, 200, 200], 'three requests for a name being looked up';
    is $dns->count('slow.test', 'A'), 1, 'share one query';
}

# --- failures ---------------------------------------------------------------

$r = get('/p/echo?h=nx.test');
is $r->{status}, 502, 'NXDOMAIN: 502';
ok $t->log_contains(qr/\[error\].*nx\.test could not be resolved \(3: Host not found\)/),
    'logged as nginx does';
$r = get('/p/echo?h=servfail.test');
is $r->{status}, 502, 'SERVFAIL: 502';
ok $t->log_contains(qr/\[error\].*servfail\.test could not be resolved \(2: Server failure\)/),
    'logged';
$r = get('/p/echo?h=servfail.test');
is $dns->count('servfail.test', 'A'), 2, 'a failure is not cached';
$r = get('/p/echo?h=silent.test');
is $r->{status}, 502, 'no answer within resolver_timeout: 502';
ok $t->log_contains(qr/\[error\].*silent\.test could not be resolved \(110: Operation timed out\)/),
    'logged';

$r = get('/?h=app.test', $t->port(1));
is $r->{status}, 502, 'no resolver in that server: 502';
ok $t->log_contains(qr/no resolver defined to resolve app\.test/), 'logged';
$r = get('/?h=127.0.0.1', $t->port(1));
is $r->{status}, 200, 'an address in the variable needs no resolver';

$r = get('/fcgi/x?h=fcgi.test');
is $dns->count('fcgi.test', 'A'), 1, 'fastcgi_pass with variables resolves too';
ok $t->log_contains(qr/upstream: "fastcgi:\/\/127\.0\.0\.1:$UPORT"/),
    'and goes to the address';

# --- server NAME resolve ----------------------------------------------------

$r = get('/dyn/echo');
is $r->{status}, 200, 'server dyn.test resolve';
my $before = grep { $_->{uri} eq '/dyn/echo' } $up->requests;
ok $before >= 1, 'reached 127.0.0.1';
my $pids = join ',', $t->worker_pids;
$dns->set('dyn.test' => { A => ['127.0.0.2'], ttl => 1 });
my $moved = Test::Ringx::wait_for(sub {
    get('/dyn/echo');
    scalar grep { $_->{uri} eq '/dyn/echo' } $up2->requests;
}, 8);
ok $moved, 'a changed answer is picked up while running';
is join(',', $t->worker_pids), $pids, 'by the same worker: no reload';
ok $dns->count('dyn.test', 'A') >= 2, 'the name was asked again';

$t->stop;

# --- -t ---------------------------------------------------------------------

my @bad = (
    ['resolver;', qr/invalid number of arguments in "resolver" directive in \S+:\d+/],
    ['resolver 127.0.0.1 valid=soon;', qr/invalid parameter: valid=soon in \S+ringx\.conf:3/],
    ['resolver 127.0.0.1 ipv6=maybe;', qr/invalid parameter: ipv6=maybe in /],
    ['resolver 127.0.0.1 ipv4=off ipv6=off;', qr/"ipv4" and "ipv6" cannot both be "off" in /],
    ['resolver valid=1s;', qr/no name servers defined in /],
    ['resolver nonexistent.invalid;', qr/host not found in resolver "nonexistent\.invalid" in \S+:3/],
    ['resolver 127.0.0.1:99999;', qr/invalid port in resolver "127\.0\.0\.1:99999"/],
    ['resolver 127.0.0.1; resolver 127.0.0.2;', qr/"resolver" directive is duplicate in /],
    ['resolver_timeout soon;', qr/"resolver_timeout" directive invalid value|invalid value "soon"/],
);
for my $c (@bad) {
    my ($line, $re) = @$c;
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
    $line
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt $code, 0, "-t fails: $line";
    like $err, $re, "-t says why: $line";
}
{
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
    upstream u { server name.test:80 resolve; }
    server { listen 127.0.0.1:%%PORT_0%%; location / { proxy_pass http://u; } }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt $code, 0, '-t fails: server ... resolve without a resolver';
    like $err, qr/no resolver defined to resolve names at run time in upstream "u" in \S+:3/,
        'with nginx\'s line';
}
{
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
    resolver 127.0.0.1 valid=10s ipv6=off status_zone=z;
    resolver_timeout 5s;
    upstream u { hash \$uri; server name.test resolve; }
    server { listen 127.0.0.1:%%PORT_0%%; location / { proxy_pass http://u; } }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    is $code, 0, '-t passes: http-level resolver, hash with resolve'
        or diag $err;
}
{
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
    resolver 127.0.0.1;
    upstream u { hash \$uri consistent; server name.test resolve; }
    server { listen 127.0.0.1:%%PORT_0%%; location / { proxy_pass http://u; } }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt $code, 0, '-t fails: hash consistent with resolve';
    like $err, qr/load balancing method does not support resolving names at run time in upstream "u"/,
        'with nginx\'s line';
}

$dns->stop;
$up->stop;
$up2->stop;
done_testing;
