package Test::Upstream::Server;

# The child process of Test::Upstream: one non-blocking select loop over
# the listener and every connection. It reads requests (keepalive,
# pipelining, Content-Length and chunked bodies, 100-continue), appends
# each event to the log file, and runs the steps Test::Upstream::Modes
# picks for the request, one request at a time per connection.

use strict;
use warnings;

use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use IO::Select;
use IO::Socket::IP;
use IO::Socket::UNIX;
use POSIX ();
use Socket qw(SOCK_STREAM SOL_SOCKET SO_LINGER);
use Storable qw(nfreeze);
use Time::HiRes qw(time);

use Test::Upstream::Modes;

my $WBUF_LOW = 256 * 1024;      # [stream] steps refill below this
my $HEAD_MAX = 1024 * 1024;     # a longer request head gets a 431

# Runs the loop; never returns. %o: listener, log (path), opts, parent.
sub run {
    my ($class, %o) = @_;
    my $self = bless { %o, conns => {}, nconn => 0, stop_listen => 0,
                       start_listen => 0 }, $class;
    $SIG{$_} = 'DEFAULT' for qw(ALRM INT TERM QUIT HUP CHLD);
    $SIG{PIPE} = 'IGNORE';
    $SIG{USR1} = sub { $self->{stop_listen} = 1 };
    $SIG{USR2} = sub { $self->{start_listen} = 1 };
    alarm(0);
    open(my $log, '>>', $self->{log}) or die "$self->{log}: $!";
    binmode $log;
    $self->{logfh} = $log;
    $self->_close_inherited;
    $self->{listener}->blocking(0);
    $self->loop;
}

# Descriptors inherited from the test (client sockets, other servers'
# ports) would keep their connections alive after the test closes them.
# They become /dev/null rather than closed: the test's Perl handles for
# them live on in this process, and PerlIO counts handles per fd number,
# so a socket accepted on a reused number would never really be closed.
sub _close_inherited {
    my ($self) = @_;
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', '/dev/null');     # the test's TAP stays clean
    my %keep = map { $_ => 1 } 0, 1, 2, fileno($self->{listener}),
                               fileno($self->{logfh});
    my $null = POSIX::open('/dev/null', POSIX::O_RDWR()) // return;
    $keep{$null} = 1;
    opendir(my $d, '/proc/self/fd') or return;
    my @fds = grep { /^\d+$/ && !$keep{$_} } readdir $d;
    closedir $d;
    POSIX::dup2($null, $_) for @fds;
    POSIX::close($null);
}

sub _log {
    my ($self, $rec) = @_;
    $rec->{time} = time;
    my $f = nfreeze($rec);
    my $buf = 'U' . pack('N', length $f) . $f;
    my $off = 0;
    while ($off < length $buf) {
        my $n = syswrite($self->{logfh}, $buf, length($buf) - $off, $off);
        die "log write: $!" unless defined $n;
        $off += $n;
    }
}

sub loop {
    my ($self) = @_;
    while (1) {
        POSIX::_exit(0) if getppid() != $self->{parent};
        $self->_listener_signals;
        my ($rs, $ws) = (IO::Select->new, IO::Select->new);
        $rs->add($self->{listener}) if $self->{listener};
        my $timeout = 0.2;
        my $now = time;
        for my $c (values %{ $self->{conns} }) {
            $rs->add($c->{fh}) unless $c->{eof};
            $ws->add($c->{fh}) if length $c->{wbuf};
            my $due = $c->{wait_until} // $self->_idle_due($c);
            $timeout = $due - $now if defined $due && $due - $now < $timeout;
        }
        $timeout = 0 if $timeout < 0;
        my ($r, $w) = IO::Select->select($rs, $ws, undef, $timeout);
        for my $fh (@{ $r || [] }) {
            if ($self->{listener} && $fh == $self->{listener}) {
                $self->_accept;
            } elsif (my $c = $self->{conns}{ fileno $fh }) {
                $self->_read($c);
            }
        }
        for my $fh (@{ $w || [] }) {
            my $c = $self->{conns}{ fileno $fh } or next;
            $self->_write($c);
        }
        for my $c (values %{ $self->{conns} }) {
            $self->_progress($c) unless $c->{closed};
            $self->_write($c) if !$c->{closed} && length $c->{wbuf};
            $self->_maybe_close($c) unless $c->{closed};
        }
    }
}

