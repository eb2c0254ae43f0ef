#!/usr/bin/env python3
"""Extract the uncompressed ELF vmlinux from a compressed bzImage (like the kernel's
scripts/extract-vmlinux). QEMU boots that ELF through its PVH entry point, which skips the
in-guest decompression (about 3 s for Debian's XZ image under TCG).

usage: tools-extract-vmlinux.py BZIMAGE OUT_VMLINUX
"""
import gzip
import lzma
import sys
import zlib


def candidates(data):
    """Yield (name, decompress-function, offset) for every compressed-stream magic found."""
    for name, magic, fn in (
        ("xz", b"\xfd7zXZ\x00", lambda b: lzma.LZMADecompressor(lzma.FORMAT_XZ).decompress(b)),
        ("gzip", b"\x1f\x8b\x08", lambda b: zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(b)),
    ):
        pos = data.find(magic)
        while pos >= 0:
            yield name, fn, pos
            pos = data.find(magic, pos + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    data = open(sys.argv[1], "rb").read()
    for name, fn, pos in candidates(data):
        try:
            out = fn(data[pos:])
        except (lzma.LZMAError, zlib.error, EOFError, gzip.BadGzipFile):
            continue
        if out[:4] == b"\x7fELF":
            with open(sys.argv[2], "wb") as f:
                f.write(out)
            print(f"vmlinux: {len(out)} bytes ({name} payload at offset {pos})")
            return
    sys.exit(f"{sys.argv[1]}: no compressed ELF payload found")


if __name__ == "__main__":
    main()
