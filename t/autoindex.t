#!/usr/bin/perl

# Directory listings (modules/autoindex.c): nginx's html format line by
# line (hrefs, escaping, padding, truncation, UTC and local dates, exact
# and rounded sizes, directories first), json, jsonp, xml, HEAD, index.html
# winning over the listing, autoindex off, missing and unreadable
# directories, and configuration errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use File::Path qw(make_path);
use JSON::PP;
use Test::More;
use Test::Ringx;
use Time::Local qw(timegm);

my $t = Test::Ringx->new;
my $P = $t->prefix;

###########################################################################
# the tree

my $T1 = timegm(7, 6, 5, 4, 2, 2021);       # Thu, 04 Mar 2021 05:06:07 GMT
my $T0 = timegm(59, 59, 23, 31, 11, 2020);  # Thu, 31 Dec 2020 23:59:59 GMT

my $L = "$P/html/list";
my %DIRS = (
    'sub'      => $T0,
    'Zdir'     => $T1,
    'd<i>r&'   => $T1,
    'd' x 49   => $T1,     # the '/' fills the column
    'e' x 50   => $T1,     # exactly the column: no '/'
    'f' x 60   => $T1,     # truncated
);
my %FILES = (
    'a.txt'             => 5,
    '9999.bin'          => 9999,
    'k1.bin'            => 10000,              # 9.77K -> 10K
    'k2.bin'            => 10752,              # 10.5K -> 11K
    'm.bin'             => 23 * 1024 * 1024 + 1,
    'g.bin'             => 3 * 1024 ** 3,
    qq{we ird <&>"'.txt} => 0,
    '100%?#.txt'        => 0,
    "caf\xc3\xa9.txt"   => 7,
    "ctl\t\x01.txt"     => 0,
    'l' x 60            => 0,
    '&' x 60            => 0,
    "\xc3\xa9" x 30     => 0,                  # 60 bytes of UTF-8
    'x' x 255           => 0,
    '.hidden'           => 1,
);

sub mkfile {
    my ($path, $size, $mtime) = @_;
    open(my $fh, '>', $path) or die "$path: $!";
    binmode $fh;
    if ($size <= 65536) {
        print {$fh} 'x' x $size;
    } else {
        truncate($fh, $size) or die "truncate $path: $!";   # sparse
    }
    close $fh;
    utime($mtime, $mtime, $path) or die "utime $path: $!";
}

make_path("$L/$_") for keys %DIRS;
mkfile("$L/$_", $FILES{$_}, $T1) for keys %FILES;
mkfile("$L/d<i>r&/inner.txt", 3, $T1);
symlink('nowhere', "$L/dangling") or die "symlink: $!";
symlink('a.txt', "$L/link-to-a") or die "symlink: $!";
utime($DIRS{$_}, $DIRS{$_}, "$L/$_") for keys %DIRS;

make_path("$P/html/empty", "$P/html/withindex", "$P/html/noread",
          "$P/html/nosearch");
$t->write_file('html/withindex/index.html', "index page\n");
$t->write_file('html/withindex/other.txt', "other\n");
$t->write_file('html/noread/secret.txt', "secret\n");
$t->write_file('html/nosearch/secret.txt', "secret\n");
# search but no read permission, for the owner (a non-root run: the worker
# is the owner) and for others (a root run: the worker is nobody)
chmod 0311, "$P/html/noread";
chmod 0700, "$P/html/nosearch";

###########################################################################
# the server

$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;

events {
    worker_connections 64;
}

http {
    access_log off;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root %%PREFIX%%/html;
        autoindex on;

        location /human/ {
            alias %%PREFIX%%/html/list/;
            autoindex_exact_size off;
        }
        location /local/ {
            alias %%PREFIX%%/html/list/;
            autoindex_localtime on;
        }
        location /json/ {
            alias %%PREFIX%%/html/list/;
            autoindex_format json;
        }
        location /jsonp/ {
            alias %%PREFIX%%/html/list/;
            autoindex_format jsonp;
        }
        location /xml/ {
            alias %%PREFIX%%/html/list/;
            autoindex_format xml;
            autoindex_localtime on;      # html only
        }
        location /off/ {
            alias %%PREFIX%%/html/list/;
            autoindex off;
        }
        location /emptyjson/ {
            alias %%PREFIX%%/html/empty/;
            autoindex_format json;
        }
        location /emptyxml/ {
            alias %%PREFIX%%/html/empty/;
            autoindex_format xml;
        }
    }
}
EOF

