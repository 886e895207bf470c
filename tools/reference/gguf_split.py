"""Split a GGUF file into parts as llama.cpp's gguf-split does (`--split --split-max-tensors N`), byte for byte in
its layout, written for wasmformer from gguf-split.cpp's behaviour and the GGUF spec (no llama.cpp code):

  <prefix>-00001-of-0000K.gguf … <prefix>-0000K-of-0000K.gguf
  part 1: every key/value of the input, then split.no (UINT16) = 0, split.count (UINT16) = K,
          split.tensors.count (INT32) = the input's tensor count; its share of the tensors
  part i: only split.no = i - 1, split.count, split.tensors.count; its share of the tensors
  tensors keep their order; each part's data section starts aligned and holds its tensors at aligned offsets
  (general.alignment applies to part 1, which carries it; the other parts use GGUF's default of 32).
  --no-tensor-first-split: part 1 holds the metadata only, as gguf-split's option of that name.

The parser here is independent of the engine's (src/formats/gguf.cpp): it reads the key/value section only to skip
it, and copies its bytes verbatim.

    /usr/bin/python3 tools/reference/gguf_split.py in.gguf out_prefix --max-tensors 10 [--no-tensor-first-split]
"""
import argparse
import struct

# ggml type → (elements per block, bytes per block)
GGML_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
               10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
               20: (32, 18), 30: (1, 2)}
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9


class Reader:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.p)
        self.p += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("Q")
        s = self.b[self.p:self.p + n]
        self.p += n
        return s.decode("utf-8")

    def skip_value(self, t):
        if t in SCALAR:
            self.p += SCALAR[t]
        elif t == STRING:
            n = self.take("Q")
            self.p += n
        elif t == ARRAY:
            et, n = self.take("I"), self.take("Q")
            for _ in range(n):
                self.skip_value(et)
        else:
            raise ValueError(f"unknown GGUF value type {t} at byte {self.p}")


def read(path):
    b = open(path, "rb").read()
    r = Reader(b)
    if r.take("4s") != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
    kv_start, alignment = r.p, 32
    for _ in range(n_kv):
        key, t = r.string(), r.take("I")
        at = r.p
        r.skip_value(t)
        if key == "general.alignment":
            alignment = struct.unpack_from("<I", b, at)[0]
        if key.startswith("split."):
            raise ValueError(f"{path}: already a split part ({key})")
    kv_bytes = b[kv_start:r.p]
    infos = []
    for _ in range(n_tensors):
        name, n_dims = r.string(), r.take("I")
        dims = [r.take("Q") for _ in range(n_dims)]
        ggml_type, offset = r.take("I"), r.take("Q")
        count = 1
        for d in dims:
            count *= d
        per, size = GGML_BLOCKS[ggml_type]
        infos.append((name, dims, ggml_type, offset, count // per * size))
    data_start = -(-r.p // alignment) * alignment
    tensors = [(name, dims, t, b[data_start + off:data_start + off + n]) for name, dims, t, off, n in infos]
    return version, n_kv, kv_bytes, alignment, tensors


def gguf_str(s):
    e = s.encode("utf-8")
    return struct.pack("<Q", len(e)) + e


def write_part(path, version, kvs, n_kv, alignment, tensors):
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, len(tensors), n_kv) + kvs)
    offset, blobs = 0, []
    for name, dims, t, data in tensors:
        out += gguf_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", t, offset)
        blobs.append((offset, data))
        offset = -(-(offset + len(data)) // alignment) * alignment
    out += bytes(-len(out) % alignment)
    base = len(out)
    for off, data in blobs:
        out += bytes(base + off - len(out)) + data
    out += bytes(-len(out) % alignment)
    open(path, "wb").write(out)


def split(path, prefix, max_tensors, no_tensor_first_split=False):
    version, n_kv, kv_bytes, alignment, tensors = read(path)
    groups = [tensors[i:i + max_tensors] for i in range(0, len(tensors), max_tensors)]
    if no_tensor_first_split:
        groups = [[]] + groups
    k = len(groups)
    names = []
    for i, g in enumerate(groups):
        split_kv = (gguf_str("split.no") + struct.pack("<IH", 2, i) + gguf_str("split.count") + struct.pack("<IH", 2, k) +
                    gguf_str("split.tensors.count") + struct.pack("<Ii", 5, len(tensors)))
        name = f"{prefix}-{i + 1:05d}-of-{k:05d}.gguf"
        if i == 0:
            write_part(name, version, kv_bytes + split_kv, n_kv + 3, alignment, g)
        else:
            write_part(name, version, split_kv, 3, 32, g)
        names.append(name)
    return names


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("prefix")
    ap.add_argument("--max-tensors", type=int, default=128)
    ap.add_argument("--no-tensor-first-split", action="store_true")
    a = ap.parse_args()
    for n in split(a.input, a.prefix, a.max_tensors, a.no_tensor_first_split):
        print(n)
