#!/usr/bin/perl
# dav.t: nginx's dav module: PUT (new 201 with Location, existing 204, a
# 5 MiB body through the temporary file byte-exact, chunked with
# Expect: 100-continue, empty, Date as mtime, dav_access modes, a missing
# parent 409 or create_full_put_path), DELETE (files, trees, Depth,
# min_delete_depth), MKCOL, COPY and MOVE (Overwrite, Depth, trees,
# across directories, Destination checks), methods outside dav_methods 405.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

# the workers run as nobody; a daemon has umask 0 (as nginx), so does
# this test: the modes below are dav_access's own
umask 0;
my $t = Test::Ringx->new;
my $P = $t->prefix;
mkdir "$P/tmp";
chmod 0777, "$P/html";
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %%PREFIX%%/tmp;
    client_max_body_size 10m;
    client_body_buffer_size 16k;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root %%PREFIX%%/html;
        location / {
            dav_methods PUT DELETE MKCOL COPY MOVE;
            dav_access user:rw group:r all:r;
        }
        location /full/ { dav_methods PUT; create_full_put_path on; }
        location /md/ { dav_methods DELETE; min_delete_depth 3; }
        location /putonly/ { dav_methods PUT; }
        location /off/ { dav_methods off; }
        location /al/ {
            alias %%PREFIX%%/aliased/;
            dav_methods PUT COPY MOVE;
        }
    }
}
EOF
mkdir "$P/html/$_" for qw(full md md/a putonly off);
mkdir "$P/aliased";
$t->run;
my $port = $t->port(0);
my $H = "$P/html";

