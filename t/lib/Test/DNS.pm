package Test::DNS;

# Test::DNS: a scripted DNS server for the resolver tests. A forked child
# answers on 127.0.0.1 at one free port over UDP and TCP (length-prefixed),
# as the test's script says for each name, and records every query it gets
# in a log the test reads back (caching is asserted by counting queries).
#
#   use Test::DNS;
#   my $dns = Test::DNS->new;
#   $dns->set('app.test' => { A => ['127.0.0.1'], ttl => 60 });
#   $dns->start;                        # "resolver 127.0.0.1:" . $dns->port
#   ... requests through ringx ...
#   is $dns->count('app.test', 'A'), 1;  # queries seen (any transport)
#   $dns->stop;                          # also done by DESTROY
#
# The script (set(NAME => SPEC) any time: the child reads it anew for each
# query). Names are matched in lower case; unknown names get NXDOMAIN.
#   A => [ip, ...], AAAA => [ip, ...]   the addresses (none: an empty answer)
#   ttl => N                            TTL of every record (default 60)
#   cname => 'target'                   a CNAME to target, followed in the
#                                       same answer with target's records
#                                       (a chain when target has a cname)
#   rcode => N                          2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED ...
#   tc => 1                             over UDP: the TC bit and no records
#                                       (the client must ask over TCP)
#   drop => 1                           never answered
#   delay_ms => MS                      answered after MS (the child waits:
#                                       other queries wait too)
#   wrong_id => 1                       first an answer with another id, then
#                                       the right one
#   wrong_q => 1                        first an answer for another name with
#                                       the query's id, then the right one
# Methods: new, start, stop, port, set(NAME, SPEC), queries (list of
# { proto => 'udp'|'tcp', type => 'A'|'AAAA'|N, name, id }), count(NAME
# [, TYPE [, PROTO]]), clear (forget the queries seen so far).

use strict;
use warnings;

use IO::Socket::IP;
use IO::Select;
use File::Temp qw(tempdir);
use Socket qw(SOCK_DGRAM SOCK_STREAM inet_pton AF_INET AF_INET6);
use POSIX ();

my %TYPE = (1 => 'A', 5 => 'CNAME', 28 => 'AAAA');
my %CODE = (A => 1, CNAME => 5, AAAA => 28);

sub new {
    my ($class, %opts) = @_;
    my $dir = tempdir('ringx-dns-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $self = bless { dir => $dir, script => {}, opts => \%opts }, $class;
    $self->_write_script;
    open(my $fh, '>', "$dir/queries") or die "Test::DNS: $dir/queries: $!\n";
    close $fh;
    return $self;
}

sub port { $_[0]{port} }

sub set {
    my ($self, $name, $spec) = @_;
    $self->{script}{lc $name} = $spec;
    $self->_write_script;
}

sub _write_script {
    my ($self) = @_;
    require Data::Dumper;
    local $Data::Dumper::Terse = 1;
    local $Data::Dumper::Indent = 0;
    my $tmp = "$self->{dir}/script.tmp";
    open(my $fh, '>', $tmp) or die "Test::DNS: $tmp: $!\n";
    print $fh Data::Dumper::Dumper($self->{script});
    close $fh;
    rename $tmp, "$self->{dir}/script" or die "Test::DNS: rename: $!\n";
}

sub start {
    my ($self) = @_;
    my ($udp, $tcp);
    for (1 .. 50) {
        $udp = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0,
                                   Proto => 'udp', Type => SOCK_DGRAM)
            or die "Test::DNS: udp: $!\n";
        $tcp = IO::Socket::IP->new(LocalHost => '127.0.0.1',
                                   LocalPort => $udp->sockport, Proto => 'tcp',
                                   Type => SOCK_STREAM, Listen => 16,
                                   ReuseAddr => 1);
        last if $tcp;
        close $udp;
    }
    die "Test::DNS: no port free for both UDP and TCP\n" unless $tcp;
    $self->{port} = $udp->sockport;
    my $pid = fork();
    die "Test::DNS: fork: $!\n" unless defined $pid;
    if ($pid == 0) {
        eval {
            $0 = "test-dns $self->{port}";
            # dies with a killed test, as Test::Upstream's server does
            require Test::Upstream;
            Test::Upstream::_pdeathsig();
            $self->_serve($udp, $tcp);
        };
        print STDERR "Test::DNS: $@" if $@;
        POSIX::_exit(0);
    }
    close $udp;
    close $tcp;
    $self->{pid} = $pid;
    return $self;
}

sub stop {
    my ($self) = @_;
    return unless $self->{pid};
    kill 'TERM', $self->{pid};
    waitpid($self->{pid}, 0);
    delete $self->{pid};
}

sub DESTROY { $_[0]->stop }

sub queries {
    my ($self) = @_;
    open(my $fh, '<', "$self->{dir}/queries") or return ();
    my @q;
    while (my $line = <$fh>) {
        chomp $line;
        my ($proto, $type, $name, $id) = split / /, $line;
        push @q, { proto => $proto, type => $type, name => $name, id => $id };
    }
    return @q;
}

