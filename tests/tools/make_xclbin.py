#!/usr/bin/python3
"""Writes a minimal xclbin (axlf container) with one mlir-aie style kernel, for tests under XRT's
noop shim. Own code, from the struct layouts of XRT's public xclbin.h (Debian libxrt-dev):
sections MEM_TOPOLOGY (bank 0 HOST, bank 1 SRAM), IP_LAYOUT (one instance per kernel),
CONNECTIVITY (instr -> SRAM, data buffers -> HOST) and EMBEDDED_METADATA (each kernel's argument
list: opcode, instr, ninstr, bo0..boN-1). Several --kernel NAME[:BUFFERS] make several kernels,
in that order (a kernel without :BUFFERS has --buffers of them). Debian's xclbinutil is unusable (its wrapper execs a
binary the package does not ship), hence this writer.

usage: make_xclbin.py OUT.xclbin [--buffers N] [--kernel MLIR_AIE[:N]]... [--instructions OUT.bin WORDS]
"""

import argparse
import struct
import time
import uuid

MEM_TOPOLOGY, CONNECTIVITY, IP_LAYOUT, EMBEDDED_METADATA = 6, 7, 8, 2
IP_KERNEL = 1
MEM_DRAM = 2


def mem_topology():
    banks = []
    for tag in (b"HOST", b"SRAM"):
        banks.append(struct.pack("<BB6xQQ16s", MEM_DRAM, 1, 64 * 1024, 0, tag))
    return struct.pack("<i4x", len(banks)) + b"".join(banks)


def instance_of(kernel):
    return kernel.replace("_", "")


def ip_layout(kernels):
    # properties: AP_CTRL_HS (0) in the control bits
    ips = [struct.pack("<IIQ64s", IP_KERNEL, 0, 0, f"{k}:{instance_of(k)}".encode())
           for k, _ in kernels]
    return struct.pack("<i4x", len(ips)) + b"".join(ips)


def connectivity(kernels):
    conns = []
    for ip, (_, buffers) in enumerate(kernels):
        conns.append(struct.pack("<iii", 1, ip, 1))  # instr -> SRAM
        for i in range(buffers):
            conns.append(struct.pack("<iii", 3 + i, ip, 0))  # bo_i -> HOST
    return struct.pack("<i", len(conns)) + b"".join(conns)


def kernel_xml(kernel, buffers):
    args = [
        '<arg name="opcode" addressQualifier="0" id="0" size="0x8" offset="0x00" '
        'hostOffset="0x0" hostSize="0x8" type="uint64_t"/>',
        '<arg name="instr" addressQualifier="1" id="1" port="M_AXI_GMEM" size="0x8" '
        'offset="0x08" hostOffset="0x0" hostSize="0x8" type="char*"/>',
        '<arg name="ninstr" addressQualifier="0" id="2" size="0x4" offset="0x10" '
        'hostOffset="0x0" hostSize="0x4" type="uint32_t"/>',
    ]
    for i in range(buffers):
        args.append(
            f'<arg name="bo{i}" addressQualifier="1" id="{3 + i}" port="M_AXI_GMEM" size="0x8" '
            f'offset="{hex(0x14 + 8 * i)}" hostOffset="0x0" hostSize="0x8" type="void*"/>'
        )
    return (
        f'    <kernel name="{kernel}" language="c" type="dpu">\n     '
        + "\n     ".join(args)
        + f'\n     <instance name="{instance_of(kernel)}">\n'
        '      <addrRemap base="0x0" port="S_AXI_CONTROL"/>\n     </instance>\n    </kernel>\n'
    )


def metadata(kernels):
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<project name="vigil-test">\n <platform vendor="xilinx" boardid="npu" name="npu">\n'
        '  <device name="fpga0" fpgaDevice="npu">\n   <core name="OCL_REGION_0" target="hw">\n'
        + "".join(kernel_xml(k, b) for k, b in kernels)
        + "   </core>\n  </device>\n </platform>\n</project>\n"
    )
    return xml.encode() + b"\0"


def axlf(sections):
    n = len(sections)
    header_size = 496 - 40 + 40 * n
    offset = (header_size + 7) & ~7
    headers, blobs = [], []
    for kind, name, data in sections:
        headers.append(struct.pack("<I16s4xQQ", kind, name.encode(), offset, len(data)))
        pad = (-len(data)) % 8
        blobs.append(data + b"\0" * pad)
        offset += len(data) + pad
    total = offset
    header = struct.pack(
        "<QQQHBBHH16s64s16s16sI4x",
        total, int(time.time()), 0, 0, 2, 1, 0, 0, b"\0" * 16, b"vigil-test-npu".ljust(64, b"\0"),
        uuid.uuid4().bytes, b"", n,
    )
    assert len(header) == 152
    front = b"xclbin2\0" + struct.pack("<i", -1) + b"\xff" * 28 + b"\0" * 256 + struct.pack("<Q", 0)
    out = front + header + b"".join(headers)
    out += b"\0" * (((header_size + 7) & ~7) - len(out))
    return out + b"".join(blobs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--buffers", type=int, default=5)
    ap.add_argument("--kernel", action="append", metavar="NAME[:BUFFERS]")
    ap.add_argument("--instructions", nargs=2, metavar=("FILE", "WORDS"))
    a = ap.parse_args()
    kernels = []
    for spec in a.kernel or ["MLIR_AIE"]:
        name, _, buffers = spec.partition(":")
        kernels.append((name, int(buffers) if buffers else a.buffers))
    data = axlf([
        (MEM_TOPOLOGY, "mem_topology", mem_topology()),
        (IP_LAYOUT, "ip_layout", ip_layout(kernels)),
        (CONNECTIVITY, "connectivity", connectivity(kernels)),
        (EMBEDDED_METADATA, "metadata", metadata(kernels)),
    ])
    with open(a.out, "wb") as f:
        f.write(data)
    if a.instructions:
        words = int(a.instructions[1])
        with open(a.instructions[0], "wb") as f:
            f.write(struct.pack(f"<{words}I", *[(0x06030100 + i) & 0xFFFFFFFF for i in range(words)]))


if __name__ == "__main__":
    main()
