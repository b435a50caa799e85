package Test::Ringx;

# Test::Ringx: the end-to-end test harness of ringx. Each object owns a
# temporary prefix (conf/, logs/, html/), writes configs into it with port
# placeholders, starts the real binary in the foreground as a child of the
# test, waits until it listens, signals it, and at stop fails a test if the
# logs hold an [alert]/[emerg]/[crit] the test did not declare, or a
# sanitizer report.
#
#   use Test::More;
#   use lib 't/lib';
#   use Test::Ringx;
#
#   my $t = Test::Ringx->new;
#   $t->write_config(<<'EOF');
#   daemon off;
#   master_process on;
#   events { worker_connections 64; }
#   http { server { listen 127.0.0.1:%%PORT_0%%; location / { } } }
#   EOF
#   $t->run;                         # dies with the logs if it does not start
#   ok $t->connect_ok($t->port(0));
#   $t->stop;                        # one test: "no unexpected alerts"
#   done_testing;
#
# API (methods of $t unless marked):
#   new                     temp prefix under /tmp with conf/ logs/ html/
#   prefix, conf_file, bin  absolute paths
#   port(N)                 the port behind %%PORT_N%% (N = 0..9 or more)
#   write_config(TEXT)      conf/ringx.conf, %%PORT_N%% and %%PREFIX%% replaced
#                           (and env RINGX_EVENTS=epoll|io_uring adds
#                           `use METHOD;` to an events {} without one)
#   write_file(REL, TEXT)   any file (placeholders replaced); write_file_raw
#   read_file(REL|ABS)      contents or undef
#   run([{opts}], ARGS)     start in the foreground (config: daemon off),
#                           wait for listen ports + pid file; opts: timeout,
#                           ports => [...], wait => 0, env => {},
#                           wrap => [CMD ...] (a command that execs the
#                           binary in place, e.g. setpriv: same pid)
#   stop([signal => S])     QUIT (or S), wait 10 s, then check_logs
#   ringx([{opts}], ARGS)   run synchronously with -p PREFIX/, returns
#                           (exit_code, stdout, stderr); opts: timeout,
#                           prefix => 0, env => {}, ulimit_n => N
#   expect_log(QR, ...)     [alert]/[emerg]/[crit] lines the test provokes
#   check_logs([NAME])      the "no unexpected alerts" test (stop calls it)
#   mark_logs               check_logs looks only past this mark (run marks)
#   master_pid, read_pid_file, pid_file, error_logs
#   worker_pids([MASTER])   live children of the master, sorted
#   wait_workers(N, not => [pids], master => PID, timeout => S)
#   wait_master_exit(S), exit_status, running
#   signal(NAME [, PID]), cmdline(PID), ppid_of(PID)
#   wait_for(CODE [, S])    poll every 50 ms; also Test::Ringx::wait_for
#   log_contains(QR [, FILE])  any error log; list context: the lines
#   connect_ok(PORT), http(PORT, RAW), http_get(PORT, PATH)
#   Test::Ringx::pid_alive(PID)  running and not a zombie
#   raw(PORT [, host => H, timeout => S, local => A])  a Test::Ringx::Conn
#                           (below), or undef when the connect fails; local:
#                           the client's own address (127.0.0.2 ...: another
#                           client of the loopback network)
#   Test::Ringx::parse_responses(RAW [, head => [BOOL, ...]])  responses
#   sanitized               true when the binary is an ASan build (its
#                           quarantine keeps freed memory resident: RSS
#                           bounds do not hold there)
#   cpu_seconds(PID)        utime + stime of a process (from /proc), or undef
#   proc_status(PID)        /proc/PID/status as a hashref (Cpus_allowed_list,
#                           Uid ...), undef when gone
#   rss_kb(PID)             a process's VmRSS in kB (0 when gone)
#   syscalls_during(PID, URL, CODE)  strace -p PID while CODE runs, once a
#                           curl of URL showed strace attached: (CODE's
#                           result, {syscall name => count}); the counts are
#                           empty when strace could not attach
#   nice_of(PID)            the nice value (/proc/PID/stat), or undef
#   live_environ(PID)       the environment a process sees now (libc's
#                           `environ`, read through /proc/PID/mem; needs nm
#                           and ptrace rights): hashref, or undef when it
#                           cannot be read. /proc/PID/environ shows only
#                           the memory the kernel set up at exec, which
#                           process titles overwrite.
#
# Test::Ringx::Conn: a raw client connection for what curl would hide
# (pipelining, bytes in pieces, timeouts, who closes). Every read has a
# deadline (default 5 s, scaled); nothing blocks for longer.
#   $c->send(BYTES)         write everything; false when the peer is gone
#   $c->send_slow(PIECES, delay => S)  PIECES: an arrayref of strings, or a
#                           string cut in size => N byte pieces (default 1);
#                           sleeps S (default 0.1) between pieces
#   $c->read_response([timeout => S, head => 1])  one parsed response (the
#                           rest stays buffered for the next call), undef on
#                           EOF/timeout before a complete one; head => 1: the
#                           response to a HEAD (no body)
#   $c->read_responses(N, [...])  up to N responses (fewer on EOF/timeout)
#   $c->read_all([timeout => S])  the buffer plus everything read until EOF
#                           or the timeout (check $c->eof to know which)
#   $c->wait_closed(S)      reads (keeping the data in buffer) until EOF or
#                           a reset: true when the server closed within S
#   $c->still_open([S])     true when no EOF/reset arrives within S (default
#                           0.1 s): the connection is still up
#   $c->buffer, $c->eof, $c->reset, $c->sock, $c->close
# A parsed response is a hashref: proto, status, reason, headers (lower-case
# name => value, repeated headers joined with ", "), header_list ([name,
# value] pairs in order), head (the raw status line and headers), body
# (de-chunked when chunked), raw (the bytes of the whole response), chunked,
# complete (false only for a body delimited by the close that had not been
# seen).
#
# Environment:
#   RINGX_BIN            the binary (default: objs/ringx of this checkout)
#   RINGX_KEEP=1         keep the temporary prefix (its path is printed)
#   RINGX_TIMEOUT_SCALE  multiplies every timeout (e.g. 3 under valgrind)
#   RINGX_TEST_TIMEOUT   watchdog for a whole .t file, seconds (default 120)

use strict;
use warnings;

use Config;
use Cwd ();
use File::Basename qw(dirname);
use File::Path qw(make_path remove_tree);
use File::Spec;
use File::Temp ();
use IO::Select;
use IO::Socket::IP;
use POSIX qw(WNOHANG);
use Scalar::Util qw(weaken);
use Socket qw(SOCK_STREAM);
use Test::More ();
use Time::HiRes qw(sleep time);

