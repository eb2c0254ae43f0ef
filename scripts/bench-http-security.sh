#!/usr/bin/env bash
# What TLS and logins cost a scrape: the daemon's own CPU time (utime + stime from /proc) per
# /metrics request, for plain HTTP, HTTPS, and HTTPS with basic auth, each two ways: a new
# connection per scrape (curl per request: a TLS handshake each time) and one kept-alive
# connection (one curl for all, as Prometheus scrapes). The daemon has no camera (its CPU is the
# HTTP server's); the modes run in alternation, R rounds, and the median per mode is printed.
# Then bcrypt's cost, paid once per credential: one verification at cost 10 with libxcrypt, the
# library the daemon calls (through Python's crypt module, which wraps it: the daemon's own
# check is inside the process and has no command of its own).
#   scripts/bench-http-security.sh [--scrapes 200] [--rounds 3]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scrapes=200 rounds=3
while (($#)); do
  case "$1" in
    --scrapes) scrapes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "bench-http-security: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${VIGIL_BUILD_DIR:-build}
work=$(mktemp -d)
pid=""
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2> /dev/null
chmod 600 "$work/key.pem"
hash=$(printf 'bench\n' | "$build/vigil" passwd bench | cut -d' ' -f2)
echo "" > "$work/plain.yml"
printf 'tls_server_config: {cert_file: cert.pem, key_file: key.pem}\n' > "$work/tls.yml"
printf 'tls_server_config: {cert_file: cert.pem, key_file: key.pem}\nbasic_auth_users: {bench: "%s"}\n' \
  "$hash" > "$work/login.yml"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run MODE WAY: prints the daemon's CPU milliseconds per scrape.
run() {
  local mode=$1 way=$2 port url args=() before after
  port=$(scripts/free-port.sh)
  printf 'version: 1\nnode: bench\nhttp: {listen: "127.0.0.1:%s", web_config: %s.yml, metrics_need_login: %s}\ncameras: []\n' \
    "$port" "$mode" "$([[ $mode == login ]] && echo true || echo false)" > "$work/cameras.yaml"
  "$build/vigil" run --config "$work/cameras.yaml" > "$work/vigil.log" 2>&1 &
  pid=$!
  url=http://127.0.0.1:$port/metrics
  [[ $mode != plain ]] && url=https://localhost:$port/metrics && args+=(--cacert "$work/cert.pem")
  [[ $mode == login ]] && args+=(-u bench:bench)
  for _ in $(seq 100); do
    curl -s -o /dev/null "${args[@]}" "$url" && break
    sleep 0.1
  done
  curl -s -o /dev/null "${args[@]}" "$url"  # the login verified (bcrypt) before the count
  sleep 1
  before=$(cpu_ticks $pid)
  if [[ $way == new ]]; then
    for _ in $(seq "$scrapes"); do curl -s -o /dev/null "${args[@]}" "$url"; done
  else
    local urls=()
    for _ in $(seq "$scrapes"); do urls+=("$url"); done
    curl -s "${args[@]}" "${urls[@]}" > /dev/null
  fi
  after=$(cpu_ticks $pid)
  kill $pid && wait $pid 2> /dev/null || true
  pid=""
  awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$scrapes" \
    'BEGIN { printf "%.3f\n", t * 1000 / hz / n }'
}

declare -A results
for round in $(seq "$rounds"); do
  for way in new keepalive; do
    for mode in plain tls login; do
      results[$mode.$way]+="$(run $mode $way) "
    done
  done
  echo "round $round done" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
echo "daemon CPU ms per /metrics scrape, median of $rounds alternated rounds of $scrapes scrapes"
printf '%-10s %-22s %-22s\n' mode "new connection each" "one kept-alive"
for mode in plain tls login; do
  printf '%-10s %-22s %-22s\n' "$mode" "$(echo "${results[$mode.new]}" | median)" \
    "$(echo "${results[$mode.keepalive]}" | median)"
done
python3 -W ignore - "$hash" << 'EOF'
import crypt, statistics, sys, time
hash = sys.argv[1]
times = []
for _ in range(9):
    start = time.process_time()
    assert crypt.crypt("bench", hash) == hash
    times.append((time.process_time() - start) * 1000)
print(f"bcrypt cost 10, one verification (libxcrypt, CPU ms, median of 9): {statistics.median(times):.1f}")
EOF
