#!/usr/bin/perl
# conn_addr.t: a connection's addresses are asked of its socket only when
# a log line or a variable needs them (event/conn_addr.c). A request that
# names neither costs no syscall for them (nginx has the peer's from
# accept4; ringx's multishot accept gives none, and a getpeername per
# connection cost 3 % of a connection-per-request load). The peer's
# address is asked with getsockopt(SO_PEERNAME), which answers after the
# peer reset the connection too (getpeername says ENOTCONN then): the
# line that logs a reset names its client. IPv4, IPv6 (when the machine
# has ::1) and unix listeners; both event backends.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::INET;
use IO::Socket::UNIX;
use Socket qw(SOL_SOCKET SO_LINGER);
use Time::HiRes qw(sleep);

my $N = 30;
my $HAVE_V6 = IO::Socket::INET->can('new') && eval {
    require IO::Socket::IP;
    my $s = IO::Socket::IP->new(Listen => 1, LocalHost => '::1',
                                LocalPort => 0);
    $s ? 1 : 0;
};

my $t = Test::Ringx->new;
my $SOCK = $t->prefix . '/ringx.sock';
my $CONF = <<"EOF";
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use %%EVENTS%%; }
http {
    access_log off;
    log_format addrs '\$remote_addr \$server_addr';
    server {
        listen 127.0.0.1:%%PORT_0%%;
        %%V6%%
        listen unix:$SOCK;
        location = /hello { return 200 "hello\\n"; }
        location = /addr {
            return 200 "\$remote_addr \$server_addr \$server_port\\n";
        }
        location = /logged { access_log logs/addrs.log addrs;
                             return 200 "logged\\n"; }
    }
}
EOF

sub reset_mid_header {
    my ($sock) = @_;
    $sock->syswrite("GET /hello HTTP/1.1\r\nHost: x\r\n");
    sleep 0.2;                  # the worker has read that part
    setsockopt($sock, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    close $sock;
}

sub get {
    my ($sock, $path) = @_;
    $sock->syswrite("GET $path HTTP/1.0\r\nHost: x\r\n\r\n");
    local $/;
    my $r = <$sock> // '';
    return $r =~ /\r\n\r\n(.*)\z/s ? $1 : $r;
}

for my $events ('io_uring', 'epoll') {
    (my $conf = $CONF) =~ s/%%EVENTS%%/$events/;
    $conf =~ s/%%V6%%/$HAVE_V6 ? 'listen [::1]:%%PORT_1%%;' : ''/e;
    unlink $SOCK;
    $t->write_config($conf);
    $t->run;
    my $P = $t->port(0);
    my ($w) = $t->worker_pids;

    my $c = IO::Socket::INET->new("127.0.0.1:$P");
    my $port = $c->sockport;
    is(get($c, '/addr'), "127.0.0.1 127.0.0.1 $P\n",
       "$events: \$remote_addr, \$server_addr, \$server_port");
    my $u = IO::Socket::UNIX->new(Peer => $SOCK);
    is(get($u, '/addr'), "unix: unix:$SOCK \n",
       "$events: the same on a unix listener");
    $c = IO::Socket::INET->new("127.0.0.1:$P");
    get($c, '/logged');
    ok(Test::Ringx::wait_for(sub {
        ($t->read_file('logs/addrs.log') // '') =~ /^127\.0\.0\.1 127\.0\.0\.1$/m
    }, 5), "$events: the access log's addresses");

    # a reset in the middle of a header: nothing asked for the address
    # before it, and the line that logs it names the client
    $c = IO::Socket::INET->new("127.0.0.1:$P");
    $port = $c->sockport;
    reset_mid_header($c);
    ok(Test::Ringx::wait_for(sub { $t->log_contains(qr/\[info\] .*recv\(\) failed \(104: Connection reset by peer\) while reading client request headers, client: 127\.0\.0\.1, server: , request: "GET \/hello HTTP\/1\.1"/) }, 5),
       "$events: a reset logged with its client's address")
        or diag($t->read_file('logs/error.log'));
    SKIP: {
        skip 'no ::1 on this machine', 1 unless $HAVE_V6;
        my $P6 = $t->port(1);
        my $c6 = IO::Socket::IP->new(PeerHost => '::1', PeerPort => $P6);
        reset_mid_header($c6);
        ok(Test::Ringx::wait_for(sub { $t->log_contains(qr/\[info\] .*recv\(\) failed \(104: Connection reset by peer\) while reading client request headers, client: ::1, server: , request: "GET \/hello HTTP\/1\.1"/) }, 5),
           "$events: the same over IPv6");
    }

    SKIP: {
        skip 'the syscalls counted are the io_uring backend\'s', 2
            if $events ne 'io_uring';
        skip 'no strace here (apt-get install strace)', 2
            if system('strace -V >/dev/null 2>&1') != 0;
        skip 'the kernel refused io_uring: the worker runs epoll', 2
            if $t->log_contains(qr/uses epoll instead/);
        my $url = "http://127.0.0.1:$P/hello";
        my ($got, $calls) = $t->syscalls_during($w, $url, sub {
            `curl -s --max-time 30 -H 'Connection: close' ${\ join ' ', ($url) x $N}`;
        });
        skip 'strace could not attach to the worker (ptrace refused)', 2
            unless %$calls;
        is($got, "hello\n" x $N, "$N requests, a connection each");
        my $asked = ($calls->{getpeername} // 0) + ($calls->{getsockopt} // 0)
                    + ($calls->{getsockname} // 0);
        is($asked, 0, 'no syscall asked for an address nothing used')
            or diag(explain $calls);
    }
    $t->stop;
}

done_testing;
