package Test::Upstream::Modes;

# The response table of Test::Upstream: turns one parsed request into the
# steps its connection runs (bytes to write, pauses, close, stall, echo).
# The table is documented for users at the top of Test/Upstream.pm; keep
# both in step.

use strict;
use warnings;

our %REASON = (
    100 => 'Continue', 101 => 'Switching Protocols', 102 => 'Processing',
    103 => 'Early Hints', 200 => 'OK', 201 => 'Created', 202 => 'Accepted',
    204 => 'No Content', 206 => 'Partial Content',
    301 => 'Moved Permanently', 302 => 'Found', 303 => 'See Other',
    304 => 'Not Modified', 307 => 'Temporary Redirect',
    308 => 'Permanent Redirect', 400 => 'Bad Request',
    401 => 'Unauthorized', 403 => 'Forbidden', 404 => 'Not Found',
    405 => 'Method Not Allowed', 408 => 'Request Timeout',
    413 => 'Content Too Large', 416 => 'Range Not Satisfiable',
    426 => 'Upgrade Required', 429 => 'Too Many Requests',
    431 => 'Request Header Fields Too Large',
    500 => 'Internal Server Error', 501 => 'Not Implemented',
    502 => 'Bad Gateway', 503 => 'Service Unavailable',
    504 => 'Gateway Timeout',
);

# Query keys that apply to every mode (and are never turned into headers
# by /headers).
our %GENERIC = map { $_ => 1 } qw(close delay no100 early);

# Steps after which nothing else runs on the connection.
my %FINAL = map { $_ => 1 } qw(close stall reset echo);

my %MODES = (
    'echo'            => \&_echo,
    'status'          => \&_status,
    'len'             => \&_len,
    'chunked'         => \&_chunked,
    'close'           => \&_close,
    'slow'            => \&_slow,
    'stall-header'    => sub { (['stall']) },
    'stall-body'      => \&_stall_body,
    'close-mid'       => \&_close_mid,
    'drop'            => sub { (['close']) },
    'reset'           => sub { (['reset']) },
    'garbage'         => \&_garbage,
    'bad-header'      => \&_bad_header,
    'bad-status'      => \&_bad_status,
    'huge-header'     => \&_huge_header,
    '1xx'             => \&_informational,
    'headers'         => \&_headers,
    'sleep'           => \&_sleep,
    'ws'              => \&_ws,
    'keepalive-close' => \&_keepalive_close,
    'range'           => \&_range,
);

sub known { exists $MODES{$_[0]} }

# %XX decoding only: '+' stays a plus (header values may hold one).
sub url_decode {
    my ($s) = @_;
    $s =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
    return $s;
}

