"""The guest side of vm.v4l2_run (v4l2_vm_run_test.sh): runs inside the VM with 3 vivid webcams,
cwd = the job directory, which holds vigil, its libraries, the model and cameras.yaml.

It first streams from two devices with v4l2-ctl alone (the VM works), then starts a broker and
the daemon, then injects the faults one after the other, polling /metrics
for each outcome, and leaves the evidence in the job directory for the host side
(v4l2_vm_run_check.py):
  steps.log     what was done when (seconds since the job started), one line each
  results.json  the figures (reconnect times, frame counts)
  snap-NAME.*   /api/status, /metrics and the /healthz code at a named moment
  mqtt.log      what a subscriber saw on vigil/vm/status, vigil/vm/events, vigil/vm/+/person
                and vigil/vm/+/status
Exit status: the daemon's (0 on a clean stop). A step whose outcome does not come is noted and
the job goes on, so that the host side shows the evidence of every step.

Python, not sh: under TCG every process started from the host's root over 9p costs seconds, so
the polling is done in this one process (plain sockets, no curl) and only v4l2-ctl is spawned.
"""
import json
import os
import pathlib
import signal
import socket
import subprocess
import time

HTTP_PORT = 9842
T0 = time.monotonic()
results = {}


def now():
    return time.monotonic() - T0


def note(text):
    line = f"{now():7.2f} {text}"
    print("job:", line, flush=True)
    with open("steps.log", "a") as f:
        f.write(line + "\n")


def result(key, value):
    results[key] = value
    note(f"{key} = {value}")
    pathlib.Path("results.json").write_text(json.dumps(results, indent=1))


