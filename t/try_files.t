#!/usr/bin/perl
# try_files.t: the precontent phase: files, directories with a trailing
# slash, a fallback URI (with and without its own arguments), =code, a
# named location, variables in the candidates.

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
    default_type text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root html;
        location / { try_files $uri $uri/ /front.txt; }
        location /code/ { try_files $uri =404; }
        location /teapot/ { try_files $uri =418; }
        location /named/ { try_files $uri @fallback; }
        location @fallback { return 200 "named uri=$uri args=$args\n"; }
        location /php/ { try_files $uri /app.php?route=$uri; }
        location = /app.php { return 200 "app args=$args\n"; }
        location /ext/ { try_files $uri.txt $uri =404; }
    }
}
EOF
$t->write_file_raw('html/front.txt', "front\n");
$t->write_file_raw('html/file.txt', "file\n");
$t->write_file_raw('html/dir/index.html', "dir index\n");
$t->write_file_raw('html/code/real.txt', "real\n");
$t->write_file_raw('html/ext/page.txt', "page by extension\n");
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri) = @_;
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? ($r->{status}, $r->{body}, $r->{headers}{location}) : (0, '');
}

my @cases = (
    ['/file.txt',           200, "file\n",             'an existing file is served'],
    # nginx: "$uri/" tests "$uri" as a directory and makes it the URI
    # without the '/': the static handler redirects to the slash form,
    # so that the index's relative links resolve under /dir/
    ['/dir',                301, undef,                '$uri/ matches a directory: 301 to the slash form',
     "http://localhost:$P/dir/"],
    ['/dir?a=1',            301, undef,                '... with the arguments kept',
     "http://localhost:$P/dir/?a=1"],
    ['/dir/',               200, "dir index\n",        'a directory URI'],
    ['/missing',            200, "front\n",            'nothing matches: the fallback URI'],
    ['/code/real.txt',      200, "real\n",             '=404 not reached when the file exists'],
    ['/code/none',          404, undef,                '=404 when nothing matches'],
    ['/teapot/none',        418, '',                   '=418: any code'],
    ['/named/x?a=1',        200, "named uri=/named/x args=a=1\n", 'a named location as the fallback'],
    ['/php/a/b?x=1',        200, "app args=route=/php/a/b\n", 'a fallback with its own arguments'],
    ['/ext/page',           200, "page by extension\n", 'a candidate built from $uri.txt'],
);
for my $c (@cases) {
    my ($uri, $status, $body, $name, $location) = @$c;
    my ($s, $b, $l) = get($uri);
    is($s, $status, "$name: status $status");
    is($b, $body, "$name: body") if defined $body;
    is($l, $location, "$name: Location") if defined $location;
}

$t->stop;
done_testing;
