#!/usr/bin/perl
# ssl_session.t: session resumption with two workers (reuseport spreads
# the connections over both): the shared session cache (TLS 1.2 session
# ids, TLS 1.3 stateful tickets), session tickets with keys made once in
# the master or kept in the shared cache's zone, sessions and tickets that
# resume across a reload, ssl_session_ticket_key files and their rotation
# across a reload, and no resumption when both are off.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
my $conf = <<'EOF';
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    ssl_certificate certs/ec-localhost.crt;
    ssl_certificate_key certs/ec-localhost.key;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl reuseport;
        ssl_session_cache shared:SSL:1m;
        ssl_session_tickets off;
        location / { return 200 "pid=$pid reused=$ssl_session_reused\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl reuseport;
        ssl_session_cache off;
        location / { return 200 "pid=$pid reused=$ssl_session_reused\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%% ssl reuseport;
        ssl_session_cache off;
        KEYS
        location / { return 200 "pid=$pid reused=$ssl_session_reused\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_4%% ssl;
        ssl_session_cache shared:SMALL:32k;
        ssl_session_tickets off;
        location / { return 200 "pid=$pid reused=$ssl_session_reused\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_5%% ssl reuseport;
        ssl_session_cache shared:TK:1m;
        location / { return 200 "pid=$pid reused=$ssl_session_reused\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_3%% ssl;
        ssl_session_cache off;
        ssl_session_tickets off;
        location / { return 200 "pid=$pid reused=$ssl_session_reused\n"; }
    }
}
EOF
my $keys = $t->prefix . '/conf/keys';
mkdir $keys;
system("head -c 48 /dev/urandom > $keys/a.key; head -c 80 /dev/urandom > $keys/b.key") == 0
    or die;
(my $c1 = $conf) =~ s{KEYS}{ssl_session_ticket_key keys/a.key;};
$t->write_config($c1);
$t->run;
my @workers = $t->wait_workers(2);

my $sess = $t->prefix . '/sess';
sub s_client { Test::Ringx::Certs::s_client(@_) }

# One full handshake saved, then $n resumptions: how many were reused
# (by openssl and by $ssl_session_reused), and on how many workers a
# connection resumed. reuseport spreads connections at random (all of 6
# on one worker: 1 in 32), so up to 20 more are made until one resumed on
# each worker; only the first $n are counted as reused or not.
sub resume {
    my ($port, $opts, $n) = @_;
    unlink $sess;
    s_client($port, "$opts -sess_out $sess", "GET / HTTP/1.0\r\n\r\n");
    my ($made, $reused, $var, %pids) = (0, 0, 0);
    while ($made < $n || (keys %pids == 1 && $made < $n + 20)) {
        $made++;
        my $o = s_client($port, "$opts -sess_in $sess", "GET / HTTP/1.0\r\n\r\n");
        my $r = $o =~ /^Reused, /m;
        $pids{$1} = 1 if $r && $o =~ /pid=(\d+)/;
        next if $made > $n;
        $reused++ if $r;
        $var++ if $o =~ /reused=r$/m;
    }
    return ($reused, $var, scalar keys %pids);
}
my ($reused, $var, $npids) = resume($t->port(0), '-tls1_2 -no_ticket', 10);
is($reused, 10, 'shared cache, TLS 1.2 session ids: every connection resumes');
is($var, 10, '$ssl_session_reused is "r"');
is($npids, 2, 'on both workers');
($reused, undef, $npids) = resume($t->port(0), '-tls1_3', 10);
is($reused, 10, 'shared cache, TLS 1.3 without stateless tickets: resumes');
is($npids, 2, 'on both workers');

($reused, undef, $npids) = resume($t->port(1), '-tls1_2', 10);
is($reused, 10, 'tickets without key files, TLS 1.2: resume on any worker');
is($npids, 2, 'on both workers');
($reused, undef, $npids) = resume($t->port(1), '-tls1_3', 10);
is($reused, 10, 'tickets without key files, TLS 1.3');

($reused) = resume($t->port(3), '-tls1_2', 3);
is($reused, 0, 'no cache and no tickets: nothing resumes');
s_client($t->port(1), "-tls1_2 -sess_out $sess.other", "GET / HTTP/1.0\r\n\r\n");
my $o = s_client($t->port(3), "-tls1_2 -sess_in $sess.other");
like($o, qr/^New, /m, 'a session of another server is not resumed');

# a full zone drops its oldest sessions: 32k hold 128
SKIP: {
    eval { require IO::Socket::SSL; 1 } or skip('no IO::Socket::SSL', 3);
    my $first = "$sess.first";
    s_client($t->port(4), "-tls1_2 -no_ticket -sess_out $first", "GET / HTTP/1.0\r\n\r\n");
    my $made = 0;
    for (1 .. 140) {
        my $s = IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $t->port(4),
            SSL_version => 'TLSv1_2', SSL_verify_mode => 0,
            SSL_session_cache_size => 0) or next;
        $made++;
        $s->close(SSL_fast_shutdown => 1);
    }
    is($made, 140, '140 more sessions');
    like(s_client($t->port(4), "-tls1_2 -no_ticket -sess_in $first"), qr/^New, /m,
         'a full shared cache has dropped the oldest session');
    ($reused) = resume($t->port(4), '-tls1_2 -no_ticket', 3);
    is($reused, 3, 'and keeps resuming new ones');
}

# ticket keys: a ticket made under key A ...
($reused, undef, $npids) = resume($t->port(2), '-tls1_2', 6);
is($reused, 6, 'ssl_session_ticket_key (48 bytes): tickets resume');
is($npids, 2, 'on both workers');
my $ticket_a = "$sess.a";
s_client($t->port(2), "-tls1_2 -sess_out $ticket_a", "GET / HTTP/1.0\r\n\r\n");

# tickets without key files, shared cache: the keys live in the zone,
# made once for every worker
($reused, undef, $npids) = resume($t->port(5), '-tls1_3', 6);
is($reused, 6, 'shared cache and tickets, TLS 1.3: the zone\'s ticket keys resume');
is($npids, 2, 'on both workers');

# sessions made before a reload, to resume after it
my %before;
for (['id', 0, '-tls1_2 -no_ticket'], ['t12', 5, '-tls1_2'], ['t13', 5, '-tls1_3']) {
    my ($k, $port, $opts) = @$_;
    $before{$k} = "$sess.before.$k";
    s_client($t->port($port), "$opts -sess_out $before{$k}", "GET / HTTP/1.0\r\n\r\n");
}

# ... still resumes after a reload that lists B (80 bytes) then A
(my $c2 = $conf) =~ s{KEYS}{ssl_session_ticket_key keys/b.key;
        ssl_session_ticket_key keys/a.key;};
$t->write_config($c2);
$t->signal('HUP');
@workers = $t->wait_workers(2, not => \@workers, timeout => 5);
$o = s_client($t->port(2), "-tls1_2 -sess_in $ticket_a", "GET / HTTP/1.0\r\n\r\n");
like($o, qr/^Reused, /m, 'after rotation (B, A): a ticket made under A resumes');
for (['id', 0, '-tls1_2 -no_ticket', 'a TLS 1.2 session id in the shared cache'],
     ['t12', 5, '-tls1_2', 'a TLS 1.2 ticket under the zone\'s key'],
     ['t13', 5, '-tls1_3', 'a TLS 1.3 ticket under the zone\'s key (nothing in the cache)']) {
    my ($k, $port, $opts, $what) = @$_;
    my $out = s_client($t->port($port), "$opts -sess_in $before{$k}", "GET / HTTP/1.0\r\n\r\n");
    like($out, qr/^Reused, /m, "across a reload: $what resumes");
}
($reused) = resume($t->port(2), '-tls1_2', 4);
is($reused, 4, 'new tickets are made under B and resume');

# ... and not once A is gone
(my $c3 = $conf) =~ s{KEYS}{ssl_session_ticket_key keys/b.key;};
$t->write_config($c3);
$t->signal('HUP');
$t->wait_workers(2, not => \@workers, timeout => 5);
$o = s_client($t->port(2), "-tls1_2 -sess_in $ticket_a", "GET / HTTP/1.0\r\n\r\n");
like($o, qr/^New, /m, 'without key A its ticket no longer resumes');
like($o, qr/reused=\.$/m, 'a full handshake then');

# key files that are not 48 or 80 bytes
system("head -c 47 /dev/urandom > $keys/short.key");
$t->expect_log(qr/must be 48 or 80 bytes/);
(my $bad = $conf) =~ s{KEYS}{ssl_session_ticket_key keys/short.key;};
$t->write_file('conf/bad.conf', $bad);
my ($rc, undef, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/bad.conf');
isnt($rc, 0, 'a 47-byte ticket key is refused');
like($err, qr{\[emerg\] "\S+/keys/short\.key" must be 48 or 80 bytes in \S+bad\.conf:\d+},
     'with the file and the line');

# the zone is one of shm_zone's: a name used for another kind is refused
(my $clash = $conf) =~ s{KEYS}{};
$clash =~ s#http \{#http {\n    limit_req_zone \$binary_remote_addr zone=SSL:1m rate=1r/s;#;
$t->expect_log(qr/already declared for a different use/);
$t->write_file('conf/clash.conf', $clash);
($rc, undef, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/clash.conf');
isnt($rc, 0, 'a session cache zone named like a limit_req zone is refused');
like($err, qr{\[emerg\] the shared memory zone "SSL" is already declared for a different use in \S+clash\.conf:\d+},
     "... in nginx's words, with the file and the line");

$t->stop;

# ssl_session_cache builtin: OpenSSL's own cache, per worker (one here). A
# session must survive its connection being closed by the server without
# a close_notify from the client (Connection: close, s_client leaving).
{
    my $b = Test::Ringx->new;
    Test::Ringx::Certs::make($b->prefix . '/conf/certs', 'localhost');
    $b->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        ssl_session_cache builtin:1000;
        ssl_session_tickets off;
        location / { return 200 "reused=$ssl_session_reused\n"; }
    }
}
EOF
    $b->run;
    unlink $sess;
    s_client($b->port(0), "-tls1_2 -no_ticket -sess_out $sess",
             "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $reused = 0;
    for (1 .. 4) {
        my $o = s_client($b->port(0), "-tls1_2 -no_ticket -sess_in $sess",
                         "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $reused++ if $o =~ /^Reused, /m && $o =~ /reused=r$/m;
    }
    is($reused, 4, 'builtin cache: sessions of connections the server closed resume');
    $b->stop;
}

done_testing;
