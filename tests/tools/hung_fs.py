#!/usr/bin/python3
"""A file system whose reads never answer: a model or a clip on a network share that hangs, for the
tests of a detector load and a capture that do not end (FUSE, python3-fusepy; needs /dev/fuse and
root).

Mounts MOUNTPOINT with one regular file, NAME (SIZE bytes as stat tells it); listing and stat
answer at once, every read waits forever. Prints "hung_fs: mounted" once the mount
answers, "hung_fs: opened" for each open and "hung_fs: a read waits" for each read. A read it holds keeps it from ending at SIGTERM (libfuse waits for its threads): end
it with SIGKILL, then unmount (umount -l, or umount2 with MNT_DETACH).

usage: hung_fs.py MOUNTPOINT [--name NAME] [--size BYTES]
"""

import argparse
import errno
import os
import stat
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations

class HungFs(Operations):
    def __init__(self, name, size):
        self.name = name
        self.size = size
        self.since = time.time()

    def getattr(self, path, fh=None):
        times = dict(st_ctime=self.since, st_mtime=self.since, st_atime=self.since)
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2, **times)
        if path == "/" + self.name:
            return dict(st_mode=stat.S_IFREG | 0o644, st_nlink=1, st_size=self.size, **times)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", self.name]

    def open(self, path, flags):
        print("hung_fs: opened", flush=True)
        return 0

    def read(self, path, size, offset, fh):
        print("hung_fs: a read waits", flush=True)
        threading.Event().wait()  # the share that stopped answering


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mountpoint")
    parser.add_argument("--name", default="weights.onnx")
    parser.add_argument("--size", type=int, default=4 * 1024 * 1024)
    args = parser.parse_args()

    def announce():
        for _ in range(100):
            if os.path.exists(os.path.join(args.mountpoint, args.name)):
                print("hung_fs: mounted", flush=True)
                return
            time.sleep(0.05)
        print("hung_fs: the mount did not answer", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    FUSE(HungFs(args.name, args.size), args.mountpoint, foreground=True, nothreads=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
