package Test::Upstream;

# Test::Upstream: a scripted HTTP/1.1 origin server for the reverse-proxy
# tests. It runs in a forked child (Test/Upstream/Server.pm: one select
# loop, many connections, keepalive, pipelining, chunked and 100-continue
# request bodies), records every request in a log file the test reads back,
# and answers each request as its URI asks (Test/Upstream/Modes.pm), so one
# server serves every case of a test file.
#
#   use lib 't/lib';
#   use Test::Upstream;
#
#   my $u = Test::Upstream->new;                # or (unix => "$dir/up.sock")
#   $u->start;
#   # in the config: "proxy_pass " . $u->url . ";"
#   ... requests through ringx ...
#   my @r = $u->requests;       # what the upstream received
#   is $r[0]{uri}, '/echo?a=1';
#   is $u->connections, 1, 'one connection for both requests (keepalive)';
#   $u->stop;                   # also done by DESTROY and at exit
#
# Response table. The mode is the first path segment that names one (so
# /prefix/len/10 works behind a proxy_pass that keeps a prefix); the
# segment after it is its argument N; no mode segment means /echo.
#   /echo             200, body = the request as text lines (parse_echo):
#                       method: GET / uri: /echo?a=1 / version: HTTP/1.1 /
#                       conn: C / req: R / header: Name: value (each, in
#                       order) / trailer: Name: value / chunked: 0|1 /
#                       body-length: N / an empty line / the body itself
#   /status/NNN       status NNN, body "status NNN\n" (none for 204/304)
#   /len/N            200, Content-Length N, N bytes of pattern()
#   /chunked/N        200 chunked, N bytes of pattern() in chunks of mixed
#                     sizes; ?size=K fixed size, ?ext=1 chunk extensions,
#                     ?trailers=1 two trailers (X-Trailer-One: 1,
#                     X-Trailer-Two: two) and a Trailer header
#   /close/N          200 without length, Connection: close, N bytes, then
#                     close; ?v=1.0 an HTTP/1.0 status line
#   /slow/N           200, Content-Length N, sent in ?pieces=P (default 4)
#                     pieces with ?ms=M (default 100) between them; the
#                     head and the first piece go at once (?head_ms=M: the
#                     head alone, the first piece M ms later); ?chunked=1
#   /stall-header     reads the request, never answers
#   /stall-body/N     head with Content-Length N, N/2 bytes, then nothing
#                     (?chunked=1: a chunked head and one chunk of N/2)
#   /close-mid/N      the same, then closes the connection
#   /drop             reads the request, closes without an answer
#   /reset            reads the request, closes with a TCP RST
#   /garbage          non-HTTP bytes, then close
#   /bad-header       a 200 with a malformed header line; ?kind=nocolon
#                     (default), space ("X-Bad : v"), nul, fold, name
#   /bad-status       "HTTP/1.1 2x0 Broken", then close
#   /huge-header/N    200 with "X-Huge: " and N bytes of 'h' (default 8192)
#   /1xx              103 Early Hints (with a Link header) then 200
#                     "final\n"; ?codes=100,103 which 1xx and in what order
#   /headers[/NNN]    status NNN (200) with every query pair as a response
#                     header, in order, repeats kept (several Set-Cookie);
#                     %XX decoded ('+' stays '+'); generic keys excluded.
#                     Content-Type/-Length added unless given.
#   /sleep/MS         200 "slept MS\n" after MS ms (other connections go on)
#   /ws               with an Upgrade header: 101 Switching Protocols, then
#                     echoes raw bytes until the peer closes; without: 426.
#                     ?hello=TEXT: TEXT first, in the 101's own write (or
#                     ?hello_ms=M later, on its own), before any echo
#   /keepalive-close  200 "bye\n" with Connection: close, then closes
#   /range/N          N bytes of pattern() with ETag "r-1" and a Last-Modified;
#                     a single Range "bytes=a-b"/"bytes=a-" gets a 206
#                     (?no206=1: 200 always); ?etag_at=OFF: ranges from OFF
#                     on have ETag "r-2" (?lm=1: another Last-Modified);
#                     ?shift_at=OFF: such ranges answered one byte later;
#                     ?drop_at=OFF: such ranges closed without an answer
# Generic query keys, for every mode: close=1 (Connection: close, then
# close), delay=MS (wait before the response), no100=1 (no 100 Continue),
# early=1 (answer right after the head without reading the body, then
# close).
# Every response made here carries X-Upstream-Conn (the connection serial)
# and X-Upstream-Req (the request's number on it); HEAD gets the head only.
# Connection handling: HTTP/1.1 keeps the connection unless the request
# says close; HTTP/1.0 only with Connection: keep-alive. 100 Continue goes
# out when the request has Expect: 100-continue, a body, and none of the
# body has arrived yet. A malformed request gets 400 (or 431/501) + close.
# Modes send what they name whatever the request's version (/chunked/N
# answers an HTTP/1.0 request chunked too): tests choose the mode.
#
# Options of new:
#   unix => PATH            listen on a unix socket instead of 127.0.0.1
#   port => N               a fixed port (default: a free one)
#   host => IP              listen there instead of 127.0.0.1 (127.0.0.2 ...)
#   keepalive_max => N      Connection: close on the Nth request of a conn
#   response_delay_ms => MS wait before every response
#   idle_timeout_ms => MS   close idle keepalive connections after MS
#   no_continue => 1        never send 100 Continue
#
# Methods:
#   start                   fork the server; it listens before start returns
#   stop                    kill and reap it (DESTROY and END do it too);
#                           connects are refused afterwards
#   refuse / resume         close the listener (connects refused, open
#                           connections go on) / listen again, same address
#   port, addr, url, pid    addr: "127.0.0.1:PORT" or "unix:PATH"; url:
#                           "http://127.0.0.1:PORT" or "http://unix:PATH:"
#                           (proxy_pass's spelling)
#   requests                list of hashrefs: method, uri, version, headers
#                           ([[name, value], ...] as received), body
#                           (de-chunked), body_raw (chunked only), chunked,
#                           trailers, raw (the exact request head), conn
#                           (connection serial), n (request number on the
#                           connection), early, continue_sent, time
#   connections             connections accepted so far
#   closes                  close events: { conn, by => server | peer |
#                           error | reset | idle, requests }
#   events                  everything logged, in order (type accept,
#                           request, bad, close, listener)
#   reset                   forget everything logged so far (serials go on)
#   wait_requests(N [, S])  wait up to S s (5) for N requests; returns them
#   wait_for(CODE [, S])    poll CODE every 20 ms up to S s (5)
#   Test::Upstream::pattern(LEN [, OFF])  the body bytes of /len etc.:
#                           "0000000\n0000008\n..." (the offset of each
#                           8-byte line in hex), bytes OFF .. OFF+LEN-1
#   Test::Upstream::parse_echo(BODY)  an /echo body as a hashref: method,
#                           uri, version, conn, req, headers ([[n, v]]),
#                           trailers, chunked, body
# RINGX_TIMEOUT_SCALE multiplies the waits, as in Test::Ringx.

