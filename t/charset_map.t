#!/usr/bin/perl
# charset_map.t: recoding of response bodies with charset_map, using the
# koi-utf, koi-win and win-utf maps shipped in conf/: single byte to
# single byte both ways, to and from utf-8 (a character the single-byte
# charset lacks becomes "&#NNNN;"), a UTF-8 sequence cut between two
# upstream reads, a static file larger than a buffer, override_charset on
# a proxied response, and nginx's errors for bad charset_map blocks. The
# expected bytes come from Perl's Encode (the charsets' own tables); nginx
# 1.22 gives the same bytes on this config with these map files (checked
# by hand).

use strict;
use warnings;
use utf8;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::IP;
use Encode qw(encode decode);

my $root = "$FindBin::Bin/..";
my $t = Test::Ringx->new;

# An origin that sends a UTF-8 body in two writes cut inside a character.
my $text = "Привет, мир! ёЁ";
my $utf = encode('UTF-8', $text);
my $srv = IO::Socket::IP->new(LocalHost => '127.0.0.1', LocalPort => 0,
                              Listen => 8, ReuseAddr => 1) or die "$@";
my $up_port = $srv->sockport;
my $pid = fork // die "fork: $!";
if ($pid == 0) {
    while (my $c = $srv->accept) {
        my $req = '';
        while ($req !~ /\r\n\r\n/) {
            my $n = sysread($c, $req, 4096, length $req) or last;
        }
        my ($path) = $req =~ m{^GET (\S+)};
        my ($ct, $body) = $path =~ /koi/
            ? ('text/html; charset=koi8-r', encode('koi8-r', $text))
            : ('text/html', $utf);
        syswrite($c, "HTTP/1.1 200 OK\r\nContent-Type: $ct\r\n"
                     . "Content-Length: " . length($body) . "\r\n"
                     . "Connection: close\r\n\r\n");
        my $cut = 3;             # inside the second letter's two bytes
        syswrite($c, substr($body, 0, $cut));
        select(undef, undef, undef, 0.3);
        syswrite($c, substr($body, $cut));
        close $c;
    }
    exit 0;
}
close $srv;

for my $f (qw(koi-utf koi-win win-utf)) {
    open(my $fh, '<', "$root/conf/$f") or die "$root/conf/$f: $!";
    local $/;
    $t->write_file("conf/$f", <$fh>);
}
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    include koi-utf;
    include koi-win;
    include win-utf;
    types { text/html html; }
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /k2u/ { alias html/; source_charset koi8-r; charset utf-8; }
        location /u2k/ { alias html/; source_charset utf-8; charset koi8-r; }
        location /k2w/ { alias html/; source_charset koi8-r; charset windows-1251; }
        location /w2k/ { alias html/; source_charset windows-1251; charset koi8-r; }
        location /w2u/ { alias html/; source_charset windows-1251; charset utf-8; }
        location /px/ {
            proxy_pass http://127.0.0.1:$up_port/;
            proxy_buffering off;
            source_charset utf-8;
            charset windows-1251;
        }
        location /po/ {
            proxy_pass http://127.0.0.1:$up_port/;
            override_charset on;
            charset utf-8;
        }
    }
}
EOF
$t->write_file_raw('html/k.html', encode('koi8-r', $text));
$t->write_file_raw('html/w.html', encode('cp1251', $text));
$t->write_file_raw('html/u.html', encode('UTF-8', "Привет \x{2603} \x{20ac}"));
# larger than any read buffer: every 2-byte letter after one ASCII byte
# starts at an odd offset, so an even buffer size cuts one in two
my $big = 'a' . ('Ж' x 70000) . "\n";
$t->write_file_raw('html/big.html', encode('UTF-8', $big));
$t->run;
my $P = $t->port(0);

sub get {
    my ($path) = @_;
    my $r = $t->http_get($P, $path) // '';
    my ($head, $body) = split /\r\n\r\n/, $r, 2;
    $body //= '';
    if ($head =~ /\r\nTransfer-Encoding: chunked/i) {
        my $out = '';
        while ($body =~ s/^([0-9a-fA-F]+)\r\n//) {
            my $n = hex $1;
            last if $n == 0;
            $out .= substr($body, 0, $n, '');
            $body =~ s/^\r\n//;
        }
        $body = $out;
    }
    return ($head, $body);
}

my ($h, $b) = get('/k2u/k.html');
like $h, qr/\r\nContent-Type: text\/html; charset=utf-8\r\n/, 'koi8-r to utf-8: labelled utf-8';
unlike $h, qr/\r\nContent-Length:/i, '... without the source length';
unlike $h, qr/\r\nAccept-Ranges:/i, '... nor Accept-Ranges';
is $b, $utf, '... the body recoded';
($h, $b) = get('/u2k/u.html');
like $h, qr/charset=koi8-r\r\n/, 'utf-8 to koi8-r: labelled koi8-r';
is $b, encode('koi8-r', 'Привет ') . '&#9731; &#8364;',
    '... characters koi8-r lacks become &#NNNN;';
($h, $b) = get('/k2w/k.html');
like $h, qr/charset=windows-1251\r\n/, 'koi8-r to windows-1251: labelled';
like $h, qr/\r\nContent-Length: ${\ length encode('cp1251', $text)}\r\n/,
    '... the length stays (one byte a character)';
is $b, encode('cp1251', $text), '... the body recoded (the map read forwards)';
(undef, $b) = get('/w2k/w.html');
is $b, encode('koi8-r', $text), 'windows-1251 to koi8-r: the same map read backwards';
(undef, $b) = get('/w2u/w.html');
is $b, $utf, 'windows-1251 to utf-8';
(undef, $b) = get('/u2k/big.html');
is length($b), 70002, 'a large utf-8 file to koi8-r: one byte a character';
is $b, encode('koi8-r', $big), '... every character, across the read buffers';
(undef, $b) = get('/k2u/nonexistent.html');
like $b, qr/404/, 'an error page is not hurt';

($h, $b) = get('/px/utf');
like $h, qr/charset=windows-1251\r\n/, 'proxied utf-8 to windows-1251: labelled';
is $b, encode('cp1251', $text),
    '... a character cut between two upstream reads is whole';
($h, $b) = get('/po/koi');
like $h, qr/\r\nContent-Type: text\/html; charset=utf-8\r\n/,
    'override_charset: the upstream\'s koi8-r is relabelled utf-8';
is $b, $utf, '... and recoded';
$t->stop;
kill 'TERM', $pid;
waitpid $pid, 0;

# nginx's errors at -t
my @bad = (
    [ "charset_map koi8-r utf-8 { C0 ZZ; }", qr/invalid value "ZZ"/ ],
    [ "charset_map koi8-r utf-8 { 1C0 D18E; }", qr/invalid value "1C0"/ ],
    [ "charset_map koi8-r utf-8 { C0 FF80; }", qr/invalid value "FF80"/ ],
    [ "charset_map koi8-r windows-1251 { C0 D18E; }", qr/invalid value "D18E"/ ],
    [ "charset_map koi8-r utf-8 { C0; }", qr/invalid parameters number/ ],
    [ "charset_map a b { } charset_map b a { }",
      qr/duplicate "charset_map" between "b" and "a"/ ],
);
for my $c (@bad) {
    my $u = Test::Ringx->new;
    $u->write_config("events { }\nhttp {\n    $c->[0]\n}\n");
    my ($rc, undef, $err) = $u->ringx('-t');
    isnt $rc, 0, "-t refuses: $c->[0]";
    like $err, qr/\[emerg\] $c->[1] in \S+:3/, "... with nginx's words and file:line";
}

done_testing;