# USR1 closes the listener (connects are refused; those already in the
# backlog are accepted first), USR2 opens it again on
# the same address; each change is logged so the test can wait for it.
sub _listener_signals {
    my ($self) = @_;
    if ($self->{stop_listen}) {
        $self->{stop_listen} = 0;
        if ($self->{listener}) {
            $self->_accept;     # connected before refuse(): served
            close $self->{listener};
            $self->{listener} = undef;
        }
        $self->_log({ type => 'listener', state => 'closed' });
    }
    if ($self->{start_listen}) {
        $self->{start_listen} = 0;
        $self->{listener} //= $self->_listen;
        $self->{listener}->blocking(0);
        $self->_log({ type => 'listener', state => 'open' });
    }
}

sub _listen {
    my ($self) = @_;
    my $o = $self->{opts};
    if ($o->{unix}) {
        unlink $o->{unix};
        return IO::Socket::UNIX->new(Local => $o->{unix}, Type => SOCK_STREAM,
                                     Listen => 1024)
            || die "listen $o->{unix}: $!";
    }
    return IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => $o->{port},
                               Proto => 'tcp', Listen => 1024, ReuseAddr => 1)
        || die "listen 127.0.0.1:$o->{port}: $!";
}

sub _accept {
    my ($self) = @_;
    while (my $fh = $self->{listener}->accept) {
        $fh->blocking(0);
        binmode $fh;
        my $c = { fh => $fh, id => ++$self->{nconn}, rbuf => '', wbuf => '',
                  nreq => 0, steps => [], req => undef, eof => 0,
                  active => time };
        $self->{conns}{ fileno $fh } = $c;
        $self->_log({ type => 'accept', conn => $c->{id} });
    }
}

sub _read {
    my ($self, $c) = @_;
    my $n = sysread($c->{fh}, $c->{rbuf}, 262144, length $c->{rbuf});
    if (!defined $n) {
        return if $! == EINTR || $! == EAGAIN || $! == EWOULDBLOCK;
        return $self->_close($c, 'error');
    }
    $c->{active} = time;
    $c->{eof} = 1 if $n == 0;
}

sub _write {
    my ($self, $c) = @_;
    return unless length $c->{wbuf};
    my $n = syswrite($c->{fh}, $c->{wbuf});
    if (!defined $n) {
        return if $! == EINTR || $! == EAGAIN || $! == EWOULDBLOCK;
        return $self->_close($c, 'error');
    }
    substr($c->{wbuf}, 0, $n) = '';
    $c->{active} = time;
}

