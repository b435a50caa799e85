#!/usr/bin/perl
# layers.t: the house's rules that the compiler does not check.
#
# - Layering: core < event < http < modules. No object of a lower layer
#   refers to a symbol that a higher layer defines (read from the objects
#   with nm, as ../shared/tools/layercheck.sh does), except the module
#   registry (core/modules.c) and the master starting the worker loop
#   (core/process.c -> rx_worker_loop). A lower layer offers a hook.
# - docs/ARCHITECTURE.md names every source file.

use strict;
use warnings;

use FindBin;
use File::Basename qw(basename dirname);
use Test::More;

my $ROOT = "$FindBin::Bin/..";
my @LAYERS = qw(core event http modules);
my %RANK = (core => 1, event => 2, http => 3, modules => 4);
my %ALLOWED = ('core/process.c' => { rx_worker_loop => 1 });

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

done_testing;