# The path of a request target (origin or absolute form) and its query
# pairs, decoded.
sub split_uri {
    my ($uri) = @_;
    $uri =~ s{^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?]*}{};
    my ($path, $query) = split /\?/, $uri, 2;
    my @pairs;
    for my $p (split /&/, $query // '') {
        next unless length $p;
        my ($k, $v) = split /=/, $p, 2;
        push @pairs, [url_decode($k), url_decode($v // '')];
    }
    return ($path // '', \@pairs);
}

# Steps for a request: [write BYTES], [stream CODE] (CODE returns the next
# bytes, undef at the end), [sleep MS], [close], [reset], [stall], [echo].
# $conn: { id, nreq }; $opts: the server's options.
sub steps {
    my ($req, $conn, $opts) = @_;
    my ($path, $pairs) = split_uri($req->{uri});
    my %q = map { @$_ } @$pairs;
    my @seg = split m{/}, $path;
    my ($mode, $arg) = ('echo', undef);
    for my $i (0 .. $#seg) {
        next unless known($seg[$i]);
        ($mode, $arg) = ($seg[$i], $seg[$i + 1]);
        last;
    }
    my $x = {
        req => $req, q => \%q, pairs => $pairs, arg => $arg,
        conn => $conn, opts => $opts, keep => _keepalive($req, $conn, $opts, \%q),
    };
    my @steps = $MODES{$mode}->($x);
    my $delay = $q{delay} // $opts->{response_delay_ms};
    unshift @steps, ['sleep', $delay] if $delay;
    push @steps, ['close'] unless $x->{keep} || ($steps[-1] && $FINAL{$steps[-1][0]});
    return @steps;
}

sub _header {
    my ($req, $name) = @_;
    my @v = map { $_->[1] } grep { lc $_->[0] eq lc $name } @{ $req->{headers} };
    return @v ? join(', ', @v) : undef;
}

sub _keepalive {
    my ($req, $conn, $opts, $q) = @_;
    my $c = lc(_header($req, 'Connection') // '');
    my $keep = $req->{version} eq 'HTTP/1.1' ? $c !~ /\bclose\b/
                                             : $c =~ /\bkeep-alive\b/;
    $keep = 0 if $opts->{keepalive_max} && $conn->{nreq} >= $opts->{keepalive_max};
    $keep = 0 if $q->{close} || $req->{early};
    return $keep ? 1 : 0;
}

# The status line and headers: @h are [name, value] pairs; Connection and
# the X-Upstream-Conn/-Req headers are added here.
sub _head {
    my ($x, $status, @h) = @_;
    my $proto = $x->{proto} // 'HTTP/1.1';
    my $s = "$proto $status " . ($REASON{$status} // 'Unknown') . "\r\n";
    $s .= "$_->[0]: $_->[1]\r\n" for @h;
    if (!$x->{keep}) {
        $s .= "Connection: close\r\n";
    } elsif ($x->{req}{version} eq 'HTTP/1.0') {
        $s .= "Connection: keep-alive\r\n";
    }
    $s .= "X-Upstream-Conn: $x->{conn}{id}\r\n";
    $s .= "X-Upstream-Req: $x->{conn}{nreq}\r\n";
    return "$s\r\n";
}

sub _bodyless {
    my ($x, $status) = @_;
    return $x->{req}{method} eq 'HEAD' || $status == 204 || $status == 304
        || $status < 200;
}

# A whole response with Content-Length (unless @$h frames it already, or
# the status has no body).
sub _full {
    my ($x, $status, $h, $body) = @_;
    my @h = @$h;
    my %have = map { lc $_->[0] => 1 } @h;
    push @h, ['Content-Type', 'text/plain'] unless $have{'content-type'};
    push @h, ['Content-Length', length $body]
        unless $have{'content-length'} || $have{'transfer-encoding'}
            || $status == 204 || $status < 200;
    my $s = _head($x, $status, @h);
    $s .= $body unless _bodyless($x, $status);
    return $s;
}

sub _num {
    my ($v, $default) = @_;
    return defined $v && $v =~ /^\d+$/ ? $v + 0 : $default;
}

# Pattern bytes [$off, $off + $len) in pieces of at most 64 KiB.
sub _pattern_stream {
    my ($off, $len) = @_;
    return sub {
        return undef if $len <= 0;
        my $n = $len < 65536 ? $len : 65536;
        my $s = Test::Upstream::pattern($n, $off);
        $off += $n;
        $len -= $n;
        return $s;
    };
}

sub echo_text {
    my ($req, $conn) = @_;
    my $s = "method: $req->{method}\nuri: $req->{uri}\nversion: $req->{version}\n"
          . "conn: $conn->{id}\nreq: $conn->{nreq}\n";
    $s .= "header: $_->[0]: $_->[1]\n" for @{ $req->{headers} };
    $s .= "trailer: $_->[0]: $_->[1]\n" for @{ $req->{trailers} };
    $s .= "chunked: " . ($req->{chunked} ? 1 : 0) . "\n";
    $s .= "body-length: " . length($req->{body}) . "\n\n";
    return $s . $req->{body};
}

###########################################################################
# the modes

sub _echo {
    my ($x) = @_;
    return (['write', _full($x, 200, [], echo_text($x->{req}, $x->{conn}))]);
}

sub _status {
    my ($x) = @_;
    my $st = _num($x->{arg}, 200);
    $st = 200 if $st < 200 || $st > 999;
    return (['write', _full($x, $st, [], "status $st\n")]);
}

sub _len {
    my ($x) = @_;
    my $n = _num($x->{arg}, 0);
    # ?xae=S: an X-Accel-Expires the cache keeps the response by
    my @xae = defined $x->{q}{xae} ? (['X-Accel-Expires', $x->{q}{xae}]) : ();
    my @s = (['write', _head($x, 200, ['Content-Type', 'text/plain'],
                                     ['Content-Length', $n], @xae)]);
    push @s, ['stream', _pattern_stream(0, $n)] unless _bodyless($x, 200);
    return @s;
}

# /range/N: N bytes of pattern() with an ETag and a Last-Modified, a
# single "bytes=a-b" or "bytes=a-" Range answered with a 206; ?no206=1
# ignores Range (200); ?etag_at=OFF: a range starting at OFF or later has
# another ETag (?lm=1: another Last-Modified instead); ?shift_at=OFF: a
# range starting at OFF or later is answered one byte later than asked;
# ?drop_at=OFF: such a range gets no answer (the connection closed).
sub _range {
    my ($x) = @_;
    my $n = _num($x->{arg}, 0);
    my $q = $x->{q};
    my $r = _header($x->{req}, 'Range') // '';
    my ($etag, $lm) = ('"r-1"', 'Mon, 01 Jan 2024 00:00:00 GMT');
    my ($status, $off, $len, @h) = (200, 0, $n);
    if (!$q->{no206} && $r =~ /^bytes=(\d+)-(\d*)$/ && $1 < $n) {
        my ($a, $b) = ($1, length $2 && $2 < $n ? $2 : $n - 1);
        return (['close']) if defined $q->{drop_at} && $a >= $q->{drop_at};
        if (defined $q->{etag_at} && $a >= $q->{etag_at}) {
            if ($q->{lm}) { $lm = 'Tue, 02 Jan 2024 00:00:00 GMT' }
            else { $etag = '"r-2"' }
        }
        $a++, $b++ if defined $q->{shift_at} && $a >= $q->{shift_at} && $b + 1 < $n;
        ($status, $off, $len) = (206, $a, $b - $a + 1);
        push @h, ['Content-Range', "bytes $a-$b/$n"];
    } elsif (!$q->{no206} && $r =~ /^bytes=(\d+)-/ && $1 >= $n) {
        return (['write', _full($x, 416, [['Content-Range', "bytes */$n"]], '')]);
    }
    my @s = (['write', _head($x, $status, ['Content-Type', 'text/plain'],
                             ['ETag', $etag], ['Last-Modified', $lm], @h,
                             ['Content-Length', $len])]);
    push @s, ['stream', _pattern_stream($off, $len)] unless _bodyless($x, $status);
    return @s;
}

# Chunk sizes cycle through odd values so that chunk and read boundaries
# rarely line up; ?size=K fixes them, ?ext=1 adds chunk extensions,
# ?trailers=1 sends two trailer fields.
sub _chunked {
    my ($x) = @_;
    my $n = _num($x->{arg}, 0);
    my @sizes = $x->{q}{size} ? (_num($x->{q}{size}, 1) || 1)
                              : (1, 10, 100, 1000, 4096, 7, 16384, 333);
    my $ext = $x->{q}{ext} ? ';name=value' : '';
    my $trailers = $x->{q}{trailers};
    my @h = (['Content-Type', 'text/plain'], ['Transfer-Encoding', 'chunked']);
    push @h, ['Trailer', 'X-Trailer-One, X-Trailer-Two'] if $trailers;
    my @s = (['write', _head($x, 200, @h)]);
    return @s if _bodyless($x, 200);
    my ($off, $i) = (0, 0);
    push @s, ['stream', sub {
        return undef if $off < 0;
        if ($off >= $n) {
            $off = -1;
            return "0$ext\r\n"
                . ($trailers ? "X-Trailer-One: 1\r\nX-Trailer-Two: two\r\n" : '')
                . "\r\n";
        }
        my $out = '';
        while ($off < $n && length $out < 65536) {
            my $k = $sizes[$i++ % @sizes];
            $k = $n - $off if $k > $n - $off;
            $out .= sprintf("%x%s\r\n", $k, $ext)
                  . Test::Upstream::pattern($k, $off) . "\r\n";
            $off += $k;
        }
        return $out;
    }];
    return @s;
}

# ?v=1.0: an HTTP/1.0 status line; the body ends with the connection.
sub _close {
    my ($x) = @_;
    my $n = _num($x->{arg}, 0);
    $x->{keep} = 0;
    $x->{proto} = 'HTTP/1.0' if ($x->{q}{v} // '') eq '1.0';
    my @s = (['write', _head($x, 200, ['Content-Type', 'text/plain'])]);
    push @s, ['stream', _pattern_stream(0, $n)] unless _bodyless($x, 200);
    return (@s, ['close']);
}

# ?ms=M between pieces (default 100), ?pieces=P (default 4), ?chunked=1.
sub _slow {
    my ($x) = @_;
    my $n = _num($x->{arg}, 0);
    my $ms = _num($x->{q}{ms}, 100);
    my $pieces = _num($x->{q}{pieces}, 4) || 1;
    my $chunked = $x->{q}{chunked};
    my @s = (['write', _head($x, 200, ['Content-Type', 'text/plain'],
        $chunked ? ['Transfer-Encoding', 'chunked'] : ['Content-Length', $n])]);
    return @s if _bodyless($x, 200);
    push @s, ['sleep', _num($x->{q}{head_ms}, 0)] if $x->{q}{head_ms};
    my $size = int(($n + $pieces - 1) / $pieces) || 1;
    for (my $off = 0; $off < $n; $off += $size) {
        my $k = $n - $off < $size ? $n - $off : $size;
        my $p = Test::Upstream::pattern($k, $off);
        $p = sprintf("%x\r\n%s\r\n", $k, $p) if $chunked;
        push @s, ['sleep', $ms] if $off;
        push @s, ['write', $p];
    }
    push @s, ['write', "0\r\n\r\n"] if $chunked;
    return @s;
}

sub _partial {
    my ($x) = @_;
    my $n = _num($x->{arg}, 0);
    my $half = int($n / 2);
    my $chunked = $x->{q}{chunked};
    my @s = (['write', _head($x, 200, ['Content-Type', 'text/plain'],
        $chunked ? ['Transfer-Encoding', 'chunked'] : ['Content-Length', $n])]);
    my $p = Test::Upstream::pattern($half);
    $p = sprintf("%x\r\n%s\r\n", $half, $p) if $chunked && $half;
    push @s, ['write', $p] unless _bodyless($x, 200);
    return @s;
}

sub _stall_body { return (_partial($_[0]), ['stall']) }
sub _close_mid  { return (_partial($_[0]), ['close']) }

sub _garbage {
    return (['write', "this is not an HTTP response\r\n\x00\x01\x02\r\n\r\n"],
            ['close']);
}

# ?kind=nocolon (default) | space (space before the colon) | nul (a NUL in
# a value) | fold (an obs-fold continuation line) | name (a bad name byte).
sub _bad_header {
    my ($x) = @_;
    my %bad = (
        nocolon => "This line has no colon",
        space   => "X-Bad : value",
        nul     => "X-Bad: a\x00b",
        fold    => "X-Folded: first\r\n  continued",
        name    => "X-B\x01d: value",
    );
    my $line = $bad{ $x->{q}{kind} // 'nocolon' } // $bad{nocolon};
    my $head = _head($x, 200, ['Content-Length', 3]);
    $head =~ s/\r\n\r\n\z/\r\n$line\r\n\r\n/;
    return (['write', $head . ($x->{req}{method} eq 'HEAD' ? '' : "ok\n")]);
}

sub _bad_status {
    my ($x) = @_;
    return (['write', "HTTP/1.1 2x0 Broken\r\nContent-Length: 3\r\n\r\nok\n"],
            ['close']);
}

sub _huge_header {
    my ($x) = @_;
    my $n = _num($x->{arg}, 8192);
    return (['write', _full($x, 200, [['X-Huge', 'h' x $n]], "ok\n")]);
}

# ?codes=103,100 (default 103): the informational responses, in order,
# before a 200 "final\n".
sub _informational {
    my ($x) = @_;
    my @s;
    for my $c (split /,/, $x->{q}{codes} // '103') {
        next unless $c =~ /^1\d\d$/ && $c != 101;
        my $h = "HTTP/1.1 $c " . ($REASON{$c} // 'Info') . "\r\n";
        $h .= "Link: </style.css>; rel=preload; as=style\r\n" if $c == 103;
        push @s, ['write', "$h\r\n"];
    }
    return (@s, ['write', _full($x, 200, [], "final\n")]);
}

# /headers[/NNN]?Name=Value&Name=Value: every query pair except the
# generic keys becomes a response header, in order, repeats kept.
sub _headers {
    my ($x) = @_;
    my $st = _num($x->{arg}, 200);
    my @h = grep { !$GENERIC{ $_->[0] } } @{ $x->{pairs} };
    return (['write', _full($x, $st, \@h, "ok\n")]);
}

sub _sleep {
    my ($x) = @_;
    my $ms = _num($x->{arg}, 0);
    return (['sleep', $ms], ['write', _full($x, 200, [], "slept $ms\n")]);
}

sub _ws {
    my ($x) = @_;
    my $up = _header($x->{req}, 'Upgrade');
    return (['write', _full($x, 426, [['Upgrade', 'websocket']],
                            "upgrade required\n")]) unless defined $up;
    $x->{keep} = 1;     # no Connection: close on a 101
    my $h = _head($x, 101, ['Upgrade', $up], ['Connection', 'Upgrade']);
    my $hello = $x->{q}{hello};
    return (['write', $h], ['echo']) unless defined $hello;
    # the origin speaks first: in the 101's write, or hello_ms later
    return (['write', $h . $hello], ['echo']) unless $x->{q}{hello_ms};
    return (['write', $h], ['sleep', _num($x->{q}{hello_ms}, 0)],
            ['write', $hello], ['echo']);
}

sub _keepalive_close {
    my ($x) = @_;
    $x->{keep} = 0;
    return (['write', _full($x, 200, [], "bye\n")], ['close']);
}

1;
