#!/bin/bash
# t/bench/ktls_cpu.sh: the worker's CPU time per MiB of a large file sent
# over TLS, kTLS (sendfile, the kernel encrypts) against user space (read
# through the ring, OpenSSL encrypts), in one ringx, one server block each
# (`ssl_conf_command Options -KTLS` on the second). Needs a kernel with
# kTLS: on a host without it, run it under Debian's kernel in qemu:
#
#   t/vm/run t/bench/ktls_cpu.sh [MiB] [rounds]
#
# Under software emulation (qemu TCG) absolute times mean little; both
# paths run in the same VM, alternating, so their ratio is the figure.
# Prints one line per round and the medians: the worker's own CPU, and
# all CPUs' busy time (the kernel may encrypt in its own threads).
set -euo pipefail

MIB=${1:-64}
ROUNDS=${2:-5}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${RINGX_BIN:-$HERE/objs/ringx}
P=$(mktemp -d /tmp/ringx-ktls-cpu.XXXXXX)
trap 'kill $(cat "$P/logs/ringx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$P"' EXIT

chmod 755 "$P"   # the worker runs as nobody
mkdir -p "$P/conf" "$P/logs" "$P/html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$P/conf/key.pem" -out "$P/conf/cert.pem" -days 2 \
    -subj /CN=localhost 2>/dev/null
head -c $((MIB * 1048576)) /dev/urandom >"$P/html/big.bin"
cat >"$P/conf/ringx.conf" <<EOF
daemon on;
master_process on;
worker_processes 1;
pid logs/ringx.pid;
error_log logs/error.log notice;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    root html;
    ssl_certificate cert.pem;
    ssl_certificate_key key.pem;
    server { listen 127.0.0.1:18443 ssl; }
    server { listen 127.0.0.1:18444 ssl; ssl_conf_command Options -KTLS; }
}
EOF
"$BIN" -p "$P/" -c conf/ringx.conf
for _ in $(seq 50); do [ -s "$P/logs/ringx.pid" ] && break; sleep 0.1; done
master=$(cat "$P/logs/ringx.pid")
worker=""
for _ in $(seq 50); do
    worker=$(pgrep -P "$master" | head -1) && [ -n "$worker" ] && break
    sleep 0.1
done
[ -n "$worker" ] || { echo "no worker" >&2; exit 1; }

ticks() { awk '{ print $14 + $15 }' "/proc/$worker/stat"; }
# every CPU's busy time: with kTLS the kernel may encrypt in its own
# threads (cryptd), which the worker's figure would miss
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK)

# µs of CPU per MiB for one download from port $1: "worker system-wide"
one() {
    local t0 t1 b0 b1
    t0=$(ticks); b0=$(busy)
    curl -sk --tlsv1.3 -o /dev/null -w "%{http_code} %{size_download}\n" \
        "https://127.0.0.1:$1/big.bin" >>"$P/curl.log"
    t1=$(ticks); b1=$(busy)
    echo "$(( (t1 - t0) * 1000000 / hz / MIB )) $(( (b1 - b0) * 1000000 / hz / MIB ))"
}

before=$(awk '/TlsTxSw/ { print $2 }' /proc/net/tls_stat 2>/dev/null || echo 0)
kw=(); ks=(); uw=(); us=()
for r in $(seq "$ROUNDS"); do
    set -- $(one 18443); kw+=("$1"); ks+=("$2")
    set -- $(one 18444); uw+=("$1"); us+=("$2")
    echo "round $r: kTLS worker ${kw[-1]} / all ${ks[-1]} µs/MiB; user space worker ${uw[-1]} / all ${us[-1]} µs/MiB"
done
after=$(awk '/TlsTxSw/ { print $2 }' /proc/net/tls_stat 2>/dev/null || echo 0)
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "kernel $(uname -r); ${MIB} MiB x ${ROUNDS} rounds; kTLS connections counted by the kernel: $((after - before))"
cat "$P/curl.log" | sort | uniq -c
echo "median µs of CPU per MiB: kTLS worker $(median "${kw[@]}"), all CPUs $(median "${ks[@]}"); user space worker $(median "${uw[@]}"), all CPUs $(median "${us[@]}")"
echo "(all CPUs: curl's decryption and the VM's other work included, the same for both)"
