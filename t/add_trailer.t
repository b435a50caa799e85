#!/usr/bin/perl
# add_trailer.t: add_trailer NAME VALUE [always]. An HTTP/1.1 response it
# applies to is chunked (a known Content-Length gives way, as in nginx
# 1.22) and the trailer section after the last chunk holds the evaluated
# values; an empty value adds nothing; without "always" only the statuses
# add_header applies to get it. HTTP/1.0, chunked_transfer_encoding off
# and HEAD keep their Content-Length and get no trailer.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    types { text/plain txt; }
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /f.txt {
            add_trailer X-Time "rt=$request_time";
            add_trailer X-Empty "";
        }
        location /r { add_trailer X-T "v-$uri"; add_trailer X-U two; return 200 "abc"; }
        location /n { add_trailer X-T v; return 404; }
        location /a { add_trailer X-T v always; return 404; }
        location /off { chunked_transfer_encoding off; add_trailer X-T v; return 200 "abc"; }
        location /inherit { add_trailer X-P p;
            location /inherit/child { return 200 "c"; }
            location /inherit/own { add_trailer X-O o; return 200 "o"; }
        }
        location /plain { return 200 "abc"; }
    }
}
EOF
$t->write_file('html/f.txt', "hello\n");
$t->run;
my $port = $t->port(0);

# One request on a fresh connection; returns the raw bytes, the header and
# the trailer section (the lines after the "0" chunk, before the final
# empty line) as a hash, '(end)' set when that empty line ends the bytes.
sub get {
    my ($path, %o) = @_;
    my $c = $t->raw($port) or return;
    my $proto = $o{proto} // 'HTTP/1.1';
    my $method = $o{method} // 'GET';
    $c->send("$method $path $proto\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $raw = $c->read_all;
    my ($head, $body) = split /\r\n\r\n/, $raw, 2;
    my %tr;
    if (defined $body && $head =~ /^Transfer-Encoding: chunked\r?$/mi) {
        my $rest = $body;
        while ($rest =~ s/\A([0-9a-f]+)\r\n//i) {
            my $n = hex $1;
            if ($n == 0) {
                my ($section) = $rest =~ /\A((?:[^\r\n]+\r\n)*)\r\n\z/
                    or last;
                $tr{$1} = $2 while $section =~ s/\A([^:]+): ([^\r]*)\r\n//;
                $tr{'(end)'} = 1;
                last;
            }
            $rest = substr($rest, $n + 2);
        }
    }
    return ($raw, $head, \%tr);
}

my ($raw, $head, $tr) = get('/f.txt');
like $head, qr/^Transfer-Encoding: chunked\r?$/mi, 'static file: chunked';
unlike $head, qr/^Content-Length:/mi, 'static file: its Content-Length gives way';
like $raw, qr/\r\n6\r\nhello\n\r\n0\r\n/, 'static file: the body in one chunk';
ok $tr->{'(end)'}, 'static file: the trailer section ends with an empty line';
like $tr->{'X-Time'} // '', qr/^rt=\d+\.\d{3}$/, 'static file: $request_time evaluated';
ok !exists $tr->{'X-Empty'}, 'an empty value adds no trailer';

($raw, $head, $tr) = get('/r');
is_deeply $tr, { 'X-T' => 'v-/r', 'X-U' => 'two', '(end)' => 1 },
    'return 200: both trailers';
like $raw, qr/0\r\nX-T: v-\/r\r\nX-U: two\r\n\r\n\z/,
    'return 200: the exact trailer bytes, in order';

($raw, $head, $tr) = get('/n');
like $head, qr/^Content-Length: \d+/mi, '404 without always: Content-Length kept';
unlike $head, qr/chunked/i, '404 without always: not chunked';

($raw, $head, $tr) = get('/a');
like $head, qr/^HTTP\/1.1 404/, 'always: 404';
is $tr->{'X-T'}, 'v', '404 with always: the trailer';

($raw, $head, $tr) = get('/r', proto => 'HTTP/1.0');
like $head, qr/^Content-Length: 3\r?$/mi, 'HTTP/1.0: Content-Length kept';
unlike $head, qr/chunked/i, 'HTTP/1.0: not chunked';
like $raw, qr/\r\n\r\nabc\z/, 'HTTP/1.0: the body alone';

($raw, $head, $tr) = get('/off');
like $head, qr/^Content-Length: 3\r?$/mi,
    'chunked_transfer_encoding off: Content-Length kept';
like $raw, qr/\r\n\r\nabc\z/, 'chunked_transfer_encoding off: no trailer';

($raw, $head, $tr) = get('/r', method => 'HEAD');
unlike $head, qr/chunked/i, 'HEAD: not chunked';
like $raw, qr/\r\n\r\n\z/, 'HEAD: nothing after the header';

($raw, $head, $tr) = get('/inherit/child');
is_deeply $tr, { 'X-P' => 'p', '(end)' => 1 }, 'inherited from the parent location';
($raw, $head, $tr) = get('/inherit/own');
is_deeply $tr, { 'X-O' => 'o', '(end)' => 1 },
    'a level with add_trailer replaces the parent list';

($raw, $head, $tr) = get('/plain');
like $head, qr/^Content-Length: 3\r?$/mi, 'no add_trailer: Content-Length as before';

# keepalive: the next response on the connection follows the trailer
my $c = $t->raw($port);
$c->send("GET /r HTTP/1.1\r\nHost: x\r\n\r\n"
         . "GET /f.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
my @r = $c->read_responses(2);
is scalar(@r), 2, 'keepalive: two responses';
is $r[0]{body}, 'abc', 'keepalive: the first body';
is $r[1] && $r[1]{body}, "hello\n", 'keepalive: the second body after the first trailer';

$t->stop;
done_testing;
