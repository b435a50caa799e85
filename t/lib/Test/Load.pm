package Test::Load;

# Test::Load: concurrent HTTP/1.1 keepalive clients for the fault drills
# (t/fault_*.t). Each client is a forked process that sends one request
# after another on a keepalive connection until a deadline, checks every
# response, and counts what happened; the test signals the server in the
# meantime and reads the counts back with wait().
#
#   my $load = Test::Load->start(
#       port     => $P,
#       clients  => 20,
#       seconds  => 4,                          # run time of each client
#       path     => sub { my ($client, $n) = @_; "/sleep/200?c=$client&n=$n" },
#       check    => sub { my ($resp, $client, $n) = @_; $resp->{body} eq ... },
#       retry    => 1,      # default 1, see below
#       pause    => 0.001,  # seconds a client sleeps between requests
#                           # (default 0: a tight loop)
#   );
#   ... kill 'HUP', $master ...
#   my $r = $load->wait;
#   is $r->{failed}, 0;
#
# stop() ends the clients before their deadline (each finishes the request
# it is on): a test whose events are over need not wait for `seconds`.
#
# A client does what a browser does with a keepalive connection: a request
# that got no response byte on a *reused* connection (the server closed it
# as idle just when the request went out) is sent again once on a new
# connection and counted in `retries` (with retry => 0 it is a failure
# instead, reason "no response"). Anything else that is not a complete,
# checked response is a failure: a connect error, a timeout, a partial
# response, a wrong status or body, or no response on a new connection.
# A response with "Connection: close" (or HTTP/1.0) makes the client
# reconnect for the next request.
#
# wait() returns a hashref:
#   requests    requests answered correctly (ok) plus failed
#   ok, failed, retries, connections (connects made)
#   max_latency seconds, the slowest correct answer (retries included)
#   failures    [{ client, n, why, port (local port of the connection, or
#               0), time (epoch) }]
#   done        [[client, n, time], ...] every correct answer
#   retried     [[client, n], ...] the requests sent again

use strict;
use warnings;

use File::Temp ();
use POSIX ();
use Time::HiRes qw(time sleep);
use Test::Ringx;

sub start {
    my ($class, %o) = @_;
    my $self = bless { %o, pids => [], files => [] }, $class;
    $self->{retry} //= 1;
    $self->{timeout} //= 5;
    $self->{host} //= '127.0.0.1';
    my $end = time + $o{seconds};
    (undef, $self->{stop_file}) = File::Temp::tempfile('load-stop-XXXXXXXX',
                                                        DIR => '/tmp', OPEN => 0);
    for my $i (1 .. $o{clients}) {
        my ($fh, $file) = File::Temp::tempfile('load-XXXXXXXX', DIR => '/tmp',
                                                UNLINK => 0);
        close $fh;
        my $pid = fork();
        die "Test::Load: fork: $!\n" unless defined $pid;
        if ($pid == 0) {
            my $code = 0;
            eval { $self->_client($i, $end, $file); 1 } or do {
                print STDERR "Test::Load client $i: $@";
                $code = 1;
            };
            POSIX::_exit($code);      # no END blocks of the test in a client
        }
        push @{ $self->{pids} }, $pid;
        push @{ $self->{files} }, $file;
    }
    return $self;
}

