#!/usr/bin/perl
# realip.t: set_real_ip_from, real_ip_header, real_ip_recursive (nginx's
# realip module) with real clients on the loopback network: 127.0.0.2 is
# the trusted proxy, 127.0.0.1 an untrusted client. X-Real-IP from a
# trusted and an untrusted source (with ports, IPv6, garbage), X-Forwarded-For
# walked from the right, recursive and not, over several headers, any
# header name, unix: trusted, location-level settings (the preaccess
# phase) and server-level ones (post-read: the server's rewrite script
# already sees the address). The real address reaches $remote_addr,
# $remote_port, $binary_remote_addr, allow/deny, geo, the access and error
# logs and $proxy_add_x_forwarded_for; $realip_remote_addr/_port keep the
# connection's. The PROXY protocol source is in t/proxy_protocol.t.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use IO::Socket::UNIX;
use Socket qw(SOCK_STREAM);
use Test::Ringx;

my $t = Test::Ringx->new;
my $sock = $t->prefix . '/logs/realip.sock';
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    log_format rl '\$remote_addr|\$remote_port|\$realip_remote_addr|\$request_uri';
    access_log logs/access.log rl;
    default_type text/plain;
    geo \$g { default other; 203.0.113.0/24 docnet; }

    # X-Real-IP (the default) from 127.0.0.2 and from unix sockets
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen unix:$sock;
        server_name a;
        root html;
        set_real_ip_from 127.0.0.2;
        set_real_ip_from unix:;
        if (\$remote_addr = 203.0.113.99) { return 200 "server rewrite saw the real address\\n"; }
        location / {
            return 200 "\$remote_addr|\$remote_port|\$realip_remote_addr|\$realip_remote_port|\$g\\n";
        }
        location = /bin { return 200 \$binary_remote_addr; }
        location = /xff { return 200 "\$proxy_add_x_forwarded_for\\n"; }
        location /deny/ { deny 203.0.113.0/24; allow all; }
    }

    # X-Forwarded-For, not recursive
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name b;
        set_real_ip_from 127.0.0.0/8;
        real_ip_header X-Forwarded-For;
        location / { return 200 "\$remote_addr|\$remote_port\\n"; }
    }

    # X-Forwarded-For, recursive
    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name c;
        set_real_ip_from 127.0.0.0/8;
        set_real_ip_from ::1;
        real_ip_header X-Forwarded-For;
        real_ip_recursive on;
        location / { return 200 "\$remote_addr|\$remote_port\\n"; }
    }

    # location-level settings only: the preaccess phase applies them, after
    # the location's rewrite script (as nginx) and before access
    server {
        listen 127.0.0.1:%%PORT_3%%;
        server_name d;
        root html;
        location /loc/ {
            set_real_ip_from 127.0.0.2;
            real_ip_header X-Client;
            add_header X-Remote "\$remote_addr|\$realip_remote_addr";
            deny 198.51.100.0/24;
        }
        location /none/ { add_header X-Remote \$remote_addr; }
    }
}
EOF
$t->write_file_raw('html/deny/f', "in\n");
$t->write_file_raw('html/loc/f', "in\n");
$t->write_file_raw('html/none/f', "in\n");
$t->run;

sub req {
    my ($port, $uri, $headers, %o) = @_;
    my $c = $t->raw($port, %o) or return undef;
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\n" . ($headers // '')
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r;
}

sub body {
    my $r = req(@_);
    return $r ? $r->{body} : '';
}

my ($P0, $P1, $P2, $P3) = map { $t->port($_) } 0 .. 3;
my %proxy = (local => '127.0.0.2');
my %other = (local => '127.0.0.1');

# ---- X-Real-IP --------------------------------------------------------------

like(body($P0, '/', "X-Real-IP: 203.0.113.5\r\n", %proxy),
     qr/^203\.0\.113\.5\|\|127\.0\.0\.2\|\d+\|docnet\n\z/,
     'X-Real-IP from a trusted proxy: $remote_addr, no port, $realip_remote_addr and geo');
like(body($P0, '/', "X-Real-IP: 203.0.113.5\r\n", %other),
     qr/^127\.0\.0\.1\|\d+\|127\.0\.0\.1\|\d+\|other\n\z/,
     'X-Real-IP from an untrusted client: ignored');
