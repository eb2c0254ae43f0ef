#!/usr/bin/env bash
# Soak: the real daemon with 4 cameras (three walking clips as looped files, one as an MJPEG
# camera over HTTP that hangs up every --reconnect-every seconds: scripts/mjpeg-camera.py), a
# real mosquitto with a subscriber on everything, and a real Prometheus scraping /metrics every
# 5 s, for a while; every --reload-every seconds the configuration is rewritten and SIGHUP
# sent, alternating a camera's detection rate (that camera restarts) and the detector's NMS
# threshold (a new detector loads in the background and is swapped in).
# Samples the daemon's resident memory, open file descriptors and threads every 10 s and
# checks, at the end:
#   - the live heap (vigil_heap_in_use_bytes), descriptors and threads are within 5% of their
#     values after warm-up (the first fifth of the run, at least 60 s), and resident memory has
#     grown by at most 10% (the allocator's retention, below), i.e. nothing grows with time; each
#     value is the median of a minute of samples (the first after warm-up, the last), so one
#     sample taken mid-burst decides nothing;
#   - no MQTT message was dropped (vigil_mqtt_messages_dropped_total 0) and the subscriber got
#     at least as many as Vigil counts as delivered;
#   - Prometheus scraped it successfully the whole time (up == 1 at every scrape);
#   - the MJPEG camera reconnected as often as it was hung up on (one fewer at most), and every
#     reload was applied and every detector change came into use.
#   scripts/soak.sh [--minutes 60] [--reconnect-every 60] [--reload-every 300] [--out DIR]
#   (CI runs --minutes 5 --reload-every 100)
# Exit 0 when every check holds, 1 otherwise; the samples stay in DIR/samples.csv, with the
# daemon's live heap (vigil_heap_in_use_bytes) beside the resident size: RSS growing while the
# live heap stays flat is the allocator keeping memory, not a leak.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

