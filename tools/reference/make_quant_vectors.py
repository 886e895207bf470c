"""Writes the quantization test vectors in tests/data/quants/ (format: tests/data/quants/README.md).

  /usr/bin/python3 tools/reference/make_quant_vectors.py [--out tests/data/quants] [--check]

One file per type, <type>.bin: the same 9 input rows of 256 float32 for every type (seeded), each row quantized by
its own call of ggml_quants' reference quantizer (llama.cpp's quantize_row_*_ref), and the dequantized floats
(dequantize_row_*). --check regenerates everything in memory and compares it with the files instead of writing.
Needs numpy only.
"""
import argparse
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_quants as gq  # noqa: E402

MAGIC = b"WFQV"
VERSION = 1
N_COLS = 256
SEED = 20240611


def rows():
    """The input rows (name, float32[256]). Names are at most 15 ASCII characters."""
    rng = np.random.default_rng(SEED)
    n = N_COLS
    out = []
    out.append(("normal", rng.standard_normal(n)))
    x = rng.standard_normal(n) * 0.02
    k = rng.choice(n, 6, replace=False)
    x[k] = rng.choice([-1.0, 1.0], 6) * rng.uniform(0.5, 1.5, 6)  # outliers 25-75x the spread
    out.append(("outliers", x))
    out.append(("zeros", np.zeros(n)))
    out.append(("constant", np.full(n, -1.25)))
    out.append(("tiny", rng.standard_normal(n) * 1e-4))  # every type's f16 scale is subnormal (< 6.1e-5)
    x = rng.choice([-1.0, 1.0], n) * rng.uniform(1e4, 6e4, n)
    out.append(("large", x))
    out.append(("ties", rng.integers(-16, 17, n) / 2.0))  # halves: rounding ties in several quantizers
    x = (rng.standard_normal((8, 32)) * 10.0 ** rng.uniform(-3, 2, (8, 1))).reshape(-1)
    x[96:128] = 0  # an all-zero block of 32 / group inside a non-zero row
    out.append(("mixed", x))
    out.append(("uniform_pos", rng.uniform(0.0, 1.0, n)))
    return [(name, np.asarray(v, np.float32)) for name, v in out]


def build(t):
    rs = rows()
    inputs = np.stack([v for _, v in rs])
    quant = b"".join(t.quantize(v) for _, v in rs)
    deq = np.stack([t.dequantize(t.quantize(v), N_COLS) for _, v in rs]).astype(np.float32)
    head = MAGIC + struct.pack("<7I", VERSION, t.ggml_type, t.block_size, t.type_size, len(rs), N_COLS, 0)
    labels = b"".join(name.encode("ascii").ljust(16, b"\0") for name, _ in rs)
    assert len(quant) == len(rs) * t.row_bytes(N_COLS)
    return head + labels + inputs.astype("<f4").tobytes() + deq.astype("<f4").tobytes() + quant


def main():
    ap = argparse.ArgumentParser()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    ap.add_argument("--out", default=os.path.normpath(os.path.join(root, "tests", "data", "quants")))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    total, bad = 0, 0
    for name, t in gq.TYPES.items():
        data = build(t)
        path = os.path.join(a.out, f"{name}.bin")
        total += len(data)
        if a.check:
            same = os.path.exists(path) and open(path, "rb").read() == data
            bad += not same
            print(f"{path}: {'ok' if same else 'DIFFERS'}")
        else:
            with open(path, "wb") as f:
                f.write(data)
            print(f"wrote {path} ({len(data)} bytes)")
    print(f"{total} bytes in all")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
