#!/usr/bin/perl
# rewrite.t: the rewrite module: rewrite flags (none, last, break,
# redirect, permanent) and their arguments handling, the cycle limit,
# set and variables, every if condition (and captures from it), if blocks
# as implicit locations (nginx's documented pitfalls), rewrite_log,
# uninitialized_variable_warn, and configuration errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;

# one location per file test: /op/f/, /op/nf/ ... answer "yes" or "no"
my $file_ops = join "\n", map {
    my ($name, $op) = @$_;
    "        location /op/$name/ { if ($op \$document_root\$arg_p) { return 200 \"yes\\n\"; } return 200 \"no\\n\"; }"
} (['f', '-f'], ['nf', '!-f'], ['d', '-d'], ['nd', '!-d'], ['e', '-e'],
   ['ne', '!-e'], ['x', '-x'], ['nx', '!-x']);

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log notice;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root html;

        # the server's script runs before any location is chosen
        rewrite ^/old/(.*)\$ /new/\$1;
        set \$srv "server-set";
        if (\$arg_srvblock) { return 403; }
        if (\$arg_srvbreak) { rewrite ^ /show break; }

        location /new/ { return 200 "new uri=\$uri srv=\$srv\\n"; }
        location = /show { return 200 "uri=\$uri args=\$args is_args=\$is_args\\n"; }
        location /target/ {
            uninitialized_variable_warn off;
            return 200 "target uri=\$uri args=\$args after=\$after\\n";
        }

        # flags
        location /last/ { rewrite ^/last/(.*)\$ /target/\$1 last; return 200 "not reached\\n"; }
        location /break/ { rewrite ^/break/(.*)\$ /target/\$1 break; }
        location /break-return/ { rewrite ^ /x break; return 200 "not reached\\n"; }
        location /noflag/ { rewrite ^/noflag/(.*)\$ /target/\$1; set \$after "ran"; }
        location /twice/ { rewrite ^/twice/(.*)\$ /twice2/\$1; rewrite ^/twice2/(.*)\$ /target/\$1; }
        location /nomatch/ { rewrite ^/other /target/x last; return 200 "no match uri=\$uri\\n"; }
        location /brk/ { rewrite ^/brk/(.*)\$ /target/\$1; break; return 200 "not reached\\n"; }
        location /redir/ { rewrite ^/redir/(.*)\$ /target/\$1 redirect; }
        location /perm/ { rewrite ^/perm/(.*)\$ /target/\$1 permanent; }
        location /abs/ { rewrite ^/abs/(.*)\$ http://example.com/\$1; return 200 "not reached\\n"; }
        location /abs-perm/ { rewrite ^/abs-perm/(.*)\$ https://example.com/\$1 permanent; }
        location /scheme/ { rewrite ^ \$scheme://example.com/s; }
        location /redirq/ { rewrite ^/redirq/(.*)\$ /target/\$1?from=redir redirect; }
        location /redirdrop/ { rewrite ^/redirdrop/(.*)\$ /target/\$1? redirect; }
        location /esc/ { rewrite ^/esc/(.*)\$ http://example.com/%7E\$1 redirect; }
        location /al/ { alias html/target/; rewrite ^/al/(.*)\$ /al/\$1 break; }
        location /al-last/ { alias html/target/; rewrite ^/al-last/y(.*)\$ /al-last/\$1 last; }
        location /zero/ { rewrite ^ ?a=1 last; }
        location /climb/ { rewrite ^ /\$arg_to last; }

        # arguments
        location /args/ {
            rewrite ^/args/keep\$ /show;
            rewrite ^/args/new\$ /show?x=1 last;
            rewrite ^/args/drop\$ /show? last;
            rewrite ^/args/only\$ /show?x=1? last;
            rewrite ^/args/cap/(.*)\$ /show?v=\$1 last;
        }

        # the cycle limit: one "x" less per round
        location /chain/ { rewrite ^/chain/x(x*)\$ /chain/\$1 last; return 200 "chain end uri=\$uri\\n"; }
        location /loop/ { rewrite ^/loop/(.*)\$ /loop/\$1 last; }
        location /loop-ep/ { error_page 500 /target/ep; rewrite ^ /loop-ep/ last; }

        # set and variables
        location /set/ {
            set \$a "hello";
            set \$b "\$a-\$uri";
            add_header X-B \$b;
            return 200 "b=\$b\\n";
        }
        location /weak/ { set \$before \$arg_a; set \$arg_a "mine"; return 200 "before=\$before after=\$arg_a\\n"; }
        location /keepvar/ { set \$kv "kept"; try_files /nonexistent /showkv/; }
        location /showkv/ { return 200 "kv=\$kv\\n"; }
        location /ep-srv/ { error_page 404 /old/ep; return 404; }
        location /setargs/ { set \$args "replaced=1"; return 200 "args=\$args\\n"; }
        location /uninit/ { return 200 "u=[\$never_set]\\n"; }
        location /uninit-off/ { uninitialized_variable_warn off; return 200 "u=[\$never_set2]\\n"; }
        location /setter/ { set \$never_set x; set \$never_set2 y; return 204; }

        # conditions
        location /var/ { if (\$arg_v) { return 200 "true\\n"; } return 200 "false\\n"; }
        location /eq/ { if (\$arg_v = "a%20b") { return 200 "eq\\n"; } return 200 "other\\n"; }
        location /ne/ { if (\$arg_v != abc) { return 200 "ne\\n"; } return 200 "equal\\n"; }
        location /eqvar/ { if ( \$arg_a = \$arg_b ) { return 200 "same\\n"; } return 200 "differ\\n"; }
        location /re/ { if (\$arg_v ~ ^(a+)(b*)\$) { return 200 "match \$1 \$2\\n"; } return 200 "no\\n"; }
        location /reci/ { if (\$arg_v ~* "^x(?<tail>.*)\$") { return 200 "ci \$tail\\n"; } return 200 "no\\n"; }
        location /nre/ { if (\$arg_v !~ ^z) { return 200 "yes\\n"; } return 200 "no\\n"; }
        location /nreci/ { if (\$arg_v !~* ^z) { return 200 "yes\\n"; } return 200 "no\\n"; }
        location /ifcap/ {
            if (\$uri ~ ^/ifcap/(\\w+)) { set \$word \$1; }
            rewrite ^ /show?w=\$word last;
        }
        location /relf/ { if (-f html/target/x.txt) { return 200 "relative yes\\n"; } return 200 "relative no\\n"; }
$file_ops

        # if blocks are implicit locations (nginx's pitfalls, the same here)
        location /only-one-if {
            set \$true 1;
            if (\$true) { add_header X-First 1; }
            if (\$true) { add_header X-Second 2; }
            return 204;
        }
        location /after-if/ {
            add_header X-Loc loc;
            if (\$arg_x) { add_header X-If if; }
            return 200 "after if\\n";
        }
        location /if-try-files/ {
            try_files /nonexistent \@fallback;
            if (\$arg_x) { }
        }
        location \@fallback { return 200 "fallback\\n"; }
        location /hdr-static/ { if (\$arg_x) { add_header X-If 1; } }
        location /iroot/ { if (\$arg_alt) { root html/alt; } }
        location ~ ^/ialias/(.+)\$ { alias html/target/\$1; if (\$arg_x) { } }
        location /if-rewrite/ {
            if (\$arg_x) { rewrite ^ /show?from=if last; }
            return 200 "no if\\n";
        }
        location /if-break/ {
            if (\$arg_x) { break; }
            return 200 "not broken\\n";
        }

        # rewrite_log
        location /logged/ {
            rewrite_log on;
            if (\$arg_v ~ ^yes\$) { set \$seen 1; }
            rewrite ^/logged/nomatch /x;
            rewrite ^/logged/redir\$ /target/r?k=v redirect;
            rewrite ^/logged/(.*)\$ /show?l=\$1 last;
        }
        location /quiet/ { rewrite ^/quiet/(.*)\$ /show?q=\$1 last; }
    }
}
EOF
$t->write_file_raw('html/target/x.txt', "target file\n");
$t->write_file_raw('html/run.sh', "#!/bin/sh\n");
chmod 0755, $t->prefix . '/html/run.sh';
$t->write_file_raw('html/iroot/a.txt', "main root\n");
$t->write_file_raw('html/hdr-static/f.txt', "static\n");
$t->write_file_raw('html/alt/iroot/a.txt', "alt root\n");
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri) = @_;
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r // { status => 0, body => '', headers => {} };
}

