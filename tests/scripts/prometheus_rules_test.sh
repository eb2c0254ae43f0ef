#!/usr/bin/env bash
# The shipped Prometheus files under the real promtool: the alerting rules are valid and do what
# their unit tests say (packaging/prometheus/vigil-rules.test.yml), and the fleet scrape example
# is a valid configuration with those rules.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../packaging/prometheus" && pwd)
if ! command -v promtool > /dev/null; then
  echo "promtool is not installed (apt-get install prometheus; scripts/install-deps.sh does)" >&2
  exit 1
fi
promtool check rules "$dir/vigil-rules.yml"
promtool test rules "$dir/vigil-rules.test.yml"
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
