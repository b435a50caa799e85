package Test::PhpFpm;

# Test::PhpFpm: a real php-fpm for the pool-dispatch tests
# (t/fastcgi_queue.t, t/fastcgi_learn.t): its pools on unix sockets in the
# test's prefix, the scripts they run, and what the tests measure of them.
#
#   my $bin = Test::PhpFpm::binary();       # or the test skips, saying why
#   my $fpm = Test::PhpFpm->start($t, [
#       { name => 'pool', sock => "$prefix/php.sock",
#         pm => "pm = static\npm.max_children = 2" },
#       { name => 'tcp', tcp => "127.0.0.1:$port", pm => ... }, ... ]);
#   # html/sleep.php?ms=N: sleeps, echoes QUEUE_TIME and X-Request-Start;
#   # html/max: the most scripts it ever saw running at once
#   Test::PhpFpm::reset_counters($t);
#   my @responses = Test::PhpFpm::burst($t, $port, 10, '/q/?ms=300');
#   my $n = Test::PhpFpm::pool_open($sock);  # connections php-fpm holds
#
# php-fpm runs with -n (no php.ini): the tests need nothing of it. It is
# stopped (SIGQUIT) when the test ends.

use strict;
use warnings;

use IO::Socket::IP;
use POSIX ();
use Test::More ();
use Test::Ringx;

my @running;

sub binary {
    my ($bin) = grep { -x $_ } ($ENV{RINGX_PHP_FPM} // (),
        '/usr/sbin/php-fpm8.2', glob('/usr/sbin/php-fpm*'),
        map { "$_/php-fpm" } split /:/, $ENV{PATH} // '');
    Test::More::plan(skip_all => 'php-fpm not found (Debian: apt-get install '
        . 'php-fpm, or "auto/deps test"; RINGX_PHP_FPM names another binary)')
        unless $bin;
    return $bin;
}

# sleep.php: how many scripts run at once (a counter under flock, its
# maximum in html/max), then the queue time and request start ringx passed
my $SLEEP_PHP = <<'EOF';
<?php
$f = fopen(__DIR__ . '/running', 'c+');
flock($f, LOCK_EX);
$n = (int) stream_get_contents($f) + 1;
ftruncate($f, 0); rewind($f); fwrite($f, (string) $n);
$max = (int) @file_get_contents(__DIR__ . '/max');
if ($n > $max) { file_put_contents(__DIR__ . '/max', (string) $n); }
flock($f, LOCK_UN);
usleep((int) ($_GET['ms'] ?? 300) * 1000);
flock($f, LOCK_EX);
rewind($f);
$n = (int) stream_get_contents($f) - 1;
ftruncate($f, 0); rewind($f); fwrite($f, (string) $n);
flock($f, LOCK_UN);
echo "queue=", $_SERVER['QUEUE_TIME'] ?? '', "\n";
echo "start=", $_SERVER['HTTP_X_REQUEST_START'] ?? '', "\n";
EOF

sub start {
    my ($class, $t, $pools) = @_;
    my $bin = binary();
    my $prefix = $t->prefix;
    my $owner = $> == 0 ? "user = root\ngroup = root\n" : '';
    my $conf = "[global]\ndaemonize = no\nerror_log = $prefix/logs/php-fpm.log\n";
    for my $p (@$pools) {
        $conf .= "\n[$p->{name}]\n${owner}listen = " . ($p->{sock} // $p->{tcp})
               . "\nlisten.mode = 0666\n"
               . "$p->{pm}\nclear_env = no\nphp_admin_value[display_errors] = 0\n";
    }
    $t->write_file_raw('php-fpm.conf', $conf);
    $t->write_file_raw('html/sleep.php', $SLEEP_PHP);
    $t->write_file_raw('html/hello.php', "<?php echo 'hello ', getmypid(), \"\\n\";\n");
    chmod 0777, "$prefix/html";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', "$prefix/logs/php-fpm.out";
        open STDERR, '>&', \*STDOUT;
        { exec $bin, '-n', '-F', '-y', "$prefix/php-fpm.conf", $> == 0 ? '-R' : () };
        POSIX::_exit(127);
    }
    push @running, $pid;
    Test::Ringx::wait_for(sub { !grep { $_->{sock} ? !-S $_->{sock}
                                        : !IO::Socket::IP->new(PeerAddr => $_->{tcp}) }
                                 @$pools }, 10)
        or Test::More::BAIL_OUT("php-fpm did not start: "
                                . ($t->read_file('logs/php-fpm.out') // ''));
    return bless { pid => $pid, t => $t }, $class;
}

END {
    for my $pid (@running) {
        kill 'QUIT', $pid;
        waitpid($pid, 0);
    }
}

# A TCP port nothing listens on now, for a pool's `listen`.
sub free_port {
    my $s = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 1) or die "listen: $!";
    my $p = $s->sockport;
    close $s;
    return $p;
}

sub reset_counters {
    my ($t) = @_;
    unlink map { $t->prefix . "/html/$_" } qw(max running);
}

# Sends n requests at once (each on its own connection), returns the
# responses in order of sending.
sub burst {
    my ($t, $port, $n, $uri) = @_;
    my @c = map { $t->raw($port) } 1 .. $n;
    $_->send("GET $uri HTTP/1.1\r\nHost: q\r\nConnection: close\r\n\r\n") for @c;
    return map { $_->read_response(timeout => 30) } @c;
}

# The connections php-fpm holds open on a pool's socket: its accepted unix
# sockets, and those still waiting in the listen backlog, carry the pool's
# path in /proc/net/unix, state 03 (connected).
sub pool_open {
    my ($sock) = @_;
    open my $fh, '<', '/proc/net/unix' or return undef;
    my $n = grep { /\s03\s+\d+\s+\Q$sock\E$/ } <$fh>;
    close $fh;
    return $n;
}

1;
