#!/usr/bin/perl

# Every directive in a module's command table is documented in
# docs/directives.md. Command table entries are written as
#     { "worker_processes", RX_MAIN_CONF | ...
# (the name and the first RX_ flag on the same line, or the flags on the
# next line; the first flag is a context or RX_CONF_ flag, which keeps
# enum tables such as { "debug", RX_LOG_DEBUG } out). Needs no binary.

use strict;
use warnings;

use FindBin;
use Test::More;

my $root = "$FindBin::Bin/..";

my %where;     # directive => first file:line it was found at
my @upstream_shared;   # the names of RX_HTTP_UPSTREAM_COMMANDS, without prefix
for my $file (sort map { glob "$root/$_/*.c" } qw(core event http modules)) {
    open(my $fh, '<', $file) or die "$file: $!\n";
    my $src = do { local $/; <$fh> };
    close $fh;
    (my $rel = $file) =~ s{^\Q$root\E/}{};
    while ($src =~ /^[ \t]*\{[ \t]*"([a-z_0-9]+)",\s*RX_\w*CONF/mg) {
        my $line = 1 + (substr($src, 0, $-[0]) =~ tr/\n//);
        $where{$1} //= "$rel:$line";
    }
}

# The directives the upstream protocols share are written once, in
# http/http_upstream.h's RX_HTTP_UPSTREAM_COMMANDS(prefix, ...), each as
# RX_HTTP_UPSTREAM_CMD(p, "name", ...) or RX_HTTP_UPSTREAM_ACCEPTED(p,
# "name"); a protocol's table takes them with its prefix.
{
    my $hdr = "$root/http/http_upstream.h";
    open(my $fh, '<', $hdr) or die "$hdr: $!\n";
    my $src = do { local $/; <$fh> };
    close $fh;
    my ($macro) = $src =~ /^(#define RX_HTTP_UPSTREAM_COMMANDS\(.*?)(?=^\S)/ms;
    my @shared = ($macro // '') =~ /RX_HTTP_UPSTREAM_(?:CMD|ACCEPTED)\(p,\s*"([a-z_0-9]+)"/g;
    @upstream_shared = @shared;
    cmp_ok(scalar @shared, '>=', 10, 'the shared upstream directives were read')
        or diag('found: ' . join(' ', @shared));
    for my $file (sort map { glob "$root/modules/*.c" } 1) {
        open(my $m, '<', $file) or die "$file: $!\n";
        my $msrc = do { local $/; <$m> };
        close $m;
        (my $rel = $file) =~ s{^\Q$root\E/}{};
        while ($msrc =~ /RX_HTTP_UPSTREAM_COMMANDS\("([a-z_]+)"/g) {
            my $prefix = $1;
            $where{"$prefix$_"} //= "$rel (shared table)" for @shared;
        }
    }
}

# What fastcgi, uwsgi and scgi share beyond that: modules/cgi_upstream.h's
# RX_HTTP_CGI_COMMANDS(prefix, ...), entries { p "name", ... } and the
# engine's table (RX_HTTP_UPSTREAM_COMMANDS(p, ...)) with the same prefix.
{
    my $hdr = "$root/modules/cgi_upstream.h";
    open(my $fh, '<', $hdr) or die "$hdr: $!\n";
    my $src = do { local $/; <$fh> };
    close $fh;
    my ($macro) = $src =~ /^(#define RX_HTTP_CGI_COMMANDS\(.*?)(?=^\S)/ms;
    my @own = ($macro // '') =~ /\{\s*p\s+"([a-z_0-9]+)"/g;
    my $engine = ($macro // '') =~ /RX_HTTP_UPSTREAM_COMMANDS\(p,/;
    cmp_ok(scalar @own, '>=', 2, 'the CGI protocols\' directives were read')
        or diag('found: ' . join(' ', @own));
    ok $engine, '... with the engine\'s table';
    for my $file (sort map { glob "$root/modules/*.c" } 1) {
        open(my $m, '<', $file) or die "$file: $!\n";
        my $msrc = do { local $/; <$m> };
        close $m;
        (my $rel = $file) =~ s{^\Q$root\E/}{};
        while ($msrc =~ /RX_HTTP_CGI_COMMANDS\("([a-z_]+)"/g) {
            my $prefix = $1;
            $where{"$prefix$_"} //= "$rel (CGI table)" for @own;
            $where{"$prefix$_"} //= "$rel (shared table)" for $engine ? @upstream_shared : ();
        }
    }
}

# The cache's directives, the same way: http/http_cache.h's
# RX_HTTP_CACHE_COMMANDS(prefix, ...), each RX_HTTP_CACHE_CMD(p, "name", ...)
# or RX_HTTP_CACHE_REFUSED(p, "name").
{
    my $hdr = "$root/http/http_cache.h";
    open(my $fh, '<', $hdr) or die "$hdr: $!\n";
    my $src = do { local $/; <$fh> };
    close $fh;
    my ($macro) = $src =~ /^(#define RX_HTTP_CACHE_COMMANDS\(.*?)(?=^\S)/ms;
    my @shared = ($macro // '') =~ /RX_HTTP_CACHE_(?:CMD|REFUSED)\(p,\s*"([a-z_0-9]+)"/g;
    cmp_ok(scalar @shared, '>=', 4, 'the cache directives were read')
        or diag('found: ' . join(' ', @shared));
    for my $file (sort map { glob "$root/modules/*.c" } 1) {
        open(my $m, '<', $file) or die "$file: $!\n";
        my $msrc = do { local $/; <$m> };
        close $m;
        (my $rel = $file) =~ s{^\Q$root\E/}{};
        while ($msrc =~ /RX_HTTP_CACHE_COMMANDS\("([a-z_]+)"/g) {
            my $prefix = $1;
            $where{"$prefix$_"} //= "$rel (cache table)" for @shared;
        }
    }
}

my @names = sort keys %where;
cmp_ok(scalar @names, '>=', 10, 'found at least 10 directives in the command tables')
    or diag('found: ' . join(' ', @names));

my $doc_file = "$root/docs/directives.md";
my $doc = '';
if (open(my $fh, '<', $doc_file)) {
    local $/;
    $doc = <$fh>;
    close $fh;
}
ok(length $doc, 'docs/directives.md exists and is not empty');

my @missing = grep {
    my $n = $_;
    $doc !~ /`\Q$n\E`/ && $doc !~ /^#+[ \t]+\Q$n\E\b/m;
} @names;

ok(!@missing, 'every directive is documented in docs/directives.md')
    or diag("undocumented (defined at):\n"
            . join("\n", map { "  $_ ($where{$_})" } @missing));

done_testing;