like(body($P0, '/', "X-Real-IP: [2001:db8::7]:8080\r\n", %proxy),
     qr/^2001:db8::7\|8080\|127\.0\.0\.2\|/, 'X-Real-IP "[v6]:port": address and $remote_port');
like(body($P0, '/', "X-Real-IP: 198.51.100.3:4444\r\n", %proxy),
     qr/^198\.51\.100\.3\|4444\|/, 'X-Real-IP "v4:port"');
like(body($P0, '/', "X-Real-IP: not-an-address\r\n", %proxy),
     qr/^127\.0\.0\.2\|\d+\|127\.0\.0\.2\|/, 'X-Real-IP that is not an address: ignored');
like(body($P0, '/', "X-Real-IP: 198.51.100.3:0\r\n", %proxy),
     qr/^127\.0\.0\.2\|/, 'X-Real-IP with port 0: not an address (nginx)');
like(body($P0, '/', '', %proxy), qr/^127\.0\.0\.2\|/, 'no X-Real-IP: the peer');
is(body($P0, '/', "X-Real-IP: 203.0.113.99\r\n", %proxy),
   "server rewrite saw the real address\n",
   'post-read runs before the server\'s rewrite script');
is(body($P0, '/bin', "X-Real-IP: 203.0.113.5\r\n", %proxy), pack('C4', 203, 0, 113, 5),
   '$binary_remote_addr is the real address');
is(body($P0, '/xff', "X-Real-IP: 203.0.113.5\r\n", %proxy), "203.0.113.5\n",
   '$proxy_add_x_forwarded_for appends the real address');
is(body($P0, '/xff', "X-Real-IP: 203.0.113.5\r\nX-Forwarded-For: 192.0.2.1\r\n", %proxy),
   "192.0.2.1, 203.0.113.5\n", '$proxy_add_x_forwarded_for after an X-Forwarded-For');

