package Test::Upstream::TLS;

# Test::Upstream::TLS: a TLS origin server for the proxy_pass https://
# tests (IO::Socket::SSL), and the certificates they need, made at test
# time with the openssl command. It runs in a forked child that accepts on
# 127.0.0.1 and serves each connection in a child of its own (so idle
# keepalive connections held by the proxy block nothing), and records what
# it saw in a log file the test reads back: connections, handshakes (SNI,
# whether the session was resumed, the client certificate's subject) and
# requests. The SSL_CTX is made once before the accept loop, so that every
# connection's child shares its session ticket keys and a session offered
# again is resumed.
#
#   use Test::Upstream::TLS;
#   my $certs = Test::Upstream::TLS::make_certs($dir);
#   my $o = Test::Upstream::TLS->new(cert => $certs->{server_crt},
#                                    key => $certs->{server_key});
#   $o->start;
#   # "proxy_pass " . $o->url . ";"   (https://127.0.0.1:PORT)
#   my @h = $o->handshakes;     # { conn, sni, reused, subject, version }
#
# Options of new:
#   cert, key       the server's certificate (chain) and key (PEM files)
#   client_ca       require a client certificate signed by this CA
#   handshake       'close': read the ClientHello, then close (no TLS)
#
# Answers (HTTP/1.1, keepalive unless the request says close):
#   /len/N          200, N bytes of Test::Upstream::pattern(N)
#   anything else   200, "method URI body-length\n"
# Every response carries X-Conn (the connection serial) and X-Reused (1
# when the TLS session was resumed).
#
# Methods: start, stop, port, url, events, connections, handshakes,
# requests, failures (handshakes that failed, with the error), reset,
# wait_for(CODE [, S]).
#
# make_certs(DIR) writes, with openssl (EC P-256 keys, valid 2 days):
#   ca.crt/ca.key            a test CA
#   server.crt/server.key    signed by it: CN=localhost, SAN DNS:localhost,
#                            IP:127.0.0.1
#   self.crt/self.key        self-signed, CN=localhost, the same SANs
#   other_ca.crt             an unrelated CA
#   client.crt/client.key    signed by the CA: CN=ringx-client
#   client_enc.key           client.key encrypted with "secret"
# and returns their paths in a hashref (ca_crt, server_crt, ...).

use strict;
use warnings;

use File::Temp ();
use IO::Socket::IP;
use IO::Socket::SSL;
use POSIX qw(WNOHANG);
use Storable qw(freeze thaw);
use Time::HiRes qw(sleep time);

use Test::Upstream;

my $SCALE = ($ENV{RINGX_TIMEOUT_SCALE} && $ENV{RINGX_TIMEOUT_SCALE} > 0)
    ? $ENV{RINGX_TIMEOUT_SCALE} : 1;

