#!/usr/bin/env bash
# Installs a model's weights beside its manifest, verified against the manifest's sha256 list.
#
#   scripts/fetch-model.sh [--model DIR] [--from FILE|DIR] [--allow-unverified]
#
#   --model DIR         model directory holding model.yaml (default: models/yolox-nano)
#   --from FILE|DIR     take the weights from a local file or directory instead of downloading
#   --allow-unverified  install a file whose sha256 the manifest does not list (says so loudly;
#                       vigil then also needs --allow-unverified-model to run it)
#
# Files that are already installed and verified are left alone. Exit status 0 when every file
# of the manifest is installed and verified, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model_dir="$here/models/yolox-nano"
from=""
allow_unverified=0

die() { echo "fetch-model: $*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --model) model_dir=${2:?--model needs a directory}; shift 2 ;;
    --from) from=${2:?--from needs a file or directory}; shift 2 ;;
    --allow-unverified) allow_unverified=1; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

manifest="$model_dir/model.yaml"
[[ -f $manifest ]] || die "$manifest: no model manifest here"

# The `files:` section: "  <name>:" then "    url: ..." and "- {sha256: ..., size: ...}" lines.
# Output: one line per accepted variant: name<TAB>url<TAB>sha256<TAB>size
entries=$(awk '
  /^[^ #]/ { in_files = ($0 ~ /^files:/); next }
  !in_files { next }
  /^  [^ #-][^:]*:[ ]*$/ { name = $1; sub(/:$/, "", name); url = ""; next }
  /^    url:/ { url = $2; next }
  /sha256:/ {
    match($0, /sha256: *[0-9a-f]+/); sha = substr($0, RSTART, RLENGTH); sub(/sha256: */, "", sha)
    match($0, /size: *[0-9]+/); size = substr($0, RSTART, RLENGTH); sub(/size: */, "", size)
    printf "%s\t%s\t%s\t%s\n", name, url, sha, size
  }' "$manifest")
[[ -n $entries ]] || die "$manifest: no files with accepted sha256 found"

accepted() {  # name sha size -> 0 if listed
  awk -F'\t' -v n="$1" -v s="$2" -v z="$3" '$1 == n && $3 == s && $4 == z { found = 1 } END { exit !found }' <<<"$entries"
}

status=0
for name in $(cut -f1 <<<"$entries" | sort -u); do
  target="$model_dir/$name"
  if [[ -f $target ]]; then
    sha=$(sha256sum "$target" | cut -d' ' -f1); size=$(stat -c %s "$target")
    if accepted "$name" "$sha" "$size"; then
      echo "fetch-model: $target already installed and verified (sha256 $sha)"
      continue
    fi
  fi

  tmp=$(mktemp "$model_dir/.$name.XXXXXX")
  trap 'rm -f "$tmp"' EXIT
  if [[ -n $from ]]; then
    source_file=$from
    [[ -d $from ]] && source_file="$from/$name"
    [[ -f $source_file ]] || die "$source_file: no such file"
    cp "$source_file" "$tmp"
    origin=$source_file
  else
    url=$(awk -F'\t' -v n="$name" '$1 == n && $2 != "" { print $2; exit }' <<<"$entries")
    [[ -n $url ]] || die "$manifest: no url for $name; use --from"
    echo "fetch-model: downloading $url"
    curl -fL --retry 3 --connect-timeout 20 -o "$tmp" "$url" ||
      die "download of $url failed; on a machine without internet use --from FILE"
    origin=$url
  fi

  sha=$(sha256sum "$tmp" | cut -d' ' -f1); size=$(stat -c %s "$tmp")
  if accepted "$name" "$sha" "$size"; then
    chmod 0644 "$tmp"; mv "$tmp" "$target"
    echo "fetch-model: installed $target from $origin (sha256 $sha, $size bytes, verified)"
  elif ((allow_unverified)); then
    chmod 0644 "$tmp"; mv "$tmp" "$target"
    echo "fetch-model: WARNING: installed UNVERIFIED $target from $origin (sha256 $sha, $size bytes is not in $manifest)" >&2
    status=1
  else
    rm -f "$tmp"
    die "$origin: sha256 $sha ($size bytes) is not listed for $name in $manifest; not installed (--allow-unverified to override)"
  fi
  trap - EXIT
done
exit "$status"
