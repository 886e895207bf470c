"""Minimal safetensors writer/reader (the format: 8-byte little-endian header length, JSON header, raw data).

Debian bookworm has no python3-safetensors; the format is small enough to write directly, and the C++ reader is
tested against files written here and against hand-built malformed ones.
"""
import json
import struct

import torch

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32"}
FROM_NAME = {v: k for k, v in DTYPES.items()}


def save(path, tensors, metadata=None, dtype=None):
    """tensors: name → torch tensor. dtype: optional torch dtype that floating tensors are cast to."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = dict(metadata)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # pad so that the data starts 8-aligned, as the upstream writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        buf = bytearray(data[base + b:base + e])
        t = torch.frombuffer(buf, dtype=FROM_NAME[info["dtype"]]) if buf else torch.empty(0, dtype=FROM_NAME[info["dtype"]])
        out[name] = t.reshape(info["shape"]).clone()
    return out