sub make_certs {
    my ($dir) = @_;
    my %f = map { ($_ => "$dir/$_") } qw(ca.crt ca.key server.crt server.key
        self.crt self.key other_ca.crt other_ca.key client.crt client.key
        client_enc.key server.csr client.csr san.cnf ca.cnf);
    my $ec = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
    _write($f{'san.cnf'}, "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                        . "basicConstraints=CA:FALSE\n");
    _write($f{'ca.cnf'}, "[req]\ndistinguished_name=dn\n[dn]\n[ext]\n"
        . "basicConstraints=critical,CA:TRUE\n"
        . "keyUsage=critical,keyCertSign,cRLSign\n"
        . "subjectKeyIdentifier=hash\n");
    for my $ca (['ca', 'Ringx Test CA'], ['other_ca', 'Other CA']) {
        _openssl("req -x509 $ec -days 2 -subj '/CN=$ca->[1]' "
                 . "-config $f{'ca.cnf'} -extensions ext "
                 . "-keyout $dir/$ca->[0].key -out $dir/$ca->[0].crt");
    }
    _openssl("req -new $ec -subj /CN=localhost -keyout $f{'server.key'} "
             . "-out $f{'server.csr'}");
    _openssl("x509 -req -in $f{'server.csr'} -CA $f{'ca.crt'} "
             . "-CAkey $f{'ca.key'} -CAcreateserial -days 2 "
             . "-extfile $f{'san.cnf'} -out $f{'server.crt'}");
    _openssl("req -x509 $ec -days 2 -subj /CN=localhost "
             . "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 "
             . "-keyout $f{'self.key'} -out $f{'self.crt'}");
    _openssl("req -new $ec -subj /CN=ringx-client -keyout $f{'client.key'} "
             . "-out $f{'client.csr'}");
    _openssl("x509 -req -in $f{'client.csr'} -CA $f{'ca.crt'} "
             . "-CAkey $f{'ca.key'} -CAcreateserial -days 2 "
             . "-out $f{'client.crt'}");
    _openssl("pkey -in $f{'client.key'} -aes256 -passout pass:secret "
             . "-out $f{'client_enc.key'}");
    chmod 0644, glob("$dir/*");
    my %r;
    for my $k (keys %f) { (my $n = $k) =~ tr/./_/; $r{$n} = $f{$k}; }
    return \%r;
}

sub _write {
    my ($file, $text) = @_;
    open(my $fh, '>', $file) or die "$file: $!";
    print $fh $text;
    close $fh;
}

sub _openssl {
    my ($args) = @_;
    my $out = `openssl $args 2>&1`;
    die "openssl $args: $out" if $?;
}

sub new {
    my ($class, %opts) = @_;
    my ($fh, $log) = File::Temp::tempfile('tls-upstream-XXXXXXXX',
                                          DIR => '/tmp', UNLINK => 0);
    close $fh;
    return bless { opts => \%opts, log => $log, owner => $$ }, $class;
}

sub port { $_[0]{port} }
sub url  { "https://127.0.0.1:$_[0]{port}" }

sub start {
    my ($self) = @_;
    my $o = $self->{opts};
    my $l = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0,
                                Proto => 'tcp', Listen => 128, ReuseAddr => 1)
        or die "Test::Upstream::TLS: listen: $!\n";
    $self->{port} = $l->sockport;
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        eval { $self->_serve($l) };
        print STDERR "Test::Upstream::TLS: $@" if $@;
        POSIX::_exit(0);
    }
    close $l;
    $self->{pid} = $pid;
    return $self;
}

sub stop {
    my ($self) = @_;
    my $pid = delete $self->{pid} or return;
    return unless $$ == $self->{owner};
    kill 'TERM', $pid;
    waitpid($pid, 0);
}

sub DESTROY {
    my ($self) = @_;
    return unless $$ == $self->{owner};
    local ($?, $!, $@);
    $self->stop;
    unlink $self->{log} unless $ENV{RINGX_KEEP};
}

