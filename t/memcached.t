#!/usr/bin/perl
# memcached.t: memcached_pass against the real memcached (started on a
# free port here): a hit (every byte of a large value), a miss (404, and
# error_page's fallback as nginx documents it), memcached_gzip_flag,
# the key escaped, keepalive connections reused, HEAD, POST refused, an
# unset $memcached_key (500), a response memcached never sends (502,
# logged), auto_redirect, and what -t refuses.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::IP;
use POSIX ();
use Test::More;
use Test::Ringx;

my $MC_BIN = (grep { -x } ($ENV{RINGX_MEMCACHED} // (), '/usr/bin/memcached'))[0];
plan(skip_all => 'memcached not found (Debian: apt-get install memcached, '
     . 'or "auto/deps test")') unless $MC_BIN;

sub free_port {
    my $s = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 1) or die "listen: $!";
    my $p = $s->sockport;
    close $s;
    return $p;
}

my $MCPORT = free_port();
my $mcpid = fork // die "fork: $!";
if (!$mcpid) {
    { exec $MC_BIN, '-l', '127.0.0.1', '-p', $MCPORT, '-U', '0', '-m', '16',
         $> == 0 ? ("-u", "root") : () };
    POSIX::_exit(127);
}
END { local $?; if ($mcpid) { kill 'TERM', $mcpid; waitpid($mcpid, 0); } }
Test::Ringx::wait_for(sub { IO::Socket::IP->new("127.0.0.1:$MCPORT") }, 10)
    or BAIL_OUT('memcached did not start');

# one command to memcached, its answer up to the line that ends it
sub mc {
    my ($cmd, $end) = @_;
    my $s = IO::Socket::IP->new("127.0.0.1:$MCPORT") or die "memcached: $!";
    print $s $cmd;
    my $got = '';
    while (defined(my $l = <$s>)) {
        $got .= $l;
        last if $l =~ $end;
    }
    close $s;
    return $got;
}

sub mc_set {
    my ($key, $flags, $value) = @_;
    return mc("set $key $flags 0 " . length($value) . "\r\n$value\r\n",
              qr/^(STORED|ERROR|CLIENT_ERROR|SERVER_ERROR)/);
}

sub total_connections {
    my ($n) = mc("stats\r\n", qr/^END/) =~ /STAT total_connections (\d+)/;
    return $n;
}

# a "memcached" that answers what memcached never does
my $BAD = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                              Listen => 8, ReuseAddr => 1) or die;
my $BADPORT = $BAD->sockport;
my $badpid = fork // die;
if (!$badpid) {
    while (my $c = $BAD->accept) {
        my $l = <$c>;
        print $c ($l =~ /trailer/ ? "VALUE /bad/trailer 0 3\r\nabcXXXXXXX"
                                  : "SERVER_ERROR oops\r\n");
        close $c;
    }
    POSIX::_exit(0);
}
close $BAD;
END { local $?; if ($badpid) { kill 'KILL', $badpid; waitpid($badpid, 0); } }

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    access_log off;
    default_type application/x-test;
    upstream mc { server 127.0.0.1:$MCPORT; keepalive 2; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /m/ {
            set \$memcached_key \$uri;
            memcached_pass mc;
        }
        location /fb/ {
            set \$memcached_key \$uri;
            memcached_pass 127.0.0.1:$MCPORT;
            error_page 404 = \@fallback;
        }
        location \@fallback { return 200 "from the fallback\\n"; }
        location /gz/ {
            set \$memcached_key \$uri;
            memcached_gzip_flag 2;
            memcached_pass 127.0.0.1:$MCPORT;
        }
        location /args/ {
            set \$memcached_key "\$uri?\$args";
            memcached_pass 127.0.0.1:$MCPORT;
        }
        location /nokey/ {
            memcached_pass 127.0.0.1:$MCPORT;
        }
        location /bad/ {
            set \$memcached_key \$uri;
            memcached_pass 127.0.0.1:$BADPORT;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub get {
    my ($raw, %o) = @_;
    my $c = $t->raw($P);
    $c->send($raw);
    my $r = $c->read_response(timeout => 10, %o);
    $c->close;
    return $r;
}

my $BIGV = join '', map { chr(32 + ($_ * 13 + int($_ / 97)) % 95) } 0 .. 499999;
like(mc_set('/m/hello', 0, "hello\r\nworld"), qr/^STORED/, 'set /m/hello');
like(mc_set('/m/big', 0, $BIGV), qr/^STORED/, 'set /m/big');
like(mc_set('/gz/z', 2, "gzipped"), qr/^STORED/, 'set /gz/z with flags 2');
like(mc_set('/gz/plain', 4, "plain"), qr/^STORED/, 'set /gz/plain with flags 4');
like(mc_set('/args/a%20b?x=1', 0, "escaped"), qr/^STORED/, 'set an escaped key');

my $r = get("GET /m/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 200, 'a hit: 200') or diag($r ? $r->{raw} : 'none');
is($r && $r->{body}, "hello\r\nworld", 'the value, CRLF inside it too');
is($r && $r->{headers}{'content-length'}, 12, 'with its length');
is($r && $r->{headers}{'content-type'}, 'application/x-test', 'default_type');

$r = get("GET /m/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
ok($r && $r->{body} eq $BIGV, 'a 500 KB value: every byte');

$r = get("HEAD /m/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
         head => 1);
is($r && $r->{status}, 200, 'HEAD: 200');
is($r && $r->{headers}{'content-length'}, 12, 'HEAD: the length');

$r = get("GET /m/missing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 404, 'a miss: 404');
like($r && $r->{body}, qr/404 Not Found/, 'the standard 404 page');
ok($t->log_contains(qr/\[info\].*key: "\/m\/missing" was not found by memcached/),
   'the miss logged at info, as nginx');

$r = get("GET /fb/missing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 200, 'a miss with error_page 404 = @fallback: 200');
is($r && $r->{body}, "from the fallback\n", 'from the fallback');

$r = get("GET /gz/z HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n"
         . "Connection: close\r\n\r\n");
is($r && $r->{headers}{'content-encoding'}, 'gzip',
   'memcached_gzip_flag 2 and flags 2: Content-Encoding: gzip');
is($r && $r->{body}, 'gzipped', 'the value as stored');
$r = get("GET /gz/plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
ok($r && !exists $r->{headers}{'content-encoding'}, 'flags 4: none');

$r = get("GET /args/a%20b?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 200, 'a key with a blank: escaped as nginx (%20)');
is($r && $r->{body}, 'escaped', 'found');

# keepalive: three requests, one new connection to memcached
get("GET /m/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
my $before = total_connections();
for (1 .. 3) {
    $r = get("GET /m/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}
is($r && $r->{body}, "hello\r\nworld", 'after reuse: still the value');
is(total_connections() - $before, 1,
   'keepalive: the pooled connection served them (only the stats one is new)');

$r = get("POST /m/hello HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
         . "Connection: close\r\n\r\nabc");
is($r && $r->{status}, 405, 'POST: 405, as nginx');

$r = get("GET /nokey/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 500, '$memcached_key not set: 500');
ok($t->log_contains(qr/the "\$memcached_key" variable is not set/), 'logged');

$r = get("GET /bad/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 502, 'an answer memcached never sends: 502');
ok($t->log_contains(qr/memcached sent invalid response: "SERVER_ERROR oops"/),
   'logged with what it sent');

my $c = $t->raw($P);
$c->send("GET /bad/trailer HTTP/1.1\r\nHost: x\r\n\r\n");
my $raw = $c->read_all(timeout => 5);
$c->close;
ok($raw !~ /abcXXX/, 'a bad trailer: the bytes after the value do not pass');
ok($t->wait_for(sub { $t->log_contains(qr/memcached sent invalid trailer/) }, 5),
   'a bad trailer is logged');

$r = get("GET /m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 301, '/m for "location /m/ { memcached_pass }": 301');

$t->stop;

$t->write_config(<<"EOF");
events { worker_connections 64; }
http { server { listen 127.0.0.1:%%PORT_0%%;
    location / { set \$memcached_key \$uri; memcached_buffering off;
                 memcached_pass 127.0.0.1:1; } } }
EOF
my ($rc, $out, $err) = $t->ringx('-t');
like($err, qr/\[emerg\] unknown directive "memcached_buffering"/,
     '-t: memcached_buffering (nginx has none) refused by name');
$t->write_config(<<"EOF");
events { worker_connections 64; }
http { server { listen 127.0.0.1:%%PORT_0%%;
    location / { set \$memcached_key \$uri; memcached_read_timeout 5s;
                 memcached_next_upstream error timeout not_found;
                 memcached_gzip_flag 2; memcached_pass 127.0.0.1:1; } } }
EOF
($rc, $out, $err) = $t->ringx('-t');
is($rc, 0, '-t: the memcached_* directives load') or diag($err);

done_testing;