# by: server (a close step, keepalive off), peer (EOF), error (a failed
# read or write), reset (the reset step), idle (idle_timeout_ms).
sub _close {
    my ($self, $c, $by) = @_;
    return if $c->{closed};
    $c->{closed} = 1;
    delete $self->{conns}{ fileno $c->{fh} };
    if ($by eq 'reset') {
        setsockopt($c->{fh}, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    }
    # logged first: a client that saw the close finds it in the log
    $self->_log({ type => 'close', conn => $c->{id}, by => $by,
                  requests => $c->{nreq} });
    close $c->{fh};
}

sub _idle {
    my ($c) = @_;
    return !@{ $c->{steps} } && !$c->{req} && !length $c->{rbuf}
        && !length $c->{wbuf};
}

sub _idle_due {
    my ($self, $c) = @_;
    my $ms = $self->{opts}{idle_timeout_ms} or return undef;
    return _idle($c) ? $c->{active} + $ms / 1000 : undef;
}

sub _maybe_close {
    my ($self, $c) = @_;
    return $self->_close($c, 'server') if $c->{close_after} && !length $c->{wbuf};
    my $step = $c->{steps}[0];
    if ($c->{eof} && !length $c->{wbuf}
        && (!$step || $step->[0] eq 'stall' || $step->[0] eq 'echo')) {
        return $self->_close($c, 'peer');
    }
    my $due = $self->_idle_due($c);
    $self->_close($c, 'idle') if defined $due && time >= $due;
}

# Runs the connection's steps; when none are left, reads the next request
# and asks Modes for its steps.
sub _progress {
    my ($self, $c) = @_;
    while (!$c->{closed} && !$c->{close_after}) {
        if (my $s = $c->{steps}[0]) {
            my $k = $s->[0];
            if ($k eq 'write') {
                $c->{wbuf} .= $s->[1];
            } elsif ($k eq 'stream') {
                while (length $c->{wbuf} < $WBUF_LOW) {
                    my $p = $s->[1]->();
                    last unless defined $p;
                    $c->{wbuf} .= $p;
                }
                return if length $c->{wbuf} >= $WBUF_LOW;
            } elsif ($k eq 'sleep') {
                $s->[2] //= time + $s->[1] / 1000;
                if (time < $s->[2]) {
                    $c->{wait_until} = $s->[2];
                    return;
                }
                delete $c->{wait_until};
            } elsif ($k eq 'close') {
                $c->{close_after} = 1;
                return;
            } elsif ($k eq 'reset') {
                return $self->_close($c, 'reset');
            } elsif ($k eq 'echo') {
                $c->{wbuf} .= $c->{rbuf};
                $c->{rbuf} = '';
                return;
            } else {                    # stall
                return;
            }
            shift @{ $c->{steps} };
            next;
        }
        my $req = $self->_read_request($c) or return;
        if ($req->{error}) {
            $self->_log({ type => 'bad', conn => $c->{id}, %$req });
            my $st = $req->{error};
            my $body = "bad request: $req->{why}\n";
            $c->{steps} = [['write', "HTTP/1.1 $st "
                . ($Test::Upstream::Modes::REASON{$st} // 'Error')
                . "\r\nConnection: close\r\nContent-Length: "
                . length($body) . "\r\n\r\n$body"], ['close']];
            $c->{rbuf} = '';
            next;
        }
        $c->{steps} = [Test::Upstream::Modes::steps($req, $c, $self->{opts})];
    }
}

###########################################################################
# reading a request

# Returns the request once it is complete (or, with ?early=1, once its head
# is), { error => STATUS, why => TEXT } for a broken one, undef when more
# bytes are needed. The request is logged here.
sub _read_request {
    my ($self, $c) = @_;
    my $r = $c->{req};
    unless ($r) {
        $c->{rbuf} =~ s/\A(?:\r?\n)+//;     # empty lines between requests
        return undef unless length $c->{rbuf};
        unless ($c->{rbuf} =~ /\r?\n\r?\n/) {
            return length $c->{rbuf} > $HEAD_MAX
                ? { error => 431, why => 'head too large' } : undef;
        }
        my $raw = substr($c->{rbuf}, 0, $+[0], '');
        $r = _parse_head($raw);
        return $r if $r->{error};
        $r->{conn} = $c->{id};
        $r->{n} = ++$c->{nreq};
        $c->{req} = $r;
        my (undef, $pairs) = Test::Upstream::Modes::split_uri($r->{uri});
        my %q = map { @$_ } @$pairs;
        if ($q{early} && $r->{need_body}) {
            $r->{early} = 1;            # the body is not read: close after
            $c->{req} = undef;
            $self->_log_request($r);
            return $r;
        }
        $self->_continue($c, $r, \%q);
    }
    my $done = $r->{chunked} ? _read_chunked($c, $r) : _read_length($c, $r);
    return undef unless $done;
    $c->{req} = undef;
    return $r if $r->{error};
    $self->_log_request($r);
    return $r;
}

sub _log_request {
    my ($self, $r) = @_;
    my %rec = (type => 'request', map { $_ => $r->{$_} }
        qw(method uri version headers raw body chunked trailers conn n
           early continue_sent));
    $rec{body_raw} = $r->{body_raw} if $r->{chunked};
    $self->_log(\%rec);
}

# 100 Continue, when asked for, unless the body is already arriving or the
# server or request (?no100=1) says not to.
sub _continue {
    my ($self, $c, $r, $q) = @_;
    my ($expect) = map { lc $_->[1] } grep { lc $_->[0] eq 'expect' }
                                           @{ $r->{headers} };
    return unless ($expect // '') eq '100-continue' && $r->{need_body};
    return if $self->{opts}{no_continue} || $q->{no100};
    return if length $c->{rbuf} || $r->{version} ne 'HTTP/1.1';
    $c->{wbuf} .= "HTTP/1.1 100 Continue\r\n\r\n";
    $r->{continue_sent} = 1;
}

sub _parse_head {
    my ($raw) = @_;
    my @lines = split /\r?\n/, $raw;
    my $rl = shift(@lines) // '';
    my ($m, $uri, $v) = $rl =~ m{^([!#-'*+.^-z|~0-9A-Za-z]+) (\S+) (HTTP/\d\.\d)$}
        or return { error => 400, why => 'request line', raw => $raw };
    my @h;
    for my $l (@lines) {
        if ($l =~ /^[ \t]/ && @h) {
            $h[-1][1] .= $l;            # obs-fold: kept as received
        } elsif ($l =~ /^([^:\s]+):[ \t]*(.*?)[ \t]*$/) {
            push @h, [$1, $2];
        } else {
            return { error => 400, why => "header line '$l'", raw => $raw };
        }
    }
    my $r = { method => $m, uri => $uri, version => $v, headers => \@h,
              raw => $raw, body => '', body_raw => '', trailers => [],
              chunked => 0, remain => 0 };
    my @te = map { $_->[1] } grep { lc $_->[0] eq 'transfer-encoding' } @h;
    my @cl = map { $_->[1] } grep { lc $_->[0] eq 'content-length' } @h;
    if (@te) {
        return { error => 501, why => 'transfer-encoding', raw => $raw }
            unless join(',', @te) =~ /(?:^|,)\s*chunked\s*$/i;
        $r->{chunked} = 1;
        $r->{cstate} = 'size';
        $r->{need_body} = 1;
    } elsif (@cl) {
        my %u = map { $_ => 1 } @cl;
        return { error => 400, why => 'content-length', raw => $raw }
            if keys %u > 1 || $cl[0] !~ /^\d+$/;
        $r->{remain} = $cl[0] + 0;
        $r->{need_body} = $r->{remain} > 0;
    }
    return $r;
}

sub _read_length {
    my ($c, $r) = @_;
    my $n = length $c->{rbuf};
    $n = $r->{remain} if $n > $r->{remain};
    $r->{body} .= substr($c->{rbuf}, 0, $n, '');
    $r->{remain} -= $n;
    return $r->{remain} == 0;
}

# Incremental: every state consumes what it can from rbuf and keeps the
# exact bytes in body_raw.
sub _read_chunked {
    my ($c, $r) = @_;
    while (1) {
        my $st = $r->{cstate};
        if ($st eq 'data') {
            my $n = length $c->{rbuf};
            return 0 unless $n;
            $n = $r->{remain} if $n > $r->{remain};
            my $d = substr($c->{rbuf}, 0, $n, '');
            $r->{body} .= $d;
            $r->{body_raw} .= $d;
            $r->{remain} -= $n;
            $r->{cstate} = 'crlf' if $r->{remain} == 0;
            next;
        }
        my $e = index($c->{rbuf}, "\n");
        if ($e < 0) {
            return 0 if length $c->{rbuf} < 4096;
            @$r{qw(error why)} = (400, 'chunk line too long');
            return 1;
        }
        my $line = substr($c->{rbuf}, 0, $e + 1, '');
        $r->{body_raw} .= $line;
        $line =~ s/\r?\n\z//;
        if ($st eq 'size') {
            unless ($line =~ /^([0-9a-fA-F]{1,15})[ \t]*(?:;.*)?$/) {
                @$r{qw(error why)} = (400, "chunk size '$line'");
                return 1;
            }
            $r->{remain} = hex $1;
            $r->{cstate} = $r->{remain} ? 'data' : 'trailer';
        } elsif ($st eq 'crlf') {
            if (length $line) {
                @$r{qw(error why)} = (400, 'no CRLF after chunk data');
                return 1;
            }
            $r->{cstate} = 'size';
        } else {                        # trailer
            return 1 unless length $line;
            push @{ $r->{trailers} }, [$1, $2]
                if $line =~ /^([^:\s]+):[ \t]*(.*?)[ \t]*$/;
        }
    }
}

1;