my $r = req($P0, '/deny/f', "X-Real-IP: 203.0.113.5\r\n", %proxy);
is($r && $r->{status}, 403, 'deny by the real address');
$r = req($P0, '/deny/f', "X-Real-IP: 198.51.100.5\r\n", %proxy);
is($r && $r->{status}, 200, 'allow by the real address');
$r = req($P0, '/deny/f', "X-Real-IP: 203.0.113.5\r\n", %other);
is($r && $r->{status}, 200, 'an untrusted client\'s X-Real-IP does not get it denied');
ok($t->log_contains(qr/access forbidden by rule, client: 203\.0\.113\.5, server: a, request: "GET \/deny\/f/),
   'the error log names the real client');

# unix: trusted
{
    my $s = IO::Socket::UNIX->new(Peer => $sock, Type => SOCK_STREAM());
    ok($s, 'unix socket connects') or diag("$sock: $!");
    print $s "GET / HTTP/1.1\r\nHost: a\r\nX-Real-IP: 192.0.2.44\r\nConnection: close\r\n\r\n"
        if $s;
    local $/;
    my $raw = $s ? <$s> // '' : '';
    my ($u) = Test::Ringx::parse_responses($raw);
    like($u ? $u->{body} : '', qr/^192\.0\.2\.44\|\|unix:\|\|other\n\z/,
         'unix: trusted: X-Real-IP from a unix socket client');
}

# ---- X-Forwarded-For ----------------------------------------------------------

like(body($P1, '/', "X-Forwarded-For: 198.51.100.7, 127.0.0.5\r\n", %proxy),
     qr/^127\.0\.0\.5\|\|?\n/, 'not recursive: the rightmost item only');
like(body($P1, '/', "X-Forwarded-For: 198.51.100.7,  ,\r\n", %proxy),
     qr/^198\.51\.100\.7\|/, 'trailing separators are skipped');
like(body($P2, '/', "X-Forwarded-For: 198.51.100.7, 127.0.0.5\r\n", %proxy),
     qr/^198\.51\.100\.7\|/, 'recursive: trusted items are skipped');
like(body($P2, '/', "X-Forwarded-For: 10.0.0.1, 198.51.100.7, 127.0.0.5\r\n", %proxy),
     qr/^198\.51\.100\.7\|/, 'recursive: the first untrusted item from the right');
like(body($P2, '/', "X-Forwarded-For: 127.0.0.9,127.0.0.5\r\n", %proxy),
     qr/^127\.0\.0\.9\|/, 'recursive, all trusted: the leftmost');
like(body($P2, '/', "X-Forwarded-For: 198.51.100.7\r\nX-Forwarded-For: 127.0.0.5\r\n", %proxy),
     qr/^198\.51\.100\.7\|/, 'recursive: into the earlier X-Forwarded-For header');
like(body($P2, '/', "X-Forwarded-For: bogus, 127.0.0.5\r\n", %proxy),
     qr/^127\.0\.0\.5\|/, 'recursive: an item that is not an address stops the walk');
like(body($P2, '/', "X-Forwarded-For: 198.51.100.7, [::1]:81, 127.0.0.5\r\n", %proxy),
     qr/^198\.51\.100\.7\|/, 'recursive: a trusted IPv6 item with a port is skipped');
like(body($P1, '/', "X-Forwarded-For: 198.51.100.7\r\n", %other),
     qr/^198\.51\.100\.7\|/, '127.0.0.0/8 trusts 127.0.0.1 too');

# ---- location-level settings, any header ---------------------------------------

$r = req($P3, '/loc/f', "X-Client: 203.0.113.8\r\n", %proxy);
is($r && $r->{headers}{'x-remote'}, '203.0.113.8|127.0.0.2',
   'location level: X-Client header, applied in preaccess');
$r = req($P3, '/loc/f', "X-Client: 198.51.100.8\r\n", %proxy);
is($r && $r->{status}, 403, 'location level: access sees the real address');
$r = req($P3, '/loc/f', "X-Real-IP: 203.0.113.8\r\n", %proxy);
is($r && $r->{headers}{'x-remote'}, '127.0.0.2|127.0.0.2',
   'location level: X-Real-IP is not the configured header');
$r = req($P3, '/none/f', "X-Client: 203.0.113.8\r\n", %proxy);
is($r && $r->{headers}{'x-remote'}, '127.0.0.2', 'another location: no realip');

# ---- keepalive: each request on its own ------------------------------------------

{
    my $c = $t->raw($P0, %proxy);
    $c->send("GET / HTTP/1.1\r\nHost: a\r\nX-Real-IP: 203.0.113.1\r\n\r\n"
             . "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    my @r = $c->read_responses(2, timeout => 3);
    like($r[0] ? $r[0]{body} : '', qr/^203\.0\.113\.1\|/, 'keepalive: first request real address');
    like($r[1] ? $r[1]{body} : '', qr/^127\.0\.0\.2\|/,
         'keepalive: the next request without the header is the peer again');
}

# ---- the access log --------------------------------------------------------------

ok(Test::Ringx::wait_for(sub {
    ($t->read_file('logs/access.log') // '') =~ /^203\.0\.113\.5\|\|127\.0\.0\.2\|\/bin$/m
}, 5), 'access log: $remote_addr real, $realip_remote_addr the proxy')
    or diag($t->read_file('logs/access.log'));
like($t->read_file('logs/access.log') // '', qr/^127\.0\.0\.1\|\d+\|127\.0\.0\.1\|\/deny\/f$/m,
     'access log: an untrusted client as it is');

$t->stop;

# ---- configuration -------------------------------------------------------------

my @bad = (
    ['set_real_ip_from 300.0.0.1;', qr/\[emerg\] host not found in set_real_ip_from "300\.0\.0\.1"/,
     'a bad address (not a host either)'],
    ['set_real_ip_from 10.0.0.0/33;', qr/\[emerg\] invalid parameter "10\.0\.0\.0\/33"/,
     'a prefix over 32'],
    ['real_ip_header X-Real-IP; real_ip_header X-Forwarded-For;',
     qr/\[emerg\] "real_ip_header" directive is duplicate/, 'real_ip_header twice'],
    ['real_ip_recursive yes;', qr/\[emerg\] invalid value "yes" in "real_ip_recursive"/,
     'real_ip_recursive takes on|off'],
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
    $u->write_config(<<"EOF");
events { }
http { set_real_ip_from 10.1.2.3/8; set_real_ip_from localhost;
       server { listen 127.0.0.1:%%PORT_0%%; } }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    is($code, 0, '-t: a host name and a CIDR with host bits are accepted');
    like($err, qr/\[warn\] low address bits of 10\.1\.2\.3\/8 are meaningless/,
         '-t: nginx\'s warning for host bits');
}

done_testing;
