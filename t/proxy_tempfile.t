#!/usr/bin/perl
# proxy_tempfile.t: a temporary-file directory the workers' user cannot
# write. A response larger than the buffers, to a slow client, is held in
# memory instead: the upstream is read at the client's pace and the body
# arrives whole, for proxy_pass and for fastcgi_pass (a real php-fpm); the
# failure is logged once per directory, naming it and the user. A request
# body that would spill there gets a 500 with a log line. And -t warns
# about such a directory without failing.
# Runs as root (the workers switch to "user nobody").

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use IO::Select;
use Socket ();
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::PhpFpm;
use Time::HiRes qw(time sleep);

plan skip_all => 'not root: the workers cannot switch to another user' if $> != 0;
plan skip_all => 'no user nobody' unless defined getpwnam('nobody');

my $LEN = 5 * 1024 * 1024;
my $want = sha256_hex(Test::Upstream::pattern($LEN));

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
# a directory only root may enter: "nobody" cannot reach what is under it,
# though the master makes the temporary directories there and chowns them
mkdir "$PREFIX/locked", 0700 or die "mkdir: $!";
chmod 0700, "$PREFIX/locked";

# a 1 MiB tmpfs: the file fills it mid-response (ENOSPC on a write), when
# this process may mount one
my $FULL = "$PREFIX/full";
mkdir $FULL or die "mkdir: $!";
my $mounted = system("mount -t tmpfs -o size=1m,mode=0755 tmpfs $FULL 2>/dev/null") == 0;
END { system('umount', $FULL) if $mounted }
# (the origin: a server of this same ringx, which sends as fast as it is
# read)
my $full_location = $mounted ? <<"EOF" : '';
        location /full/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/;
            proxy_temp_path $FULL/proxy_temp;
        }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        root html;
EOF

my ($FPM_BIN) = grep { -x $_ } ($ENV{RINGX_PHP_FPM} // (),
    '/usr/sbin/php-fpm8.2', glob('/usr/sbin/php-fpm*'));
my $SOCK = "$PREFIX/php.sock";

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
user nobody;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    proxy_buffers 4 8k;
    fastcgi_buffers 4 8k;
    proxy_temp_path $PREFIX/locked/proxy_temp;
    fastcgi_temp_path $PREFIX/locked/fastcgi_temp;
    client_body_temp_path $PREFIX/locked/body_temp;
    client_body_buffer_size 16k;
    upstream origin {
        server $UP;
        keepalive 4;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /p/ {
            proxy_pass http://origin/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /p2/ {
            # another location, the same directory: logged once still
            proxy_pass http://origin/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /php/ {
            fastcgi_pass unix:$SOCK;
            fastcgi_param SCRIPT_FILENAME $PREFIX/html/big.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
        }
$full_location    }
}
EOF

# Sends the request, reads nothing for $stall seconds (the buffers fill),
# then everything. Returns the parsed response (undef when none) and
# whether the connection ended with a reset.
sub slow_download {
    my ($uri, $stall) = @_;
    my $c = $t->raw($t->port(0));
    setsockopt($c->sock, Socket::SOL_SOCKET(), Socket::SO_RCVBUF(), 32768);
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    sleep $stall;
    my $all = '';
    my $reset = 0;
    my $sel = IO::Select->new($c->sock);
    while ($sel->can_read(10)) {
        my $k = sysread($c->sock, my $buf, 262144);
        $reset = 1 if !defined $k;
        last unless $k;
        $all .= $buf;
    }
    my ($resp) = Test::Ringx::parse_responses($all);
    return ($resp, $reset);
}

my $CRIT = qr/\[crit\] .*open\(\) "\Q$PREFIX\E\/locked\/proxy_temp" failed \(13: Permission denied\) while buffering an upstream response to a temporary file: user "nobody" cannot create files in proxy_temp_path "\Q$PREFIX\E\/locked\/proxy_temp"/;
my $CRIT_FCGI = qr/\[crit\] .*open\(\) "\Q$PREFIX\E\/locked\/fastcgi_temp" failed \(13: Permission denied\) while buffering an upstream response to a temporary file: user "nobody" cannot create files in fastcgi_temp_path/;
my $CRIT_FULL = qr/\[crit\] .*writing to a temporary file in proxy_temp_path "\Q$FULL\E\/proxy_temp" failed \(28: No space left on device\) while buffering an upstream response to it; responses are held in memory/;
my $CRIT_BODY = qr/\[crit\] .*\Q$PREFIX\E\/locked\/body_temp.* failed \(13: Permission denied\)/;
$t->expect_log($CRIT, $CRIT_FCGI, $CRIT_FULL, $CRIT_BODY);