# One client: requests until $end, results as lines in $file.
sub _client {
    my ($self, $i, $end, $file) = @_;
    my @out;
    my ($c, $reused, $port) = (undef, 0, 0);
    my $n = 0;
    my $retrying = 0;
    my $t0;
    local $SIG{PIPE} = 'IGNORE';
    # stop() creates a file rather than sending a signal: a signal would
    # cut a wait for a response short (select() returns on EINTR)
    while ($retrying || (time < $end && !-e $self->{stop_file})) {
        unless ($retrying) {
            $n++;
            $t0 = time;
        }
        my $retry_now = $retrying;
        $retrying = 0;
        unless ($c) {
            $c = Test::Ringx::Conn->new($self->{host}, $self->{port},
                                        timeout => 2);
            push @out, "conn";
            unless ($c) {
                push @out, "fail $n 0 " . time . " connect: $!";
                sleep 0.05;
                next;
            }
            $reused = 0;
            $port = $c->sock->sockport;
        }
        my $path = $self->{path}->($i, $n);
        my $sent = $c->send("GET $path HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $r = $sent ? $c->read_response(timeout => $self->{timeout}) : undef;
        if (!$r) {
            my $nobyte = length($c->buffer) == 0 && ($c->eof || !$sent);
            my $why = !$nobyte ? ($c->eof ? 'partial response' : 'timeout')
                               : 'no response';
            if ($nobyte && $reused && !$retry_now && $self->{retry}) {
                push @out, "retry $n";
                $retrying = 1;
            } else {
                push @out, "fail $n $port " . time . " $why"
                           . ($reused ? '' : ' (a new connection)');
            }
            $c->close;
            $c = undef;
            next;
        }
        $reused = 1;
        if ($r->{status} == 200 && $self->{check}->($r, $i, $n)) {
            push @out, sprintf("ok %d %.6f %.6f", $n, time, time - $t0);
        } else {
            my $b = substr($r->{body} // '', 0, 40);
            $b =~ s/\n/\\n/g;
            push @out, "fail $n $port " . time . " status $r->{status} $b";
        }
        sleep $self->{pause} if $self->{pause};
        if (($r->{headers}{connection} // '') =~ /close/i
            || $r->{proto} eq 'HTTP/1.0') {
            $c->close;
            $c = undef;
        }
    }
    $c->close if $c;
    open(my $fh, '>', $file) or die "$file: $!";
    print $fh "$_\n" for @out;
    close $fh;
}

sub stop {
    my ($self) = @_;
    open(my $fh, '>', $self->{stop_file}) or die "$self->{stop_file}: $!";
    close $fh;
    return $self;
}

sub wait {
    my ($self) = @_;
    my %r = (ok => 0, failed => 0, retries => 0, connections => 0,
             max_latency => 0, failures => [], done => [], retried => []);
    for my $k (0 .. $#{ $self->{pids} }) {
        waitpid($self->{pids}[$k], 0);
        my $client = $k + 1;
        if ($? != 0) {
            push @{ $r{failures} }, { client => $client, n => 0, port => 0,
                                      time => time, why => "client exit $?" };
        }
        open(my $fh, '<', $self->{files}[$k]) or next;
        while (my $l = <$fh>) {
            chomp $l;
            if ($l eq 'conn') {
                $r{connections}++;
            } elsif ($l =~ /^ok (\d+) (\S+) (\S+)/) {
                $r{ok}++;
                push @{ $r{done} }, [$client, $1, $2];
                $r{max_latency} = $3 if $3 > $r{max_latency};
            } elsif ($l =~ /^retry (\d+)/) {
                $r{retries}++;
                push @{ $r{retried} }, [$client, $1];
            } elsif ($l =~ /^fail (\d+) (\d+) (\S+) (.*)/) {
                push @{ $r{failures} }, { client => $client, n => $1,
                                          port => $2, time => $3, why => $4 };
            }
        }
        close $fh;
        unlink $self->{files}[$k];
    }
    unlink $self->{stop_file};
    $r{failed} = @{ $r{failures} };
    $r{requests} = $r{ok} + $r{failed};
    $self->{pids} = [];
    return \%r;
}

# Text for diag: the first few failures.
sub describe_failures {
    my ($class, $r, $max) = @_;
    my @f = @{ $r->{failures} };
    $#f = ($max // 10) - 1 if @f > ($max // 10);
    return join "\n", map { "client $_->{client} request $_->{n} "
                            . "(port $_->{port}): $_->{why} at "
                            . POSIX::strftime('%H:%M:%S', localtime $_->{time})
                            . sprintf('.%03d', ($_->{time} - int $_->{time}) * 1000) } @f;
}

sub DESTROY {
    my ($self) = @_;
    unlink $self->{stop_file} if $self->{stop_file};
    for my $pid (@{ $self->{pids} || [] }) {
        kill 'KILL', $pid;
        waitpid($pid, 0);
    }
}

1;
