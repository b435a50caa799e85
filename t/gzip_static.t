#!/usr/bin/perl
# gzip_static.t: FILE.gz served for FILE to clients that accept gzip (the
# gzip module's checks decide), with Content-Encoding: gzip, the .gz file's
# ETag and Last-Modified, the original's Content-Type, Vary with gzip_vary
# (also on the plain answer when a .gz exists), byte ranges of the .gz;
# always ignores the client; off and a missing .gz fall through to static;
# the gzip filter does not compress it again. -V lists the module.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Compress::Gzip qw(gzip $GzipError);
use POSIX qw(strftime);
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
    types { text/plain txt; text/css css; }
    default_type application/octet-stream;
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { gzip_static on; gzip_vary on; }
        location /al/ { alias html/; gzip_static always; }
        location /off/ { alias html/; }
        location /nv/ { alias html/; gzip_static on; }
        location /dis/ {
            alias html/;
            gzip_static on;
            gzip_disable "BadAgent";
            gzip_http_version 1.1;
        }
        location /any/ { alias html/; gzip_static on; gzip_proxied any; }
        location /both/ {
            alias html/;
            gzip on;
            gzip_types text/plain;
            gzip_min_length 1;
            gzip_static on;
            gzip_vary on;
        }
    }
}
EOF
my $plain = "plain text, line after line\n" x 200;
gzip(\$plain => \my $gz) or die $GzipError;
$t->write_file_raw('html/a.txt', $plain);
$t->write_file_raw('html/a.txt.gz', $gz);
$t->write_file_raw('html/only.txt', $plain);
$t->write_file_raw('html/dir.txt.gz/x', 'a directory named .gz');
$t->write_file_raw('html/dir.txt', $plain);
my $pre = $t->prefix;
# the .gz is older than the file: its own validators must show
utime(1000000000, 1000000000, "$pre/html/a.txt.gz");
$t->run;
my $P = $t->port(0);