minutes=60 out="" reconnect_every=60 reload_every=300
while (($#)); do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --reconnect-every) reconnect_every=$2; shift 2 ;;
    --reload-every) reload_every=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "soak: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${VIGIL_BUILD_DIR:-build}
videos=${VIGIL_SOAK_VIDEOS:-../shared/data/videos}
out=${out:-$(mktemp -d)}
mkdir -p "$out"
clips=("$videos/one-by-one-person-detection.mp4" "$videos/TUD-Campus.mp4"
       "$videos/TUD-Stadtmitte.mp4" "$videos/one-by-one-person-detection.mp4")
for clip in "${clips[@]}"; do
  [[ -f $clip ]] || { echo "SKIP soak: no clip at $clip (../shared/data absent)"; exit 77; }
done
seconds=$((minutes * 60))
mqtt_port=$(scripts/free-port.sh) http_port=$(scripts/free-port.sh) prom_port=$(scripts/free-port.sh)
camera_port=$(scripts/free-port.sh)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

cat > "$out/mosquitto.conf" <<CONF
listener $mqtt_port 127.0.0.1
allow_anonymous true
persistence false
CONF
[[ $(id -u) == 0 ]] && echo "user root" >> "$out/mosquitto.conf"
mosquitto -c "$out/mosquitto.conf" > "$out/mosquitto.log" 2>&1 & pids+=($!)
for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$mqtt_port") 2>/dev/null && break; sleep 0.1; done
mosquitto_sub -p "$mqtt_port" -t '#' -v > "$out/received.txt" & pids+=($!)

# The last clip as a network camera that hangs up on schedule.
scripts/mjpeg-camera.py --clip "${clips[3]}" --port "$camera_port" --fps 10 \
  --session-seconds "$reconnect_every" > "$out/mjpeg-camera.log" 2>&1 & pids+=($!)
for _ in $(seq 300); do grep -q serving "$out/mjpeg-camera.log" && break; sleep 0.1; done
grep -q serving "$out/mjpeg-camera.log" || { echo "FAIL soak: the MJPEG camera did not start"; cat "$out/mjpeg-camera.log"; exit 1; }

# The configuration of reload number $1: even and odd ones differ in cam1's detection rate and
# the detector's NMS threshold (not its threads: the thread count is judged below).
write_config() {
  local odd=$(($1 % 2))
  {
    echo "version: 1"
    echo "mqtt: {url: 'mqtt://127.0.0.1:$mqtt_port', snapshots: true}"
    echo "http: {listen: '127.0.0.1:$http_port'}"
    echo "detector: {nms: 0.4$((5 + odd))}"
    echo "cameras:"
    for i in 0 1 2; do
      echo "  - {name: cam$i, source: 'file:$(realpath "${clips[$i]}")', loop: true, detect_fps: $((i == 1 ? 2 + odd : 2))}"
    done
    echo "  - {name: cam3, source: 'http://127.0.0.1:$camera_port/', detect_fps: 2}"
  } > "$out/cameras.yaml.new"
  mv "$out/cameras.yaml.new" "$out/cameras.yaml"
}
write_config 0

cat > "$out/prometheus.yml" <<PROM
global: {scrape_interval: 5s, scrape_timeout: 4s}
scrape_configs:
  - job_name: vigil
    static_configs: [{targets: ['127.0.0.1:$http_port']}]
PROM
"$build/vigil" run --config "$out/cameras.yaml" --duration "$seconds" > "$out/vigil.log" 2>&1 &
vigil=$!
pids+=($vigil)
# Prometheus starts once /metrics answers: a scrape while the model loads is not a failure of
# the soak, and the window judged below runs from here to the last answer before the stop.
for _ in $(seq 120); do
  curl -sf -o /dev/null "http://127.0.0.1:$http_port/metrics" && break
  kill -0 "$vigil" 2>/dev/null || break
  sleep 1
done
prometheus --config.file="$out/prometheus.yml" --storage.tsdb.path="$out/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" > "$out/prometheus.log" 2>&1 & pids+=($!)
scrape_from=$(date +%s)
echo "soak: vigil pid $vigil, $minutes min, 4 cameras, broker :$mqtt_port, prometheus :$prom_port, out $out"

echo "t_s,rss_kib,fds,threads,heap_in_use_kib,rss_anon_kib,rss_file_kib,heap_free_kib" > "$out/samples.csv"
start=$(date +%s)
metrics=""
scrape_to=$scrape_from
reloads=0
while kill -0 "$vigil" 2>/dev/null; do
  now=$(($(date +%s) - start))
  if ((now >= (reloads + 1) * reload_every && now < seconds - 30)); then
    reloads=$((reloads + 1))
    write_config "$reloads"
    kill -HUP "$vigil"
  fi
  rss="" anon="" file="" threads="" fds=""
  if [[ -r /proc/$vigil/status ]]; then
    # One read of the file: resident memory, of which anonymous (heap, stacks) and file-backed
    # (library code and data paged in), and threads, all of the same moment.
    read -r rss anon file threads < <(awk '/^(VmRSS|RssAnon|RssFile|Threads):/ {v[$1] = $2}
      END {print v["VmRSS:"], v["RssAnon:"], v["RssFile:"], v["Threads:"]}' \
      "/proc/$vigil/status" 2>/dev/null) || true
    fds=$(find "/proc/$vigil/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  fi
  # The last /metrics before the daemon stops, for the MQTT counters.
  heap="" free=""
  if ((now < seconds - 5)); then
    metrics=$(curl -sf "http://127.0.0.1:$http_port/metrics" || true)
    [[ -n $metrics ]] && printf '%s\n' "$metrics" > "$out/metrics.txt" && scrape_to=$(date +%s)
    heap=$(awk '$1 == "vigil_heap_in_use_bytes" {printf "%d", $2 / 1024}' <<< "$metrics")
    free=$(awk '$1 == "vigil_heap_free_bytes" {printf "%d", $2 / 1024}' <<< "$metrics")
  fi
  [[ -n $rss && -n $threads ]] && echo "$now,$rss,$fds,$threads,$heap,$anon,$file,$free" >> "$out/samples.csv"
  sleep 10
done
wait "$vigil" || { echo "FAIL soak: vigil exited with $?; log $out/vigil.log"; tail -20 "$out/vigil.log"; exit 1; }
# Judged at the last moment /metrics answered, over the time Prometheus ran before it: a scrape
# after the daemon's --duration ended would be "down" for the wrong reason.
window=$((scrape_to - scrape_from))
scrapes=$(curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "time=$scrape_to" \
  --data-urlencode "query=count_over_time(up{job=\"vigil\"}[${window}s])" |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
failed=$(curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "time=$scrape_to" \
  --data-urlencode "query=count_over_time((up{job=\"vigil\"} == 0)[${window}s:5s])" |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')

python3 scripts/lib/soak_verdict.py "$out" "$seconds" "$scrapes" "$failed" "$window" "$reloads"
