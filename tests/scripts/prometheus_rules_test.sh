#!/usr/bin/env bash
# The shipped Prometheus files under the real promtool: the alerting rules are valid and do what
# their unit tests say (packaging/prometheus/vigil-rules.test.yml), and the fleet scrape example
# is a valid configuration with those rules.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../packaging/prometheus" && pwd)
if ! command -v promtool > /dev/null; then
  echo "promtool is not installed (apt-get install prometheus; scripts/install-deps.sh --tests does)" >&2
  exit 1
fi
promtool check rules "$dir/vigil-rules.yml"
promtool test rules "$dir/vigil-rules.test.yml"
# README's example queries are the ones the rules' tests evaluate, word for word.
grep -o 'expr: .*(.*' "$dir/vigil-rules.test.yml" | sed 's/^expr: //' | while read -r query; do
  grep -qF "$query" "$dir/../../README.md" || { echo "README.md lacks the tested query: $query" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The example loads the rules from where the package installs them; here from the source tree.
# Its CA and password files: made here (promtool reads them).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=vigil-test-ca -keyout "$tmp/ca.key" -out "$tmp/vigil-ca.crt" 2> /dev/null
echo scrape-me > "$tmp/vigil-password"
sed -e "s|/usr/share/vigil/prometheus/vigil-rules.yml|$dir/vigil-rules.yml|" \
  -e "s|/etc/prometheus/|$tmp/|" "$dir/prometheus-vigil.yml" > "$tmp/prometheus.yml"
grep -q "$dir/vigil-rules.yml" "$tmp/prometheus.yml"
grep -q "scheme: https" "$tmp/prometheus.yml"
promtool check config "$tmp/prometheus.yml"

# The example's relabeling with two boxes given by IP (and one by name), as Prometheus applies it
# (promtool's service discovery): each target gets `host` (its address without the port) beside
# `instance` and `job`, and no label Vigil's own series carry (a target label `node` would turn
# vigil_node_info{node} into exported_node).
sed -i "s|targets: \[.*\]|targets: ['192.168.1.20:9842', '10.0.0.7:9842', 'hall.lan:9842']|" \
  "$tmp/prometheus.yml"
promtool check service-discovery --timeout=5s "$tmp/prometheus.yml" vigil > "$tmp/targets.json"
python3 - "$tmp/targets.json" << 'PY'
import json, sys
targets = json.load(open(sys.argv[1]))
want = {"192.168.1.20:9842": "192.168.1.20", "10.0.0.7:9842": "10.0.0.7", "hall.lan:9842": "hall.lan"}
got = {}
for t in targets:
    labels = {k: v for k, v in t["labels"].items() if not k.startswith("__")}
    extra = set(labels) - {"instance", "job", "host"}
    if extra:
        sys.exit(f"target {labels['instance']}: labels {sorted(extra)} beside instance, job, host")
    got[labels["instance"]] = labels["host"]
if got != want:
    sys.exit(f"host labels {got}, expected {want}")
print("fleet example: host labels", got)
PY
