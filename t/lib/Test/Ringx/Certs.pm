package Test::Ringx::Certs;

# Test::Ringx::Certs: certificates for the TLS tests, made at test time
# with the openssl command line in a directory (the test's prefix):
#
#   my $d = Test::Ringx::Certs::make($t->prefix . '/conf/certs', @names);
#
# makes ca.crt/ca.key (a test CA), for each NAME rsa-NAME.{crt,key} and
# ec-NAME.{crt,key} (CN and subjectAltName NAME, signed by the CA),
# client.{crt,key} (CN=client one, signed by the CA), self.{crt,key}
# (a self-signed client certificate), and returns the directory.
# skip_all() unless the openssl command is there.

use strict;
use warnings;
use File::Path qw(make_path);
use Test::More;

sub run {
    my (@cmd) = @_;
    my $out = qx{@cmd 2>&1};
    die "failed: @cmd\n$out" if $?;
    return $out;
}

sub signed {
    my ($d, $base, $cn, $keyopt, $san) = @_;
    run("openssl req -new -newkey $keyopt -nodes -keyout $d/$base.key"
        . " -out $d/$base.csr -subj '/CN=$cn/O=ringx tests' 2>/dev/null");
    open my $ext, '>', "$d/$base.ext" or die;
    print $ext "subjectAltName=DNS:$san\n" if $san;
    print $ext "basicConstraints=CA:FALSE\n";
    close $ext;
    run("openssl x509 -req -in $d/$base.csr -CA $d/ca.crt -CAkey $d/ca.key"
        . " -CAcreateserial -out $d/$base.crt -days 3 -extfile $d/$base.ext");
}

sub make {
    my ($d, @names) = @_;
    plan(skip_all => 'no openssl command') if system('openssl version >/dev/null 2>&1');
    make_path($d);
    my $ec = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1';
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1"
        . " -nodes -keyout $d/ca.key -out $d/ca.crt -days 3"
        . " -subj '/CN=ringx test CA' 2>/dev/null");
    for my $n (@names) {
        (my $file = $n) =~ s/\*/star/g;
        signed($d, "rsa-$file", $n, 'rsa:2048', $n);
        signed($d, "ec-$file", $n, 'ec -pkeyopt ec_paramgen_curve:prime256v1', $n);
    }
    signed($d, 'client', 'client one', 'ec -pkeyopt ec_paramgen_curve:prime256v1');
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1"
        . " -nodes -keyout $d/self.key -out $d/self.crt -days 3"
        . " -subj '/CN=self signed' 2>/dev/null");
    return $d;
}

# openssl s_client against 127.0.0.1:PORT with extra options; sends
# INPUT (if any; then it waits for the server to close) and returns
# everything it printed (stdout and stderr). Without INPUT it leaves once
# the handshake is done.
sub s_client {
    my ($port, $opts, $input) = @_;
    $input //= '';
    my $tmp = "/tmp/ringx-sclient-$$.in";
    open my $fh, '>', $tmp or die;
    print $fh $input;
    close $fh;
    my $wait = length $input ? '-ign_eof' : '';
    my $out = qx{timeout 10 openssl s_client -connect 127.0.0.1:$port $opts $wait < $tmp 2>&1};
    unlink $tmp;
    return $out;
}

1;
