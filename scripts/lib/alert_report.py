#!/usr/bin/env python3
"""scripts/bench-alert.sh's report: per round, when the subscriber received `ON`, the `new`
event and the first snapshot JPEG, counted from t0, the moment the daemon captured the frame in
which the person comes into view; per clip, the median and the worst of each.

    alert_report.py OUT CLIP...

t0 = the event's `start` (capture time of its first frame) - (its `start_frame` in the run
summary - the person's frame in the made clip) / fps: the file is played a frame period apart.
Writes OUT/rounds.tsv and prints the per-clip table (markdown).
"""
import datetime, glob, json, os, statistics, sys

CAMERA = "door"


def epoch(iso):
    t = datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def first(path, keep):
    """The receipt time and payload of the first message of a mosquitto_sub log (`%U %t %x`:
    time, topic, payload in hex) that keep(topic, payload) likes; text payloads decoded."""
    for line in open(path, encoding="ascii", errors="replace"):
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].replace(".", "").isdigit():
            continue
        raw = bytes.fromhex(parts[2]) if len(parts) == 3 else b""
        payload = raw if parts[1].endswith("/snapshot") else raw.decode("utf-8", "replace")
        if keep(parts[1], payload):
            return float(parts[0]), payload
    return None, None


def is_new(topic, payload):
    if topic != "vigil/bench/events":
        return False
    e = json.loads(payload)
    return e["type"] == "new" and e["zone"] is None and e["camera"] == CAMERA


def measure(rdir, clip):
    """One round's figures (seconds after t0), or the reason it has none."""
    t_new, payload = first(f"{rdir}/received.txt", is_new)
    if t_new is None:
        return "no new event"
    start = json.loads(payload)["start"]
    events = json.load(open(f"{rdir}/summary.json"))["cameras"][CAMERA]["person_events"]
    frame = next((e["start_frame"] for e in events if e["start"] == start), None)
    if frame is None:
        return f"event {start} not in summary.json"
    late = frame - clip["person_frame"]
    if late < 0:
        return f"event from frame {frame}, before the person (frame {clip['person_frame']})"
    t0 = epoch(start) - late / clip["fps"]
    t_on, _ = first(f"{rdir}/received.txt",
                    lambda t, p: t == f"vigil/bench/{CAMERA}/person" and p == "ON")
    t_pic, _ = first(f"{rdir}/received.txt",
                     lambda t, p: t == f"vigil/bench/{CAMERA}/person/snapshot" and len(p) > 0)
    rel = lambda t: None if t is None else t - t0
    return {"on": rel(t_on), "new": rel(t_new), "picture": rel(t_pic), "late_frames": late,
            "picture_first": t_pic is not None and t_on is not None and t_pic < t_on}


def cell(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} / {max(values):.2f}"


def main():
    out, clips = sys.argv[1], sys.argv[2:]
    rows = ["clip\tround\ton_s\tnew_s\tpicture_s\tpicture_before_on\tevent_frames_late\tnote"]
    table = ["| clip | rounds | to `ON` (s) | to `new` (s) | to picture (s) "
             "| picture before `ON` |",
             "|---|---|---|---|---|---|"]
    fmt = lambda v: "" if v is None else f"{v:.3f}"
    for name in clips:
        clip = json.load(open(f"{out}/{name}/clip.json"))
        good = []
        rdirs = glob.glob(f"{out}/{name}/round-*")
        for rdir in sorted(rdirs, key=lambda d: int(d.split("-")[-1])):
            m = measure(rdir, clip)
            r = os.path.basename(rdir).split("-")[-1]
            if isinstance(m, str):
                rows.append(f"{name}\t{r}\t\t\t\t\t\t{m}")
                continue
            good.append(m)
            rows.append(f"{name}\t{r}\t{fmt(m['on'])}\t{fmt(m['new'])}\t{fmt(m['picture'])}\t"
                        f"{int(m['picture_first'])}\t{m['late_frames']}\t")
        table.append(f"| {name} | {len(good)} of {len(rdirs)} | " +
                     " | ".join(cell(m[k] for m in good) for k in ("on", "new", "picture")) +
                     f" | {sum(m['picture_first'] for m in good)} of {len(good)} |")
    open(f"{out}/rounds.tsv", "w").write("\n".join(rows) + "\n")
    print("\n".join(rows).replace("\t", "  "))
    print("\nmedian / worst, seconds after the daemon captured the person's first frame\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
