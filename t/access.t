#!/usr/bin/perl
# access.t: allow and deny: rules in order (first match wins), IPv4 and
# IPv6 CIDR, IPv4-mapped clients, `all`, `unix:`, inheritance (a level
# with rules replaces its parent's), 403 with nginx's log line, and the
# configuration errors and warning.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use IO::Socket::IP;
use IO::Socket::UNIX;
use Test::Ringx;

# return runs in the rewrite phase, before access (as in nginx): the
# locations serve static files so that the access phase decides.

# ::1 may be missing (a container without IPv6): those cases are skipped
my $have_v6 = IO::Socket::IP->new(LocalHost => '::1', LocalPort => 0,
                                  Listen => 1) ? 1 : 0;

my $t = Test::Ringx->new;
my $sock = $t->prefix . '/logs/access.sock';
my $v6_listen = $have_v6
    ? "listen [::1]:%%PORT_1%%;\n        listen [::]:%%PORT_3%% ipv6only=off;" : '';
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        $v6_listen
        listen unix:$sock;
        server_name localhost;
        root html;
        location / { }
        location /deny_first/ { deny 127.0.0.1; allow 127.0.0.1; }
        location /allow_first/ { allow 127.0.0.1; deny 127.0.0.1; }
        location /cidr_in/ { allow 127.0.0.0/8; deny all; }
        location /cidr_out/ { allow 10.0.0.0/8; allow 192.168.0.0/16; deny all; }
        location /cidr_zero/ { deny 0.0.0.0/0; }
        location /masked/ { allow 127.9.9.9/8; deny all; }
        location /deny_all/ { deny all; }
        location /no_match/ { deny 10.1.2.3; }
        location /v6only/ { allow ::1; deny all; }
        location /v6deny/ { deny ::/127; allow all; }
        location /v6net/ { allow 2001:db8::/32; deny all; }
        location /unix_only/ { allow unix:; deny all; }
        location /no_unix/ { deny unix:; allow all; }
        location /nested/ {
            deny all;
            location /nested/open/ { allow all; }
            location /nested/inherit/ { }
        }
        location /page/ { deny all; error_page 403 /page403; }
        location = /page403 { return 200 "custom 403 page\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name second;
        deny all;
        root html;
        location / { }
        location /open/ { allow 127.0.0.1; }
    }
}
EOF
for my $d (qw(deny_first allow_first cidr_in cidr_out cidr_zero masked deny_all
               no_match v6only v6deny v6net unix_only no_unix nested/open
               nested/inherit open)) {
    $t->write_file_raw("html/$d/f", "in\n");
}
$t->write_file_raw('html/f', "in\n");
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri, %o) = @_;
    my $c = $t->raw($o{port} // $P, $o{host} ? (host => $o{host}) : ());
    return (0, '') unless $c;
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? ($r->{status}, $r->{body}) : (0, '');
}

sub get_unix {
    my ($uri) = @_;
    my $s = IO::Socket::UNIX->new(Peer => $sock, Type => SOCK_STREAM())
        or return (0, '');
    print $s "GET $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    local $/;
    my $raw = <$s> // '';
    close $s;
    my ($r) = Test::Ringx::parse_responses($raw);
    return $r ? ($r->{status}, $r->{body}) : (0, '');
}

my @v4 = (
    ['/f',                200, 'no rules: allowed'],
    ['/deny_first/f',     403, 'deny before allow for the same address: the first match wins'],
    ['/allow_first/f',    200, 'allow before deny: the first match wins'],
    ['/cidr_in/f',        200, '127.0.0.0/8 holds 127.0.0.1'],
    ['/cidr_out/f',       403, 'neither 10/8 nor 192.168/16: deny all'],
    ['/cidr_zero/f',      403, '0.0.0.0/0 matches every IPv4 client'],
    ['/masked/f',         200, 'host bits of 127.9.9.9/8 are cleared (127/8)'],
    ['/deny_all/f',       403, 'deny all'],
    ['/no_match/f',       200, 'no rule matches: allowed'],
    ['/v6only/f',         403, 'IPv6 rules do not match an IPv4 client'],
    ['/v6deny/f',         200, 'deny ::/127 leaves IPv4 clients alone'],
    ['/unix_only/f',      403, 'allow unix: does not match a TCP client'],
    ['/no_unix/f',        200, 'deny unix: does not match a TCP client'],
    ['/nested/open/f',    200, 'a nested location with rules replaces its parent\'s'],
    ['/nested/inherit/f', 403, 'a nested location without rules inherits'],
);
for my $c (@v4) {
    my ($uri, $status, $name) = @$c;
    my ($s) = get($uri);
    is($s, $status, "IPv4 $uri: $name");
}

my ($s, $b) = get('/page/');
is("$s $b", "403 custom 403 page\n", 'error_page 403 serves its page for a denied request');