our $VERSION = '0.1';

our $ROOT = Cwd::abs_path(
    File::Spec->catdir(dirname(Cwd::abs_path(__FILE__)), '..', '..', '..'));
our $BIN = $ENV{RINGX_BIN} // "$ROOT/objs/ringx";
$BIN = Cwd::abs_path($BIN) // $BIN if $BIN !~ m{^/};

our $SCALE = ($ENV{RINGX_TIMEOUT_SCALE} && $ENV{RINGX_TIMEOUT_SCALE} > 0)
    ? $ENV{RINGX_TIMEOUT_SCALE} : 1;

# Lines that fail the "no unexpected alerts" test unless expected.
our $ALERT_RE = qr/\[(?:alert|emerg|crit)\]/;
# Sanitizer reports: never waivable.
our $SANITIZER_RE = qr/ERROR: AddressSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer|ERROR: MemorySanitizer/;

my @INSTANCES;      # weak refs, for the END clean-up

# A watchdog so that no test file hangs: the test dies, END stops servers.
my $WATCHDOG = $ENV{RINGX_TEST_TIMEOUT} // 120;
if ($WATCHDOG > 0) {
    $SIG{ALRM} = sub {
        Test::More::diag("Test::Ringx watchdog: test file exceeded "
            . "${WATCHDOG}s, aborting");
        die "Test::Ringx watchdog timeout\n";
    };
    alarm($WATCHDOG * $SCALE);
}

sub timeout { return $_[-1] * $SCALE }

###########################################################################
# construction, prefix, files

sub new {
    my ($class, %opts) = @_;

    unless ($opts{no_binary}) {
        die "Test::Ringx: no ringx binary at $BIN (build it, or set RINGX_BIN)\n"
            unless -f $BIN && -x _;
    }

    my $dir = File::Temp::tempdir('ringx-test-XXXXXXXX', DIR => '/tmp',
                                  CLEANUP => 0);
    $dir = Cwd::abs_path($dir);
    # Workers may run as an unprivileged user when the tests run as root.
    chmod 0755, $dir;
    for my $sub (qw(conf logs html)) {
        make_path("$dir/$sub", { mode => 0755 });
        chmod 0755, "$dir/$sub";
    }
    make_path("$dir/.run", { mode => 0700 });   # outputs of ringx() calls

    my $self = bless {
        prefix     => $dir,
        owner      => $$,          # only this process cleans up
        ports      => {},          # n => port
        port_socks => {},          # n => socket holding the port until run
        expected   => [],
        config     => undef,       # text of conf/ringx.conf as written
        pid        => undef,       # the master we forked (daemon off)
        exit_status => undef,
        started    => 0,           # run() was called: check logs at the end
        checked    => 0,
        created    => time,
        log_marks  => {},          # "dev:ino" => size at run()
        cmd_n      => 0,
        %opts,
    }, $class;

    push @INSTANCES, $self;
    weaken($INSTANCES[-1]);
    return $self;
}

sub prefix { $_[0]{prefix} }
sub bin    { $BIN }
sub conf_file { "$_[0]{prefix}/conf/ringx.conf" }

# The n-th port of the test, picked on first use: bind 127.0.0.1:0, keep the
# socket until the binary is started so that the next pick differs.
sub port {
    my ($self, $n) = @_;
    $n //= 0;
    return $self->{ports}{$n} if defined $self->{ports}{$n};

    my $s = IO::Socket::IP->new(
        LocalHost => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
        Type => SOCK_STREAM, ReuseAddr => 0,
    ) or die "Test::Ringx: cannot bind a free port: $@\n";
    $self->{ports}{$n} = $s->sockport;
    $self->{port_socks}{$n} = $s;
    return $self->{ports}{$n};
}

sub _release_ports {
    my ($self) = @_;
    close($_) for values %{ $self->{port_socks} };
    $self->{port_socks} = {};
}

sub _subst {
    my ($self, $text) = @_;
    $text =~ s/%%PORT_(\d+)%%/$self->port($1)/ge;
    $text =~ s/%%PREFIX%%/$self->{prefix}/g;
    # RINGX_EVENTS=epoll (make test-epoll): every events {} block that
    # names no method gets `use epoll;`, so a suite runs on that backend
    my $use = $ENV{RINGX_EVENTS} // '';
    if ($use =~ /^(?:epoll|io_uring)$/) {
        $text =~ s/(\bevents\s*\{)(?![^}]*\buse\s)/$1 use $use;/g;
    }
    return $text;
}

# Writes conf/ringx.conf (placeholders replaced); returns the text written.
sub write_config {
    my ($self, $text) = @_;
    $text = $self->_subst($text);
    $self->_write("conf/ringx.conf", $text);
    $self->{config} = $text;
    return $text;
}

# Writes any file under the prefix (placeholders replaced); returns its
# absolute path. Directories are created.
sub write_file {
    my ($self, $rel, $content) = @_;
    return $self->_write($rel, $self->_subst($content));
}

# Writes bytes as given, no placeholders.
sub write_file_raw {
    my ($self, $rel, $content) = @_;
    return $self->_write($rel, $content);
}

sub _write {
    my ($self, $rel, $content) = @_;
    my $path = $rel =~ m{^/} ? $rel : "$self->{prefix}/$rel";
    make_path(dirname($path));
    open(my $fh, '>', $path) or die "Test::Ringx: open $path: $!\n";
    binmode $fh;
    print {$fh} $content;
    close($fh) or die "Test::Ringx: close $path: $!\n";
    return $path;
}

# Contents of a file under the prefix (or absolute), undef if missing.
sub read_file {
    my ($self, $rel) = @_;
    my $path = $rel =~ m{^/} ? $rel : "$self->{prefix}/$rel";
    open(my $fh, '<', $path) or return undef;
    binmode $fh;
    local $/;
    my $c = <$fh>;
    close $fh;
    return $c // '';
}

###########################################################################
# what the config says (a rough reading, good enough for test configs)

sub _config_text {
    my ($self) = @_;
    my $text = $self->{config} // $self->read_file('conf/ringx.conf') // '';
    # drop comments (not inside quotes: approximate, test configs are simple)
    $text =~ s/(^|[\s;{}])#[^\n]*/$1/g;
    return $text;
}

sub _abs {
    my ($self, $p) = @_;
    return $p =~ m{^/} ? $p : "$self->{prefix}/$p";
}

