package Test::Scgi;

# Test::Scgi: a small SCGI application server for t/scgi.t (python3's
# stdlib has none, Debian packages no standalone one): a forked child on
# 127.0.0.1 that reads each request's netstring strictly (the length, the
# NUL-ended pairs, CONTENT_LENGTH first, the ','), then exactly
# CONTENT_LENGTH body bytes, and answers as the REQUEST_URI asks:
#
#   /status/NNN   "Status: NNN Text" and a short body
#   /http         an "HTTP/1.1 201 Created" status line instead of Status:
#   /redirect     Location: /elsewhere only (ringx makes it a 302)
#   /len/N        N bytes with Content-Length: N
#   /short        Content-Length: 10, 5 bytes, then the close
#   /stream/N     N bytes in 4 KiB writes, no length (the close ends it)
#   /te           a Transfer-Encoding header (which SCGI cannot frame)
#   anything else the request as text: "first=NAME" (the first pair's
#                 name), "NAME=VALUE" for every pair in order, then
#                 "len=N sha=SHA1" of the body read
#
# A broken request (bad netstring, CONTENT_LENGTH not first, a short body)
# is answered "Status: 500" with the reason, so a test sees it.
#
#   my $s = Test::Scgi->new; $s->start; ... $s->port ... $s->stop;

use strict;
use warnings;

use Digest::SHA qw(sha1_hex);
use IO::Socket::IP;
use POSIX ();

sub new { bless { pid => undef }, shift }

sub port { $_[0]{port} }

sub start {
    my ($self) = @_;
    my $l = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 64, ReuseAddr => 1)
        or die "scgi listen: $!";
    $self->{port} = $l->sockport;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        $SIG{CHLD} = 'IGNORE';
        while (1) {
            my $c = $l->accept or next;
            my $kid = fork;
            if (defined $kid && !$kid) {
                close $l;
                serve($c);
                POSIX::_exit(0);
            }
            close $c;
        }
    }
    close $l;
    $self->{pid} = $pid;
    return $self;
}

sub stop {
    my ($self) = @_;
    return unless $self->{pid};
    kill 'KILL', $self->{pid};
    waitpid($self->{pid}, 0);
    $self->{pid} = undef;
}

sub DESTROY { $_[0]->stop }

sub read_n {
    my ($c, $n) = @_;
    my $buf = '';
    while (length($buf) < $n) {
        my $r = sysread($c, $buf, $n - length($buf), length $buf);
        last unless $r;
    }
    return $buf;
}

sub fail {
    my ($c, $why) = @_;
    syswrite($c, "Status: 500 Bad Request\r\nContent-Type: text/plain\r\n\r\n"
                 . "scgi error: $why\n");
    close $c;
}

sub serve {
    my ($c) = @_;
    my $len = '';
    while (1) {
        my $ch = read_n($c, 1);
        return fail($c, 'eof in length') unless length $ch;
        last if $ch eq ':';
        return fail($c, "bad length byte '$ch'") unless $ch =~ /\d/;
        $len .= $ch;
    }
    my $head = read_n($c, $len);
    return fail($c, 'short netstring') unless length($head) == $len;
    return fail($c, 'no comma') unless read_n($c, 1) eq ',';
    return fail($c, 'header not NUL-ended') unless $head =~ /\0\z/;
    my @kv = split /\0/, $head, -1;
    pop @kv;
    return fail($c, 'odd pairs') if @kv % 2;
    my @pairs;
    push @pairs, [splice(@kv, 0, 2)] while @kv;
    return fail($c, 'CONTENT_LENGTH not first')
        unless @pairs && $pairs[0][0] eq 'CONTENT_LENGTH';
    my %env = map { $_->[0] => $_->[1] } @pairs;
    my $body = read_n($c, $env{CONTENT_LENGTH});
    return fail($c, 'short body') unless length($body) == $env{CONTENT_LENGTH};
    my $uri = $env{REQUEST_URI} // '';
    respond($c, $uri, \@pairs, $body);
    close $c;
}

sub respond {
    my ($c, $uri, $pairs, $body) = @_;
    if ($uri =~ m{^/\w+/status/(\d+)}) {
        syswrite($c, "Status: $1 Text\r\nContent-Type: text/plain\r\n\r\nstatus $1\n");
    } elsif ($uri =~ m{/http$}) {
        syswrite($c, "HTTP/1.1 201 Created\r\nX-Form: status-line\r\n\r\ncreated\n");
    } elsif ($uri =~ m{/redirect$}) {
        syswrite($c, "Location: /elsewhere\r\n\r\n");
    } elsif ($uri =~ m{/len/(\d+)$}) {
        syswrite($c, "Content-Length: $1\r\nContent-Type: text/plain\r\n\r\n"
                     . ('x' x $1));
    } elsif ($uri =~ m{/short$}) {
        syswrite($c, "Content-Length: 10\r\n\r\n12345");
    } elsif ($uri =~ m{/stream/(\d+)$}) {
        my $n = $1;
        syswrite($c, "Content-Type: application/octet-stream\r\n\r\n");
        my $i = 0;
        while ($n > 0) {
            my $k = $n < 4096 ? $n : 4096;
            syswrite($c, substr(sprintf('%08d', $i++) x 512, 0, $k));
            $n -= $k;
        }
    } elsif ($uri =~ m{/te$}) {
        syswrite($c, "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    } else {
        my $text = "first=$pairs->[0][0]\n"
                 . join('', map { "$_->[0]=$_->[1]\n" } @$pairs)
                 . 'len=' . length($body) . ' sha=' . sha1_hex($body) . "\n";
        syswrite($c, "Status: 200 OK\r\nContent-Type: text/plain\r\n\r\n$text");
    }
}

1;