def http_get(path):
    """(status code, body) of a GET on the daemon; (0, '') when it does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", HTTP_PORT), timeout=10) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: vm\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError:
        return 0, ""
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        return int(head.split(b" ", 2)[1]), body.decode(errors="replace")
    except (IndexError, ValueError):
        return 0, ""


def metrics():
    """{(name, camera): value} of the per-camera samples of /metrics."""
    out = {}
    for line in http_get("/metrics")[1].splitlines():
        if line.startswith("vigil_camera_") and '{camera="' in line:
            key, _, value = line.rpartition(" ")
            name, _, label = key.partition('{camera="')
            out[(name, label.split('"')[0])] = float(value)
    return out


def metric(m, name, camera):
    return m.get((f"vigil_camera_{name}", camera), -1)


def snap(name):
    for path, suffix in (("/api/status", "status.json"), ("/metrics", "metrics")):
        pathlib.Path(f"snap-{name}.{suffix}").write_text(http_get(path)[1])
    code, body = http_get("/healthz")
    pathlib.Path(f"snap-{name}.healthz").write_text(f"{code}\n{body}")


def wait_for(seconds, condition, every=0.2):
    """Polls condition(metrics) every `every` s; the seconds it took, or None. The guest has
    little CPU to spare, so waits that are not measured poll slowly and leave it to the daemon."""
    start = now()
    while now() - start < seconds:
        if condition(metrics()):
            return round(now() - start, 2)
        time.sleep(every)
    return None


def ups(m):
    return sum(metric(m, "up", c) == 1 for c in CAMS)


def ctl(device, control):
    subprocess.run(["v4l2-ctl", "-d", device, "-c", control], check=False)


CAMS = ["cam0", "cam1", "cam2"]


def node_of(instance):
    """/dev/videoN of vivid instance I now (the number changes at replug while it is held)."""
    for v in pathlib.Path("/sys/class/video4linux").glob("video*"):
        if (v / "name").read_text().strip() == f"vivid-00{instance}-vid-cap":
            return f"/dev/{v.name}"
    return None


def link(instance):
    return pathlib.Path(f"/dev/v4l/by-id/vivid-00{instance}-video-index0")


# The guest runs no udevd, and udev's own by-path links would collide for vivid anyway (every
# instance hangs off the one platform device vivid.0; vivid has no serial for by-id). So the job
# keeps stable names the way a udev rule on ATTR{name} would: a relative link per instance,
# removed when the device goes and created when it comes.
def link_cameras():
    link(0).parent.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        if node := node_of(i):
            link(i).unlink(missing_ok=True)
            link(i).symlink_to(f"../../{node[len('/dev/'):]}")
    note("links: " + "; ".join(f"{link(i).name} -> {os.readlink(link(i))}" for i in range(3)
                               if link(i).is_symlink()))


def unlink_cameras():
    for i in range(3):
        link(i).unlink(missing_ok=True)


for f in ("steps.log", "results.json"):
    pathlib.Path(f).unlink(missing_ok=True)

# 0. The VM itself (what vm.v4l2_smoke did in a boot of its own): two devices stream 10 frames
#    of 640x480 YUYV at the same time with v4l2-ctl, before anything of Vigil's runs. The
#    frames go to the guest's /tmp: writing them back to the host over 9p would add seconds.
smoke = {}
for d in (0, 1):
    smoke[d] = subprocess.Popen(
        ["v4l2-ctl", "--device", f"/dev/video{d}",
         "--set-fmt-video=width=640,height=480,pixelformat=YUYV", "--stream-mmap",
         "--stream-count=10", f"--stream-to=/tmp/video{d}.yuv"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
for d, p in smoke.items():
    result(f"smoke_video{d}_exit", p.wait(60))
    yuv = pathlib.Path(f"/tmp/video{d}.yuv")
    result(f"smoke_video{d}_bytes", yuv.stat().st_size if yuv.exists() else 0)
    yuv.unlink(missing_ok=True)

link_cameras()
broker = subprocess.Popen(["mosquitto", "-p", "1883"], stdout=open("mosquitto.log", "w"),
                          stderr=subprocess.STDOUT)
start = now()
while now() - start < 60:  # the broker takes a while to listen under TCG
    try:
        socket.create_connection(("127.0.0.1", 1883), timeout=1).close()
        break
    except OSError:
        time.sleep(0.2)
subscriber = subprocess.Popen(
    ["mosquitto_sub", "-h", "127.0.0.1", "-v", "-t", "vigil/vm/status", "-t", "vigil/vm/events",
     "-t", "vigil/vm/+/person", "-t", "vigil/vm/+/status"], stdout=open("mqtt.log", "w"), stderr=subprocess.STDOUT)
vigil = subprocess.Popen(["./vigil", "run", "--config", "cameras.yaml", "--summary-json",
                          "summary.json"], stdout=open("vigil.log", "w"), stderr=subprocess.STDOUT,
                         env=dict(os.environ, LD_LIBRARY_PATH=os.path.abspath("lib")))
result("start_all_up_s", wait_for(180, lambda m: ups(m) == 3, every=1))
snap("start")

# 1. One camera unplugged (vivid's disconnect control); the same node comes back. Its next
#    stream starts 128 frames before the 32-bit sequence number wraps.
ctl(str(link(1)), "wrap_sequence_number=1")
note(f"unplug: disconnect vivid-001 ({link(1)} -> {os.path.realpath(link(1))})")
ctl(str(link(1)), "disconnect=1")
result("unplug_reconnect_s", wait_for(
    30, lambda m: metric(m, "reconnects_total", "cam1") == 1 and metric(m, "up", "cam1") == 1))
wrap_from = now()
snap("unplugged")

# 2. Error injection on the two others: buffers flagged V4L2_BUF_FLAG_ERROR on cam0, half the
#    buffers dropped by the driver on cam2 (sequence gaps).
note("inject: 5 x V4L2_BUF_FLAG_ERROR on vivid-000, percentage_of_dropped_buffers=50 on vivid-002")
before = metrics()
ctl(str(link(2)), "percentage_of_dropped_buffers=50")
for _ in range(5):
    ctl(str(link(0)), "inject_v4l2_buf_flag_error=1")
    time.sleep(1)
ctl(str(link(2)), "percentage_of_dropped_buffers=0")
after = metrics()
for cam in ("cam0", "cam2"):
    result(f"inject_{cam}_captured", metric(after, "frames_captured_total", cam)
           - metric(before, "frames_captured_total", cam))
    result(f"inject_{cam}_lost", metric(after, "frames_lost_total", cam)
           - metric(before, "frames_lost_total", cam))
result("inject_cam0_decode_errors", metric(after, "decode_errors_total", "cam0"))
snap("injected")

# cam1's sequence wraps 25.6 s (128 frames at 5 fps) after it came back: frames must go on
# arriving after that.
time.sleep(max(0.0, 27 - (now() - wrap_from)))
snap("wrap-passed")
time.sleep(3)
snap("wrapped")

# 3. Every camera unbound at once (vivid has one platform device for all instances), then bound
#    again while something else still holds vivid-001's old node: vivid-001 and vivid-002 come
#    back under new numbers, and only the stable links lead the daemon to them.
old_node = os.path.realpath(link(1))
holder = open(old_node, "rb", buffering=0)
note(f"unbind: vivid.0 (all 3 instances); {old_node} held open")
pathlib.Path("/sys/bus/platform/drivers/vivid/unbind").write_text("vivid.0")
unlink_cameras()
result("unbind_all_down_s", wait_for(30, lambda m: ups(m) == 0))
time.sleep(3)
snap("unbound")
pathlib.Path("/sys/bus/platform/drivers/vivid/bind").write_text("vivid.0")
note("bind: vivid.0, nodes now: " + " ".join(sorted(str(p) for p in pathlib.Path("/dev").glob("video*"))))
link_cameras()
result("rebind_all_up_s", wait_for(90, lambda m: ups(m) == 3))
snap("rebound")
holder.close()
time.sleep(8)
snap("end")
# Inference under TCG takes seconds a frame, far more on a loaded host: before stopping, let
# every camera have been detected on at least once, so that "no person" means something.
result("all_detected_s", wait_for(
    240, lambda m: all(metric(m, "frames_detected_total", c) >= 1 for c in CAMS), every=2))

note("stop: SIGTERM")
stop_from = now()
vigil.send_signal(signal.SIGTERM)
try:
    rc = vigil.wait(120)
except subprocess.TimeoutExpired:
    vigil.kill()
    rc = vigil.wait()
result("stop_s", round(now() - stop_from, 2))
for p in (subscriber, broker):
    p.terminate()
    p.wait()
print(f"job: vigil exit {rc}", flush=True)
raise SystemExit(rc)