sub count {
    my ($self, $name, $type, $proto) = @_;
    return scalar grep {
        $_->{name} eq lc $name && (!defined $type || $_->{type} eq $type)
            && (!defined $proto || $_->{proto} eq $proto)
    } $self->queries;
}

sub clear {
    my ($self) = @_;
    open(my $fh, '>', "$self->{dir}/queries") or die "Test::DNS: $!\n";
    close $fh;
}

# --- the child ---------------------------------------------------------

sub _serve {
    my ($self, $udp, $tcp) = @_;
    my $sel = IO::Select->new($udp, $tcp);
    my %buf;
    $SIG{TERM} = sub { POSIX::_exit(0) };
    for (;;) {
        for my $fh ($sel->can_read) {
            if ($fh == $udp) {
                my $peer = $udp->recv(my $pkt, 65535);
                next unless defined $peer && length $pkt;
                for my $out ($self->_answer($pkt, 'udp')) {
                    $udp->send($out, 0, $peer);
                }
            } elsif ($fh == $tcp) {
                my $c = $tcp->accept or next;
                $sel->add($c);
                $buf{fileno $c} = '';
            } else {
                my $n = sysread($fh, my $chunk, 65535);
                if (!$n) {
                    $sel->remove($fh);
                    delete $buf{fileno $fh};
                    close $fh;
                    next;
                }
                my $b = \$buf{fileno $fh};
                $$b .= $chunk;
                while (length $$b >= 2) {
                    my $len = unpack('n', $$b);
                    last if length $$b < 2 + $len;
                    my $pkt = substr($$b, 2, $len);
                    substr($$b, 0, 2 + $len, '');
                    for my $out ($self->_answer($pkt, 'tcp')) {
                        syswrite($fh, pack('n', length $out) . $out);
                    }
                }
            }
        }
    }
}

sub _script {
    my ($self) = @_;
    open(my $fh, '<', "$self->{dir}/script") or return {};
    local $/;
    my $text = <$fh>;
    close $fh;
    return eval($text) || {};
}

sub _read_name {
    my ($pkt, $pos) = @_;
    my @labels;
    for (;;) {
        my $len = ord(substr($pkt, $pos, 1));
        $pos++;
        last if $len == 0;
        push @labels, substr($pkt, $pos, $len);
        $pos += $len;
    }
    return (lc join('.', @labels), $pos);
}

sub _name {
    my ($name) = @_;
    return join('', map { chr(length $_) . $_ } split /\./, $name) . "\0";
}

sub _rr {
    my ($name, $type, $ttl, $rdata) = @_;
    return _name($name) . pack('nnNn', $CODE{$type}, 1, $ttl, length $rdata)
        . $rdata;
}

# The records answering (name, type): the CNAME chain, then the addresses.
sub _records {
    my ($script, $name, $type) = @_;
    my @rr;
    for (1 .. 20) {
        my $spec = $script->{$name} or last;
        my $ttl = $spec->{ttl} // 60;
        if (defined $spec->{cname}) {
            push @rr, _rr($name, 'CNAME', $ttl, _name($spec->{cname}));
            $name = lc $spec->{cname};
            next;
        }
        for my $ip (@{ $spec->{$type} || [] }) {
            my $bin = inet_pton($type eq 'A' ? AF_INET : AF_INET6, $ip);
            push @rr, _rr($name, $type, $ttl, $bin);
        }
        last;
    }
    return @rr;
}

sub _answer {
    my ($self, $pkt, $proto) = @_;
    return () if length $pkt < 12;
    my ($id, $flags, $qd) = unpack('nnn', $pkt);
    my ($name, $pos) = _read_name($pkt, 12);
    my ($qtype) = unpack('n', substr($pkt, $pos, 2));
    my $question = substr($pkt, 12, $pos + 4 - 12);
    my $type = $TYPE{$qtype} // $qtype;
    if (open(my $log, '>>', "$self->{dir}/queries")) {
        print $log "$proto $type $name $id\n";
        close $log;
    }
    my $script = $self->_script;
    my $spec = $script->{$name};
    return () if $spec && $spec->{drop};
    select(undef, undef, undef, $spec->{delay_ms} / 1000)
        if $spec && $spec->{delay_ms};
    my $rcode = !$spec ? 3 : $spec->{rcode} // 0;
    my @rr = $rcode ? () : _records($script, $name, $type);
    my $tc = $spec && $spec->{tc} && $proto eq 'udp';
    @rr = () if $tc;
    my $head = sub {
        my ($i, $n) = @_;
        return pack('nnnnnn', $i, 0x8180 | ($tc ? 0x0200 : 0) | $rcode, 1,
                    $n, 0, 0);
    };
    my $right = $head->($id, scalar @rr) . $question . join('', @rr);
    my @out;
    if ($spec && $spec->{wrong_id}) {
        push @out, $head->(($id + 1) & 0xffff, scalar @rr) . $question
            . join('', @rr);
    }
    if ($spec && $spec->{wrong_q}) {
        my $other = _name("other-$name") . substr($question, -4);
        push @out, $head->($id, 0) . $other;
    }
    return (@out, $right);
}

1;
