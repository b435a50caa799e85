#!/usr/bin/perl
# secure_link.t: nginx's secure_link module: secure_link + secure_link_md5
# (base64url MD5, an expiry, "1"/"0"/not found, $secure_link_expires,
# texts of every length against Perl's Digest::MD5), secure_link_secret
# (/prefix/HEX/link), inheritance, and the error for mixing the forms.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Digest::MD5 qw(md5 md5_hex);
use MIME::Base64 qw(encode_base64url);
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
    default_type text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /e/ {
            secure_link $arg_md5,$arg_expires;
            secure_link_md5 "$secure_link_expires$uri$remote_addr secret";
            if ($secure_link = "") { return 403; }
            if ($secure_link = "0") { return 410; }
            return 200 "ok [$secure_link] [$secure_link_expires]";
        }
        location /n/ {
            secure_link $arg_md5;
            secure_link_md5 "$arg_text";
            return 200 "[$secure_link] [$secure_link_expires]";
        }
        location /p/ {
            secure_link_secret sesame;
            return 200 "[$secure_link]";
        }
        location /none/ { return 200 "[$secure_link]"; }
    }
}
EOF
$t->run;

sub get {
    my ($uri) = @_;
    my $c = $t->raw($t->port(0)) or return '';
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? ($r->{status} == 200 ? $r->{body} : $r->{status}) : '';
}

sub b64 { return encode_base64url(md5($_[0])) }

my $future = time() + 3600;
my $past = time() - 3600;
my $h = b64("$future/e/f127.0.0.1 secret");
is(get("/e/f?md5=$h&expires=$future"), "ok [1] [$future]", 'a good link, not expired');
is(get("/e/f?md5=$h=&expires=$future"), "ok [1] [$future]", 'base64url padding after the hash is ignored');
$h = b64("$past/e/f127.0.0.1 secret");
is(get("/e/f?md5=$h&expires=$past"), 410, 'a good link, expired: "0"');
is(get("/e/g?md5=$h&expires=$past"), 403, 'another URI: not found');
is(get("/e/f?md5=$h&expires=$future"), 403, 'another expiry: the hash no longer matches');
is(get("/e/f?md5=$h&expires=x$future"), 403, 'a malformed expiry');
is(get("/e/f?md5=$h"), 403, 'an empty expiry after the comma');
is(get("/e/f?md5=AAAA&expires=$future"), 403, 'a hash of the wrong length');
is(get("/e/f?md5=%2B%2F&expires=$future"), 403, 'not the URL-safe alphabet');

for my $len (0, 1, 55, 56, 63, 64, 65, 119, 120, 200) {
    my $text = join('', map { chr(97 + $_ % 26) } 0 .. $len - 1);
    my $hash = b64($text);
    is(get("/n/x?md5=$hash&text=$text"), '[1] []', "MD5 of $len bytes as Digest::MD5 computes it");
}
is(get('/n/x?md5=' . b64('other') . '&text=abc'), '[] []', 'a wrong hash: not found');

my $link = 'dir/file.txt';
my $hex = md5_hex($link . 'sesame');
is(get("/p/$hex/$link"), "[$link]", 'secure_link_secret: the link');
is(get('/p/' . uc($hex) . "/$link"), "[$link]", 'secure_link_secret: hex in capitals');
is(get("/p/$hex/dir/other.txt"), '[]', 'secure_link_secret: another link');
is(get("/p/$hex/"), '[]', 'secure_link_secret: no link');
is(get('/p/' . substr($hex, 1) . "/$link"), '[]', 'secure_link_secret: 31 hex digits');
is(get('/none/'), '[]', 'no secure_link: not found');

$t->stop;

my $u = Test::Ringx->new;
$u->write_config(<<'EOF');
events { }
http { server { listen 127.0.0.1:%%PORT_0%%;
    location / { secure_link $arg_h; secure_link_secret x; } } }
EOF
my ($code, undef, $err) = $u->ringx('-t');
isnt($code, 0, 'mixing the forms fails');
like($err, qr/\[emerg\] "secure_link_secret" cannot be mixed with "secure_link" and "secure_link_md5"/,
     'mixing the forms: nginx\'s message');

done_testing;
