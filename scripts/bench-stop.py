#!/usr/bin/env python3
"""How long SIGTERM takes to end the daemon, in the worst cases issue 39 names: N stops per case,
median and max, from the signal to the exit as this script sees it (the daemon streaming a
looped clip at detect_fps 5, cpu-ort on one thread).

Cases:
  plain       a file camera, no MQTT
  mosquitto   a file camera and a real mosquitto (Debian's) on a free loopback port
  no-suback   a broker that answers CONNACK and never SUBACK (the client waits up to 10 s for it)
  no-puback   a broker that acknowledges nothing it is sent (the stop waits for `offline`)
  hung-load   a reload's detector load that never ends: the model's weights on a FUSE file
              system whose reads never answer (tests/tools/hung_fs.py; needs /dev/fuse, root)
  hung-camera a second camera, a file on that file system: its capture thread in a read that
              nothing interrupts
  worst       no-puback, hung-load and hung-camera at once
A V4L2 camera's stop (its read woken by the stop) is measured by vm.v4l2_run in QEMU instead.

  scripts/bench-stop.py [--stops 20]
                        [--cases "plain mosquitto no-suback no-puback hung-load hung-camera worst"]
Needs build/vigil, the model in models/yolox-nano and ../shared's TUD-Campus clip.
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What each case is made of.
CASES = {
    "plain": set(),
    "mosquitto": {"mosquitto"},
    "no-suback": {"no-suback"},
    "no-puback": {"no-puback"},
    "hung-load": {"hung-load"},
    "hung-camera": {"hung-camera"},
    "worst": {"no-puback", "hung-load", "hung-camera"},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MqttPeer:
    """A minimal MQTT 3.1.1 peer: CONNACK always, SUBACK only when `suback`, never a PUBACK."""

    def __init__(self, suback):
        self.suback = suback
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    @staticmethod
    def read_exactly(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                raise ConnectionError
            data += chunk
        return data

    def serve(self, conn):
        try:
            while True:
                kind = self.read_exactly(conn, 1)[0] >> 4
                length, shift = 0, 0
                while True:
                    byte = self.read_exactly(conn, 1)[0]
                    length |= (byte & 0x7F) << shift
                    shift += 7
                    if not byte & 0x80:
                        break
                body = self.read_exactly(conn, length) if length else b""
                if kind == 1:
                    conn.sendall(b"\x20\x02\x00\x00")
                elif kind == 8 and self.suback:
                    conn.sendall(b"\x90\x03" + body[:2] + b"\x01")
                elif kind == 12:
                    conn.sendall(b"\xd0\x00")
        except (ConnectionError, OSError):
            conn.close()

    def close(self):
        self.server.close()


def config(case, clip, mqtt_port, model=ROOT / "models" / "yolox-nano", stuck_clip=None):
    text = (f"version: 1\ndetector: {{model: '{model}', backend: cpu-ort, threads: 1}}\n"
            f"http: {{listen: '127.0.0.1:0'}}\n")
    if mqtt_port:
        text += f"mqtt: {{url: 'mqtt://127.0.0.1:{mqtt_port}'}}\n"
    text += f"cameras:\n  - {{name: cam, source: 'file:{clip}', loop: true, detect_fps: 5}}\n"
    if stuck_clip:
        text += f"  - {{name: stuck, source: 'file:{stuck_clip}', detect_fps: 2}}\n"
    return text


def wait_for(path, text, limit=30):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return True
        time.sleep(0.02)
    return False


class HungShare:
    """A mounted file system whose reads never answer, holding one file, `name`."""

    def __init__(self, workdir, name):
        self.mountpoint = workdir / f"hung-{name}"
        self.mountpoint.mkdir()
        self.file = self.mountpoint / name
        self.log = workdir / f"hung_fs-{name}.log"
        with open(self.log, "w") as out:
            self.server = subprocess.Popen(["/usr/bin/python3",
                                            str(ROOT / "tests/tools/hung_fs.py"),
                                            str(self.mountpoint), "--name", name], stdout=out)
        if not wait_for(self.log, "mounted"):
            raise SystemExit("bench-stop: the FUSE mount did not answer")

    def model(self, workdir):
        """The model, with its weights on the share."""
        model = workdir / "hung-model"
        shutil.copytree(ROOT / "models" / "yolox-nano", model)
        (model / "yolox_nano.onnx").unlink()
        (model / "yolox_nano.onnx").symlink_to(self.file)
        return model

    def close(self):
        self.server.kill()  # a read it holds keeps SIGTERM from ending it
        self.server.wait()
        subprocess.run(["umount", "-l", str(self.mountpoint)], stderr=subprocess.DEVNULL)


def one_stop(case, clip, workdir):
    parts = CASES[case]
    peer = broker = hung_model = hung_camera = None
    mqtt_port = None
    if "hung-load" in parts:
        hung_model = HungShare(workdir, "weights.onnx")
    if "hung-camera" in parts:
        hung_camera = HungShare(workdir, "entrance.mp4")
    if parts & {"no-suback", "no-puback"}:
        peer = MqttPeer(suback="no-puback" in parts)
        mqtt_port = peer.port
    elif "mosquitto" in parts:
        mqtt_port = free_port()
        conf = workdir / "mosquitto.conf"
        conf.write_text(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous true\n")
        broker = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(0.3)
    stuck_clip = hung_camera.file if hung_camera else None
    (workdir / "cameras.yaml").write_text(config(case, clip, mqtt_port, stuck_clip=stuck_clip))
    log = workdir / "vigil.log"
    with open(log, "w") as out:
        daemon = subprocess.Popen([str(ROOT / "build" / "vigil"), "run", "--config",
                                   str(workdir / "cameras.yaml")], stdout=out, stderr=out)
    try:
        ready = wait_for(log, "[cam=cam] streaming")
        if parts & {"mosquitto", "no-puback"}:
            ready = ready and wait_for(log, "connected to mqtt://")
        if "no-suback" in parts:
            time.sleep(0.5)  # the connect done, the client waiting for its SUBACK
        if hung_camera:
            ready = ready and wait_for(hung_camera.log, "a read waits")
        if not ready:
            raise SystemExit(f"bench-stop: {case}: the daemon did not get ready, see {log}")
        time.sleep(1.0)  # streaming and detecting for a while
        if hung_model:
            (workdir / "cameras.yaml").write_text(config(case, clip, mqtt_port,
                                                         hung_model.model(workdir), stuck_clip))
            daemon.send_signal(signal.SIGHUP)
            if not wait_for(log, "reload: loading the new detector"):
                raise SystemExit(f"bench-stop: {case}: the reload did not start, see {log}")
            time.sleep(0.5)  # the load waiting on the hung file system
        sent = time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        status = daemon.wait(timeout=30)
        took = time.monotonic() - sent
        if status != 0:
            raise SystemExit(f"bench-stop: {case}: exit {status}, see {log}")
        return took
    finally:
        if daemon.poll() is None:
            daemon.kill()
        if broker:
            broker.terminate()
            broker.wait()
        if peer:
            peer.close()
        for share in (hung_model, hung_camera):
            if share:
                share.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", type=int, default=20)
    parser.add_argument("--cases",
                        default="plain mosquitto no-suback no-puback hung-load hung-camera worst")
    args = parser.parse_args()
    clip = (ROOT / ".." / "shared" / "data" / "videos" / "TUD-Campus.mp4").resolve()
    if not clip.exists():
        raise SystemExit(f"bench-stop: {clip} is missing")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {args.stops} stops a case")
    print("| case | stops | median s | max s |")
    print("|---|---|---|---|")
    for case in args.cases.split():
        times = []
        for _ in range(args.stops):
            with tempfile.TemporaryDirectory() as d:
                times.append(one_stop(case, clip, Path(d)))
        print(f"| {case} | {len(times)} | {statistics.median(times):.2f} | {max(times):.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