sub check {
    my ($uri, $status, $body, $name) = @_;
    my $r = get($uri);
    is($r->{status}, $status, "$name: status $status");
    is($r->{body}, $body, "$name: body") if defined $body;
    return $r;
}

# ---- flags ----
check('/old/a', 200, "new uri=/new/a srv=server-set\n",
      'server-level rewrite without a flag, then location search');
check('/x?srvblock=1', 403, undef, 'return inside a server-level if');
check('/x?srvbreak=1', 200, "uri=/show args=srvbreak=1 is_args=?\n",
      'server-level rewrite with break inside if: the location is searched');
check('/last/a', 200, "target uri=/target/a args= after=\n",
      'last: the location is searched again, the script stops');
check('/break/x.txt', 200, "target file\n",
      'break: stays in the location (static serves the new URI)');
check('/break-return/y', 404, undef, 'break stops the script: return not reached');
check('/noflag/b', 200, "target uri=/target/b args= after=ran\n",
      'no flag: the script goes on, then the location is searched');
check('/twice/c', 200, "target uri=/target/c args= after=\n",
      'no flag: the next rewrite sees the new URI');
check('/nomatch/d', 200, "no match uri=/nomatch/d\n", 'a regex that does not match');
check('/brk/x.txt', 200, "target file\n",
      'break after a rewrite without flag: no new search');