# The pid file the master writes: the top-level `pid` directive, else
# logs/ringx.pid.
sub pid_file {
    my ($self) = @_;
    my $text = $self->_config_text;
    if ($text =~ /(?:^|[;{}\s])pid\s+(?:"([^"]*)"|'([^']*)'|([^\s;]+))\s*;/) {
        return $self->_abs($1 // $2 // $3);
    }
    return "$self->{prefix}/logs/ringx.pid";
}

# Error log files named by the config (plus the default logs/error.log).
sub error_logs {
    my ($self) = @_;
    my %seen;
    my @logs = ("$self->{prefix}/logs/error.log");
    my $text = $self->_config_text;
    while ($text =~ /(?:^|[;{}\s])error_log\s+(?:"([^"]*)"|'([^']*)'|([^\s;]+))/g) {
        my $f = $1 // $2 // $3;
        next if $f eq 'stderr' || $f =~ /^(?:syslog|memory):/;
        push @logs, $self->_abs($f);
    }
    return grep { !$seen{$_}++ } @logs;
}

# Ports of `listen` directives in conf/ringx.conf: [host, port] pairs.
sub _listen_addrs {
    my ($self) = @_;
    my $text = $self->_config_text;
    my @addrs;
    while ($text =~ /(?:^|[;{}\s])listen\s+([^\s;]+)/g) {
        my $a = $1;
        next if $a =~ /^unix:/;
        if ($a =~ /^\[([^\]]+)\]:(\d+)$/) {
            push @addrs, [$1, $2];
        } elsif ($a =~ /^(?:\*|0\.0\.0\.0):(\d+)$/) {
            push @addrs, ['127.0.0.1', $1];
        } elsif ($a =~ /^([^:]+):(\d+)$/) {
            push @addrs, [$1 eq 'localhost' ? '127.0.0.1' : $1, $2];
        } elsif ($a =~ /^(\d+)$/) {
            push @addrs, ['127.0.0.1', $1];
        }
    }
    return @addrs;
}

###########################################################################
# running the binary

sub _pdeathsig {
    # prctl(PR_SET_PDEATHSIG, SIGTERM): the server dies with a killed test.
    my %nr = (x86_64 => 157, aarch64 => 167);
    my ($arch) = $Config{archname} =~ /^(x86_64|aarch64)/;
    return unless $arch;
    syscall($nr{$arch}, 1, 15);
}

# Forks and execs @cmd with stdin /dev/null and stdout/stderr to files.
sub _spawn {
    my ($self, $out, $err, $env, @cmd) = @_;
    my $pid = fork();
    die "Test::Ringx: fork: $!\n" unless defined $pid;
    if ($pid == 0) {
        eval {
            open(STDIN, '<', '/dev/null') or die "stdin: $!";
            open(STDOUT, '>', $out) or die "$out: $!";
            open(STDERR, '>', $err) or die "$err: $!";
            $ENV{$_} = $env->{$_} for keys %{ $env || {} };
            _pdeathsig();
            $SIG{$_} = 'DEFAULT' for qw(ALRM INT TERM QUIT HUP PIPE CHLD);
            alarm(0);
            exec { $cmd[0] } @cmd;
            die "exec $cmd[0]: $!";
        };
        print STDERR "Test::Ringx child: $@\n";
        POSIX::_exit(127);
    }
    return $pid;
}

