"""A small GGUF reader: the header's key/value metadata as python values and each tensor's name, shape,
type and raw bytes (a memory map, read lazily). gguf's own reader builds a numpy view per array item
and takes seconds on a 262k-token vocabulary; this one reads arrays in one pass.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

MAGIC = b"GGUF"
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
NUMPY = {0: np.uint8, 1: np.int8, 2: np.uint16, 3: np.int16, 4: np.uint32, 5: np.int32, 6: np.float32,
         7: np.bool_, 10: np.uint64, 11: np.int64, 12: np.float64}
STRING, ARRAY = 8, 9


@dataclass
class GGUFTensor:
    name: str
    shape: tuple[int, ...]          # GGUF order: fastest-varying dimension first
    tensor_type: GGMLQuantizationType
    data: np.ndarray                # raw bytes (uint8)


class Cursor:
    def __init__(self, buf: memoryview) -> None:
        self.buf, self.pos = buf, 0

    def unpack(self, fmt: str):
        value = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.unpack("<Q")
        text = bytes(self.buf[self.pos:self.pos + n]).decode("utf-8", errors="replace")
        self.pos += n
        return text

    def value(self, kind: int):
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            return self.array()
        return self.unpack(SCALARS[kind])

    def array(self) -> list:
        kind, count = self.unpack("<I"), self.unpack("<Q")
        if kind in NUMPY:                                       # numbers: one frombuffer
            items = np.frombuffer(self.buf, NUMPY[kind], count, self.pos)
            self.pos += items.nbytes
            return items.tolist()
        return [self.value(kind) for _ in range(count)]


def read_gguf(path: str | Path) -> tuple[dict, list[GGUFTensor]]:
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    cur = Cursor(memoryview(raw))
    if bytes(raw[:4]) != MAGIC:
        raise ValueError(f"{path} is not a GGUF file")
    cur.pos = 4
    version, n_tensors, n_kv = cur.unpack("<I"), cur.unpack("<Q"), cur.unpack("<Q")
    assert version >= 2, f"GGUF version {version} is too old"
    meta = {}
    for _ in range(n_kv):
        key = cur.string()
        meta[key] = cur.value(cur.unpack("<I"))
    infos = []
    for _ in range(n_tensors):
        name, dims = cur.string(), cur.unpack("<I")
        shape = tuple(cur.unpack("<Q") for _ in range(dims))
        infos.append((name, shape, GGMLQuantizationType(cur.unpack("<I")), cur.unpack("<Q")))
    align = int(meta.get("general.alignment", 32))
    start = -(-cur.pos // align) * align
    return meta, [tensor(raw, start, *info) for info in infos]


def tensor(raw: np.ndarray, start: int, name: str, shape: tuple[int, ...], kind: GGMLQuantizationType,
           offset: int) -> GGUFTensor:
    block, type_size = GGML_QUANT_SIZES[kind]
    elements = int(np.prod(shape))
    assert elements % block == 0, f"{name}: {elements} values do not fill {kind.name} blocks"
    nbytes = elements // block * type_size
    return GGUFTensor(name, shape, kind, raw[start + offset:start + offset + nbytes])