# -t first: the same configuration, nothing made yet
{
    my ($code, $out, $err) = $t->ringx('-t');
    is $code, 0, '-t: an unwritable temporary directory is no error';
    for my $d (qw(proxy_temp_path fastcgi_temp_path client_body_temp_path)) {
        my ($dir) = $d =~ /^(\w+?)_path/;
        $dir = 'body_temp' if $d eq 'client_body_temp_path';
        like $err, qr/\[warn\] .*\Q$d\E "\Q$PREFIX\E\/locked\/\Q$dir\E" is not writable by user "nobody"/,
            "-t warns about $d";
    }
}

my $fpm;
if ($FPM_BIN) {
    $fpm = Test::PhpFpm->start($t, [ { name => 'big', sock => $SOCK,
                                       pm => "pm = static\npm.max_children = 2" } ]);
    # the bytes of Test::Upstream::pattern: each 8-byte line its offset in hex
    $t->write_file_raw('html/big.php', <<'EOF');
<?php
$n = (int) ($_GET['n'] ?? 0);
for ($off = 0; $off < $n; ) {
    $s = '';
    for ($k = 0; $k < 8192 && $off < $n; $k++, $off += 8) {
        $s .= sprintf("%07x\n", $off);
    }
    echo $s;
}
EOF
}

$t->write_file_raw('html/big.bin', Test::Upstream::pattern($LEN));
$t->run;

my ($r, $reset) = slow_download("/p/len/$LEN", 2);
is $r && $r->{status}, 200, 'proxy: 200';
is $r && length($r->{body}), $LEN, 'proxy: all 5 MiB arrive though the temporary file cannot be made';
is $r && sha256_hex($r->{body}), $want, 'proxy: byte-exact';
ok !$reset, 'proxy: no reset';

($r, $reset) = slow_download("/p2/len/$LEN", 2);
is $r && sha256_hex($r->{body}), $want, 'proxy, again (another location): byte-exact';
ok !$reset, 'no reset';

my @lines = $t->log_contains($CRIT);
is scalar(@lines), 1, 'the failure is logged once for the directory'
    or diag explain \@lines;
like $lines[0] // '', qr/responses are held in memory and read from the upstream at the client's pace/,
    'the log line says what happens instead';
is $up->connections, 1, 'the upstream connection was kept (whole responses read on it)';
ok !grep({ $_->{by} ne 'peer' && $_->{by} ne 'server' } $up->closes),
    'and never broken';
ok !$t->log_contains(qr/\[(?:error|alert)\]/), 'no error logged';

# the file takes the first MiB, then the disk is full: what it holds is
# read back, the rest follows from memory
SKIP: {
    skip 'cannot mount a tmpfs', 5 unless $mounted;
    for my $i (1, 2) {
        ($r, $reset) = slow_download("/full/big.bin", 2);
        is $r && sha256_hex($r->{body}), $want,
            "a full disk mid-response ($i): all 5 MiB arrive, byte-exact";
        ok !$reset, 'no reset';
    }
    is scalar(my @l = $t->log_contains($CRIT_FULL)), 1, 'ENOSPC: logged once';
}

SKIP: {
    skip 'php-fpm not found', 4 unless $FPM_BIN;
    ($r, $reset) = slow_download("/php/?n=$LEN", 2);
    is $r && $r->{status}, 200, 'fastcgi: 200';
    is $r && length($r->{body}), $LEN, 'fastcgi: all 5 MiB arrive';
    is $r && sha256_hex($r->{body}), $want, 'fastcgi: byte-exact';
    is scalar(my @l = $t->log_contains($CRIT_FCGI)), 1, 'fastcgi_temp_path: logged once';
}

# a request body beyond client_body_buffer_size cannot spill: a 500, and a
# line naming the directory
{
    my $body = 'b' x 200_000;
    my $c = $t->raw($t->port(0));
    $c->send("POST /p/echo HTTP/1.1\r\nHost: x\r\nContent-Length: "
             . length($body) . "\r\nConnection: close\r\n\r\n$body");
    my $resp = $c->read_response(timeout => 10);
    is $resp && $resp->{status}, 500, 'a request body that cannot spill: 500';
    ok $t->log_contains($CRIT_BODY), 'logged, naming client_body_temp_path\'s directory';
    ok $t->log_contains(qr/body_temp.* failed \(13: Permission denied\); the workers run as user "nobody"/),
       'and the user that cannot write there';
}

$t->stop;
$up->stop;
done_testing;
