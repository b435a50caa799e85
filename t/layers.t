#!/usr/bin/perl
# layers.t: the house's rules that the compiler does not check.
#
# - Layering: core < event < http < modules. No object of a lower layer
#   refers to a symbol that a higher layer defines (read from the objects
#   with nm, as ../shared/tools/layercheck.sh does), except the module
#   registry (core/modules.c) and the master starting the worker loop
#   (core/process.c -> rx_worker_loop). A lower layer offers a hook.
# - docs/ARCHITECTURE.md names every source file.
# - Size (STYLE.md 3.18, issue #17): no source file (core/ event/ http/
#   modules/, *.c and *.h) over 800 lines, no function over 80 lines, but
#   for the exceptions in %BIG, each with its reason. A function is found
#   as the house formats it: the name starts a line ("name(" at column 0,
#   the return type on the line above), the body opens with "{" at column 0
#   and ends at the next "}" at column 0. Its length is the line number of
#   that "}" minus the line number of that "{". An exception that is no
#   longer needed is reported (diag) so that it can be removed.

use strict;
use warnings;

use FindBin;
use File::Basename qw(basename dirname);
use Test::More;

my $ROOT = "$FindBin::Bin/..";
my @LAYERS = qw(core event http modules);
my %RANK = (core => 1, event => 2, http => 3, modules => 4);
my %ALLOWED = ('core/process.c' => { rx_worker_loop => 1 });
my $MAX_FILE = 800;
my $MAX_FUNC = 80;
my %BIG = (
    # files: path => reason; functions: path:name => reason (none today)
);

my @sources = map { s{^\Q$ROOT\E/}{}r } map { glob("$ROOT/$_/*.c") } @LAYERS;

# --- layering ----------------------------------------------------------------------

# the objects objs/ringx was linked from (objs/.build-mode names the mode;
# the other mode's objects may be stale)
open my $mf, '<', "$ROOT/objs/.build-mode"
    or plan skip_all => 'no objects to read (build first: make)';
my ($mode) = split ' ', scalar <$mf>;
my @builds = ($mode eq 'asan' ? 'objs/build-asan' : 'objs/build');
my ($nm) = grep { -x } map { "$_/nm" } split /:/, $ENV{PATH} // "";
plan skip_all => 'nm not found (Debian: binutils)' unless $nm;

for my $build (@builds) {
    my (%owner, %undef);
    for my $src (@sources) {
        (my $obj = "$ROOT/$build/$src") =~ s/\.c$/.o/;
        next unless -f $obj;               # configured out
        my $layer = dirname($src);
        for (`$nm --defined-only -g '$obj'`) {
            my (undef, $type, $sym) = split;
            $owner{$sym} = $layer if $sym && $type =~ /^[TDBR]$/;
        }
        $undef{$src} = [ map { (split)[1] } grep { /^\s+U / } `$nm -u '$obj'` ];
    }
    my @up;
    for my $src (sort keys %undef) {
        my $layer = dirname($src);
        next if $src eq 'core/modules.c';    # the registry names everything
        for my $sym (@{ $undef{$src} }) {
            my $to = $owner{$sym} or next;
            next unless $RANK{$to} > $RANK{$layer};
            next if $ALLOWED{$src} && $ALLOWED{$src}{$sym};
            push @up, "$src -> $to: $sym";
        }
    }
    ok(!@up, "$build: no lower layer calls a higher one by name")
        or diag(join "\n", @up);
    ok(scalar(keys %owner) > 100, "$build: the objects were read")
        or diag(scalar(keys %owner) . ' symbols');
}

# --- docs/ARCHITECTURE.md names every source file ------------------------------------

open my $fh, '<', "$ROOT/docs/ARCHITECTURE.md" or die "ARCHITECTURE.md: $!";
my $arch = do { local $/; <$fh> };
my @missing = grep { my $b = basename($_); $arch !~ /\b\Q$b\E\b/ } @sources;
ok(!@missing, 'docs/ARCHITECTURE.md names every source file')
    or diag("not named: @missing");

# --- size: files under 800 lines, functions under 80 ---------------------------------

# [path, lines] of each file, [path:name, length] of each function
sub measure {
    my ($path) = @_;
    my ($n, $name, $open, @funcs) = (0);

    open my $fh, '<', "$ROOT/$path" or die "$path: $!";
    while (my $line = <$fh>) {
        $n++;
        if ($line =~ /^(\w+)\(/) {
            $name = $1;
        } elsif ($line =~ /^\{/) {
            $open = $n;
        } elsif ($line =~ /^\}/ && defined $open) {
            push @funcs, ["$path:" . ($name // "?line$open"), $n - $open]
                if defined $name;
            undef $open;
            undef $name;
        }
    }
    return ($n, @funcs);
}

my (@over, %used, $nfuncs);
for my $path (map { s{^\Q$ROOT\E/}{}r } map { glob("$ROOT/$_/*.[ch]") } @LAYERS) {
    my ($lines, @funcs) = measure($path);
    for ([$path, $lines, $MAX_FILE], map { [@$_, $MAX_FUNC] } @funcs) {
        my ($what, $len, $max) = @$_;
        next unless $len > $max;
        if ($BIG{$what}) {
            $used{$what} = 1;
        } else {
            push @over, "$what: $len lines (at most $max)";
        }
    }
    $nfuncs += @funcs;
}
ok($nfuncs > 1000, "size: functions found ($nfuncs)");
ok(!@over, 'size: no file over 800 lines, no function over 80 (but %BIG)')
    or diag(join "\n", @over);
diag("size: exception no longer needed, remove it from %BIG: $_")
    for grep { !$used{$_} } sort keys %BIG;

done_testing;
