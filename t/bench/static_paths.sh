#!/bin/sh
# static_paths.sh: the three ways ringx sends a file body, side by side:
#   read      sendfile off: read through the ring into memory, then sendmsg
#   splice    sendfile on; sendfile_splice on: file -> pipe -> socket splices
#   sendfile  sendfile on: sendfile(2) from the worker, POLLOUT on the ring
#   nginx     /usr/sbin/nginx with sendfile on; tcp_nopush on (if installed)
# on 30 B, 16 KiB, 1 MiB and 100 MiB files (also 64k and 256k when named
# in SIZES, to find the crossover) (sendfile_min_size 0, so every
# size takes the path named). One worker pinned to CPU 0, wrk on CPU 1.
# Per run: requests/s, MB/s, and the worker's CPU time per request
# (utime + stime of /proc/WORKER/stat, all its threads, io-wq included,
# before and after the run). The servers run side by side on their own
# ports and the runs alternate between them. Prints one line per run, then
# the medians.
#
#   t/bench/static_paths.sh                        # everything, 5 runs x 5 s
#   RUNS=3 SECS=4 SIZES="1m 100m" PATHS="read sendfile" t/bench/static_paths.sh
#   RINGX_BIN=objs/ringx NGINX_BIN=none t/bench/static_paths.sh
#
# Also prints the load average and the machine's busy CPU % during each
# run (from /proc/stat), so noisy runs can be told apart: on a shared
# machine compare CPU per request, not requests/s.
set -eu