use strict;
use warnings;

use File::Temp ();
use IO::Socket::IP;
use IO::Socket::UNIX;
use POSIX qw(WNOHANG);
use Scalar::Util qw(weaken);
use Socket qw(SOCK_STREAM);
use Storable qw(thaw);
use Time::HiRes qw(sleep time);

use Test::Upstream::Server;

my @INSTANCES;      # weak refs, for the END clean-up

my $SCALE = ($ENV{RINGX_TIMEOUT_SCALE} && $ENV{RINGX_TIMEOUT_SCALE} > 0)
    ? $ENV{RINGX_TIMEOUT_SCALE} : 1;

sub new {
    my ($class, %opts) = @_;
    my ($fh, $log) = File::Temp::tempfile('upstream-log-XXXXXXXX',
                                          DIR => '/tmp', UNLINK => 0);
    close $fh;
    my $self = bless { opts => \%opts, owner => $$, log => $log,
                       pid => undef }, $class;
    push @INSTANCES, $self;
    weaken($INSTANCES[-1]);
    return $self;
}

sub pid  { $_[0]{pid} }
sub port { $_[0]{opts}{port} }
sub addr {
    my ($self) = @_;
    return $self->{opts}{unix} ? "unix:$self->{opts}{unix}"
                               : ($self->{opts}{host} // "127.0.0.1") . ":$self->{opts}{port}";
}

# The server as proxy_pass spells it (nginx ends a unix path with ':').
sub url {
    my ($self) = @_;
    return $self->{opts}{unix} ? "http://unix:$self->{opts}{unix}:"
                               : "http://" . ($self->{opts}{host} // "127.0.0.1") . ":$self->{opts}{port}";
}

# The listener is made here, before the fork, so that it accepts (in the
# kernel's backlog) as soon as start returns.
sub start {
    my ($self) = @_;
    die "Test::Upstream: already started\n" if $self->{pid};
    my $o = $self->{opts};
    my $l;
    if ($o->{unix}) {
        unlink $o->{unix};
        $l = IO::Socket::UNIX->new(Local => $o->{unix}, Type => SOCK_STREAM,
                                   Listen => 1024)
            or die "Test::Upstream: listen on $o->{unix}: $!\n";
    } else {
        $l = IO::Socket::IP->new(LocalHost => $o->{host} // '127.0.0.1',
                                 LocalPort => $o->{port} // 0,
                                 Proto => 'tcp', Listen => 1024,
                                 ReuseAddr => 1)
            or die "Test::Upstream: listen on 127.0.0.1: $!\n";
        $o->{port} = $l->sockport;
    }
    my $parent = $$;
    my $pid = fork();
    die "Test::Upstream: fork: $!\n" unless defined $pid;
    if ($pid == 0) {
        eval {
            $0 = "test-upstream " . $self->addr;
            _pdeathsig();
            Test::Upstream::Server->run(listener => $l, log => $self->{log},
                                        opts => $o, parent => $parent);
        };
        print STDERR "Test::Upstream server: $@";
        POSIX::_exit(1);
    }
    close $l;
    $self->{pid} = $pid;
    return $self;
}

# prctl(PR_SET_PDEATHSIG, SIGTERM): the server dies with a killed test.
sub _pdeathsig {
    require Config;
    my %nr = (x86_64 => 157, aarch64 => 167);
    my ($arch) = $Config::Config{archname} =~ /^(x86_64|aarch64)/;
    syscall($nr{$arch}, 1, 15) if $arch;
}

sub stop {
    my ($self) = @_;
    my $pid = $self->{pid} or return;
    $self->{pid} = undef;
    return unless $$ == $self->{owner};
    kill 'TERM', $pid;
    my $deadline = time + 5;
    while (waitpid($pid, WNOHANG) == 0) {
        if (time > $deadline) {
            kill 'KILL', $pid;
            waitpid($pid, 0);
            last;
        }
        sleep 0.01;
    }
    unlink $self->{opts}{unix} if $self->{opts}{unix};
}

sub _signal_and_wait {
    my ($self, $sig, $state) = @_;
    my $before = grep { $_->{type} eq 'listener' } $self->events;
    kill $sig, $self->{pid} or die "Test::Upstream: not running\n";
    $self->wait_for(sub {
        grep({ $_->{type} eq 'listener' } $self->events) > $before
    }) or die "Test::Upstream: listener not $state\n";
}

sub refuse { $_[0]->_signal_and_wait('USR1', 'closed') }
sub resume { $_[0]->_signal_and_wait('USR2', 'open') }

###########################################################################
# the log

sub events {
    my ($self) = @_;
    open(my $fh, '<', $self->{log}) or return ();
    binmode $fh;
    local $/;
    my $all = <$fh> // '';
    close $fh;
    my @ev;
    my $pos = 0;
    while ($pos + 5 <= length $all) {
        last unless substr($all, $pos, 1) eq 'U';
        my $len = unpack('N', substr($all, $pos + 1, 4));
        last if $pos + 5 + $len > length $all;     # being written
        push @ev, thaw(substr($all, $pos + 5, $len));
        $pos += 5 + $len;
    }
    return @ev;
}

sub requests    { grep { $_->{type} eq 'request' } $_[0]->events }
sub closes      { grep { $_->{type} eq 'close' } $_[0]->events }
sub connections { scalar grep { $_->{type} eq 'accept' } $_[0]->events }

sub reset {
    my ($self) = @_;
    open(my $fh, '>', $self->{log}) or die "$self->{log}: $!";
    close $fh;
}

sub wait_for {
    my ($self, $code, $secs) = @_;
    my $deadline = time + ($secs // 5) * $SCALE;
    while (1) {
        my $r = $code->();
        return $r if $r;
        return 0 if time > $deadline;
        sleep 0.02;
    }
}

sub wait_requests {
    my ($self, $n, $secs) = @_;
    my @r;
    $self->wait_for(sub { @r = $self->requests; @r >= $n }, $secs);
    return @r;
}

###########################################################################
# helpers for assertions

sub pattern {
    my ($len, $off) = @_;
    $off //= 0;
    return '' if $len <= 0;
    my $first = int($off / 8);
    my $last = int(($off + $len + 7) / 8);
    my $s = join '', map { sprintf "%07x\n", ($_ * 8) & 0xfffffff }
                         $first .. $last - 1;
    return substr($s, $off - $first * 8, $len);
}

sub parse_echo {
    my ($text) = @_;
    my $i = index($text, "\n\n");
    return undef if $i < 0;
    my %e = (headers => [], trailers => [], body => substr($text, $i + 2));
    for my $l (split /\n/, substr($text, 0, $i)) {
        my ($k, $v) = split /: /, $l, 2;
        if ($k eq 'header' || $k eq 'trailer') {
            push @{ $e{"${k}s"} }, [split /: /, $v, 2];
        } else {
            $e{$k} = $v;
        }
    }
    return \%e;
}

###########################################################################
# clean-up

sub _finish {
    my ($self) = @_;
    return if $self->{finished} || $$ != $self->{owner};
    $self->{finished} = 1;
    local ($?, $!, $@);
    $self->stop;
    unlink $self->{log} unless $ENV{RINGX_KEEP};
}

sub DESTROY { $_[0]->_finish }

END {
    local $?;
    for my $u (grep { defined } @INSTANCES) {
        eval { $u->_finish };
    }
}

1;
