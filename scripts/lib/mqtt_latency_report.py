#!/usr/bin/env python3
"""scripts/bench-mqtt-latency.sh's report: the MQTT messages received in OUT against the frames
that caused them: how long after the capture a person's ON and its event arrived.

    mqtt_latency_report.py OUT DETECT_FPS MIN_FRAMES
"""
import datetime, json, math, sys
out, fps, min_frames = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
ons, news = [], []
for line in open(f"{out}/received.txt", encoding="utf-8", errors="replace"):
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) < 3:
        continue
    t, topic, payload = float(parts[0]), parts[1], parts[2]
    if topic == "vigil/bench/door/person" and payload == "ON":
        ons.append(t)
    elif topic == "vigil/bench/events":
        e = json.loads(payload)
        if e["type"] == "new" and e["zone"] is None:
            start = datetime.datetime.strptime(e["start"], "%Y-%m-%dT%H:%M:%S.%fZ")
            start = start.replace(tzinfo=datetime.timezone.utc).timestamp()
            news.append((start, e["latency_ms"]))
def pct(values, p):
    v = sorted(values)
    return v[max(0, min(len(v), math.ceil(p * len(v))) - 1)] if v else float("nan")
pairs = [(on - start) * 1000 for (start, _), on in zip(news, ons)]
frame = [lat for _, lat in news]
summary = json.load(open(f"{out}/summary.json"))
infer = []
print(f"events: {len(news)} new, {len(ons)} ON")
print(f"capture of first person frame -> ON received: p50 {pct(pairs, .5):.0f} ms, "
      f"p99 {pct(pairs, .99):.0f} ms, max {max(pairs, default=float('nan')):.0f} ms")
print(f"triggering frame capture -> event published: p50 {pct(frame, .5):.0f} ms, "
      f"p99 {pct(frame, .99):.0f} ms")
cam = summary["cameras"]["door"]
print(f"detector: {cam['detected']} frames in {summary['seconds']:.0f} s; capture -> detections "
      f"p50 {cam['latency_ms']['p50']:.0f} ms, p99 {cam['latency_ms']['p99']:.0f} ms")
print(f"min_frames {min_frames} at detect_fps {fps:g}: {(min_frames - 1) * 1000 / fps:.0f} ms "
      f"between the first and the triggering frame at best")
