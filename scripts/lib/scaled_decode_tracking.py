#!/usr/bin/env python3
"""scripts/bench-scaled-decode.sh's tracking table: the runs' tracking figures in OUT, full-size
and scaled decode side by side, medians over the runs (markdown on standard output).

    scaled_decode_tracking.py OUT
"""
import collections, json, statistics, sys
out = sys.argv[1]
runs = collections.defaultdict(list)
for line in open(f"{out}/runs.tsv"):
    rnd, clip, form, decode, d = line.split()
    runs[(clip, form, decode)].append(json.load(open(f"{d}/eval.json")))
keys = ["MOTA", "IDF1", "HOTA", "FP", "FN", "IDSW"]
def pick(m, k):
    for name in (k, k.lower(), {"IDSW": "id_switches"}.get(k, k)):
        if name in m: return m[name]
    raise KeyError(k)
print("| clip x3 | form | decode | frames | " + " | ".join(keys) + " |")
print("|---|---|---|---|" + "---|" * len(keys))
for (clip, form, decode), ms in sorted(runs.items()):
    cells = []
    for k in keys:
        v = [pick(m, k) for m in ms]
        med = statistics.median(v)
        cells.append(f"{med:.3f} ({min(v):.3f}-{max(v):.3f})" if isinstance(med, float) and k not in ("FP", "FN", "IDSW")
                     else f"{med:g} ({min(v):g}-{max(v):g})")
    frames = statistics.median(pick(m, "frames") if "frames" in m else 0 for m in ms)
    print(f"| {clip} | {form} | {'scaled' if decode == 'true' else 'full'} | {frames:g} | " + " | ".join(cells) + " |")