($s) = get('/f', port => $t->port(2));
is($s, 403, 'server-level deny all applies to its locations');
($s, $b) = get('/open/f', port => $t->port(2));
is("$s $b", "200 in\n", 'a location with its own rules replaces the server\'s');

($s, $b) = get_unix('/unix_only/f');
is("$s $b", "200 in\n", 'unix: client: allow unix:');
($s) = get_unix('/no_unix/f');
is($s, 403, 'unix: client: deny unix:');
($s) = get_unix('/cidr_in/f');
is($s, 403, 'unix: client: IPv4 rules do not match, deny all does');
($s) = get_unix('/f');
is($s, 200, 'unix: client: no rules');

SKIP: {
    skip 'no IPv6 loopback (::1) on this machine', 8 unless $have_v6;
    my %v6 = (port => $t->port(1), host => '::1');
    ($s, $b) = get('/v6only/f', %v6);
    is("$s $b", "200 in\n", 'IPv6 ::1 client: allow ::1');
    ($s) = get('/v6deny/f', %v6);
    is($s, 403, 'IPv6 ::1 client: deny ::/127 holds ::1');
    ($s) = get('/v6net/f', %v6);
    is($s, 403, 'IPv6 ::1 client: not in 2001:db8::/32');
    ($s) = get('/cidr_in/f', %v6);
    is($s, 403, 'IPv6 ::1 client: IPv4 rules do not match');
    ($s) = get('/deny_all/f', %v6);
    is($s, 403, 'IPv6 ::1 client: deny all');

    # an IPv4 client on a dual-stack socket arrives as ::ffff:127.0.0.1
    my %mapped = (port => $t->port(3), host => '127.0.0.1');
    ($s, $b) = get('/cidr_in/f', %mapped);
    is("$s $b", "200 in\n", 'IPv4-mapped client: matched by IPv4 rules');
    ($s) = get('/v6only/f', %mapped);
    is($s, 403, 'IPv4-mapped client: not matched by ::1');
    ($s) = get('/cidr_zero/f', %mapped);
    is($s, 403, 'IPv4-mapped client: 0.0.0.0/0 matches');
}

ok($t->log_contains(qr/\[error\] .*access forbidden by rule, client: 127\.0\.0\.1, server: localhost, request: "GET \/deny_all\/f HTTP\/1\.1", host: "localhost"/),
   '403 logged at error level in nginx\'s words');
ok($t->log_contains(qr/\[warn\] .*low address bits of 127\.9\.9\.9\/8 are meaningless in \S+ringx\.conf:\d+/),
   'host bits in a CIDR: nginx\'s warning');
my @lines = $t->log_contains(qr/access forbidden by rule.*GET \/deny_all\//);
is(scalar @lines, $have_v6 ? 2 : 1, 'one log line per denied request');

$t->stop;

# ---- configuration errors -------------------------------------------------

my @bad = (
    ['allow 300.0.0.1;',    qr/\[emerg\] invalid parameter "300\.0\.0\.1" in \S+:\d+/, 'a bad IPv4 address'],
    ['deny 10.0.0.0/33;',   qr/\[emerg\] invalid parameter "10\.0\.0\.0\/33"/, 'an IPv4 prefix over 32'],
    ['deny ::1/129;',       qr/\[emerg\] invalid parameter "::1\/129"/, 'an IPv6 prefix over 128'],
    ['allow 10.0.0.0/;',    qr/\[emerg\] invalid parameter "10\.0\.0\.0\/"/, 'an empty prefix'],
    ['allow localhost;',    qr/\[emerg\] invalid parameter "localhost"/, 'a host name'],
    ['allow;',              qr/\[emerg\] invalid number of arguments in "allow" directive/, 'no argument'],
    ['deny 1.2.3.4 5.6.7.8;', qr/\[emerg\] invalid number of arguments in "deny" directive/, 'two arguments'],
);
for my $c (@bad) {
    my ($line, $re, $name) = @$c;
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $line } } }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt($code, 0, "-t fails: $name");
    like($err, $re, "-t error: $name");
}

{
    my $u = Test::Ringx->new;
    $u->write_config(<<'EOF');
events { allow all; }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    like($err, qr/\[emerg\] "allow" directive is not allowed here/,
         'allow outside http is refused');
}

{
    my $u = Test::Ringx->new;
    $u->write_config(<<'EOF');
events { }
http { deny 10.0.0.1/8; server { listen 127.0.0.1:%%PORT_0%%; } }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    is($code, 0, '-t passes with host bits set');
    like($err, qr/\[warn\] low address bits of 10\.0\.0\.1\/8 are meaningless/,
         '-t prints the warning');
}

{
    my $u = Test::Ringx->new;
    my ($code, $out, $err) = $u->ringx({ prefix => 0 }, '-V');
    unlike($err, qr/--without-http_(?:access|auth_basic)_module/,
           '-V: access and auth_basic are not listed as missing');
}

done_testing;
