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
