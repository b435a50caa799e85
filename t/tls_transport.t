#!/usr/bin/perl
# tls_transport.t: tries to break the TLS transport (event/tls.c) end to
# end with real clients (IO::Socket::SSL, Net::SSLeay over memory BIOs,
# openssl s_client, curl): pipelining over TLS 1.2 and 1.3 (all at once
# and one byte per record), a slow reader of a 20 MiB file (memory stays
# bounded), a 10 MiB request body proxied to a plain origin, 200 requests
# on one connection, close_notify and bare TCP closes during keepalive and
# mid-response, handshakes that stall, crawl byte by byte or are abandoned,
# and session resumption after the server closed the connection.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Test::Upstream;
use Digest::SHA qw(sha256_hex);
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use IO::Select;
use Socket qw(IPPROTO_TCP TCP_NODELAY SOL_SOCKET SO_LINGER);
use Time::HiRes qw(sleep time);

BEGIN {
    eval { require IO::Socket::SSL; require Net::SSLeay; 1 }
        or plan(skip_all => 'no IO::Socket::SSL');
    IO::Socket::SSL->import(qw(SSL_VERIFY_NONE));
}

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 512; }
http {
    access_log off;
    client_header_timeout 1s;
    ssl_certificate certs/ec-localhost.crt;
    ssl_certificate_key certs/ec-localhost.key;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name localhost;
        root html;
        log_not_found off;
        client_body_buffer_size 8k;
        client_max_body_size 20m;
        location /up/ { proxy_pass http://$UP; }
        location = /cr { return 200 "c=\$connection n=\$connection_requests\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl;
        server_name localhost;
        client_header_timeout 30s;
        location / { return 200 "slow hello p=\$ssl_protocol\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%% ssl;
        server_name localhost;
        ssl_session_cache shared:S:1m;
        ssl_session_tickets off;
        keepalive_timeout 1s;
        location / { return 200 "reused=\$ssl_session_reused\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_4%% ssl;
        server_name localhost;
        ssl_session_cache builtin;
        ssl_session_tickets off;
        keepalive_timeout 1s;
        location / { return 200 "reused=\$ssl_session_reused\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_3%% ssl;
        server_name localhost;
        ssl_session_cache off;
        keepalive_timeout 1s;
        location / { return 200 "reused=\$ssl_session_reused\\n"; }
    }
}
EOF

# files: sizes around the 16 KiB record, random bytes for the big ones
my %file;
for my $n (0, 1, 100, 16383, 16384, 16385, 70000) {
    $file{"/s$n.txt"} = join('', map { chr(65 + ($_ * 7 + $n) % 26) } 1 .. $n);
    $t->write_file_raw("html/s$n.txt", $file{"/s$n.txt"});
}
$file{'/end.txt'} = "END OF PIPELINE\n";
$t->write_file_raw('html/end.txt', $file{'/end.txt'});
system("head -c 1048576 /dev/urandom > " . $t->prefix . "/html/big1m.bin") == 0 or die;
$file{'/big1m.bin'} = $t->read_file('html/big1m.bin');
system("head -c 20971520 /dev/urandom > " . $t->prefix . "/html/big20m.bin") == 0 or die;
my $sha20 = sha256_hex($t->read_file('html/big20m.bin'));

$t->run;
my ($P0, $P1, $P2, $P3) = map { $t->port($_) } 0 .. 3;
my ($worker) = $t->wait_workers(1);
my $log = $t->prefix . '/logs/error.log';

# ---- helpers ---------------------------------------------------------------

sub log_size { return -s $log // 0 }

# Error log lines written since $from at a level above info.
sub loud_lines {
    my ($from) = @_;
    open my $fh, '<', $log or return ();
    seek $fh, $from, 0;
    return grep { /\[(?:notice|warn|error|crit|alert|emerg)\]/ } <$fh>;
}

sub since {
    my ($from) = @_;
    open my $fh, '<', $log or return ();
    seek $fh, $from, 0;
    return <$fh>;
}

sub quiet_since {
    my ($from, $name) = @_;
    my @l = loud_lines($from);
    ok(!@l, $name) or diag(@l);
}

sub tls {
    my (%o) = @_;
    my $port = delete $o{port} // $P0;
    my $s = IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $port,
        SSL_verify_mode => SSL_VERIFY_NONE(), SSL_hostname => 'localhost',
        Timeout => 5, %o) or diag("TLS connect: $IO::Socket::SSL::SSL_ERROR $!");
    return $s;
}

# Writes $out (in syswrites of `piece` bytes: one TLS record each) while
# reading, until done->($buf) holds, EOF, or `timeout` seconds.
# Returns (bytes read, eof).
sub exchange {
    my ($s, $out, %o) = @_;
    my $piece = $o{piece} || length($out) || 1;
    my $done = $o{done} // sub { 0 };
    my $deadline = time + Test::Ringx::timeout($o{timeout} // 20);
    my ($buf, $off, $eof) = ('', 0, 0);
    $s->blocking(0);
    while (time < $deadline) {
        my $progress = 0;
        if ($off < length $out) {
            my $len = length($out) - $off;
            $len = $piece if $len > $piece;
            my $n = $s->syswrite($out, $len, $off);
            if ($n) {
                $off += $n;
                $progress = 1;
            } elsif (!$IO::Socket::SSL::SSL_ERROR
                     || ($IO::Socket::SSL::SSL_ERROR != IO::Socket::SSL::SSL_WANT_WRITE()
                         && $IO::Socket::SSL::SSL_ERROR != IO::Socket::SSL::SSL_WANT_READ())) {
                diag("syswrite: $IO::Socket::SSL::SSL_ERROR $!");
                last;
            }
        }
        while (1) {
            my $n = $s->sysread(my $b, 65536);
            if ($n) {
                $buf .= $b;
                $progress = 1;
                next;
            }
            $eof = 1 if defined $n;
            last;
        }
        last if $eof || ($off == length $out && $done->($buf));
        next if $progress;
        my $r = IO::Select->new($s);
        my $w = $off < length $out ? IO::Select->new($s) : undef;
        IO::Select::select($r, $w, undef, 0.05);
    }
    $s->blocking(1);
    return ($buf, $eof);
}

# done-callback: one complete response at the start of the buffer
sub one_response {
    my ($buf) = @_;
    my ($r) = Test::Ringx::_parse_one(\$buf);
    return $r;
}

sub get_one {
    my ($s, $path, $extra) = @_;
    my ($buf) = exchange($s, "GET $path HTTP/1.1\r\nHost: localhost\r\n"
                             . ($extra // '') . "\r\n",
                         done => \&one_response, timeout => 5);
    my ($r, $used) = Test::Ringx::_parse_one(\$buf);
    return $r && $used == length $buf ? $r : undef;
}

sub rss_kb {
    my $st = $t->proc_status($worker) or return 0;
    return (($st->{VmRSS} // '0') =~ /(\d+)/)[0];
}

sub answers {
    my $out = qx{curl -sk --max-time 5 https://127.0.0.1:$P0/s100.txt 2>&1};
    return $out eq $file{'/s100.txt'};
}

# ---- pipelining ---------------------------------------------------------------

my @paths = map { ('/s0.txt', '/s1.txt', '/s100.txt', '/s16383.txt', '/s16384.txt',
                   '/s16385.txt', '/s70000.txt', '/nosuch') } 1 .. 6;
splice @paths, 10, 0, '/big1m.bin';
splice @paths, 30, 0, '/big1m.bin';
@paths = @paths[0 .. 48];
push @paths, '/end.txt';
is(scalar @paths, 50, '50 pipelined requests');
my $pipeline = join '', map { "GET $_ HTTP/1.1\r\nHost: localhost\r\n\r\n" } @paths;
my $end = $file{'/end.txt'};

for my $v (['TLSv1_2', 'TLSv1.2'], ['TLSv1_3', 'TLSv1.3']) {
    for my $piece (0, 1) {
        my $how = $piece ? 'one byte per record' : 'in one write';
        my $name = "$v->[1], $how";
        my $s = tls(SSL_version => $v->[0]);
        is($s && $s->get_sslversion, $v->[0], "$name: negotiated");
        next unless $s;
        my $from = log_size();
        my ($buf, $eof) = exchange($s, $pipeline, piece => $piece,
            done => sub { substr($_[0], -length $end) eq $end }, timeout => 30);
        ok(!$eof, "$name: the connection stays open");
        my @r = Test::Ringx::parse_responses($buf);
        is(scalar @r, 50, "$name: 50 responses");
        my @bad;
        for my $i (0 .. $#paths) {
            my ($p, $r) = ($paths[$i], $r[$i]);
            if (!$r) {
                push @bad, "$i $p: missing";
            } elsif ($p eq '/nosuch') {
                push @bad, "$i $p: $r->{status}" if $r->{status} != 404;
            } elsif ($r->{status} != 200 || $r->{body} ne $file{$p}) {
                push @bad, "$i $p: $r->{status}, " . length($r->{body}) . " bytes";
            }
        }
        ok(!@bad, "$name: every response in order and complete") or diag(join "\n", @bad);
        my $total = 0;
        $total += length $_->{raw} for @r;
        is($total, length $buf, "$name: nothing after the last response");
        my $r = get_one($s, '/cr');
        like($r && $r->{body}, qr/ n=51$/, "$name: the connection goes on (request 51)");
        $s->close;
        quiet_since($from, "$name: nothing logged above info");
    }
}

# ---- a slow reader ----------------------------------------------------------------

{
    my $s = tls();
    get_one($s, '/big1m.bin');          # the worker's buffers exist once
    $s->close;
    my $rss0 = rss_kb();
    $s = tls();
    $s->syswrite("GET /big20m.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $head = '';
    while (index($head, "\r\n\r\n") < 0) {
        my $n = $s->sysread(my $b, 16384) or last;
        $head .= $b;
    }
    like($head, qr{^HTTP/1\.1 200 .*\r\nContent-Length: 20971520\r\n}s,
         'slow reader: the head of a 20 MiB file');
    my $max = 0;
    for (1 .. 8) {                       # stalled for 4 s
        sleep 0.5;
        my $r = rss_kb();
        $max = $r if $r > $max;
    }
    my $body = substr($head, index($head, "\r\n\r\n") + 4);
    my $deadline = time + Test::Ringx::timeout(30);
    while (length($body) < 20971520 && time < $deadline) {
        my $n = $s->sysread(my $b, 1 << 20) or last;
        $body .= $b;
    }
    is(length $body, 20971520, 'slow reader: the whole body arrives');
    ok(sha256_hex($body) eq $sha20, 'slow reader: intact (sha256)');
    note("worker RSS before $rss0 kB, at most $max kB while the client stalled");
    SKIP: {
        skip('ASan keeps freed memory resident', 1) if $t->sanitized;
        cmp_ok($max - $rss0, '<', 6 * 1024,
               "slow reader: the worker's RSS stays bounded while the client stalls")
            or diag("RSS before $rss0 kB, max while stalled $max kB");
    }
    my $r = get_one($s, '/s100.txt');
    is($r && $r->{body}, $file{'/s100.txt'}, 'slow reader: keepalive after it');
    $s->close;
}

# ---- a large request body, proxied ---------------------------------------------------

{
    my $body = '';
    open my $fh, '<', '/dev/urandom' or die;
    read($fh, $body, 10 * 1024 * 1024) == 10 * 1024 * 1024 or die;
    close $fh;
    $up->reset;
    for my $piece (0, 1000) {
        my $s = tls();
        my ($buf) = exchange($s, "POST /up/len/7 HTTP/1.1\r\nHost: localhost\r\n"
            . "Content-Length: " . length($body) . "\r\n\r\n" . $body,
            piece => $piece, done => \&one_response, timeout => 30);
        my ($r) = Test::Ringx::_parse_one(\$buf);
        my $how = $piece ? "in $piece-byte records" : 'in one write';
        is($r && $r->{status}, 200, "10 MiB upload over TLS ($how): proxied");
        my @req = $up->wait_requests(1);
        my $got = $req[-1] && $req[-1]{body} // '';
        is(length $got, length $body, "10 MiB upload ($how): the origin got every byte");
        ok(sha256_hex($got) eq sha256_hex($body), "10 MiB upload ($how): intact");
        $up->reset;
        $s->close;
    }
}

# ---- keepalive and closes -------------------------------------------------------------

{
    my $s = tls();
    my ($ok, $last) = (0, '');
    for my $i (1 .. 200) {
        my $r = get_one($s, $i % 2 ? '/cr' : '/s16385.txt');
        last unless $r;
        if ($i % 2) {
            $last = $r->{body};
            $ok++ if $r->{body} =~ / n=$i$/;
        } else {
            $ok++ if $r->{body} eq $file{'/s16385.txt'};
        }
    }
    is($ok, 200, '200 sequential requests on one TLS connection');

    # close_notify from the client between two requests
    my $from = log_size();
    $s = tls();
    get_one($s, '/s100.txt');
    my $bidir = $s->stop_SSL(SSL_fast_shutdown => 0, Timeout => 3);
    ok($bidir, 'close_notify during keepalive: the server answers with its own');
    my $sel = IO::Select->new($s);
    my $n = $sel->can_read(Test::Ringx::timeout(3)) ? sysread($s, my $b, 100) : undef;
    is($n, 0, 'close_notify during keepalive: the server closes the connection');
    close $s;

    # a TCP close without close_notify, idle and with a request half sent
    $s = tls();
    get_one($s, '/s100.txt');
    $s->close(SSL_no_shutdown => 1);
    $s = tls();
    $s->syswrite("GET /s100.txt HTTP/1.1\r\nHost: loc");
    sleep 0.1;
    $s->close(SSL_no_shutdown => 1);
    # closes while a response is being sent: FIN, and RST
    for my $rst (0, 1) {
        $s = tls();
        $s->syswrite("GET /big20m.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
        $s->sysread(my $b, 16384);
        setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0)) if $rst;
        $s->close(SSL_no_shutdown => 1);
    }
    sleep 0.3;
    ok(answers(), 'closes without close_notify: the server still answers');
    ok(Test::Ringx::pid_alive($worker), 'and the worker is the same');
    quiet_since($from, 'close_notify and TCP closes: nothing logged above info');
    my @named = grep { /client: / } since($from);
    my @wrong = grep { !/client: 127\.0\.0\.1[,\s]/ } @named;
    ok(@named && !@wrong, 'the lines logged about closed clients name the client\'s address')
        or diag(@wrong);
}

# ---- handshakes -------------------------------------------------------------------------

# A client over memory BIOs: the bytes it sends are ours to cut.
sub mem_client {
    my (%o) = @_;
    my $ctx = Net::SSLeay::CTX_new() or die;
    Net::SSLeay::CTX_set_verify($ctx, 0, undef);
    if ($o{v12}) {
        Net::SSLeay::CTX_set_max_proto_version($ctx, Net::SSLeay::TLS1_2_VERSION());
    }
    my $ssl = Net::SSLeay::new($ctx);
    my $rb = Net::SSLeay::BIO_new(Net::SSLeay::BIO_s_mem());
    my $wb = Net::SSLeay::BIO_new(Net::SSLeay::BIO_s_mem());
    Net::SSLeay::set_bio($ssl, $rb, $wb);
    Net::SSLeay::set_connect_state($ssl);
    Net::SSLeay::set_tlsext_host_name($ssl, 'localhost');
    Net::SSLeay::do_handshake($ssl);
    my $m = { ctx => $ctx, ssl => $ssl, rb => $rb, wb => $wb };
    $m->{hello} = mem_out($m);
    return $m;
}

sub mem_out {
    my ($m) = @_;
    my $out = '';
    while (Net::SSLeay::BIO_pending($m->{wb}) > 0) {
        $out .= Net::SSLeay::BIO_read($m->{wb});
    }
    return $out;
}

sub mem_free {
    my ($m) = @_;
    Net::SSLeay::free($m->{ssl});
    Net::SSLeay::CTX_free($m->{ctx});
}

sub tcp {
    my ($port) = @_;
    my $s = IO::Socket::IP->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                Timeout => 3) or return undef;
    setsockopt($s, IPPROTO_TCP, TCP_NODELAY, 1);
    binmode $s;
    return $s;
}

# Pumps bytes between the socket and the memory client until the
# handshake is done, then sends $req and reads until the server closes.
sub mem_finish {
    my ($m, $s, $req) = @_;
    my $deadline = time + Test::Ringx::timeout(10);
    my $sel = IO::Select->new($s);
    my ($plain, $done) = ('', 0);
    while (time < $deadline) {
        if (!$done) {
            my $rc = Net::SSLeay::do_handshake($m->{ssl});
            if ($rc == 1) {
                $done = 1;
                Net::SSLeay::write($m->{ssl}, $req);
            }
        }
        my $out = mem_out($m);
        syswrite($s, $out) if length $out;
        if ($done) {
            while (defined(my $p = Net::SSLeay::read($m->{ssl}))) {
                last unless length $p;
                $plain .= $p;
            }
        }
        next unless $sel->can_read(0.2);
        my $n = sysread($s, my $b, 65536);
        last unless $n;
        Net::SSLeay::BIO_write($m->{rb}, $b);
    }
    if ($done) {
        while (defined(my $p = Net::SSLeay::read($m->{ssl}))) {
            last unless length $p;
            $plain .= $p;
        }
    }
    return ($done, $plain);
}

{
    # a client that sends nothing, and one that stops inside its hello
    my $from = log_size();
    my $m = mem_client();
    my @c = (tcp($P0), tcp($P0));
    syswrite($c[1], substr($m->{hello}, 0, 40));
    my $t0 = time;
    my @closed = map { Test::Ringx::Conn::wait_closed(
        bless({ sock => $_, buf => '', eof => 0, sel => IO::Select->new($_) },
              'Test::Ringx::Conn'), 5) } @c;
    my $took = time - $t0;
    ok($closed[0], 'a client that sends nothing is closed (client_header_timeout 1s)');
    ok($closed[1], 'a client that stops inside its ClientHello is closed');
    cmp_ok($took, '>', 0.7, 'not before the timeout');
    # nginx: "client timed out (110: Connection timed out) while SSL
    # handshaking, client: ..., server: ..." at info, for each
    my @info = grep { /\[info\] .*client timed out \(110: Connection timed out\) while SSL handshaking, client: 127\.0\.0\.1, server: 127\.0\.0\.1:$P0/ }
        since($from);
    is(scalar @info, 2, 'the handshake timeouts are logged at info, in nginx\'s words')
        or diag(since($from));
    quiet_since($from, 'handshake timeouts: nothing logged above info');
    close $_ for @c;
    mem_free($m);

    # a ClientHello one byte at a time, 10 ms apart
    for my $v12 (0, 1) {
        $from = log_size();
        $m = mem_client(v12 => $v12);
        my $s = tcp($P1);
        for my $byte (split //, $m->{hello}) {
            syswrite($s, $byte);
            sleep 0.01;
        }
        my ($done, $plain) = mem_finish($m, $s,
            "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        my $v = $v12 ? 'TLSv1.2' : 'TLSv1.3';
        ok($done, "a ClientHello of " . length($m->{hello})
                  . " bytes sent one byte at a time: the handshake completes ($v)");
        like($plain, qr/\r\n\r\nslow hello p=\Q$v\E\n\z/, "and the request is answered ($v)");
        close $s;
        mem_free($m);
        quiet_since($from, "slow ClientHello ($v): nothing logged above info");
    }

    # 200 connections abandoned at every step of the handshake
    $from = log_size();
    my $abandoned = 0;
    for my $batch (0 .. 7) {
        my @held;
        for my $i (0 .. 24) {
            my $k = ($batch * 25 + $i) % 8;
            my $mc = mem_client(v12 => $i % 2);
            my $s = tcp($P0) or next;
            $abandoned++;
            if ($k == 1) {
                syswrite($s, substr($mc->{hello}, 0, 5));          # a record header
            } elsif ($k == 2) {
                syswrite($s, substr($mc->{hello}, 0, length($mc->{hello}) - 1));
            } elsif ($k >= 3) {
                syswrite($s, $mc->{hello});
            }
            if ($k == 4 || $k == 5) {                             # the server's flight
                IO::Select->new($s)->can_read(2);
                my $b = "";
                sysread($s, $b, $k == 4 ? 10 : 65536);
                if ($k == 5) {                                    # half of our finish
                    Net::SSLeay::BIO_write($mc->{rb}, $b);
                    Net::SSLeay::do_handshake($mc->{ssl});
                    my $fin = mem_out($mc);
                    syswrite($s, substr($fin, 0, int(length($fin) / 2)));
                }
            }
            if ($k == 6) {                                        # a corrupted hello
                my $bad = $mc->{hello};
                substr($bad, 9, 2) = "\xff\xff";
                syswrite($s, $bad . "\x16\x03\x01\x00\x01x" x 3);
            }
            setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0)) if $k == 7 || $i % 5 == 0;
            push @held, $s;
            mem_free($mc);
        }
        close $_ for @held;
    }
    is($abandoned, 200, '200 connections abandoned mid-handshake');
    sleep 0.3;
    ok(answers(), 'the server still answers afterwards');
    ok(Test::Ringx::pid_alive($worker), 'with the same worker');
    is_deeply([$t->worker_pids], [$worker], 'and no other');
    quiet_since($from, 'abandoned handshakes: nothing logged above info');
}

# ---- session resumption after the server closed ------------------------------------------

{
    my $sess = $t->prefix . '/sess';
    my $close = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    my $keep = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
    my $P4 = $t->port(4);
    # builtin: OpenSSL's own cache, from which SSL_free drops a session
    # whose connection ended without a shutdown state
    for my $c (["$P4", 'builtin cache', $close, 'Connection: close'],
               ["$P4", 'builtin cache', $keep, 'keepalive_timeout'],
               ["$P2", 'shared cache', $close, 'Connection: close'],
               ["$P2", 'shared cache', $keep, 'keepalive_timeout'],
               ["$P3", 'tickets', $close, 'Connection: close']) {
        my ($port, $what, $req, $how) = @$c;
        for my $v ('-tls1_2', '-tls1_3') {
            unlink $sess;
            my $o1 = Test::Ringx::Certs::s_client($port, "$v -sess_out $sess", $req);
            like($o1, qr/reused=\.\n/, "$what $v, closed by the server ($how): served");
            my $o2 = Test::Ringx::Certs::s_client($port, "$v -sess_in $sess", $req);
            like($o2, qr/^Reused, /m, "$what $v, after $how: the session resumes");
            like($o2, qr/reused=r\n/, "$what $v, after $how: \$ssl_session_reused");
        }
    }
}

ok(Test::Ringx::pid_alive($worker), 'the worker survived it all');
$t->stop;
$up->stop;
done_testing;