# the server process: children per connection, killed with it
sub _serve {
    my ($self, $l) = @_;
    my $o = $self->{opts};
    my %kids;
    $SIG{TERM} = sub { kill 'KILL', keys %kids; POSIX::_exit(0) };
    $SIG{CHLD} = sub { while ((my $k = waitpid(-1, WNOHANG)) > 0) {
                           delete $kids{$k} } };
    my $ctx;
    unless (($o->{handshake} // '') eq 'close') {
        $ctx = IO::Socket::SSL::SSL_Context->new(
            SSL_server => 1,
            SSL_cert_file => $o->{cert}, SSL_key_file => $o->{key},
            SSL_session_id_context => 'ringx-test',
            $o->{client_ca}
                ? (SSL_verify_mode => SSL_VERIFY_PEER
                                      | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                   SSL_ca_file => $o->{client_ca})
                : (SSL_verify_mode => SSL_VERIFY_NONE),
        ) or die "SSL_Context: $SSL_ERROR\n";
    }
    my $serial = 0;
    while (1) {
        my $s = $l->accept or next;
        $serial++;
        my $pid = fork();
        if (defined $pid && $pid == 0) {
            $SIG{TERM} = 'DEFAULT';
            close $l;
            $self->_log({ type => 'accept', conn => $serial });
            $self->_connection($s, $ctx, $serial);
            POSIX::_exit(0);
        }
        $kids{$pid} = 1 if $pid;
        close $s;
    }
}

sub _connection {
    my ($self, $s, $ctx, $serial) = @_;
    if (!$ctx) {                            # handshake => 'close'
        my $buf;
        sysread($s, $buf, 16384);
        $self->_log({ type => 'hello', conn => $serial,
                      bytes => length($buf // '') });
        close $s;
        return;
    }
    my $ssl = IO::Socket::SSL->start_SSL($s, SSL_server => 1,
                                         SSL_reuse_ctx => $ctx,
                                         Timeout => 10 * $SCALE);
    if (!$ssl) {
        $self->_log({ type => 'failed', conn => $serial,
                      error => "$SSL_ERROR" });
        return;
    }
    my $subject = $ssl->peer_certificate('subject');
    my $reused = $ssl->get_session_reused ? 1 : 0;
    $self->_log({ type => 'handshake', conn => $serial,
                  sni => $ssl->get_servername, reused => $reused,
                  subject => $subject, version => $ssl->get_sslversion });
    my $buf = '';
    my $n = 0;
    while (1) {
        while ($buf !~ /\r\n\r\n/) {
            my $r = sysread($ssl, $buf, 65536, length $buf);
            return unless $r;
        }
        $buf =~ s/^(.*?)\r\n\r\n//s;
        my $head = $1;
        my ($method, $uri) = $head =~ /^(\S+) (\S+)/;
        my ($len) = $head =~ /^content-length:\s*(\d+)/mi;
        $len //= 0;
        while (length $buf < $len) {
            my $r = sysread($ssl, $buf, 65536, length $buf);
            return unless $r;
        }
        my $body = substr($buf, 0, $len, '');
        my $close = $head =~ /^connection:\s*close/mi;
        $n++;
        $self->_log({ type => 'request', conn => $serial, n => $n,
                      method => $method, uri => $uri, body => $body,
                      head => $head });
        my $out = $uri =~ m{/len/(\d+)} ? Test::Upstream::pattern($1)
                : "$method $uri " . length($body) . "\n";
        my $resp = "HTTP/1.1 200 OK\r\nContent-Length: " . length($out)
                 . "\r\nX-Conn: $serial\r\nX-Reused: $reused\r\n"
                 . ($close ? "Connection: close\r\n" : '') . "\r\n" . $out;
        while (length $resp) {
            my $w = syswrite($ssl, $resp);
            return unless $w;
            substr($resp, 0, $w, '');
        }
        last if $close;
    }
    $ssl->close(SSL_fast_shutdown => 1);
}

sub _log {
    my ($self, $ev) = @_;
    my $data = freeze($ev);
    open(my $fh, '>>', $self->{log}) or return;
    binmode $fh;
    syswrite($fh, 'U' . pack('N', length $data) . $data);
    close $fh;
}

sub events {
    my ($self) = @_;
    open(my $fh, '<', $self->{log}) or return ();
    binmode $fh;
    local $/;
    my $all = <$fh> // '';
    close $fh;
    my (@ev, $pos);
    $pos = 0;
    while ($pos + 5 <= length $all) {
        my $len = unpack('N', substr($all, $pos + 1, 4));
        last if $pos + 5 + $len > length $all;
        push @ev, thaw(substr($all, $pos + 5, $len));
        $pos += 5 + $len;
    }
    return @ev;
}

sub connections { scalar grep { $_->{type} eq 'accept' } $_[0]->events }
sub handshakes  { grep { $_->{type} eq 'handshake' } $_[0]->events }
sub requests    { grep { $_->{type} eq 'request' } $_[0]->events }
sub failures    { grep { $_->{type} eq 'failed' } $_[0]->events }

sub reset {
    my ($self) = @_;
    open(my $fh, '>', $self->{log}) or die;
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

1;