# Starts the server in the foreground (the config must say `daemon off;`):
# RINGX_BIN -p PREFIX/ -c conf/ringx.conf @args, stdout/stderr to
# logs/stdout.log and logs/stderr.log. Waits until every listen port of the
# config accepts a TCP connect and the pid file exists. Dies with the logs
# otherwise. An optional hashref first: { timeout => 5, ports => [..],
# wait => 0 }.
sub run {
    my ($self, @args) = @_;
    my $o = ref $args[0] eq 'HASH' ? shift @args : {};

    die "Test::Ringx: already running (pid $self->{pid})\n"
        if $self->{pid} && !defined $self->{exit_status};

    $self->_release_ports;
    unlink "$self->{prefix}/logs/stdout.log", "$self->{prefix}/logs/stderr.log";
    $self->mark_logs;
    $self->{started} = 1;
    $self->{checked} = 0;
    $self->{exit_status} = undef;

    my @cmd = ($BIN, '-p', "$self->{prefix}/", '-c', 'conf/ringx.conf', @args);
    # wrap: a command that execs the rest in place (setpriv, taskset ...)
    @cmd = (@{ $o->{wrap} }, @cmd) if $o->{wrap};
    $self->{cmd} = [@cmd];
    $self->{pid} = $self->_spawn("$self->{prefix}/logs/stdout.log",
                                 "$self->{prefix}/logs/stderr.log",
                                 $o->{env}, @cmd);

    return $self if defined $o->{wait} && !$o->{wait};

    my @addrs = $o->{ports}
        ? map { ['127.0.0.1', $_] } @{ $o->{ports} }
        : $self->_listen_addrs;
    my $pidfile = $self->pid_file;
    my $deadline = time + timeout($o->{timeout} // 5);
    my %up;

    while (1) {
        if ($self->wait_master_exit(0)) {
            $self->{checked} = 1;       # the logs go out with the die
            die "Test::Ringx: ringx exited during start-up ("
                . $self->_status_text($self->{exit_status}) . ")"
                . ($self->{exit_status} == 0
                   ? "; run() needs `daemon off;` in the config" : '')
                . "\n" . $self->_startup_report;
        }
        for my $a (@addrs) {
            my $k = "$a->[0]:$a->[1]";
            $up{$k} ||= _connect($a->[0], $a->[1], 0.2) ? 1 : 0;
        }
        my $listening = !grep { !$up{"$_->[0]:$_->[1]"} } @addrs;
        my $pid_ok = -s $pidfile;
        my $workers_ok = $listening && $pid_ok && $self->_workers_started(@args);
        return $self if $workers_ok;

        if (time > $deadline) {
            my @down = map { "$_->[0]:$_->[1]" }
                       grep { !$up{"$_->[0]:$_->[1]"} } @addrs;
            my $why = join '; ',
                (@down ? "not listening on @down" : ()),
                ($pid_ok ? () : "no pid file $pidfile"),
                (!@down && $pid_ok ? "the master's workers are not all there" : ());
            $self->_kill_all('KILL');
            $self->{checked} = 1;
            die "Test::Ringx: ringx did not start in time: $why\n"
                . $self->_startup_report;
        }
        sleep 0.05;
    }
}

# A master forks its workers after it listens and writes its pid file: a
# test that looks for them in /proc right after run() must find them all
# (under ASan the fork comes late enough for that to matter). 'auto'
# waits for one.
sub _workers_started {
    my ($self, @args) = @_;
    my $text = $self->_config_text . ' ' . join(' ', @args);
    return 1 if $text =~ /(?:^|[;{}\s])master_process\s+off\s*;/;
    my ($n) = $text =~ /(?:^|[;{}\s])worker_processes\s+(\d+)\s*;/;
    $n //= 1;
    return scalar($self->worker_pids) >= $n;
}

sub _startup_report {
    my ($self) = @_;
    my $r = "command: @{ $self->{cmd} || [] }\n";
    for my $f ($self->error_logs, "$self->{prefix}/logs/stderr.log",
               "$self->{prefix}/logs/stdout.log") {
        my $c = $self->read_file($f);
        next unless defined $c && length $c;
        $c = substr($c, -4000) if length $c > 4000;
        $r .= "--- $f\n$c";
        $r .= "\n" unless $c =~ /\n\z/;
    }
    return $r;
}

sub _status_text {
    my ($self, $st) = @_;
    return 'unknown' unless defined $st;
    return $st >= 128 ? "killed by signal " . ($st - 128) : "exit code $st";
}

# Runs the binary synchronously with -p PREFIX/ (unless the args already
# have -p, or { prefix => 0 }). Returns ($exit_code, $stdout, $stderr); a
# process killed by signal N gives 128+N; a timeout (default 10 s) kills it,
# fails a test and gives -1. Options hashref first: { timeout, prefix, env,
# ulimit_n => N (soft RLIMIT_NOFILE for the run) }.
sub ringx {
    my ($self, @args) = @_;
    my $o = ref $args[0] eq 'HASH' ? shift @args : {};
    local $Test::Builder::Level = $Test::Builder::Level + 1;

    $self->_release_ports;
    my @cmd = ($BIN);
    push @cmd, '-p', "$self->{prefix}/"
        unless (defined $o->{prefix} && !$o->{prefix})
               || grep { /^-p/ } @args;
    push @cmd, @args;
    if ($o->{ulimit_n}) {
        @cmd = ('/bin/sh', '-c', 'ulimit -Sn "$1" || exit 126; shift; exec "$@"',
                'sh', $o->{ulimit_n}, @cmd);
    }

    my $n = ++$self->{cmd_n};
    my ($out, $err) = map { "$self->{prefix}/.run/cmd-$n.$_" } qw(out err);
    my $pid = $self->_spawn($out, $err, $o->{env}, @cmd);
    my $deadline = time + timeout($o->{timeout} // 10);
    my $status;

    while (1) {
        my $r = waitpid($pid, WNOHANG);
        if ($r == $pid) { $status = $?; last; }
        if ($r == -1) { $status = -1; last; }
        if (time > $deadline) {
            kill 'KILL', $pid;
            waitpid($pid, 0);
            Test::More::fail("ringx @args finished within "
                             . timeout($o->{timeout} // 10) . "s");
            $status = undef;
            last;
        }
        sleep 0.02;
    }

    my $stdout = $self->read_file($out) // '';
    my $stderr = $self->read_file($err) // '';
    if ($stderr =~ $SANITIZER_RE) {
        Test::More::fail("no sanitizer report from ringx @args");
        Test::More::diag($stderr);
    }

    my $code = !defined $status ? -1
             : $status == -1    ? -1
             : ($status & 127)  ? 128 + ($status & 127)
             :                    $status >> 8;
    return ($code, $stdout, $stderr);
}

# Waits for the forked master to exit (timeout seconds, 0 = just check).
# Returns true once it has exited; exit_status holds code or 128+signal.
sub wait_master_exit {
    my ($self, $secs) = @_;
    return 1 if defined $self->{exit_status};
    return 1 unless $self->{pid};
    my $deadline = time + ($secs ? timeout($secs) : 0);
    while (1) {
        my $r = waitpid($self->{pid}, WNOHANG);
        if ($r == $self->{pid}) {
            my $st = $?;
            $self->{exit_status} = ($st & 127) ? 128 + ($st & 127) : $st >> 8;
            return 1;
        }
        if ($r == -1) {
            $self->{exit_status} //= -1;
            return 1;
        }
        return 0 if time >= $deadline;
        sleep 0.02;
    }
}

sub exit_status { $_[0]{exit_status} }
sub running { my $s = shift; $s->{pid} && !$s->wait_master_exit(0) }

# Stops the server: QUIT, wait up to 10 s (then KILL and a failed test),
# make sure no worker survives, then check the logs (one test). Returns the
# master's exit status. Options: { signal => 'TERM', timeout => 10 }.
sub stop {
    my ($self, %o) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $sig = $o{signal} // 'QUIT';
    my $secs = $o{timeout} // 10;
    my @workers;

    if ($self->{pid} && !$self->wait_master_exit(0)) {
        @workers = $self->worker_pids;
        kill $sig, $self->{pid};
        unless ($self->wait_master_exit($secs)) {
            kill 'KILL', $self->{pid};
            $self->wait_master_exit(5);
            Test::More::fail("ringx exited within " . timeout($secs)
                             . "s of $sig");
        }
    }
    $self->_reap_leftovers(@workers);
    $self->check_logs unless $self->{checked};
    return $self->{exit_status};
}

sub _reap_leftovers {
    my ($self, @workers) = @_;
    return unless @workers;
    my $deadline = time + timeout(3);
    while (grep { pid_alive($_) } @workers) {
        last if time > $deadline;
        sleep 0.05;
    }
    for my $w (grep { pid_alive($_) } @workers) {
        push @{ $self->{problems} }, "worker $w still running after the master exited";
        kill 'KILL', $w;
    }
}

# Marks the current end of every log file: check_logs looks only at what is
# written after the mark (run() marks; -t runs before it do not count).
sub mark_logs {
    my ($self) = @_;
    $self->{log_marks} = {};
    for my $f ($self->_log_files) {
        my @st = stat $f or next;
        $self->{log_marks}{"$st[0]:$st[1]"} = $st[7];
    }
}

sub _log_files {
    my ($self) = @_;
    my %seen;
    my @files;
    my @dirs = ("$self->{prefix}/logs");
    while (my $d = shift @dirs) {
        opendir(my $dh, $d) or next;
        for my $e (sort grep { !/^\.\.?$/ } readdir $dh) {
            my $p = "$d/$e";
            if (-d $p) { push @dirs, $p; next; }
            next unless -f _;
            next if $e =~ /\.pid$/;
            push @files, $p;
        }
    }
    push @files, grep { -f } $self->error_logs;
    return grep { !$seen{$_}++ } @files;
}

sub _new_log_lines {
    my ($self, $f) = @_;
    my @st = stat $f or return ();
    my $from = $self->{log_marks}{"$st[0]:$st[1]"} // 0;
    $from = 0 if $from > $st[7];
    open(my $fh, '<', $f) or return ();
    binmode $fh;
    seek($fh, $from, 0);
    my @lines = <$fh>;
    close $fh;
    chomp @lines;
    return @lines;
}

# Declares an [alert]/[emerg]/[crit] line the test provokes on purpose.
sub expect_log {
    my ($self, @re) = @_;
    push @{ $self->{expected} }, @re;
    return $self;
}

# The "no unexpected alerts" test: unexpected [alert]/[emerg]/[crit] lines,
# sanitizer reports and leftover workers fail it, listed in diag.
sub check_logs {
    my ($self, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my @bad = $self->_problems;
    $self->{checked} = 1;
    my $ok = Test::More::ok(!@bad, $name // 'no unexpected alerts');
    Test::More::diag(join "\n", @bad) if @bad;
    return $ok;
}

sub _problems {
    my ($self) = @_;
    my @bad = @{ $self->{problems} || [] };
    for my $f ($self->_log_files) {
        my $short = $f;
        $short =~ s{^\Q$self->{prefix}\E/}{};
        for my $line ($self->_new_log_lines($f)) {
            if ($line =~ $SANITIZER_RE) {
                push @bad, "$short: $line";
            } elsif ($line =~ $ALERT_RE
                     && !grep { $line =~ $_ } @{ $self->{expected} }) {
                push @bad, "$short: $line";
            }
        }
    }
    return @bad;
}

###########################################################################
# processes

sub pid_alive {
    my ($pid) = @_;
    $pid = $_[1] if ref $_[0];
    return 0 unless $pid;
    my $st = _proc_stat($pid) or return 0;
    return $st->{state} ne 'Z' && $st->{state} ne 'X';
}

sub _proc_stat {
    my ($pid) = @_;
    open(my $fh, '<', "/proc/$pid/stat") or return undef;
    my $s = <$fh>;
    close $fh;
    return undef unless defined $s;
    my $r = rindex($s, ')');
    return undef if $r < 0;
    my @f = split ' ', substr($s, $r + 2);
    return { state => $f[0], ppid => $f[1] };
}

# When $pid started, seconds since the epoch (from /proc, rounded down).
sub _proc_start_epoch {
    my ($pid) = @_;
    open(my $fh, '<', "/proc/$pid/stat") or return undef;
    my $s = <$fh>;
    close $fh;
    return undef unless defined $s;
    my @f = split ' ', substr($s, rindex($s, ')') + 2);
    my $ticks = $f[19];                     # field 22: starttime
    open(my $st, '<', '/proc/stat') or return undef;
    my ($btime) = map { /^btime (\d+)/ ? $1 : () } <$st>;
    close $st;
    return undef unless defined $btime && defined $ticks;
    my $hz = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
    return int($btime + $ticks / $hz);
}

sub ppid_of {
    my ($self, $pid) = @_;
    my $st = _proc_stat($pid) or return undef;
    return $st->{ppid};
}

# The pid in the pid file (undef when missing/empty).
sub read_pid_file {
    my ($self) = @_;
    my $c = $self->read_file($self->pid_file);
    return undef unless defined $c && $c =~ /^\s*(\d+)\s*$/;
    return $1;
}

# The master: the process run() forked, else the pid file's.
sub master_pid {
    my ($self) = @_;
    return $self->{pid}
        if $self->{pid} && !defined $self->{exit_status};
    return $self->read_pid_file;
}

# Live (non-zombie) children of the master (or of $pid), sorted.
sub worker_pids {
    my ($self, $parent) = @_;
    $parent //= $self->master_pid;
    return () unless $parent;
    my @kids;
    opendir(my $dh, '/proc') or return ();
    for my $p (grep { /^\d+$/ } readdir $dh) {
        my $st = _proc_stat($p) or next;
        next unless $st->{ppid} == $parent;
        next if $st->{state} eq 'Z' || $st->{state} eq 'X';
        push @kids, $p;
    }
    closedir $dh;
    my @sorted = sort { $a <=> $b } @kids;
    return @sorted;
}

# Waits until the master has exactly $n workers (optionally none of
# @{$opts{not}}); returns them, or () on timeout.
sub wait_workers {
    my ($self, $n, %o) = @_;
    my %old = map { $_ => 1 } @{ $o{not} || [] };
    my @w;
    my $ok = $self->wait_for(sub {
        @w = $self->worker_pids($o{master});
        @w == $n && !grep { $old{$_} } @w;
    }, $o{timeout} // 5);
    return $ok ? @w : ();
}

# /proc/PID/cmdline with NULs as spaces, trailing blanks removed.
sub cmdline {
    my ($self, $pid) = @_;
    open(my $fh, '<', "/proc/$pid/cmdline") or return undef;
    local $/;
    my $c = <$fh> // '';
    close $fh;
    $c =~ tr/\0/ /;
    $c =~ s/\s+\z//;
    return $c;
}

# Sends a signal (name or number) to the master (or to $pid).
sub signal {
    my ($self, $sig, $pid) = @_;
    $pid //= $self->master_pid;
    die "Test::Ringx: no master to signal\n" unless $pid;
    return kill $sig, $pid;
}

# Polls $code every 50 ms until it returns true (returned) or $timeout
# seconds (default 5) pass (undef). Callable as method or function.
sub wait_for {
    shift if @_ && (ref $_[0] && ref $_[0] ne 'CODE' || !ref $_[0] && $_[0] && $_[0] eq __PACKAGE__);
    my ($code, $secs) = @_;
    my $deadline = time + timeout($secs // 5);
    while (1) {
        my $r = $code->();
        return $r if $r;
        return undef if time > $deadline;
        sleep 0.05;
    }
}

# True when any error log (or the given file) has a line matching $re; in
# list context the matching lines.
sub log_contains {
    my ($self, $re, $file) = @_;
    my @files = $file ? ($self->_abs($file)) : $self->error_logs;
    my @hits;
    for my $f (@files) {
        my $c = $self->read_file($f) // next;
        push @hits, grep { $_ =~ $re } split /\n/, $c;
    }
    return wantarray ? @hits : scalar @hits;
}

###########################################################################
# network

sub _connect {
    my ($host, $port, $secs, $local) = @_;
    my $s = IO::Socket::IP->new(
        PeerHost => $host, PeerPort => $port, Proto => 'tcp',
        Type => SOCK_STREAM, Timeout => $secs // 1,
        defined $local ? (LocalHost => $local) : (),
    );
    return $s;
}

# True when a TCP connect to 127.0.0.1:$port succeeds (the socket closed).
sub connect_ok {
    my ($self, $port, $host) = @_;
    my $s = _connect($host // '127.0.0.1', $port, timeout(1)) or return 0;
    close $s;
    return 1;
}

# Sends $request raw and returns everything read until EOF or the timeout
# (default 5 s), undef when the connect fails.
sub http {
    my ($self, $port, $request, %o) = @_;
    my $s = _connect($o{host} // '127.0.0.1', $port, timeout(2)) or return undef;
    $s->autoflush(1);
    local $SIG{PIPE} = 'IGNORE';
    syswrite($s, $request) if length $request;
    my $sel = IO::Select->new($s);
    my $deadline = time + timeout($o{timeout} // 5);
    my $resp = '';
    while (1) {
        my $left = $deadline - time;
        last if $left <= 0;
        last unless $sel->can_read($left);
        my $n = sysread($s, my $buf, 65536);
        last unless $n;
        $resp .= $buf;
    }
    close $s;
    return $resp;
}

# GET $path over HTTP/1.0; the raw response (status line, headers, body).
sub http_get {
    my ($self, $port, $path, %o) = @_;
    my $host = $o{host_header} // 'localhost';
    return $self->http($port,
        "GET $path HTTP/1.0\r\nHost: $host\r\nConnection: close\r\n\r\n", %o);
}

# A raw connection (Test::Ringx::Conn), undef when the connect fails.
sub raw {
    my ($self, $port, %o) = @_;
    return Test::Ringx::Conn->new($o{host} // '127.0.0.1', $port, %o);
}

# An ASan build links the sanitizer runtime: its name is in the binary.
sub sanitized {
    my ($self) = @_;
    return $self->{sanitized} //= do {
        my $found = 0;
        if (open(my $fh, '<:raw', $self->bin)) {
            local $/ = \(1 << 20);
            while (my $chunk = <$fh>) {
                if (index($chunk, '__asan_init') >= 0) { $found = 1; last }
            }
            close $fh;
        }
        $found;
    };
}

# CPU time used so far by a process, user + system, in seconds.
sub cpu_seconds {
    my ($self, $pid) = @_;
    $pid = $self unless ref $self || $self eq __PACKAGE__;   # as a function
    open(my $fh, '<', "/proc/$pid/stat") or return undef;
    my $s = <$fh>;
    close $fh;
    return undef unless defined $s;
    my @f = split ' ', substr($s, rindex($s, ')') + 2);
    my $hz = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
    return ($f[11] + $f[12]) / $hz;                 # fields 14 and 15
}

# /proc/PID/status as a hashref ("Cpus_allowed_list" => "0-1", ...).
sub proc_status {
    my ($self, $pid) = @_;
    $pid = $self unless ref $self || $self eq __PACKAGE__;
    open(my $fh, '<', "/proc/$pid/status") or return undef;
    my %st = map { /^([^:]+):\s*(.*?)\s*$/ ? ($1, $2) : () } <$fh>;
    close $fh;
    return \%st;
}

sub rss_kb {
    my ($self, $pid) = @_;
    my $st = proc_status($self, $pid) or return 0;
    return (($st->{VmRSS} // '0') =~ /(\d+)/)[0];
}

# A directive line ringx must refuse: -t of a configuration that has it on
# line 3, in http {} beside one server, fails with "[emerg] ...MSG... in
# .../ringx.conf:3" (two tests). $at_start: MSG follows "[emerg] " at once.
sub http_line_refused_ok {
    my ($line, $msg, $at_start) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $c = __PACKAGE__->new;
    $c->write_config(<<"EOF");
events { }
http {
    $line
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    my ($rc, $out, $err) = $c->ringx('-t');
    Test::More::is($rc, 1, "-t with \"$line\": fails");
    my $re = $at_start ? qr/\[emerg\] \Q$msg\E.* in \S+ringx\.conf:3$/m
                       : qr/\[emerg\] .*\Q$msg\E.* in \S+ringx\.conf:3$/m;
    Test::More::like($err, $re, "\"$line\": the message and the place")
        or Test::More::diag($err);
}

my $strace_runs = 0;

# The system calls a process made while $code ran (strace attached first,
# curl $url telling when): $code's result, the count of each call by name
# and strace's text (its flags, sizes and results).
sub syscalls_during {
    my ($self, $pid, $url, $code) = @_;
    my $out = $self->prefix . '/strace.' . ++$strace_runs . '.out';
    my $kid = fork // die "fork: $!";
    if (!$kid) {
        exec 'strace', '-q', '-o', $out, '-p', $pid;
        exit 127;
    }
    # strace writes nothing until it attached: a first call tells
    wait_for(sub { `curl -s -o /dev/null $url`; -s $out }, 10);
    my $got = $code->();
    kill 'INT', $kid;
    waitpid $kid, 0;
    my ($text, %calls) = ($self->read_file($out) // '');
    $calls{$1}++ while $text =~ /^(\w+)\(/mg;
    return ($got, \%calls, $text);
}

# The nice value of a process (field 19 of /proc/PID/stat).
sub nice_of {
    my ($self, $pid) = @_;
    $pid = $self unless ref $self || $self eq __PACKAGE__;
    open(my $fh, '<', "/proc/$pid/stat") or return undef;
    my $s = <$fh>;
    close $fh;
    return undef unless defined $s;
    my @f = split ' ', substr($s, rindex($s, ')') + 2);
    return $f[16];
}

# Reads $len bytes of a process's memory at $addr (undef on failure).
sub _read_mem {
    my ($fh, $addr, $len) = @_;
    sysseek($fh, $addr, 0) or return undef;
    my $buf = '';
    my $n = sysread($fh, $buf, $len);
    return $n ? $buf : undef;
}

# The environment a process sees now: the strings its libc `environ` points
# to, read through /proc/PID/mem (64-bit little-endian only). `environ` is
# looked up with nm -D in the executable (a copy relocation) and then in
# the libc it maps. Returns a hashref NAME => value, or undef.
sub live_environ {
    my ($self, $pid) = @_;
    no warnings 'portable';                 # 64-bit addresses with hex()
    $pid = $self unless ref $self || $self eq __PACKAGE__;
    return undef unless $Config{ptrsize} == 8 && $Config{byteorder} =~ /^1234/;
    open(my $maps, '<', "/proc/$pid/maps") or return undef;
    my (%base, @files);
    while (my $l = <$maps>) {
        my ($start, $off, $path) =
            $l =~ /^([0-9a-f]+)-[0-9a-f]+ \S+ ([0-9a-f]+) \S+ \d+\s+(\/\S+)$/
            or next;
        next if exists $base{$path} || hex($off) != 0;
        $base{$path} = hex $start;
        push @files, $path;
    }
    close $maps;
    my $exe = readlink("/proc/$pid/exe") // '';
    my @order = ((grep { $_ eq $exe } @files),
                 (grep { m{/libc[.-][^/]*\.so} } @files));
    my $addr;
    for my $file (@order) {
        next unless -r $file;
        open(my $nm, '-|', 'nm', '-D', '--defined-only', $file) or next;
        my ($off) = map { /^([0-9a-f]+) [BbDdVv] (?:__)?environ(?:@|$)/ ? $1 : () } <$nm>;
        close $nm;
        next unless defined $off;
        open(my $elf, '<', $file) or next;
        binmode $elf;
        read($elf, my $hdr, 18) == 18 or next;
        close $elf;
        my $type = unpack('v', substr($hdr, 16, 2));
        $addr = hex($off) + ($type == 3 ? $base{$file} : 0);   # ET_DYN
        last;
    }
    return undef unless defined $addr;
    open(my $mem, '<:raw', "/proc/$pid/mem") or return undef;
    my $p = _read_mem($mem, $addr, 8) // return undef;
    my $array = unpack('Q<', $p);
    return undef unless $array;
    my %env;
    for my $i (0 .. 4095) {
        my $q = _read_mem($mem, $array + 8 * $i, 8) // return undef;
        my $s = unpack('Q<', $q);
        last if $s == 0;
        my $str = '';
        while (1) {
            # no read across a page end: the next page may not be mapped
            my $chunk = 4096 - (($s + length $str) % 4096);
            my $b = _read_mem($mem, $s + length($str), $chunk) // last;
            my $nul = index($b, "\0");
            if ($nul >= 0) { $str .= substr($b, 0, $nul); last; }
            $str .= $b;
            last if length $str > 65536;
        }
        my ($k, $v) = split /=/, $str, 2;
        $env{$k} = $v;
    }
    close $mem;
    return \%env;
}

# Parses one response at the start of $$bufref. Returns (response, length
# used) when complete; (undef, 0) when more bytes are needed or the bytes
# are not a response. With eof a body delimited by the close is complete.
sub _parse_one {
    my ($bufref, %o) = @_;
    my $buf = $$bufref;
    my $end = index($buf, "\r\n\r\n");
    my $sep = 4;
    if ($end < 0) {
        return (undef, 0);
    }
    my $head = substr($buf, 0, $end + $sep);
    my @lines = split /\r\n/, substr($buf, 0, $end);
    my $sl = shift @lines;
    # not a response: the caller sees it in the buffer
    return (undef, 0) unless $sl =~ m{^(HTTP/\d\.\d) (\d{3})(?: (.*))?$};
    my %r = (proto => $1, status => $2 + 0, reason => $3 // '',
             head => $head, headers => {}, header_list => [],
             chunked => 0, complete => 1);
    for my $l (@lines) {
        my ($n, $v) = $l =~ /^([^:]+):[ \t]*(.*?)[ \t]*$/ or next;
        push @{ $r{header_list} }, [$n, $v];
        my $k = lc $n;
        $r{headers}{$k} = exists $r{headers}{$k}
            ? "$r{headers}{$k}, $v" : $v;
    }
    my $pos = $end + $sep;
    my $h = $r{headers};
    if ($o{head} || $r{status} < 200 || $r{status} == 204
        || $r{status} == 304) {
        $r{body} = '';
    } elsif (($h->{'transfer-encoding'} // '') =~ /chunked/i) {
        $r{chunked} = 1;
        my $body = '';
        while (1) {
            my $le = index($buf, "\r\n", $pos);
            return (undef, 0) if $le < 0;
            my $line = substr($buf, $pos, $le - $pos);
            return (undef, 0) unless $line =~ /^([0-9a-fA-F]+)/;
            my $size = hex $1;
            $pos = $le + 2;
            if ($size == 0) {
                # trailers up to an empty line
                while (1) {
                    my $te = index($buf, "\r\n", $pos);
                    return (undef, 0) if $te < 0;
                    my $empty = $te == $pos;
                    $pos = $te + 2;
                    last if $empty;
                }
                last;
            }
            return (undef, 0) if length($buf) < $pos + $size + 2;
            $body .= substr($buf, $pos, $size);
            $pos += $size + 2;
        }
        $r{body} = $body;
    } elsif (defined $h->{'content-length'}) {
        my $len = $h->{'content-length'};
        return (undef, 0) unless $len =~ /^\d+$/;
        return (undef, 0) if length($buf) < $pos + $len;
        $r{body} = substr($buf, $pos, $len);
        $pos += $len;
    } else {
        $r{body} = substr($buf, $pos);
        $r{complete} = $o{eof} ? 1 : 0;
        return (undef, 0) unless $o{eof};
        $pos = length $buf;
    }
    $r{raw} = substr($buf, 0, $pos);
    return (\%r, $pos);
}

# Every response in a byte string (as read from a connection that is now
# closed). head => [flags]: which of them answer a HEAD. Bytes after the
# last complete response are left out (see the last element's raw to tell).
sub parse_responses {
    my ($raw, %o) = @_;
    my @flags = @{ $o{head} || [] };
    my @r;
    while (length $raw) {
        my ($r, $used) = _parse_one(\$raw, eof => 1, head => shift @flags);
        last unless $r;
        push @r, $r;
        substr($raw, 0, $used) = '';
    }
    return @r;
}

package Test::Ringx::Conn;

use Errno qw(EAGAIN EINTR ECONNRESET EPIPE);
use IO::Select;
use Time::HiRes qw(sleep time);

sub new {
    my ($class, $host, $port, %o) = @_;
    my $s = Test::Ringx::_connect($host, $port,
                                  Test::Ringx::timeout($o{timeout} // 2),
                                  $o{local})
        or return undef;
    $s->autoflush(1);
    binmode $s;
    return bless { sock => $s, buf => '', eof => 0, reset => 0,
                   sel => IO::Select->new($s) }, $class;
}

sub sock   { $_[0]{sock} }
sub buffer { $_[0]{buf} }
sub eof    { $_[0]{eof} }
sub reset  { $_[0]{reset} }

sub close {
    my ($self) = @_;
    close($self->{sock}) if $self->{sock};
    $self->{sock} = undef;
    $self->{eof} = 1;
}

sub send {
    my ($self, $data) = @_;
    return 0 unless $self->{sock};
    local $SIG{PIPE} = 'IGNORE';
    my $off = 0;
    my $deadline = time + Test::Ringx::timeout(5);
    while ($off < length $data) {
        my $n = syswrite($self->{sock}, $data, length($data) - $off, $off);
        if (!defined $n) {
            next if $! == EINTR;
            if ($! == EAGAIN) {
                return 0 if time > $deadline;
                sleep 0.01;
                next;
            }
            return 0;
        }
        $off += $n;
    }
    return 1;
}

sub send_slow {
    my ($self, $pieces, %o) = @_;
    my $delay = $o{delay} // 0.1;
    unless (ref $pieces) {
        my $size = $o{size} || 1;
        $pieces = [ unpack("(a$size)*", $pieces) ];
    }
    my $i = 0;
    for my $p (@$pieces) {
        sleep $delay if $i++;
        $self->send($p) or return 0;
    }
    return 1;
}

# One read into the buffer, waiting up to $left seconds. Returns 1 (data),
# 0 (EOF or reset), undef (timeout).
sub _fill {
    my ($self, $left) = @_;
    return 0 if $self->{eof} || !$self->{sock};
    return undef if $left <= 0;
    return undef unless $self->{sel}->can_read($left);
    my $n = sysread($self->{sock}, my $b, 65536);
    if (!defined $n) {
        return undef if $! == EINTR || $! == EAGAIN;
        $self->{reset} = 1 if $! == ECONNRESET;
        $self->{eof} = 1;
        return 0;
    }
    if ($n == 0) {
        $self->{eof} = 1;
        return 0;
    }
    $self->{buf} .= $b;
    return 1;
}

sub read_response {
    my ($self, %o) = @_;
    my $deadline = time + Test::Ringx::timeout($o{timeout} // 5);
    while (1) {
        my ($r, $used) = Test::Ringx::_parse_one(\$self->{buf},
                                  head => $o{head}, eof => $self->{eof});
        if ($r) {
            substr($self->{buf}, 0, $used) = '';
            return $r;
        }
        return undef if $self->{eof};
        my $got = $self->_fill($deadline - time);
        return undef unless defined $got;   # timeout
    }
}

sub read_responses {
    my ($self, $n, %o) = @_;
    my @r;
    my @flags = @{ $o{head} || [] };
    my $deadline = time + Test::Ringx::timeout($o{timeout} // 5);
    for (1 .. $n) {
        my $left = $deadline - time;
        my $r = $self->read_response(timeout => ($left > 0 ? $left : 0.001)
                                                / $Test::Ringx::SCALE,
                                     head => shift @flags) or last;
        push @r, $r;
    }
    return @r;
}

sub read_all {
    my ($self, %o) = @_;
    my $deadline = time + Test::Ringx::timeout($o{timeout} // 5);
    while (!$self->{eof}) {
        defined($self->_fill($deadline - time)) or last;
    }
    my $all = $self->{buf};
    $self->{buf} = '';
    return $all;
}

sub wait_closed {
    my ($self, $secs) = @_;
    my $deadline = time + Test::Ringx::timeout($secs // 5);
    while (!$self->{eof}) {
        defined($self->_fill($deadline - time)) or return 0;
    }
    return 1;
}

sub still_open {
    my ($self, $secs) = @_;
    return 0 if $self->{eof} || !$self->{sock};
    return !$self->wait_closed($secs // 0.1);
}

package Test::Ringx;

###########################################################################
# clean-up

sub _kill_all {
    my ($self, $sig) = @_;
    my @w;
    if ($self->{pid} && !$self->wait_master_exit(0)) {
        @w = $self->worker_pids($self->{pid});
        kill $sig, $self->{pid};
        $self->wait_master_exit(2) or do {
            kill 'KILL', $self->{pid};
            $self->wait_master_exit(2);
        };
    }
    # a daemonized master started through ringx(): only a process that
    # existed when the pid file was written (not a reused pid)
    my $dpid = $self->read_pid_file;
    my @pst = stat $self->pid_file;
    my $start = $dpid ? _proc_start_epoch($dpid) : undef;
    if ($dpid && $dpid != $$ && pid_alive($dpid) && @pst && defined $start
        && $start <= $pst[9] + 2 && $pst[9] >= $self->{created} - 1
        && ($self->cmdline($dpid) // '') =~ /ringx/) {
        push @w, $self->worker_pids($dpid);
        kill $sig, $dpid;
        my $deadline = time + 2;
        sleep 0.05 while pid_alive($dpid) && time < $deadline;
        kill 'KILL', $dpid if pid_alive($dpid);
    }
    for my $w (@w) {
        kill 'KILL', $w if pid_alive($w) && ($self->cmdline($w) // '') =~ /ringx/;
    }
}

sub _finish {
    my ($self) = @_;
    return if $self->{finished} || $$ != $self->{owner};
    $self->{finished} = 1;
    local ($?, $!, $@);

    my $was_running = $self->{pid} && !$self->wait_master_exit(0);
    if ($was_running) {
        my @w = $self->worker_pids;
        kill 'QUIT', $self->{pid};
        $self->_kill_all('TERM') unless $self->wait_master_exit(10);
        $self->_reap_leftovers(@w);
    }
    $self->_kill_all('TERM');
    $self->_release_ports;

    if ($self->{started} && !$self->{checked}) {
        my @bad = $self->_problems;
        if (@bad) {
            Test::More::ok(0, 'no unexpected alerts (at exit)');
            Test::More::diag(join "\n", @bad);
        }
    }

    if ($ENV{RINGX_KEEP}) {
        Test::More::diag("Test::Ringx: kept $self->{prefix}");
    } else {
        remove_tree($self->{prefix}, { safe => 1 });
    }
}

sub DESTROY {
    my ($self) = @_;
    $self->_finish;
}

END {
    local $?;
    for my $t (grep { defined } @INSTANCES) {
        eval { $t->_finish };
        print STDERR "Test::Ringx clean-up: $@" if $@;
    }
    alarm(0);
}

1;