my $r = check('/redir/a?q=1', 302, undef, 'redirect: 302');
like($r->{headers}{location}, qr{^http://localhost(?::\d+)?/target/a\?q=1$},
     'redirect: Location made absolute, arguments kept');
$r = check('/perm/a', 301, undef, 'permanent: 301');
like($r->{headers}{location}, qr{/target/a$}, 'permanent: Location');
$r = check('/abs/p?z=9', 302, undef, 'an http:// replacement is a 302');
is($r->{headers}{location}, 'http://example.com/p?z=9', 'http:// Location with arguments');
$r = check('/abs-perm/p', 301, undef, 'https:// with permanent: 301');
is($r->{headers}{location}, 'https://example.com/p', 'https:// Location');
$r = check('/scheme/', 302, undef, '$scheme replacement: a redirect');
is($r->{headers}{location}, 'http://example.com/s', '$scheme expanded');
$r = check('/redirq/a?orig=1', 302, undef, 'redirect with its own arguments');
like($r->{headers}{location}, qr{/target/a\?from=redir&orig=1$},
     'its own arguments, then the request\'s after "&"');
$r = check('/redirdrop/a?orig=1', 302, undef, 'redirect with a trailing ?');
like($r->{headers}{location}, qr{/target/a$}, 'a trailing "?" drops the arguments');
$r = check('/esc/a%20b%2Fc', 302, undef, 'redirect escaping');
is($r->{headers}{location}, 'http://example.com/~a%20b/c',
   '%7E of the config decoded; decoded captures escaped again');
$t->expect_log(qr/\[alert\] .*"alias" cannot be used in location "\/al\/" where URI was rewritten/);
check('/al/x.txt', 500, undef, 'alias after rewrite ... break: 500, as nginx');
ok($t->wait_for(sub { $t->log_contains(
    qr/"alias" cannot be used in location "\/al\/" where URI was rewritten/) }),
   'alias after break: nginx\'s alert');
check('/al-last/yx.txt', 200, "target file\n", 'alias after rewrite ... last: searched again');
check('/zero/', 500, undef, 'an empty rewritten URI is a 500');
check('/climb/?to=../etc/passwd', 400, undef, 'a rewritten URI with ".." is refused');

# ---- arguments ----
check('/args/keep?a=1', 200, "uri=/show args=a=1 is_args=?\n",
      'a replacement without "?" keeps the arguments');
check('/args/new?a=1', 200, "uri=/show args=x=1&a=1 is_args=?\n",
      'new arguments, then the request\'s');
check('/args/new', 200, "uri=/show args=x=1 is_args=?\n",
      'new arguments, no request arguments');
check('/args/drop?a=1', 200, "uri=/show args= is_args=\n",
      'a trailing "?" drops the arguments');
check('/args/only?a=1', 200, "uri=/show args=x=1 is_args=?\n",
      'new arguments and a trailing "?": only the new ones');
check('/args/cap/a%20b', 200, "uri=/show args=v=a%20b is_args=?\n",
      'a capture in the arguments is escaped again (the URI had %XX)');
check('/args/cap/a+b', 200, "uri=/show args=v=a%2Bb is_args=?\n",
      'a capture in the arguments is escaped when the URI had "+"');
check('/args/cap/ab', 200, "uri=/show args=v=ab is_args=?\n",
      'a plain capture in the arguments');

# ---- the cycle limit ----
check('/chain/' . ('x' x 10), 200, "chain end uri=/chain/\n",
      'ten URI changes are allowed');
$t->mark_logs;
check('/chain/' . ('x' x 11), 500, undef, 'the eleventh is a 500');
ok($t->wait_for(sub { $t->log_contains(
    qr/\[error\] .*rewrite or internal redirection cycle while processing "\/chain\/"/) }),
   'the cycle is logged in nginx\'s words');
check('/loop/a', 500, undef, 'a rewrite loop ends with 500');
ok($t->wait_for(sub { $t->log_contains(
    qr/rewrite or internal redirection cycle while processing "\/loop\/a"/) }),
   'the loop is logged');
check('/loop-ep/', 500, undef, 'error_page does not redirect after a cycle');

# ---- set and variables ----
$r = check('/set/x', 200, "b=hello-/set/x\n", 'set, then a variable of a variable');
is($r->{headers}{'x-b'}, 'hello-/set/x', 'a set variable in add_header');
check('/weak/?a=theirs', 200, "before=theirs after=mine\n",
      'set $arg_a: the argument until set runs');
check('/keepvar/', 200, "kv=kept\n", 'a set variable survives an internal redirect');
check('/ep-srv/', 404, "new uri=/new/ep srv=server-set\n",
      'the server\'s script runs again after an internal redirect');
check('/setargs/?a=1', 200, "args=replaced=1\n", 'set $args replaces the arguments');
check('/uninit/', 200, "u=[]\n", 'a variable read before any set is empty');
ok($t->wait_for(sub { $t->log_contains(
    qr/\[warn\] .*using uninitialized "never_set" variable/) }),
   'uninitialized_variable_warn: the warning');
check('/uninit-off/', 200, "u=[]\n", 'uninitialized_variable_warn off: empty');
ok(!$t->log_contains(qr/"never_set2"/), 'uninitialized_variable_warn off: no warning');

# ---- conditions ----
for my $c (['', 'false'], ['?v=', 'false'], ['?v=0', 'false'], ['?v=1', 'true'],
           ['?v=00', 'true'], ['?v=abc', 'true']) {
    check("/var/$c->[0]", 200, "$c->[1]\n", "(\$v) with \"$c->[0]\"");
}
check('/eq/?v=a%20b', 200, "eq\n", '= compares the raw value');
check('/eq/?v=ab', 200, "other\n", '= : different');
check('/ne/?v=abc', 200, "equal\n", '!= : equal values');
check('/ne/?v=abd', 200, "ne\n", '!= : different values');
check('/eqvar/?a=1&b=1', 200, "same\n", '= with a variable on the right');
check('/eqvar/?a=1&b=2', 200, "differ\n", '= with a variable: different');
check('/re/?v=aab', 200, "match aa b\n", '~ and its captures $1 $2');
check('/re/?v=AAB', 200, "no\n", '~ is case-sensitive');
check('/reci/?v=Xyz', 200, "ci yz\n", '~* and a named capture');
check('/nre/?v=abc', 200, "yes\n", '!~ true');
check('/nre/?v=zed', 200, "no\n", '!~ false');
check('/nre/?v=Zed', 200, "yes\n", '!~ is case-sensitive');
check('/nreci/?v=Zed', 200, "no\n", '!~* false');
check('/nreci/?v=abc', 200, "yes\n", '!~* true');
check('/ifcap/hello/x', 200, "uri=/show args=w=hello is_args=?\n",
      'a capture from an if regex used by set');
check('/relf/', 200, "relative yes\n", '-f with a path relative to the prefix');

my %files = (file => '/target/x.txt', dir => '/target', exec => '/run.sh',
             none => '/none');
my %expect = (
    f  => { file => 'yes', dir => 'no',  exec => 'yes', none => 'no' },
    nf => { file => 'no',  dir => 'yes', exec => 'no',  none => 'yes' },
    d  => { file => 'no',  dir => 'yes', exec => 'no',  none => 'no' },
    nd => { file => 'yes', dir => 'no',  exec => 'yes', none => 'yes' },
    e  => { file => 'yes', dir => 'yes', exec => 'yes', none => 'no' },
    ne => { file => 'no',  dir => 'no',  exec => 'no',  none => 'yes' },
    x  => { file => 'no',  dir => 'yes', exec => 'yes', none => 'no' },
    nx => { file => 'yes', dir => 'no',  exec => 'no',  none => 'yes' },
);
for my $op (sort keys %expect) {
    for my $f (sort keys %files) {
        check("/op/$op/?p=$files{$f}", 200, "$expect{$op}{$f}\n",
              "file test $op on $f");
    }
}

# ---- if blocks ----
$r = check('/only-one-if', 204, undef, 'two ifs that match');
ok(!exists $r->{headers}{'x-first'}, 'only the last if\'s confs apply: no X-First');
is($r->{headers}{'x-second'}, '2', 'the last if\'s add_header');
$r = check('/after-if/?x=1', 200, "after if\n",
           'directives after an if that matched still run');
is($r->{headers}{'x-if'}, 'if', 'the if block\'s add_header applies');
ok(!exists $r->{headers}{'x-loc'}, 'it replaces the location\'s add_header');
$r = check('/after-if/', 200, "after if\n", 'if not matched');
is($r->{headers}{'x-loc'}, 'loc', 'the location\'s add_header');
check('/if-try-files/a', 200, "fallback\n", 'try_files without the if');
check('/if-try-files/a?x=1', 404, undef,
      'an if that matched has no try_files (as in nginx)');
$r = check('/hdr-static/f.txt?x=1', 200, "static\n",
           'an if with only add_header: the static file is served');
is($r->{headers}{'x-if'}, '1', '... with the if block\'s header');
$r = check('/hdr-static/f.txt', 200, "static\n", 'the same, if not matched');
ok(!exists $r->{headers}{'x-if'}, '... without the header');
check('/iroot/a.txt', 200, "main root\n", 'root of the location');
check('/iroot/a.txt?alt=1', 200, "alt root\n", 'root inside if');
check('/ialias/x.txt', 200, "target file\n", 'alias with a capture');
check('/ialias/x.txt?x=1', 200, "target file\n",
      'alias with a capture, inherited by the if block');
check('/if-rewrite/?x=1', 200, "uri=/show args=from=if&x=1 is_args=?\n",
      'rewrite last inside if');
check('/if-rewrite/', 200, "no if\n", 'rewrite inside an if not matched');
check('/if-break/a?x=1', 404, undef, 'break inside if stops the script');
check('/if-break/a', 200, "not broken\n", 'break inside an if not matched');

# ---- rewrite_log ----
$t->mark_logs;
check('/logged/abc?v=yes', 200, "uri=/show args=l=abc&v=yes is_args=?\n",
      'rewrite_log on');
for my $re (qr/\[notice\] .*"\^yes\$" matches "yes"/,
            qr/\[notice\] .*"\^\/logged\/nomatch" does not match "\/logged\/abc"/,
            qr/\[notice\] .*"\^\/logged\/\(\.\*\)\$" matches "\/logged\/abc"/,
            qr/\[notice\] .*rewritten data: "\/show", args: "l=abc&v=yes"/) {
    ok($t->wait_for(sub { $t->log_contains($re) }), "rewrite_log line $re");
}
$r = check('/logged/redir?a=b', 302, undef, 'rewrite_log: a redirect');
ok($t->wait_for(sub { $t->log_contains(
    qr/\[notice\] .*rewritten redirect: "\/target\/r\?k=v&a=b"/) }),
   'rewrite_log: the redirect line');
check('/quiet/abc', 200, "uri=/show args=q=abc is_args=?\n", 'rewrite_log off');
ok(!$t->log_contains(qr/matches "\/quiet\//), 'rewrite_log off: no lines');

$t->stop;

# ---- configuration errors ----
sub conf_error {
    my ($name, $body, $msg) = @_;
    my $c = Test::Ringx->new;
    my $text = $c->write_config(<<"EOF");
events { worker_connections 64; }
http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
$body
    }
}
EOF
    my @lines = split /\n/, $text;
    my ($line) = grep { $lines[$_ - 1] =~ /# <-/ } 1 .. @lines;
    my ($rc, $out, $err) = $c->ringx('-t');
    is($rc, 1, "$name: -t fails");
    my $file = $c->conf_file;
    like($err, qr/\[emerg\] \Q$msg\E in \Q$file\E:$line$/m, "$name: $msg")
        or diag($err);
}

conf_error('if without parentheses', 'if $uri { }  # <-', 'invalid condition "$uri"');
conf_error('if without closing parenthesis', 'if ($uri { }  # <-',
           'invalid condition "($uri"');
conf_error('if with a bare word', 'if (foo) { }  # <-', 'invalid condition "foo"');
conf_error('if with an unknown operator', 'if ($uri ?? x) { }  # <-',
           'unexpected "??" in condition');
conf_error('if with too many words', 'if ($uri = a b) { }  # <-',
           'invalid condition "$uri"');
conf_error('if with an unknown file test', 'if (-q /x) { }  # <-',
           'invalid condition "-q"');
conf_error('if with an unknown variable', "if (\$nope) { }  # <-",
           'unknown "nope" variable');
conf_error('if regex error', 'location / { if ($uri ~ "(a") { } }  # <-',
           'pcre2_compile() failed: missing closing parenthesis in "(a"');
conf_error('rewrite regex error', 'rewrite ^(foo /x;  # <-',
           'pcre2_compile() failed: missing closing parenthesis in "^(foo"');
conf_error('rewrite flag', 'rewrite ^ /x bogus;  # <-', 'invalid parameter "bogus"');
conf_error('rewrite empty replacement', 'rewrite ^ "";  # <-', 'empty replacement');
conf_error('rewrite bad variable', 'rewrite ^ /x$;  # <-',
           'invalid variable name in "/x$"');
conf_error('set without $', 'set x 1;  # <-', 'invalid variable name "x"');
conf_error('set a built-in variable', 'set $uri 1;  # <-', 'the duplicate "uri" variable');
conf_error('set an unknown variable', 'set $a $nope;  # <-', 'unknown "nope" variable');
conf_error('add_header in a server if', 'if ($uri) { add_header X 1; }  # <-',
           '"add_header" directive is not allowed here');
conf_error('location in an if', 'location / { if ($uri) { location /a { } } }  # <-',
           '"location" directive is not allowed here');
conf_error('if in an if', 'location / { if ($uri) { if ($uri) { } } }  # <-',
           '"if" directive is not allowed here');
conf_error('break with arguments', 'break now;  # <-',
           'invalid number of arguments in "break" directive');

done_testing;
