#!/usr/bin/perl
# gunzip.t: nginx's gunzip filter: a gzip-encoded upstream response is
# inflated for a client that does not take gzip (Content-Encoding, -Length
# and Accept-Ranges go, the ETag turns weak) and passed as it is to one
# that does; gunzip off; small gunzip_buffers (the filter holds input while
# its buffers are in flight); several gzip members; a cut stream (logged,
# the response cut); sub_filter after it sees the plain text.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Compress::Gzip qw(gzip $GzipError);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
my $text = join '', map { sprintf "line %06d of the text to compress\n", $_ } 1 .. 9000;
my $gz;
gzip(\$text => \$gz, Minimal => 1) or die $GzipError;
my ($ga, $gb);
gzip(\"first member\n" => \$ga) or die $GzipError;
gzip(\"second member\n" => \$gb) or die $GzipError;
$t->write_file_raw('html/o/big.txt', $text);
$t->write_file_raw('html/o/big.txt.gz', $gz);
$t->write_file_raw('html/o/two.txt', "x\n");
$t->write_file_raw('html/o/two.txt.gz', $ga . $gb);
$t->write_file_raw('html/o/cut.txt', "x\n");
$t->write_file_raw('html/o/cut.txt.gz', substr($gz, 0, int(length($gz) / 2)));
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    types { text/plain txt; }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location /o/ { gzip_static always; }
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        proxy_set_header Accept-Encoding gzip;
        location /o/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%;
            gunzip on;
        }
        location /small/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/o/;
            gunzip on;
            gunzip_buffers 2 1k;
        }
        location /off/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/o/;
        }
        location /sub/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/o/;
            gunzip on;
            sub_filter_types text/plain;
            sub_filter "of the text" "OF THE TEXT";
            sub_filter_once off;
        }
    }
}
EOF
$t->run;

sub get {
    my ($uri, %h) = @_;
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_: $h{$_}\r\n" } sort keys %h)
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 10);
    $c->close;
    return $r // {};
}

my $r = get('/o/big.txt');
is($r->{status}, 200, 'a client without gzip: 200');
ok(!exists $r->{headers}{'content-encoding'}, 'no Content-Encoding');
ok(!exists $r->{headers}{'content-length'}, 'no Content-Length');
ok(!exists $r->{headers}{'accept-ranges'}, 'no Accept-Ranges');
like($r->{headers}{etag} // '', qr{^W/"}, 'the ETag weak');
ok(($r->{body} // '') eq $text, 'the body inflated (' . length($text) . ' bytes)');

$r = get('/o/big.txt', 'Accept-Encoding' => 'gzip');
is($r->{headers}{'content-encoding'}, 'gzip', 'a client taking gzip: gzip passed');
ok(($r->{body} // '') eq $gz, 'the compressed bytes as they came');

$r = get('/off/big.txt');
is($r->{headers}{'content-encoding'}, 'gzip', 'gunzip off: gzip passed');

$r = get('/small/big.txt');
ok(($r->{body} // '') eq $text, 'gunzip_buffers 2 1k: the whole body, in order');

$r = get('/o/two.txt');
is($r->{body}, "first member\nsecond member\n", 'two gzip members, both inflated');

(my $want = $text) =~ s/of the text/OF THE TEXT/g;
$r = get('/sub/big.txt');
ok(($r->{body} // '') eq $want, 'sub_filter after gunzip sees the text');

$r = get('/o/cut.txt');
ok(!$r->{complete} || ($r->{body} // '') ne $text, 'a cut stream: the response is cut');
ok($t->wait_for(sub { $t->log_contains(qr/\[error\].*inflate\(\) returned -5 on response end/) }),
   'a cut stream: nginx\'s error line');

$t->stop;

my @bad = (
    ['gunzip_buffers 0 4k;', qr/\[emerg\] invalid value "0 4k" in "gunzip_buffers" directive/, 'no buffers'],
    ['gunzip maybe;', qr/\[emerg\] invalid value "maybe" in "gunzip" directive/, 'a bad flag'],
);
for my $c (@bad) {
    my ($line, $re, $name) = @$c;
    my $v = Test::Ringx->new;
    $v->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $line } } }
EOF
    my ($code, $out, $err) = $v->ringx('-t');
    isnt($code, 0, "-t fails: $name");
    like($err, $re, "-t error: $name");
}

done_testing;