sub req {
    my ($path, @h) = @_;
    my $method = 'GET';
    $method = shift @h if @h && $h[0] =~ /^(HEAD|GET|POST)$/;
    my $proto = 'HTTP/1.1';
    $proto = shift @h if @h && $h[0] =~ m{^HTTP/};
    my $raw = $t->http($P, "$method $path $proto\r\nHost: localhost\r\nConnection: close\r\n"
                           . join('', map { "$_\r\n" } @h) . "\r\n");
    my ($r) = Test::Ringx::parse_responses($raw // '', head => [$method eq 'HEAD']);
    return $r // { status => 0, headers => {}, body => '', head => '' };
}

my $gz_etag = sprintf('"%x-%x"', 1000000000, length $gz);
my $gz_lm = strftime('%a, %d %b %Y %H:%M:%S GMT', gmtime 1000000000);

my $r = req('/a.txt', 'Accept-Encoding: gzip, deflate');
is($r->{status}, 200, 'accepts gzip: 200');
is($r->{headers}{'content-encoding'}, 'gzip', 'accepts gzip: Content-Encoding: gzip');
is($r->{body}, $gz, 'accepts gzip: the .gz bytes');
is($r->{headers}{'content-length'}, length $gz, 'Content-Length of the .gz');
is($r->{headers}{'content-type'}, 'text/plain', 'Content-Type of the original');
is($r->{headers}{etag}, $gz_etag, 'ETag of the .gz');
is($r->{headers}{'last-modified'}, $gz_lm, 'Last-Modified of the .gz');
is($r->{headers}{vary}, 'Accept-Encoding', 'gzip_vary on: Vary');

$r = req('/a.txt');
is($r->{body}, $plain, 'no Accept-Encoding: the plain file');
ok(!$r->{headers}{'content-encoding'}, 'no Accept-Encoding: no Content-Encoding');
is($r->{headers}{vary}, 'Accept-Encoding', 'a .gz exists: Vary on the plain answer too');
$r = req('/a.txt', 'Accept-Encoding: gzip;q=0, identity');
is($r->{body}, $plain, 'gzip;q=0: the plain file');
$r = req('/only.txt', 'Accept-Encoding: gzip');
is($r->{body}, $plain, 'no .gz beside the file: the plain file');
ok(!$r->{headers}{vary}, 'no .gz: no Vary');
$r = req('/dir.txt', 'Accept-Encoding: gzip');
is($r->{body}, $plain, 'FILE.gz is a directory: the plain file');
$r = req('/nv/a.txt', 'Accept-Encoding: gzip');
is($r->{body}, $gz, 'gzip_vary off: the .gz all the same');
ok(!$r->{headers}{vary}, 'gzip_vary off: no Vary');

# HEAD, If-None-Match with the .gz's ETag, ranges of the .gz
$r = req('/a.txt', 'HEAD', 'Accept-Encoding: gzip');
ok($r->{status} == 200 && $r->{headers}{'content-length'} == length $gz
   && $r->{headers}{'content-encoding'} eq 'gzip', 'HEAD: the .gz headers');
$r = req('/a.txt', 'Accept-Encoding: gzip', "If-None-Match: $gz_etag");
is($r->{status}, 304, 'If-None-Match with the .gz ETag: 304');
$r = req('/a.txt', 'Accept-Encoding: gzip', 'Range: bytes=0-9');
is($r->{status}, 206, 'range: 206');
is($r->{headers}{'content-range'}, 'bytes 0-9/' . length($gz), 'range: Content-Range over the .gz');
is($r->{body}, substr($gz, 0, 10), 'range: the .gz bytes');
is($r->{headers}{'content-encoding'}, 'gzip', 'range: Content-Encoding: gzip');
my $n = length $gz;
$r = req('/a.txt', 'Accept-Encoding: gzip', 'Range: bytes=-5');
is($r->{body}, substr($gz, $n - 5), 'suffix range: the last bytes of the .gz');

# always, off
$r = req('/al/a.txt');
is($r->{body}, $gz, 'always: the .gz without Accept-Encoding');
is($r->{headers}{'content-encoding'}, 'gzip', 'always: Content-Encoding: gzip');
$r = req('/al/only.txt');
is($r->{body}, $plain, 'always, no .gz: the plain file');
$r = req('/off/a.txt', 'Accept-Encoding: gzip');
is($r->{body}, $plain, 'off (the default): the plain file');

# the gzip module's client checks
$r = req('/dis/a.txt', 'Accept-Encoding: gzip', 'User-Agent: BadAgent/1.0');
is($r->{body}, $plain, 'gzip_disable matches: the plain file');
$r = req('/dis/a.txt', 'HTTP/1.0', 'Accept-Encoding: gzip');
is($r->{body}, $plain, 'gzip_http_version 1.1, an HTTP/1.0 request: the plain file');
$r = req('/dis/a.txt', 'Accept-Encoding: gzip', 'User-Agent: Good/1.0');
is($r->{body}, $gz, 'the checks pass: the .gz');
$r = req('/a.txt', 'Accept-Encoding: gzip', 'Via: 1.1 proxy');
is($r->{body}, $plain, 'through a proxy, gzip_proxied off (the default): the plain file');
$r = req('/any/a.txt', 'Accept-Encoding: gzip', 'Via: 1.1 proxy');
is($r->{body}, $gz, 'through a proxy, gzip_proxied any: the .gz');

# with the gzip filter on as well: not compressed twice, one Vary
$r = req('/both/a.txt', 'Accept-Encoding: gzip');
is($r->{body}, $gz, 'gzip on too: the .gz as it is');
my @vary = grep { lc $_->[0] eq 'vary' } @{ $r->{header_list} };
is(scalar @vary, 1, 'gzip on too: one Vary');
$r = req('/both/only.txt', 'Accept-Encoding: gzip');
is($r->{headers}{'content-encoding'}, 'gzip', 'no .gz, gzip on: the filter compresses');
is($r->{headers}{'transfer-encoding'}, 'chunked', 'no .gz, gzip on: chunked (not the .gz)');

# -V and the config
my ($rc, $out, $err) = $t->ringx('-V');
like($err, qr/--with-http_gzip_static_module/, '-V: --with-http_gzip_static_module');
{
    my $c = Test::Ringx->new;
    $c->write_config(<<"EOF");
events { }
http {
    gzip_static maybe;
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    my ($rc2, $out2, $err2) = $c->ringx('-t');
    is($rc2, 1, '-t with "gzip_static maybe": fails');
    like($err2, qr/\[emerg\] invalid value "maybe" in "gzip_static" directive.* in \S+ringx\.conf:3$/m,
         '"gzip_static maybe": the message and the place') or diag($err2);
}

$t->stop;
done_testing;
