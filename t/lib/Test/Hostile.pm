package Test::Hostile;

# Test::Hostile: the shared harness of t/hostile_*.t. One ringx whose
# main location proxies (HTTP/1.1, keepalive pool) to a recording
# Test::Upstream, plus static root and alias locations; and a case runner
# that sends a hostile request on a raw connection with a well-formed
# request pipelined behind it, then checks what the client got and what
# the upstream received.
#
#   my $h = Test::Hostile->new(http => '...extra http{} text...',
#                              server => '...extra server{} text...');
#   $h->case('CL.TE', $raw, 400);             # rejected: closed, nothing
#                                             # reached the upstream
#   $h->case('chunked', $raw, 200, up => [['POST', '/x', 'abc']]);
#                                             # accepted: the upstream got
#                                             # exactly these, then the
#                                             # pipelined follow-up
#   $h->done;                                 # stops both, checks logs
#
# case(NAME, RAW, STATUS, OPTS): STATUS is the status of the first
# response, or 'close' (the connection is closed without a response).
# For a status >= 400 (or 'close') the connection must be closed and the
# pipelined follow-up never served; otherwise the follow-up must be
# answered by the upstream's echo of /follow/N. OPTS:
#   up => [[METHOD, URI, BODY], ...]   what the upstream must receive
#                                      before the follow-up (default none)
#   port => N                          the ringx port (default 0)
#   follow => 0                        no pipelined follow-up
#   check => sub { my ($r) = @_ }      more checks on the first response
#   keep => 1                          an error status that keeps the
#                                      connection (a 404): the follow-up
#                                      must be served
# Every case ends with a probe on a new connection through the same
# keepalive pool: it must get its own echo, so nothing smuggled is left
# on a pooled upstream connection. The upstream must never have seen a
# request it could not parse ("bad" events), nor a head with a bare CR or
# LF, a NUL, or a line that starts with a blank.

use strict;
use warnings;

use Test::More;
use Test::Ringx;
use Test::Upstream;

sub new {
    my ($class, %o) = @_;
    my $up = Test::Upstream->new;
    $up->start;
    my $UP = $up->addr;
    my $t = Test::Ringx->new;
    my $http = $o{http} // '';
    my $server = $o{server} // '';
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    access_log off;
    client_header_timeout 5s;
    client_body_timeout 5s;
    upstream pool { server $UP; keepalive 4; }
    proxy_http_version 1.1;
    proxy_set_header Connection "";
$http
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { proxy_pass http://pool; }
        location /p/ { proxy_pass http://pool/base/; }
        location /static/ { root %%PREFIX%%/html; }
        location /al/ { alias %%PREFIX%%/html/aliased/; }
$server
    }
}
EOF
    $t->write_file('html/static/ok.txt', "static ok\n");
    $t->write_file('html/aliased/ok.txt', "alias ok\n");
    $t->write_file('html/secret.txt', "SECRET in html\n");
    $t->write_file('secret.txt', "SECRET in prefix\n");
    $t->run;
    my ($worker) = $t->wait_workers(1);
    return bless { t => $t, up => $up, n => 0, worker => $worker }, $class;
}

sub t  { $_[0]{t} }
sub up { $_[0]{up} }

# The upstream's echo of a request as a hashref, or undef.
sub echo_of {
    my ($r) = @_;
    return undef unless $r && $r->{status} == 200 && $r->{body} =~ /^method: /;
    return Test::Upstream::parse_echo($r->{body});
}

# Raw heads the upstream saw must be clean HTTP/1.1 framing.
sub check_upstream_clean {
    my ($self, $name) = @_;
    my @ev = $self->{up}->events;
    my @bad = grep { $_->{type} eq 'bad' } @ev;
    ok(!@bad, "$name: the upstream parsed everything it got")
        or diag(explain(\@bad));
    for my $r (grep { $_->{type} eq 'request' } @ev) {
        my $raw = $r->{raw} // '';
        (my $lines = $raw) =~ s/\r\n/\n/g;
        if ($lines =~ /[\r\0]/ || $raw =~ /(?<!\r)\n/ || $lines =~ /\n[ \t]/) {
            fail("$name: a clean head upstream");
            diag(explain($raw));
            return;
        }
    }
}

sub case {
    my ($self, $name, $raw, $status, %o) = @_;
    my ($t, $up) = @{$self}{qw(t up)};
    my $n = ++$self->{n};
    my $follow = "GET /follow/$n HTTP/1.1\r\nHost: localhost\r\n\r\n";
    my $want_follow = !(exists $o{follow} && !$o{follow});

    $up->reset;
    my $c = $t->raw($t->port($o{port} // 0));
    ok($c, "$name: connected") or return;
    $c->send($raw . ($want_follow ? $follow : ''));
    my $r = $c->read_response(timeout => 3);
    my $reject = $status eq 'close' || ($status >= 400 && !$o{keep});

    if ($status eq 'close') {
        ok(!$r, "$name: no response") or diag($r->{head});
    } else {
        ok($r, "$name: a response") and
        is($r->{status}, $status, "$name: status $status")
            or diag($r ? $r->{raw} : 'none');
    }
    $o{check}->($r) if $o{check} && $r;

    my $second;
    if ($reject) {
        is($r->{headers}{connection}, 'close', "$name: Connection: close")
            if $r;
        ok($c->wait_closed(3), "$name: connection closed");
        unlike($c->buffer, qr{follow/$n|^HTTP/}m,
               "$name: the pipelined request not served");
    } elsif ($want_follow) {
        $second = $c->read_response(timeout => 3);
        my $e = echo_of($second);
        is($e && $e->{uri}, "/follow/$n",
           "$name: the pipelined request answered on the same connection")
            or diag($second ? $second->{raw} : 'no second response');
    }
    $c->close;

    # the probe: a new connection, the same pool
    my $p = $t->raw($t->port(0));
    $p->send("GET /probe/$n HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $pr = $p->read_response(timeout => 3);
    my $pe = echo_of($pr);
    is($pe && $pe->{uri}, "/probe/$n", "$name: probe answered by its own echo")
        or diag($pr ? $pr->{raw} : 'no probe response');
    $p->close;

    my @want = map { [@$_] } @{ $o{up} // [] };
    push @want, ['GET', "/follow/$n", ''] if !$reject && $want_follow;
    push @want, ['GET', "/probe/$n", ''];
    my @got = map { [$_->{method}, $_->{uri}, $_->{body} // ''] } $up->requests;
    is_deeply(\@got, \@want, "$name: the upstream received exactly what it should")
        or diag(explain(\@got));
    $self->check_upstream_clean($name);
    return $r;
}

# A log line the cases provoked.
sub logged {
    my ($self, $re, $name) = @_;
    ok($self->{t}->wait_for(sub { $self->{t}->log_contains($re) }, 2), $name);
}

sub done {
    my ($self) = @_;
    is_deeply([ $self->{t}->worker_pids ], [ $self->{worker} ],
              'the worker survived every case');
    $self->{t}->stop;
    $self->{up}->stop;
}

1;
