#!/usr/bin/python3
"""An MJPEG-over-HTTP camera made of a video file, that hangs up on its viewers on a schedule.

Serves the clip's frames (looped, at --fps) as multipart/x-mixed-replace on
http://127.0.0.1:PORT/ to any number of viewers. Each connection is closed after
--session-seconds (0: never): to the viewer, a camera that drops off the network and answers
again at once, as a Wi-Fi camera does when its access point roams. The soak uses it for a camera
that reconnects every minute.

  scripts/mjpeg-camera.py --clip FILE --port N [--fps 10] [--session-seconds 60] [--width 640]

Prints "mjpeg-camera: serving N frames on PORT" once the frames are encoded and the port
listens; then one line per connection closed on schedule.
"""
import argparse
import socketserver
import sys
import threading
import time

import cv2


def encode_frames(clip, width):
    video = cv2.VideoCapture(clip)
    frames = []
    while True:
        ok, picture = video.read()
        if not ok:
            break
        if width and picture.shape[1] != width:
            height = round(picture.shape[0] * width / picture.shape[1])
            picture = cv2.resize(picture, (width, height), interpolation=cv2.INTER_AREA)
        ok, jpeg = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, 80])
        if ok:
            frames.append(jpeg.tobytes())
    if not frames:
        sys.exit(f"mjpeg-camera: no frame could be read from {clip}")
    return frames


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clip", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fps", type=float, default=10)
    parser.add_argument("--session-seconds", type=float, default=60)
    parser.add_argument("--width", type=int, default=0, help="resize to this width (0: as is)")
    args = parser.parse_args()
    frames = encode_frames(args.clip, args.width)
    period = 1.0 / args.fps
    closed = [0]
    lock = threading.Lock()

    class Viewer(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.settimeout(10)
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = self.request.recv(4096)
                if not chunk:
                    return
                request += chunk
            started = time.monotonic()
            try:
                self.request.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace;"
                                     b" boundary=frame\r\n\r\n")
                index = 0
                while True:
                    jpeg = frames[index % len(frames)]
                    index += 1
                    self.request.sendall(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                                         + str(len(jpeg)).encode() + b"\r\n\r\n" + jpeg + b"\r\n")
                    if args.session_seconds and time.monotonic() - started >= args.session_seconds:
                        with lock:
                            closed[0] += 1
                            print(f"mjpeg-camera: connection {closed[0]} closed after "
                                  f"{args.session_seconds:g} s", flush=True)
                        return
                    time.sleep(period)
            except OSError:
                return  # the viewer went

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True

    with Server(("127.0.0.1", args.port), Viewer) as server:
        print(f"mjpeg-camera: serving {len(frames)} frames on {args.port}", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