sub req {
    my ($method, $uri, %o) = @_;
    my $c = $t->raw($port) or return {};
    my $body = $o{body} // '';
    my $head = "$method $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
    $head .= "$_: $o{h}{$_}\r\n" for sort keys %{ $o{h} // {} };
    $head .= "Content-Length: " . length($body) . "\r\n"
        if defined $o{body} || $method eq 'PUT';
    $c->send("$head\r\n$body");
    my $r = $c->read_response(timeout => 5);
    $c->close;
    return $r // {};
}
sub st { req(@_)->{status} // 'none' }
sub slurp { my $f = shift; open my $fh, '<:raw', $f or return undef; local $/; <$fh> }
sub spew { my ($f, $d) = @_; open my $fh, '>:raw', $f or die "$f: $!"; print $fh $d; close $fh }
sub mode { sprintf '%04o', (stat shift)[2] & 07777 }

# ---------------------------------------------------------------- PUT
my $r = req('PUT', '/new.txt', body => "hello\n");
is($r->{status}, 201, 'PUT new file: 201');
is($r->{headers}{location}, "http://localhost:$port/new.txt", 'PUT 201: Location');
is($r->{headers}{'content-length'}, 0, 'PUT 201: Content-Length 0');
is(slurp("$H/new.txt"), "hello\n", 'PUT: the file holds the body');
is(mode("$H/new.txt"), '0644', 'PUT: dav_access user:rw group:r all:r is 0644');
$r = req('PUT', '/new.txt', body => "again\n");
is($r->{status}, 204, 'PUT over a file: 204');
ok(!exists $r->{headers}{location}, 'PUT 204: no Location');
is(slurp("$H/new.txt"), "again\n", 'PUT over a file: replaced');

is(st('PUT', '/dir/'), 409, 'PUT to a collection URI: 409');
is(st('PUT', '/missing/x.txt', body => 'x'), 409, 'PUT, parent missing: 409');
ok(!-e "$H/missing", 'PUT, parent missing: nothing created');
is(st('PUT', '/full/a/b/c.txt', body => 'deep'), 201,
   'create_full_put_path: 201');
is(slurp("$H/full/a/b/c.txt"), 'deep', 'create_full_put_path: the file');
is(mode("$H/full/a/b"), '0700', 'create_full_put_path: dirs get dav_access + x');
is(st('PUT', '/r.txt', body => 'x', h => { 'Content-Range' => 'bytes 0-0/1' }),
   501, 'PUT with Content-Range: 501');
mkdir "$H/adir";
is(st('PUT', '/adir', body => 'x'), 409, 'PUT onto a directory: 409');
is(st('PUT', '/empty.txt'), 201, 'PUT, empty body: 201');
ok(-f "$H/empty.txt" && -s "$H/empty.txt" == 0, 'PUT, empty body: empty file');
is(st('PUT', '/dated.txt', body => 'd',
      h => { Date => 'Sun, 06 Nov 1994 08:49:37 GMT' }), 201, 'PUT with Date');
is((stat "$H/dated.txt")[9], 784111777, 'PUT with Date: the file\'s mtime');

# 5 MiB through the temporary file, with curl -T (Expect: 100-continue)
my $big = join '', map { pack('N', $_) x 64 } 0 .. 20479;    # 5 MiB
spew("$P/big.src", $big);
my $code = `curl -s -o /dev/null -w '%{http_code}' -T $P/big.src http://127.0.0.1:$port/big.bin`;
is($code, '201', 'curl -T 5 MiB: 201');
is(-s "$H/big.bin", length $big, 'PUT 5 MiB: size');
ok(slurp("$H/big.bin") eq $big, 'PUT 5 MiB: byte-exact');
opendir my $td, "$P/tmp"; my @left = grep { !/^\./ } readdir $td; closedir $td;
is(scalar @left, 0, 'nothing left in client_body_temp_path');

# chunked with Expect: 100-continue, by hand
{
    my $c = $t->raw($port);
    $c->send("PUT /chunked.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
             . "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n");
    my $cont = $c->read_response(timeout => 5);
    is($cont && $cont->{status}, 100, 'Expect: 100-continue answered');
    my $body = 'abc' x 20000;
    my $chunks = join '', map { sprintf("%x\r\n%s\r\n", length $_, $_) }
        unpack '(a7000)*', $body;
    $c->send($chunks . "0\r\n\r\n");
    my $resp = $c->read_response(timeout => 5);
    is($resp && $resp->{status}, 201, 'chunked PUT: 201');
    is(slurp("$H/chunked.txt"), $body, 'chunked PUT: byte-exact');
}

# ---------------------------------------------------------------- MKCOL
$r = req('MKCOL', '/col/');
is($r->{status}, 201, 'MKCOL: 201');
is($r->{headers}{location}, "http://localhost:$port/col/", 'MKCOL: Location');
ok(-d "$H/col", 'MKCOL: the directory');
is(mode("$H/col") & 0700 ? mode("$H/col") : '', '0755',
   'MKCOL: dav_access with x for reading');
is(st('MKCOL', '/col/'), 405, 'MKCOL of an existing one: 405');
is(st('MKCOL', '/nope/sub/'), 409, 'MKCOL, parent missing: 409');
is(st('MKCOL', '/col2'), 409, 'MKCOL without a trailing slash: 409');
is(st('MKCOL', '/col3/', body => 'x'), 415, 'MKCOL with a body: 415');

# ---------------------------------------------------------------- DELETE
spew("$H/del.txt", 'x');
is(st('DELETE', '/del.txt'), 204, 'DELETE a file: 204');
ok(!-e "$H/del.txt", 'DELETE: gone');
is(st('DELETE', '/del.txt'), 404, 'DELETE a missing file: 404');
is(st('DELETE', '/new.txt/x'), 409, 'DELETE below a file: 409');
spew("$H/d1.txt", 'x');
is(st('DELETE', '/d1.txt', h => { Depth => '1' }), 400, 'DELETE a file, Depth 1: 400');
is(st('DELETE', '/d1.txt', body => 'x'), 415, 'DELETE with a body: 415');
# a tree: 300 files in nested directories
mkdir "$H/tree"; mkdir "$H/tree/a"; mkdir "$H/tree/a/b"; mkdir "$H/tree/e";
for my $i (1 .. 100) {
    spew("$H/tree/f$i", $i); spew("$H/tree/a/g$i", $i); spew("$H/tree/a/b/h$i", $i);
}
symlink "$H/new.txt", "$H/tree/link";
is(st('DELETE', '/tree'), 409, 'DELETE a directory without a slash: 409');
is(st('DELETE', '/tree/', h => { Depth => '0' }), 400, 'DELETE a directory, Depth 0: 400');
is(st('DELETE', '/tree/', h => { Depth => 'infinity' }), 204, 'DELETE a tree: 204');
ok(!-e "$H/tree", 'DELETE a tree: all gone');
ok(-f "$H/new.txt", 'DELETE a tree: a symlink\'s target stays');
spew("$H/md/x", 1); spew("$H/md/a/y", 1);
is(st('DELETE', '/md/x'), 409, 'min_delete_depth 3: /md/x is too shallow');
is(st('DELETE', '/md/a/y'), 204, 'min_delete_depth 3: /md/a/y');

# ---------------------------------------------------------------- COPY, MOVE
spew("$H/src.txt", 'source');
utime 784111777, 784111777, "$H/src.txt";
is(st('COPY', '/src.txt', h => { Destination => '/col/copy.txt' }), 204,
   'COPY a file: 204');
is(slurp("$H/col/copy.txt"), 'source', 'COPY: the copy');
is((stat "$H/col/copy.txt")[9], 784111777, 'COPY: keeps the mtime');
is(st('COPY', '/src.txt', h => { Destination => '/col/copy.txt', Overwrite => 'F' }),
   412, 'COPY onto a file, Overwrite F: 412');
spew("$H/src.txt", 'source2');
is(st('COPY', '/src.txt', h => { Destination => "http://localhost:$port/col/copy.txt",
                                  Overwrite => 'T' }),
   204, 'COPY, absolute Destination, Overwrite T: 204');
is(slurp("$H/col/copy.txt"), 'source2', 'COPY overwrote');
is(st('COPY', '/src.txt', h => { Destination => 'http://evil.example/x.txt' }),
   400, 'Destination on another server: 400');
is(st('COPY', '/src.txt', h => { Destination => 'ftp://localhost/x.txt' }),
   400, 'Destination of another scheme: 400');
is(st('COPY', '/src.txt', h => { Destination => '/../escape.txt' }), 400,
   'Destination climbing out: 400');
is(st('COPY', '/src.txt', h => { Destination => '/a/%2e%2e/%2e%2e/escape.txt' }),
   400, 'Destination climbing out, encoded: 400');
ok(!-e "$P/escape.txt", 'nothing written outside the root');
is(st('COPY', '/src.txt'), 400, 'COPY without Destination: 400');
is(st('COPY', '/src.txt', h => { Destination => '/x/' }), 409,
   'COPY a file onto a collection URI: 409');
is(st('COPY', '/src.txt', h => { Destination => '/src.txt' }), 403,
   'COPY onto itself: 403');
is(st('COPY', '/src.txt', h => { Destination => '/y.txt', Overwrite => 'maybe' }),
   400, 'bad Overwrite: 400');
is(st('COPY', '/src.txt', h => { Destination => '/y.txt', Depth => '1' }), 400,
   'COPY, Depth 1: 400');
is(st('COPY', '/none.txt', h => { Destination => '/y.txt' }), 404,
   'COPY a missing file: 404');

# a tree across directories
mkdir "$H/ct"; mkdir "$H/ct/sub";
spew("$H/ct/$_", "c$_") for 1 .. 50;
spew("$H/ct/sub/s$_", "s$_") for 1 .. 50;
is(st('COPY', '/ct/', h => { Destination => '/col/ct2/' }), 201, 'COPY a tree: 201');
is(slurp("$H/col/ct2/sub/s50"), 's50', 'COPY a tree: deep file');
is(scalar(() = glob "$H/col/ct2/*"), 51, 'COPY a tree: every entry');
is(st('COPY', '/ct/', h => { Destination => '/ct/in/' }), 403,
   'COPY a tree into itself: 403');
is(st('COPY', '/ct', h => { Destination => '/ct3' }), 400,
   'COPY a collection without a slash: 400');
is(st('COPY', '/ct/', h => { Destination => '/col/ct2/', Overwrite => 'F' }), 412,
   'COPY a tree onto one, Overwrite F: 412');
spew("$H/col/ct2/stale", 'old');
is(st('COPY', '/ct/', h => { Destination => '/col/ct2/' }), 201,
   'COPY a tree onto one: 201');
ok(!-e "$H/col/ct2/stale", 'COPY a tree onto one: replaced, not merged');

is(st('MOVE', '/src.txt', h => { Destination => '/col/moved.txt' }), 204,
   'MOVE a file: 204');
ok(!-e "$H/src.txt" && slurp("$H/col/moved.txt") eq 'source2', 'MOVE: moved');
is(st('MOVE', '/col/moved.txt', h => { Destination => '/deep/er/m.txt' }), 204,
   'MOVE to a missing path creates it (nginx)');
ok(-f "$H/deep/er/m.txt", 'MOVE: in its new path');
is(st('MOVE', '/ct/', h => { Destination => '/mv/' }), 201, 'MOVE a tree: 201');
ok(!-e "$H/ct" && slurp("$H/mv/sub/s1") eq 's1', 'MOVE a tree: moved');
is(st('MOVE', '/mv/', h => { Destination => '/mv2/', Depth => '0' }), 400,
   'MOVE, Depth 0: 400');

# alias: the destination must stay in the location
spew("$P/aliased/a.txt", 'al');
is(st('COPY', '/al/a.txt', h => { Destination => '/al/b.txt' }), 204, 'COPY under alias');
is(slurp("$P/aliased/b.txt"), 'al', 'COPY under alias: the aliased path');
is(st('COPY', '/al/a.txt', h => { Destination => '/elsewhere.txt' }), 400,
   'COPY out of an alias location: 400');

# methods outside dav_methods
is(st('DELETE', '/putonly/x'), 405, 'DELETE where only PUT is allowed: 405');
is(st('PUT', '/off/x', body => 'x'), 405, 'dav_methods off: PUT 405');
is(st('MKCOL', '/md/new/'), 405, 'MKCOL not listed: 405');
is(st('PUT', '/putonly/ok.txt', body => 'ok'), 201, 'PUT where listed: 201');
is(req('GET', '/putonly/ok.txt')->{body}, 'ok', 'static serves what PUT wrote');

$t->stop;

# -V names the module
my ($rc, $out, $err) = $t->ringx('-V');
like("$out$err", qr/--with-http_dav_module/, '-V: --with-http_dav_module');

done_testing;
