# shellcheck shell=bash
# Sourced by scripts/fetch-onnxruntime.sh for VIGIL_ORT_FROM: ONNX Runtime from a local copy,
# without the network (machines without internet, like VIGIL_MODEL_FROM for the weights).
# ort_from FROM DEST: FROM is a directory or a tar archive (.tgz, .tar.xz, ...) of either
#   - what fetch-onnxruntime.sh makes (another machine's .cache/onnxruntime): include/onnxruntime/,
#     lib/libonnxruntime.so.1, VERSION; or
#   - an ONNX Runtime release, e.g. onnxruntime-linux-x64-1.20.1.tgz: include/*.h,
#     lib/libonnxruntime.so.1[.N.M], VERSION_NUMBER.
# DEST gets fetch-onnxruntime.sh's layout; a DEST already equal to it is left untouched (no
# relink). Removes its temporary directory on exit (fetch-onnxruntime.sh exits after it).
ort_from() {
  local from=$1 dest=$2 src header lib top
  [[ -e $from ]] || { echo "fetch-onnxruntime: VIGIL_ORT_FROM=$from: no such file or directory" >&2; return 1; }
  from=$(realpath "$from")
  ort_work=$(mktemp -d)
  trap 'rm -rf "$ort_work"' EXIT
  src=$from
  if [[ ! -d $from ]]; then
    mkdir "$ort_work/x"
    tar -xf "$from" -C "$ort_work/x" || { echo "fetch-onnxruntime: $from: not a directory nor a tar archive" >&2; return 1; }
    top=("$ort_work"/x/*)
    src=$ort_work/x
    [[ ${#top[@]} == 1 && -d ${top[0]} ]] && src=${top[0]}  # a release has one top directory
  fi
  header=$(find "$src/include" -name onnxruntime_c_api.h -print -quit 2>/dev/null || true)
  lib=$src/lib/libonnxruntime.so.1
  [[ -e $lib ]] || lib=$(find "$src/lib" -name 'libonnxruntime.so.1.*' -print -quit 2>/dev/null || true)
  if [[ -z $header || ! -e $lib ]]; then
    echo "fetch-onnxruntime: $from has no include/.../onnxruntime_c_api.h and lib/libonnxruntime.so.1" \
      "(an ONNX Runtime release or a copy of .cache/onnxruntime)" >&2
    return 1
  fi

  local new=$ort_work/new
  mkdir -p "$new/include/onnxruntime" "$new/lib"
  cp -r "$(dirname "$header")/." "$new/include/onnxruntime/"
  cp -L "$lib" "$new/lib/libonnxruntime.so.1"
  ln -s libonnxruntime.so.1 "$new/lib/libonnxruntime.so"
  [[ -f $src/copyright.debian ]] && cp "$src/copyright.debian" "$new/"
  if [[ -f $src/VERSION ]]; then
    cp "$src/VERSION" "$new/VERSION"
  elif [[ -f $src/VERSION_NUMBER ]]; then
    echo "onnxruntime $(cat "$src/VERSION_NUMBER") (a release, copied locally)" >"$new/VERSION"
  else
    echo "onnxruntime, C API $(sed -nE 's/^#define ORT_API_VERSION ([0-9]+).*/\1/p' "$header") (copied locally)" >"$new/VERSION"
  fi

  if [[ -d $dest ]] && diff -r --no-dereference "$new" "$dest" >/dev/null 2>&1; then
    echo "fetch-onnxruntime: present in $dest, the same as $from ($(cat "$dest/VERSION"))"
    return 0
  fi
  rm -rf "$dest"
  mkdir -p "$(dirname "$dest")"
  cp -a "$new" "$dest"
  echo "fetch-onnxruntime: copied $from into $dest: $(cat "$dest/VERSION") (VIGIL_ORT_FROM; no download)"
}
