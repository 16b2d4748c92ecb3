"""Legacy U-Boot image (uImage) headers: what mkimage wrote, read back without
U-Boot. Pure; `mkimage -l` prints the same fields."""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from boardlab.errors import InputError

MAGIC = 0x27051956
HEADER = struct.Struct(">IIIIIIIBBBB32s")
TYPES = {2: "kernel", 3: "ramdisk", 4: "multi", 5: "firmware", 6: "script", 7: "filesystem",
         8: "flat_dt"}
COMPRESSION = {0: "none", 1: "gzip", 2: "bzip2", 3: "lzma", 4: "lzo", 5: "lz4", 6: "zstd"}


class UImageError(InputError, ValueError):
    """A file given as a uImage that is not one."""


@dataclass(frozen=True)
class UImageHeader:
    name: str
    data_size: int
    load_addr: int
    entry: int
    data_crc: int
    header_crc: int
    type: str
    compression: str
    timestamp: int

    @property
    def release(self) -> str:
        """The kernel release boardlab's builder puts into the name: 'Linux-<release>'."""
        return self.name[len("Linux-"):] if self.name.startswith("Linux-") else self.name


def read_header(data: bytes, source="uImage") -> UImageHeader:
    if len(data) < HEADER.size:
        raise UImageError(f"{source}: {len(data)} bytes, shorter than a uImage header")
    (magic, hcrc, tstamp, size, load, ep, dcrc, _os, _arch, typ, comp,
     name) = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise UImageError(f"{source}: not a uImage (magic {magic:#010x})")
    check = bytearray(data[:HEADER.size])
    check[4:8] = b"\0\0\0\0"
    if zlib.crc32(check) != hcrc:
        raise UImageError(f"{source}: bad header checksum")
    return UImageHeader(name.split(b"\0")[0].decode("ascii", "replace"), size, load, ep, dcrc,
                        hcrc, TYPES.get(typ, str(typ)), COMPRESSION.get(comp, str(comp)), tstamp)


def read(path) -> UImageHeader:
    with open(path, "rb") as f:
        return read_header(f.read(HEADER.size), str(path))