# UTC+3 without daylight saving: the worker keeps TZ, as nginx's do
$t->run({ env => { TZ => 'RXT-3' } });
my $port = $t->port(0);

sub req {
    my ($path, %o) = @_;
    my $method = $o{method} // 'GET';
    my $raw = $t->http($port, "$method $path HTTP/1.0\r\nHost: localhost\r\n\r\n")
              // '';
    my ($r) = Test::Ringx::parse_responses($raw, head => [ $method eq 'HEAD' ]);
    return $r || { status => 0, headers => {}, body => '', raw => $raw };
}

my $CRLF = "\r\n";

# Visible order: directories, then files, byte by byte; no hidden names.
my @ORDER = (
    'Zdir', 'd<i>r&', 'd' x 49, 'e' x 50, 'f' x 60, 'sub',
    '&' x 60, '100%?#.txt', '9999.bin', 'a.txt', "caf\xc3\xa9.txt",
    "ctl\t\x01.txt", 'dangling', 'g.bin', 'k1.bin', 'k2.bin', 'link-to-a',
    'l' x 60, 'm.bin', qq{we ird <&>"'.txt}, 'x' x 255, "\xc3\xa9" x 30,
);

# One html row: href and text as they appear, the padding after </a>
# (worked out by hand), the date and the size column.
sub row {
    my ($href, $text, $pad, $date, $size) = @_;
    return qq{<a href="$href">$text</a>} . (' ' x $pad) . " $date $size";
}
sub exact { sprintf('%19s', $_[0]) }
sub human { sprintf('%7s', $_[0]) }

my $D1 = '04-Mar-2021 05:06';
my $D0 = '31-Dec-2020 23:59';

sub html_rows {
    my ($body) = @_;
    my ($rows) = $body =~ m{<hr><pre><a href="\.\./">\.\./</a>\r\n(.*)</pre><hr>}s;
    return defined $rows ? split(/\r\n/, $rows) : ();
}

sub html_unescape {
    my ($s) = @_;
    $s =~ s/&lt;/</g; $s =~ s/&gt;/>/g; $s =~ s/&quot;/"/g; $s =~ s/&amp;/&/g;
    return $s;
}

###########################################################################
# html

{
    my $r = req('/list/');
    is($r->{status}, 200, 'html: 200');
    is($r->{headers}{'content-type'}, 'text/html', 'html: Content-Type text/html');
    is($r->{headers}{'content-length'}, length($r->{body}), 'html: Content-Length');
    ok(!exists $r->{headers}{'last-modified'}, 'html: no Last-Modified (as nginx)');

    my $b = $r->{body};
    like($b, qr{\A<html>\r\n<head><title>Index of /list/</title></head>\r\n<body>\r\n<h1>Index of /list/</h1><hr><pre><a href="\.\./">\.\./</a>\r\n},
         'html: the head, byte for byte');
    like($b, qr{\r\n</pre><hr></body>\r\n</html>\r\n\z}, 'html: the tail, byte for byte');

    my @rows = html_rows($b);
    is(scalar @rows, scalar @ORDER, 'html: one row per visible name');
    my @names = map { m{^<a href="[^"]*">(.*?)</a>} ? html_unescape($1) : '?' } @rows;
    unlike(join("\n", @names), qr/hidden/, 'html: names starting with "." are hidden');

    my %row;
    for my $i (0 .. $#ORDER) {
        $row{ $ORDER[$i] } = $rows[$i];
    }

    is($row{'Zdir'}, row('Zdir/', 'Zdir/', 45, $D1, exact('-')),
       'html: a directory: "/" in href and text, "-" for its size');
    is($rows[0], $row{'Zdir'}, 'html: directories first, upper case before lower');
    is($row{'sub'}, row('sub/', 'sub/', 46, $D0, exact('-')),
       'html: a date in UTC (autoindex_localtime off)');
    is($row{'a.txt'}, row('a.txt', 'a.txt', 45, $D1, exact(5)),
       'html: a file: href, padding to column 50, date, exact size');
    is($row{'a.txt'}, '<a href="a.txt">a.txt</a>' . (' ' x 46) . '04-Mar-2021 05:06'
                      . (' ' x 19) . '5',
       'html: a file, written out');
    is($row{'g.bin'}, row('g.bin', 'g.bin', 45, $D1, exact(3221225472)),
       'html: a 3 GiB file, exact size');
    is($row{'d<i>r&'}, row('d%3Ci%3Er%26/', 'd&lt;i&gt;r&amp;/', 43, $D1, exact('-')),
       'html: a directory name escaped in href (URI component) and text (HTML)');
    is($row{qq{we ird <&>"'.txt}},
       row('we%20ird%20%3C%26%3E%22%27.txt', 'we ird &lt;&amp;&gt;&quot;\'.txt',
           34, $D1, exact(0)),
       'html: spaces and quotes: padding counts the name, not its escapes');
    is($row{'100%?#.txt'}, row('100%25%3F%23.txt', '100%?#.txt', 40, $D1, exact(0)),
       'html: % ? # escaped in href');
    is($row{"caf\xc3\xa9.txt"}, row('caf%C3%A9.txt', "caf\xc3\xa9.txt", 41, $D1, exact(7)),
       'html: non-ASCII: href %-escaped, text as is, width in bytes');
    is($row{"ctl\t\x01.txt"}, row('ctl%09%01.txt', "ctl\t\x01.txt", 41, $D1, exact(0)),
       'html: control bytes %-escaped in href');
    is($row{'d' x 49}, row(('d' x 49) . '/', ('d' x 49) . '/', 0, $D1, exact('-')),
       'html: a 49-byte directory name: "/" fills the column');
    is($row{'e' x 50}, row(('e' x 50) . '/', 'e' x 50, 0, $D1, exact('-')),
       'html: a 50-byte directory name: no "/" in the text');
    is($row{'f' x 60}, row(('f' x 60) . '/', ('f' x 47) . '..&gt;', 0, $D1, exact('-')),
       'html: a long directory name cut to 47 bytes + "..>"');
    is($row{'l' x 60}, row('l' x 60, ('l' x 47) . '..&gt;', 0, $D1, exact(0)),
       'html: a long file name cut to 47 bytes + "..>"');
    is($row{'&' x 60}, row('%26' x 60, ('&amp;' x 47) . '..&gt;', 0, $D1, exact(0)),
       'html: a long name is cut before it is escaped');
    is($row{"\xc3\xa9" x 30}, row('%C3%A9' x 30, ("\xc3\xa9" x 23) . '..&gt;', 0, $D1, exact(0)),
       'html: a long UTF-8 name is not cut inside a character');
    is($row{'x' x 255}, row('x' x 255, ('x' x 47) . '..&gt;', 0, $D1, exact(0)),
       'html: a 255-byte name');
    is($row{'link-to-a'}, row('link-to-a', 'link-to-a', 41, $D1, exact(5)),
       'html: a symlink is listed as its target');
    like($row{'dangling'}, qr{^<a href="dangling">dangling</a> {42} \d\d-\w\w\w-\d{4} \d\d:\d\d +7$},
         'html: a dangling symlink is listed (lstat)');

    # every row: name column of 50, then " dd-Mon-yyyy hh:mm " and 19 columns
    my @bad;
    for my $row (@rows) {
        my ($text, $pad, $rest) = $row =~ m{^<a href="[^"]*">(.*?)</a>( *) (.*)$}s
            or do { push @bad, $row; next };
        my $width = length(html_unescape($text)) + length($pad);
        push @bad, $row unless ($width == 50 || $text =~ /\xa9\.\.&gt;$/)
                               && $rest =~ /^\d\d-\w{3}-\d{4} \d\d:\d\d .{19}$/s;
    }
    ok(!@bad, 'html: every row is aligned as nginx aligns it') or diag(join "\n", @bad);

    my $r2 = req('/list/?a=b&c');
    is($r2->{body}, $b, 'html: arguments do not change the listing');
}

# the hrefs lead where they say
{
    for my $href ('we%20ird%20%3C%26%3E%22%27.txt', '100%25%3F%23.txt', 'caf%C3%A9.txt',
                  'link-to-a') {
        my $r = req("/list/$href");
        is($r->{status}, 200, "href $href: 200");
    }
    is(req('/list/a.txt')->{body}, 'xxxxx', 'href a.txt: the file');

    my $r = req('/list/d%3Ci%3Er%26/');
    is($r->{status}, 200, 'href d%3Ci%3Er%26/: the subdirectory is listed');
    like($r->{body}, qr{<title>Index of /list/d&lt;i&gt;r&amp;/</title>},
         'html: the title is HTML-escaped');
    like($r->{body}, qr{<h1>Index of /list/d&lt;i&gt;r&amp;/</h1>}, 'html: the h1 is HTML-escaped');
    is_deeply([ html_rows($r->{body}) ], [ row('inner.txt', 'inner.txt', 41, $D1, exact(3)) ],
              'html: the subdirectory lists its file');
}

# autoindex_exact_size off
{
    my $r = req('/human/');
    is($r->{status}, 200, 'human sizes: 200');
    my %row;
    my @rows = html_rows($r->{body});
    @row{@ORDER} = @rows;
    is($row{'Zdir'}, row('Zdir/', 'Zdir/', 45, $D1, human('-')), 'human: directory "-"');
    is($row{'a.txt'}, row('a.txt', 'a.txt', 45, $D1, human(5)), 'human: 5 bytes');
    is($row{'9999.bin'}, row('9999.bin', '9999.bin', 42, $D1, human(9999)), 'human: 9999 bytes stay bytes');
    is($row{'k1.bin'}, row('k1.bin', 'k1.bin', 44, $D1, human('10K')), 'human: 10000 -> 10K');
    is($row{'k2.bin'}, row('k2.bin', 'k2.bin', 44, $D1, human('11K')), 'human: 10752 -> 11K (half rounds up)');
    is($row{'m.bin'}, row('m.bin', 'm.bin', 45, $D1, human('23M')), 'human: 23M');
    is($row{'g.bin'}, row('g.bin', 'g.bin', 45, $D1, human('3G')), 'human: 3G');
    is($row{'g.bin'}, '<a href="g.bin">g.bin</a>' . (' ' x 46) . '04-Mar-2021 05:06      3G',
       'human: written out');
}

# autoindex_localtime on, TZ=RXT-3
{
    my @rows = html_rows(req('/local/')->{body});
    my %row;
    @row{@ORDER} = @rows;
    is($row{'a.txt'}, row('a.txt', 'a.txt', 45, '04-Mar-2021 08:06', exact(5)),
       'localtime: UTC+3');
    is($row{'sub'}, row('sub/', 'sub/', 46, '01-Jan-2021 02:59', exact('-')),
       'localtime: across the new year');
}

###########################################################################
# json, jsonp

{
    my $r = req('/json/');
    is($r->{status}, 200, 'json: 200');
    is($r->{headers}{'content-type'}, 'application/json', 'json: Content-Type');
    is($r->{headers}{'content-length'}, length($r->{body}), 'json: Content-Length');
    my $b = $r->{body};
    like($b, qr/\A\[\r\n\{ "name":"Zdir", "type":"directory", "mtime":"Thu, 04 Mar 2021 05:06:07 GMT" \},\r\n/,
         'json: starts as nginx, a directory has no size');
    like($b, qr/\r\n\{ "name":"a\.txt", "type":"file", "mtime":"Thu, 04 Mar 2021 05:06:07 GMT", "size":5 \},\r\n/,
         'json: a file, byte for byte');
    like($b, qr/\r\n\{ "name":"ctl\\t\\u0001\.txt", /, 'json: control bytes escaped');
    like($b, qr/\r\n\{ "name":"we ird <&>\\"'\.txt", /, 'json: quote escaped');
    like($b, qr/ \}\r\n\]\z/, 'json: ends without a comma, "]" last');

    my $list = eval { JSON::PP->new->decode($b) };
    ok($list, 'json: parses') or diag($@);
    $list ||= [];
    is_deeply([ map { $_->{name} } @$list ], \@ORDER, 'json: names, order as in html');
    my %e = map { $_->{name} => $_ } @$list;
    is_deeply($e{sub}, { name => 'sub', type => 'directory',
                         mtime => 'Thu, 31 Dec 2020 23:59:59 GMT' }, 'json: directory entry');
    is($e{'g.bin'}{size}, 3221225472, 'json: 3 GiB size');
    is($e{'m.bin'}{size}, 23 * 1024 * 1024 + 1, 'json: exact size');
    is($e{dangling}{type}, 'other', 'json: a dangling symlink is "other"');
    ok(!exists $e{dangling}{size}, 'json: "other" has no size');
    is($e{'link-to-a'}{type}, 'file', 'json: a symlink to a file is a file');

    is(req('/emptyjson/')->{body}, "[\r\n]", 'json: an empty directory');
}

{
    my $r = req('/jsonp/?callback=cb.x_1');
    is($r->{status}, 200, 'jsonp: 200');
    is($r->{headers}{'content-type'}, 'application/javascript', 'jsonp: Content-Type');
    my $json = req('/json/')->{body};
    is($r->{body}, "/* callback */\r\ncb.x_1($json);", 'jsonp: the json wrapped in the callback');

    for my $q ('', '?callback=', '?x=1') {
        $r = req("/jsonp/$q");
        is($r->{headers}{'content-type'}, 'application/json', "jsonp without a callback ($q): json");
        is($r->{body}, $json, "jsonp without a callback ($q): the json body");
    }
    $r = req('/jsonp/?callback=a(b)');
    is($r->{status}, 400, 'jsonp: an invalid callback name is 400');
    ok($t->log_contains(qr/\[info\] .*client sent invalid callback name: "a\(b\)"/),
       'jsonp: invalid callback name logged');
    $r = req('/jsonp/?callback=' . ('c' x 129));
    is($r->{status}, 400, 'jsonp: a 129-byte callback name is 400');
    ok($t->log_contains(qr/\[info\] .*client sent too long callback name/),
       'jsonp: too long callback name logged');
    is(req('/jsonp/?callback=' . ('c' x 128))->{status}, 200, 'jsonp: 128 bytes is fine');
}

###########################################################################
# xml

{
    my $r = req('/xml/');
    is($r->{status}, 200, 'xml: 200');
    is($r->{headers}{'content-type'}, 'text/xml; charset=utf-8', 'xml: Content-Type with charset');
    my $b = $r->{body};
    like($b, qr{\A<\?xml version="1\.0"\?>\r\n<list>\r\n<directory mtime="2021-03-04T05:06:07Z">Zdir</directory>\r\n},
         'xml: head and first entry, byte for byte');
    like($b, qr{\r\n<directory mtime="2020-12-31T23:59:59Z">sub</directory>\r\n},
         'xml: UTC whatever autoindex_localtime says');
    like($b, qr{\r\n<file mtime="2021-03-04T05:06:07Z" size="5">a\.txt</file>\r\n}, 'xml: a file');
    like($b, qr{\r\n<directory mtime="2021-03-04T05:06:07Z">d&lt;i&gt;r&amp;</directory>\r\n},
         'xml: a name escaped');
    like($b, qr{\r\n<file mtime="2021-03-04T05:06:07Z" size="0">we ird &lt;&amp;&gt;&quot;'\.txt</file>\r\n},
         'xml: quotes escaped');
    like($b, qr{\r\n<other mtime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">dangling</other>\r\n}, 'xml: other');
    like($b, qr{</list>\r\n\z}, 'xml: tail');
    my @names = $b =~ m{^<\w+ [^>]*>(.*)</\w+>\r$}mg;
    is_deeply([ map { html_unescape($_) } @names ], \@ORDER, 'xml: names, order as in html');

    is(req('/emptyxml/')->{body}, qq{<?xml version="1.0"?>\r\n<list>\r\n</list>\r\n},
       'xml: an empty directory');
}

###########################################################################
# HEAD, keepalive, methods

{
    my $get = req('/list/');
    my $head = req('/list/', method => 'HEAD');
    is($head->{status}, 200, 'HEAD: 200');
    is($head->{headers}{'content-length'}, length($get->{body}), 'HEAD: the Content-Length of the GET');
    is($head->{raw}, $head->{head}, 'HEAD: no body');

    my $c = $t->raw($port);
    $c->send("GET /empty/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "HEAD /list/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "GET /json/ HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my @r = $c->read_responses(3, head => [0, 1, 0]);
    is(join('|', map { $_->{status} } @r), '200|200|200', 'keepalive: three listings on one connection');
    is($r[0] && $r[0]{body}, "<html>\r\n<head><title>Index of /empty/</title></head>\r\n<body>\r\n"
        . "<h1>Index of /empty/</h1><hr><pre><a href=\"../\">../</a>\r\n</pre><hr></body>\r\n</html>\r\n",
       'html: an empty directory, byte for byte');
    is($r[2] && $r[2]{body}, req('/json/')->{body}, 'keepalive: the third response whole');
    is($c->buffer, '', 'keepalive: no stray bytes');
    $c->close;

    is(req('/list/', method => 'DELETE')->{status}, 405, 'DELETE: declined, 405 from static');
    is(req('/list/', method => 'POST')->{status}, 403, 'POST: declined, 403 as nginx');
}

###########################################################################
# index, off, errors

{
    my $r = req('/withindex/');
    is("$r->{status} $r->{body}", "200 index page\n", 'index.html is served instead of the listing');

    $r = req('/off/');
    is($r->{status}, 403, 'autoindex off: 403');
    ok($t->log_contains(qr/\[error\] .*directory index of "\Q$P\E\/html\/list\/" is forbidden/),
       'autoindex off: "directory index ... is forbidden" logged');

    $r = req('/list/missing/');
    is($r->{status}, 404, 'a missing directory: 404');

    $r = req('/noread/');
    is($r->{status}, 403, 'a directory without read permission: 403');
    ok($t->log_contains(qr/\[error\] .*opendir\(\) "\Q$P\E\/html\/noread" failed \(13: Permission denied\)/),
       'opendir() failure logged as nginx does');

  SKIP: {
        skip 'the worker is the owner when not run as root', 1 if $> != 0;
        # no search permission: index's statx already fails (its log line)
        $t->expect_log(qr/\[crit\] .*"\Q$P\E\/html\/nosearch\/index\.html"/);
        is(req('/nosearch/')->{status}, 403, 'a directory without search permission: 403');
    }
}

chmod 0755, "$P/html/noread", "$P/html/nosearch";
$t->stop;

###########################################################################
# configuration errors

{
    my $e = Test::Ringx->new;
    my $conf = $e->conf_file;
    my $head = "events { }\nhttp {\n";
    my $tail = "}\n";
    my @cases = (
        [ "    autoindex_format yaml;\n",
          qr/\[emerg\] invalid value "yaml" in "autoindex_format" directive, it must be "html", "json", "jsonp" or "xml" in \Q$conf\E:3$/m,
          'autoindex_format with an unknown format' ],
        [ "    autoindex maybe;\n",
          qr/\[emerg\] invalid value "maybe" in "autoindex" directive, it must be "on" or "off" in \Q$conf\E:3$/m,
          'autoindex with a value other than on/off' ],
        [ "    autoindex_exact_size on;\n    autoindex_exact_size off;\n",
          qr/\[emerg\] "autoindex_exact_size" directive is duplicate in \Q$conf\E:4$/m,
          'autoindex_exact_size twice' ],
        [ "    server { autoindex_localtime on off; }\n",
          qr/\[emerg\] invalid number of arguments in "autoindex_localtime" directive in \Q$conf\E:3$/m,
          'autoindex_localtime with two arguments' ],
    );
    for my $case (@cases) {
        my ($body, $re, $name) = @$case;
        $e->write_config($head . $body . $tail);
        my ($rc, $out, $err) = $e->ringx('-t');
        isnt($rc, 0, "$name: -t fails");
        like($err, $re, $name) or diag($err);
    }
    $e->write_config($head . "    autoindex on;\n    autoindex_format jsonp;\n"
                     . "    server { location / { autoindex_exact_size off; } }\n" . $tail);
    my ($rc, $out, $err) = $e->ringx('-t');
    is($rc, 0, 'all four directives at http level: -t passes') or diag($err);
}

done_testing;