RINGX_BIN=${RINGX_BIN:-$(pwd)/objs/ringx}
NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
RUNS=${RUNS:-5}
SECS=${SECS:-5}
SIZES=${SIZES:-"30 16k 1m 100m"}
PATHS=${PATHS:-"read splice sendfile nginx"}
PORT=${PORT:-18990}
SRV_CPU=${SRV_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
TMP=$(mktemp -d /tmp/static_paths.XXXXXX)
trap 'stop_server; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

PIDS=
stop_server() {     # every server started
    for pid in $PIDS; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=
}

chmod 755 "$TMP"     # workers may run as nobody
mkdir -p "$TMP/html"
head -c 30 /dev/urandom > "$TMP/html/30.bin"
head -c 16384 /dev/urandom > "$TMP/html/16k.bin"
head -c 65536 /dev/urandom > "$TMP/html/64k.bin"
head -c 262144 /dev/urandom > "$TMP/html/256k.bin"
head -c 1048576 /dev/urandom > "$TMP/html/1m.bin"
head -c 104857600 /dev/urandom > "$TMP/html/100m.bin"
cat "$TMP"/html/*.bin > /dev/null          # warm the page cache

conf() {    # $1 = path, $2 = port: writes $TMP/$1/conf/ringx.conf
    case $1 in
    read)     extra="sendfile off;" ;;
    splice)   extra="sendfile on; tcp_nopush on; sendfile_splice on; sendfile_min_size 0;" ;;
    sendfile) extra="sendfile on; tcp_nopush on; sendfile_min_size 0;" ;;
    nginx)    extra="sendfile on; tcp_nopush on;" ;;
    esac
    temps=
    if [ "$1" = nginx ]; then
        # nginx's compiled-in temp paths may not be writable
        temps="client_body_temp_path /tmp; proxy_temp_path /tmp; fastcgi_temp_path /tmp; uwsgi_temp_path /tmp; scgi_temp_path /tmp;"
    fi
    mkdir -p "$TMP/$1/conf" "$TMP/$1/logs"
    ln -sfn "$TMP/html" "$TMP/$1/html"
    cat > "$TMP/$1/conf/ringx.conf" <<EOF
daemon off; master_process on; worker_processes 1;
error_log logs/error.log;
pid logs/srv.pid;
events { worker_connections 4096; }
http {
    access_log off; keepalive_requests 100000;
    default_type application/octet-stream;
    $temps
    $extra
    server { listen 127.0.0.1:$2; root html; }
}
EOF
}

# Every server runs at once, each on its own port, all pinned to SRV_CPU;
# the runs alternate between them (A B C A B C ...), so that drift in the
# machine's load hits every path alike.
start_server() {    # $1 = path, $2 = port; sets WORKER
    conf "$1" "$2"
    bin=$RINGX_BIN
    [ "$1" = nginx ] && bin=$NGINX_BIN
    taskset -c "$SRV_CPU" "$bin" -p "$TMP/$1/" -c conf/ringx.conf 2>"$TMP/$1/logs/stderr" &
    master=$!
    PIDS="$PIDS $master"
    i=0
    while [ $i -lt 50 ]; do
        WORKER=$(pgrep -P "$master" | head -1 || true)
        if [ -n "$WORKER" ] && curl -s -o /dev/null "http://127.0.0.1:$2/30.bin"; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "server for $1 did not start:" >&2
    cat "$TMP/$1/logs/stderr" "$TMP/$1/logs/error.log" >&2 || true
    exit 1
}

ticks() {   # utime + stime of a process, all threads (after the comm,
            # which may hold spaces)
    sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

busy() {    # total non-idle jiffies of the machine
    awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

conns() {
    case $1 in
    30|16k|64k) echo 50 ;;
    256k|1m) echo 10 ;;
    100m) echo 2 ;;
    esac
}

HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
RESULTS=$TMP/results
: > "$RESULTS"

echo "# $(date -u '+%F %T') UTC, $(uname -r), $NCPU CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# size path run req/s MB/s us/req busy%"
RUNPATHS=
port=$PORT
for path in $PATHS; do
    if [ "$path" = nginx ] && [ ! -x "$NGINX_BIN" ]; then
        continue
    fi
    start_server "$path" "$port"
    eval "PORT_$path=$port WORKER_$path=$WORKER"
    RUNPATHS="$RUNPATHS $path"
    port=$((port + 1))
done

for size in $SIZES; do
    c=$(conns "$size")
    bytes=$(stat -c %s "$TMP/html/$size.bin")
    for path in $RUNPATHS; do
        eval "p=\$PORT_$path"
        code=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "http://127.0.0.1:$p/$size.bin")
        if [ "$code" != "200 $bytes" ]; then
            echo "$path: GET /$size.bin gave $code" >&2
            exit 1
        fi
        taskset -c "$WRK_CPU" wrk -t1 -c"$c" -d1s "http://127.0.0.1:$p/$size.bin" >/dev/null 2>&1
    done
    run=1
    while [ $run -le "$RUNS" ]; do
        for path in $RUNPATHS; do
            eval "p=\$PORT_$path w=\$WORKER_$path"
            t0=$(ticks "$w"); b0=$(busy); w0=$(date +%s%N)
            out=$(taskset -c "$WRK_CPU" wrk -t1 -c"$c" -d"${SECS}s" --timeout 10s \
                  "http://127.0.0.1:$p/$size.bin")
            t1=$(ticks "$w"); b1=$(busy); w1=$(date +%s%N)
            reqs=$(echo "$out" | awk '/requests in/ { print $1 }')
            echo "$out" | awk -v size="$size" -v path="$path" -v run="$run" \
                -v reqs="$reqs" -v dt=$((t1 - t0)) -v hz="$HZ" -v bytes="$bytes" \
                -v busy=$((b1 - b0)) -v wall=$(((w1 - w0) / 1000000)) -v ncpu="$NCPU" '
                /^Requests\/sec:/ { rps = $2 }
                END {
                    us = reqs > 0 ? dt / hz * 1e6 / reqs : 0
                    printf "%s %s %d %.0f %.1f %.1f %.0f\n", size, path, run, rps,
                           rps * bytes / 1048576, us, busy / hz / (wall / 1000) / ncpu * 100
                }' | tee -a "$RESULTS"
        done
        run=$((run + 1))
    done
done

echo
echo "| size | path | req/s median (min-max) | MB/s | CPU us/req median (min-max) | machine busy % |"
echo "|---|---|---:|---:|---:|---:|"
col() {     # the values of column $3 for size $1, path $2, sorted
    awk -v s="$1" -v p="$2" -v c="$3" '$1 == s && $2 == p { print $c }' "$RESULTS" | sort -g
}
med() { awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
first() { head -1; }
last() { tail -1; }
for size in $SIZES; do
    for path in $PATHS; do
        [ -n "$(col "$size" "$path" 4)" ] || continue
        printf '| %s | %s | %s (%s-%s) | %s | %s (%s-%s) | %s |\n' "$size" "$path" \
            "$(col "$size" "$path" 4 | med)" "$(col "$size" "$path" 4 | first)" \
            "$(col "$size" "$path" 4 | last)" "$(col "$size" "$path" 5 | med)" \
            "$(col "$size" "$path" 6 | med)" "$(col "$size" "$path" 6 | first)" \
            "$(col "$size" "$path" 6 | last)" "$(col "$size" "$path" 7 | med)"
    done
done
