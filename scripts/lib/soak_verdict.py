#!/usr/bin/env python3
"""The soak's verdict (scripts/soak.sh): its samples, last scrape and logs judged: the live
heap, descriptors, threads and resident memory after the warm-up, MQTT delivered and dropped,
Prometheus's scrapes, the MJPEG camera's hang-ups and reconnects, the reloads applied. One
PASS or FAIL line each; exit 1 on a FAIL.

    soak_verdict.py OUT SECONDS SCRAPES FAILED WINDOW RELOADS
"""
import csv, re, sys
out, seconds, scrapes, failed = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
window, reloads = int(sys.argv[5]), int(sys.argv[6])
rows = [{k: int(v) if v else None for k, v in r.items()}
        for r in csv.DictReader(open(f"{out}/samples.csv"))]
warm = max(60, seconds // 5)
after = [r for r in rows if r["t_s"] >= warm]
minute = 6  # samples, 10 s apart
def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None
ok = True
def check(cond, text):
    global ok
    print(("PASS " if cond else "FAIL ") + text)
    ok &= cond
check(len(after) >= 2 * minute, f"{len(rows)} samples, {len(after)} after the {warm} s warm-up")
# A leak on the heap grows the live heap (every arena and mmapped chunk: mallinfo2's uordblks +
# hblkhd), judged at 5%; descriptors and threads likewise. Resident memory also holds what the
# allocator keeps after frees: it rises by up to ~20 MiB between the daemon's once-a-minute
# malloc_trim and falls at it, and each detector reload (a whole ONNX Runtime session freed
# while the next is made) leaves more of it; an hour with a reload every 5 minutes peaked at +9%
# (30 minutes in) with the live heap flat, and was +3.4% after 50 minutes. So RSS may grow by
# 10% at most, and may shrink. The free lists are not subtracted from it (as they were before
# reloads): mallinfo2's fordblks still counts pages malloc_trim gave back to the kernel, so RSS
# minus it fell 21.6% in that hour, a figure of nothing.
if len(after) >= 2 * minute:
    for key, unit, limit in (("heap_in_use_kib", "KiB", (-5, 5)), ("fds", "", (-5, 5)),
                             ("threads", "", (-5, 5)), ("rss_kib", "KiB", (-100, 10))):
        base, end = median(r[key] for r in after[:minute]), median(r[key] for r in after[-minute:])
        peak = max(r[key] for r in after if r[key] is not None)
        growth = (end - base) / base * 100 if base else 0
        check(limit[0] <= growth <= limit[1],
              f"{key}: {base} {unit} after warm-up, {end} {unit} at the end "
              f"({growth:+.1f}%, medians of a minute; allowed {limit[0]:+d}% to {limit[1]:+d}%), "
              f"peak {peak} {unit}")
    for key, text in (("heap_free_kib", "kept free by the allocator (vigil_heap_free_bytes)"),
                      ("rss_anon_kib", "anonymous resident (heap, stacks)"),
                      ("rss_file_kib", "file-backed resident (libraries paged in)")):
        base = median(r[key] for r in after[:minute])
        end = median(r[key] for r in after[-minute:])
        if base and end:
            print(f"INFO {text}: {base} KiB after warm-up, {end} KiB at the end "
                  f"({(end - base) / base * 100:+.1f}%)")
metrics = {}
for line in open(f"{out}/metrics.txt"):
    if line.startswith("vigil_mqtt_messages_"):
        name, value = line.split()[0], float(line.split()[-1])
        metrics[name] = value
dropped = metrics.get("vigil_mqtt_messages_dropped_total", -1)
published = metrics.get("vigil_mqtt_messages_published_total", -1)
received = sum(1 for line in open(f"{out}/received.txt", errors="replace") if line.startswith("vigil/"))
check(dropped == 0, f"MQTT messages dropped: {dropped:.0f}")
check(published > 0 and received >= published,
      f"MQTT: {published:.0f} delivered by Vigil (last scrape), {received} received by the subscriber")
check(window >= seconds * 0.8 and scrapes >= window / 5 * 0.8 and failed == 0,
      f"Prometheus: {scrapes:.0f} scrapes of {window // 5} expected in the {window} s it ran "
      f"beside the daemon, {failed:.0f} with up == 0")
hangups = sum(1 for line in open(f"{out}/mjpeg-camera.log") if "closed after" in line)
reconnects = re.search(r'^vigil_camera_reconnects_total\{camera="cam3"\} (\S+)$',
                       open(f"{out}/metrics.txt").read(), re.M)
reconnects = float(reconnects.group(1)) if reconnects else -1
check(hangups > 0 and reconnects >= hangups - 1,
      f"the MJPEG camera hung up {hangups} times, Vigil reconnected {reconnects:.0f} times")
log = open(f"{out}/vigil.log", errors="replace").read()
applied = log.count("reload applied: ")
swapped = log.count("reload: the new detector is in use")
check(applied == reloads and swapped == reloads,
      f"{reloads} reloads sent, {applied} applied, {swapped} new detectors in use")
sys.exit(0 if ok else 1)
