"""Reference quantizers and dequantizers for llama.cpp's (ggml's) block formats, in numpy.

Written for wasmformer from the definitions in ggml's ggml-common.h (the block structs) and the semantics of
ggml-quants.c (quantize_row_*_ref, dequantize_row_* and their helpers make_qx_quants, make_q3_quants,
make_qkx2_quants, nearest_int, best_index_int8), so that the engine's C++ kernels can be checked against an
independent implementation. No code of llama.cpp is copied here.

Types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL. Each is a class with

    ggml_type   the GGUF / ggml type number written in a tensor info
    block_size  elements per block (32, or QK_K = 256 for the K-quants)
    type_size   bytes per block
    quantize(x)          float32 array, length a multiple of block_size -> bytes (llama.cpp's *_ref quantizer)
    dequantize(raw, n)   bytes -> float32 array of n elements (llama.cpp's dequantize_row_*)

and its docstring gives the block layout byte by byte. Everything is little-endian; "f16" is an IEEE binary16
(ggml_half), converted from float32 with round-to-nearest-even (as ggml's GGML_FP32_TO_FP16 does; overflow gives
inf). A tensor row is a whole number of blocks, blocks are stored back to back with no padding, and element e of a
row lives in block e // block_size.

Floating point: every operation is done in float32 in C's evaluation order, each result rounded (ISO C semantics,
`-ffp-contract=off`). Built that way, llama.cpp's reference functions give exactly these bytes and floats (checked
against ggml-quants.c compiled with -ffp-contract=off). A C compiler allowed to contract `a*b + c` into a fused
multiply-add (GCC's default on aarch64, and on x86-64 with -march=native / -mfma, which llama.cpp's GGML_NATIVE build
uses) quantizes differently: the K-quants' scale searches and nearest_int(a*b) (contracted with its + 1.5*2^23)
then pick other candidates, so 2-30 % of Q2_K/Q4_K/Q5_K/Q6_K blocks (and rare Q3_K/Q8_K/IQ4_NL blocks) come out
different; Q4_0..Q8_1 were not seen to differ. Dequantization does not depend on it, nor on the order of its
multiplications: the f16 scale times the integer sub-scale and quant is exact in float32 (at most 11 + 8 + 6 bits
significant, so one rounding at most, in Q6_K), and where a term is subtracted or added (Q4_1, Q5_1, Q2_K, Q4_K,
Q5_K) the product before it is exact, so only that add rounds. Q8_K's d is a float32: d*q rounds once.
WebAssembly has no implicit contraction, so the engine's C++ should match this module exactly.

Sums are accumulated sequentially, in element order, in float32 (never numpy's pairwise sum), because the
K-quant searches compare such sums and a different rounding changes which candidate wins.
"""
import numpy as np

QK_K = 256
F32 = np.float32
_ZERO = F32(0.0)
_ONE = F32(1.0)
GROUP_MAX_EPS = F32(1e-15)

# IQ4_NL's 16 non-linear levels (ggml-common.h kvalues_iq4nl), indexed by the 4-bit code.
KVALUES_IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.int8)


# ---------------------------------------------------------------------------------------------------------------
# helpers


def _f16_bytes(a):
    """float32 array -> uint8 array (..., 2): the little-endian f16 bits, rounded to nearest even."""
    a = np.asarray(a, F32)
    with np.errstate(over="ignore"):
        h = a.astype(np.float16)
    return h.astype("<f2").view(np.uint8).reshape(a.shape + (2,))


def _f16_value(b):
    """uint8 array (..., 2) of little-endian f16 bits -> float32 values."""
    b = np.ascontiguousarray(b, np.uint8)
    return b.view("<f2").reshape(b.shape[:-1]).astype(F32)


def _f16_round(a):
    """What GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(a)) gives."""
    with np.errstate(over="ignore"):
        return np.asarray(a, F32).astype(np.float16).astype(F32)


def nearest_int(v):
    """ggml's nearest_int: float32 + 12582912.f (1.5 * 2**23), then the low mantissa bits. For |v| < 2**22 this is
    round-half-to-even; outside that range it reproduces C's garbage rather than raising."""
    v = np.asarray(v, F32)
    with np.errstate(over="ignore", invalid="ignore"):
        t = (v + F32(12582912.0)).astype(F32)
    return ((t.view(np.int32) & 0x007FFFFF) - 0x00400000).astype(np.int32)


def _trunc_int(v):
    """C's float -> integer conversion (truncation toward zero), for values that fit."""
    v = np.asarray(v, F32)
    with np.errstate(invalid="ignore"):
        return np.trunc(v).astype(np.int64)


def _roundf(v):
    """C's roundf (half away from zero) of float32 values, as int64. float64 holds v + 0.5 exactly."""
    v = np.asarray(v, F32).astype(np.float64)
    return (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int64)


def _signed_absmax(x):
    """Per row of x (..., n): the element with the largest |x|, the first one on ties, as the C loops
    `if (amax < fabsf(v)) { amax = fabsf(v); max = v; }` starting from amax = max = 0 find it. Returns (amax, max)."""
    ax = np.abs(x)
    i = np.argmax(ax, axis=-1)[..., None]
    amax = np.take_along_axis(ax, i, axis=-1)[..., 0]
    mx = np.take_along_axis(x, i, axis=-1)[..., 0]
    mx = np.where(amax > 0, mx, _ZERO)  # all zero: max stays +0.0 (C never assigns it)
    return amax.astype(F32), mx.astype(F32)


def _first_min_max(x):
    """min and max of each row, the first occurrence on ties (C's `if (v < min)` / `if (v > max)` loops)."""
    mn = np.take_along_axis(x, np.argmin(x, axis=-1)[..., None], axis=-1)[..., 0]
    mx = np.take_along_axis(x, np.argmax(x, axis=-1)[..., None], axis=-1)[..., 0]
    return mn.astype(F32), mx.astype(F32)


def _quiet(f):
    """Run f with numpy's floating-point warnings off (random bytes decode to inf/nan scales)."""
    def g(*a, **k):
        with np.errstate(all="ignore"):
            return f(*a, **k)
    g.__doc__ = f.__doc__
    return g


def _pos_max(v):
    """C's `float m = 0; for (...) if (v > m) m = v;` per row: the largest element if positive, else +0.0."""
    m = v.max(axis=-1)
    return np.where(m > 0, m, _ZERO).astype(F32)


def _blocks(x, block_size):
    x = np.ascontiguousarray(np.asarray(x, F32).reshape(-1))
    if x.size % block_size:
        raise ValueError(f"length {x.size} is not a multiple of the block size {block_size}")
    return x.reshape(-1, block_size)


def _raw_blocks(raw, n, block_size, type_size):
    if n % block_size:
        raise ValueError(f"n = {n} is not a multiple of the block size {block_size}")
    b = np.frombuffer(bytes(raw), np.uint8) if not isinstance(raw, np.ndarray) else raw.view(np.uint8).reshape(-1)
    need = n // block_size * type_size
    if b.size < need:
        raise ValueError(f"{n} elements need {need} bytes, got {b.size}")
    return b[:need].reshape(-1, type_size)


def _best_index_int8(values, x):
    """ggml's best_index_int8 (values sorted ascending, int8): the index of the nearest value to x, the upper one
    on an exact tie; the comparison `x - val[mu-1] < val[mu] - x` is done in float32."""
    v = values.astype(F32)
    n = v.size
    x = np.asarray(x, F32)
    mu = np.clip(np.searchsorted(v, x, side="right"), 1, n - 1)  # val[mu-1] <= x < val[mu] inside the range
    lo, hi = v[mu - 1], v[mu]
    r = np.where((x - lo) < (hi - x), mu - 1, mu)
    r = np.where(x <= v[0], 0, r)
    r = np.where(x >= v[n - 1], n - 1, r)
    return r.astype(np.int32)


# ---------------------------------------------------------------------------------------------------------------
# the K-quants' scale searches, vectorised over groups (rows of x); loops run over elements in C's order


def make_qx_quants(x, nmax):
    """make_qx_quants(n, nmax, x, L, rmse_type=1, qw=NULL) for each row of x (groups, n): symmetric quants
    L = l + nmax with l in [-nmax, nmax-1], weights x*x, scale refined over 18 trial inverse scales
    -(nmax + 0.1*is)/max, is = -9..9 (0 skipped). Returns (scale float32 (groups,), L int32 (groups, n))."""
    x = np.asarray(x, F32)
    g, n = x.shape
    amax, mx = _signed_absmax(x)
    zero = amax < GROUP_MAX_EPS
    w = x * x
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        def sums(iscale):
            l = np.clip(nearest_int(iscale[:, None] * x), -nmax, nmax - 1)
            sumlx = np.zeros(g, F32)
            suml2 = np.zeros(g, F32)
            lf = l.astype(F32)
            for i in range(n):
                sumlx = sumlx + w[:, i] * x[:, i] * lf[:, i]
                suml2 = suml2 + w[:, i] * lf[:, i] * lf[:, i]
            return l, sumlx, suml2

        iscale = F32(-nmax) / mx
        l, sumlx, suml2 = sums(iscale)
        L = l + nmax
        scale = np.where(suml2 != 0, sumlx / suml2, _ZERO).astype(F32)
        best = scale * sumlx
        for step in range(-9, 10):
            if step == 0:
                continue
            iscale = -(F32(nmax) + F32(0.1) * F32(step)) / mx
            l, sumlx, suml2 = sums(iscale)
            upd = (suml2 > 0) & (sumlx * sumlx > best * suml2) & ~zero
            L = np.where(upd[:, None], l + nmax, L)
            scale = np.where(upd, sumlx / suml2, scale).astype(F32)
            best = np.where(upd, scale * sumlx, best).astype(F32)
    L = np.where(zero[:, None], 0, L)
    scale = np.where(zero, _ZERO, scale).astype(F32)
    return scale, L.astype(np.int32)


def make_q3_quants(x, nmax):
    """make_q3_quants(n, nmax, x, L, do_rmse=true) for each row of x: start from l = nearest_int(-nmax/max * x)
    clamped to [-nmax, nmax-1], then up to 5 passes of coordinate descent on the weighted (w = x*x) least-squares
    fit, element by element in order, keeping a change only if it raises sumlx^2/suml2. Returns
    (scale = sumlx/suml2, L = l + nmax); an all-zero group (amax < 1e-15) gives scale 0 and L = 0."""
    x = np.asarray(x, F32)
    g, n = x.shape
    amax, mx = _signed_absmax(x)
    zero = amax < GROUP_MAX_EPS
    w = x * x
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        iscale = F32(-nmax) / mx
        L = np.clip(nearest_int(iscale[:, None] * x), -nmax, nmax - 1).astype(np.int32)
        sumlx = np.zeros(g, F32)
        suml2 = np.zeros(g, F32)
        for i in range(n):
            li = L[:, i].astype(F32)
            sumlx = sumlx + w[:, i] * x[:, i] * li
            suml2 = suml2 + w[:, i] * li * li
        active = ~zero
        for _ in range(5):
            changed = np.zeros(g, bool)
            for i in range(n):
                xi, wi = x[:, i], w[:, i]
                li = L[:, i].astype(F32)
                slx = sumlx - wi * xi * li
                c = active & (slx > 0)
                sl2 = suml2 - wi * li * li
                new_l = np.clip(nearest_int(xi * sl2 / slx), -nmax, nmax - 1)
                c &= new_l != L[:, i]
                nl = new_l.astype(F32)
                slx = slx + wi * xi * nl
                sl2 = sl2 + wi * nl * nl
                c &= (sl2 > 0) & (slx * slx * suml2 > sumlx * sumlx * sl2)
                L[:, i] = np.where(c, new_l, L[:, i])
                sumlx = np.where(c, slx, sumlx).astype(F32)
                suml2 = np.where(c, sl2, suml2).astype(F32)
                changed |= c
            active &= changed
            if not active.any():
                break
        scale = np.where(suml2 > 0, sumlx / suml2, _ZERO).astype(F32)
    L = np.where(zero[:, None], 0, L + nmax)
    scale = np.where(zero, _ZERO, scale).astype(F32)
    return scale, L.astype(np.int32)


def make_qkx2_quants(x, weights, nmax, rmin, rdelta, nstep, use_mad):
    """make_qkx2_quants for each row of x (groups, n) with per-element weights: asymmetric quants
    x ~ scale*L + min, L in [0, nmax], min <= 0. Starts from the min/max fit, then tries inverse scales
    (rmin + rdelta*is + nmax)/(max - min) for is = 0..nstep, solving the weighted least-squares scale and min for each
    trial's L and keeping it if its weighted error (|diff| if use_mad, else diff^2) is lower. A better trial also
    moves `min`, which the later trials use. Returns (scale, the_min = -min >= 0, L)."""
    x = np.asarray(x, F32)
    weights = np.asarray(weights, F32)
    g, n = x.shape
    mn, mx = _first_min_max(x)
    sum_w = weights[:, 0].copy()
    sum_x = sum_w * x[:, 0]
    for i in range(1, n):
        sum_w = sum_w + weights[:, i]
        sum_x = sum_x + weights[:, i] * x[:, i]
    mn = np.where(mn > 0, _ZERO, mn).astype(F32)
    flat = mx == mn

    def err(scale, L, mn):
        e = np.zeros(g, F32)
        Lf = L.astype(F32)
        for i in range(n):
            diff = scale * Lf[:, i] + mn - x[:, i]
            diff = np.abs(diff) if use_mad else diff * diff
            e = e + weights[:, i] * diff
        return e

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        iscale = F32(nmax) / (mx - mn)
        scale = (_ONE / iscale).astype(F32)
        L = np.clip(nearest_int(iscale[:, None] * (x - mn[:, None])), 0, nmax)
        best_error = err(scale, L, mn)
        if nstep >= 1:
            for step in range(nstep + 1):
                iscale = (F32(rmin) + F32(rdelta) * F32(step) + F32(nmax)) / (mx - mn)
                Laux = np.clip(nearest_int(iscale[:, None] * (x - mn[:, None])), 0, nmax)
                Lf = Laux.astype(F32)
                sum_l = np.zeros(g, F32)
                sum_l2 = np.zeros(g, F32)
                sum_xl = np.zeros(g, F32)
                for i in range(n):
                    wl = weights[:, i] * Lf[:, i]
                    sum_l = sum_l + wl
                    sum_l2 = sum_l2 + wl * Lf[:, i]
                    sum_xl = sum_xl + wl * x[:, i]
                D = sum_w * sum_l2 - sum_l * sum_l
                ok = (D > 0) & ~flat
                this_scale = (sum_w * sum_xl - sum_x * sum_l) / D
                this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D
                pos = this_min > 0
                this_min = np.where(pos, _ZERO, this_min).astype(F32)
                this_scale = np.where(pos, sum_xl / sum_l2, this_scale).astype(F32)
                cur_error = err(this_scale, Laux, this_min)
                upd = ok & (cur_error < best_error)
                L = np.where(upd[:, None], Laux, L)
                best_error = np.where(upd, cur_error, best_error).astype(F32)
                scale = np.where(upd, this_scale, scale).astype(F32)
                mn = np.where(upd, this_min, mn).astype(F32)
    L = np.where(flat[:, None], 0, L)
    scale = np.where(flat, _ZERO, scale).astype(F32)
    return scale, (-mn).astype(F32), L.astype(np.int32)


# ---------------------------------------------------------------------------------------------------------------
# the types


def _pack_nibbles32(q):
    """Low 4 bits of (blocks, 32) quants -> (blocks, 16) bytes: byte j holds element j (low) and j+16 (high)."""
    q = q.astype(np.uint8)
    return (q[:, :16] & 0xF) | ((q[:, 16:] & 0xF) << 4)


def _unpack_nibbles32(qs):
    """(blocks, 16) bytes -> (blocks, 32) nibbles, the inverse of _pack_nibbles32."""
    return np.concatenate([qs & 0xF, qs >> 4], axis=1)


def _inverse(d):
    """id = d ? 1/d : 0 per block, as ggml writes it."""
    with np.errstate(divide="ignore"):
        return np.where(d != 0, _ONE / d, _ZERO).astype(F32)


def _symmetric_levels(xb, half):
    """q4_0 / q5_0: d = max / -half (max: the element of largest |x|, signed, first on ties) and the unclamped levels
    (int)(x*id + half + 0.5f), x*id and the addition rounded separately."""
    _, mx = _signed_absmax(xb)
    d = (mx / F32(-half)).astype(F32)
    t = (xb * _inverse(d)[:, None]).astype(F32) + F32(half + 0.5)
    return d, _trunc_int(t)


def _min_max_levels(xb, steps):
    """q4_1 / q5_1: min, d = (max - min) / steps and the unclamped levels (int)((x - min)*id + 0.5f)."""
    mn, mx = _first_min_max(xb)
    d = ((mx - mn) / F32(steps)).astype(F32)
    t = ((xb - mn[:, None]) * _inverse(d)[:, None]).astype(F32) + F32(0.5)
    return d, mn, _trunc_int(t)


class QuantType:
    name = ""
    ggml_type = -1
    block_size = 0
    type_size = 0

    @classmethod
    def row_bytes(cls, n):
        if n % cls.block_size:
            raise ValueError(f"{cls.name}: {n} is not a multiple of the block size {cls.block_size}")
        return n // cls.block_size * cls.type_size


class Q4_0(QuantType):
    """Q4_0 (ggml type 2): 32 elements in 18 bytes, symmetric 4-bit.

    offset  size  field
      0      2    d      f16 scale
      2     16    qs     nibbles: byte j (0..15) holds element j in its low nibble and element j+16 in its high nibble

    value[j] = d * (q[j] - 8), q in 0..15.
    Quantize: max = the element of largest |x| (first on ties, signed); d = max / -8; id = d ? 1/d : 0;
    q = min(15, (int)(x*id + 8.5f)) (truncation; x*id and +8.5 rounded separately). So the largest-magnitude element
    maps to q = 0 (value -8*d = max) and d is negative when that element is positive. An all-zero block stores
    d = -0.0 (0x8000) and nibbles 8.
    """
    name, ggml_type, block_size, type_size = "q4_0", 2, 32, 18

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 32)
        d, levels = _symmetric_levels(xb, 8)
        q = np.minimum(15, levels).astype(np.uint8)
        out = np.empty((xb.shape[0], 18), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:] = _pack_nibbles32(q)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 18)
        d = _f16_value(b[:, 0:2])
        qs = b[:, 2:]
        q = _unpack_nibbles32(qs).astype(np.int32) - 8
        return (q.astype(F32) * d[:, None]).reshape(-1)


class Q4_1(QuantType):
    """Q4_1 (ggml type 3): 32 elements in 20 bytes, 4-bit with a minimum.

    offset  size  field
      0      2    d      f16 scale
      2      2    m      f16 minimum (the block's smallest element)
      4     16    qs     nibbles: byte j holds element j (low nibble) and element j+16 (high nibble)

    value[j] = d * q[j] + m (product rounded, then the sum), q in 0..15.
    Quantize: min, max of the block; d = (max - min) / 15; id = d ? 1/d : 0; q = min(15, (int)((x - min)*id + 0.5f)).
    """
    name, ggml_type, block_size, type_size = "q4_1", 3, 32, 20

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 32)
        d, mn, levels = _min_max_levels(xb, 15)
        q = np.minimum(15, levels).astype(np.uint8)
        out = np.empty((xb.shape[0], 20), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:4] = _f16_bytes(mn)
        out[:, 4:] = _pack_nibbles32(q)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 20)
        d = _f16_value(b[:, 0:2])
        m = _f16_value(b[:, 2:4])
        qs = b[:, 4:]
        q = _unpack_nibbles32(qs).astype(F32)
        return (q * d[:, None] + m[:, None]).astype(F32).reshape(-1)


def _pack_qh32(q5):
    """5-bit quants (blocks, 32) -> (blocks, 4) bytes of the little-endian uint32 whose bit j is bit 4 of q[j]."""
    bits = ((q5 >> 4) & 1).astype(np.uint64)
    word = (bits << np.arange(32, dtype=np.uint64)).sum(axis=1).astype("<u4")
    return word.view(np.uint8).reshape(-1, 4)


def _unpack_qh32(b4):
    word = np.ascontiguousarray(b4).view("<u4").reshape(-1).astype(np.uint64)
    return ((word[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(np.uint8)


class Q5_0(QuantType):
    """Q5_0 (ggml type 6): 32 elements in 22 bytes, symmetric 5-bit.

    offset  size  field
      0      2    d      f16 scale
      2      4    qh     uint32, little-endian: bit j (0..31) is the 5th bit (value 16) of element j
      6     16    qs     low nibbles: byte j holds element j (low nibble) and element j+16 (high nibble)

    value[j] = d * (q[j] - 16), q = low nibble | (qh bit j) << 4, in 0..31.
    Quantize: max = element of largest |x| (signed, first on ties); d = max / -16; id = d ? 1/d : 0;
    q = min(31, (int)(x*id + 16.5f)).
    """
    name, ggml_type, block_size, type_size = "q5_0", 6, 32, 22

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 32)
        d, levels = _symmetric_levels(xb, 16)
        q = np.minimum(31, levels).astype(np.uint8)
        out = np.empty((xb.shape[0], 22), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:6] = _pack_qh32(q)
        out[:, 6:] = _pack_nibbles32(q)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 22)
        d = _f16_value(b[:, 0:2])
        hi = _unpack_qh32(b[:, 2:6])
        qs = b[:, 6:]
        q = (_unpack_nibbles32(qs) | (hi << 4)).astype(np.int32) - 16
        return (q.astype(F32) * d[:, None]).reshape(-1)


class Q5_1(QuantType):
    """Q5_1 (ggml type 7): 32 elements in 24 bytes, 5-bit with a minimum.

    offset  size  field
      0      2    d      f16 scale
      2      2    m      f16 minimum
      4      4    qh     uint32, little-endian: bit j is the 5th bit of element j
      8     16    qs     low nibbles: byte j holds element j (low) and element j+16 (high)

    value[j] = d * q[j] + m, q in 0..31.
    Quantize: d = (max - min) / 31; id = d ? 1/d : 0; q = (uint8_t)((x - min)*id + 0.5f) (no clamp in llama.cpp).
    """
    name, ggml_type, block_size, type_size = "q5_1", 7, 32, 24

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 32)
        d, mn, levels = _min_max_levels(xb, 31)
        q = (levels & 0xFF).astype(np.uint8)
        out = np.empty((xb.shape[0], 24), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:4] = _f16_bytes(mn)
        out[:, 4:8] = _pack_qh32(q)
        out[:, 8:] = _pack_nibbles32(q)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 24)
        d = _f16_value(b[:, 0:2])
        m = _f16_value(b[:, 2:4])
        hi = _unpack_qh32(b[:, 4:8])
        qs = b[:, 8:]
        q = (_unpack_nibbles32(qs) | (hi << 4)).astype(F32)
        return (q * d[:, None] + m[:, None]).astype(F32).reshape(-1)


class Q8_0(QuantType):
    """Q8_0 (ggml type 8): 32 elements in 34 bytes.

    offset  size  field
      0      2    d      f16 scale
      2     32    qs     int8 quants, element j at byte 2+j

    value[j] = d * qs[j].
    Quantize: amax = max |x|; d = amax / 127; id = d ? 1/d : 0; qs = roundf(x*id) (half away from zero; |qs| <= 127).
    """
    name, ggml_type, block_size, type_size = "q8_0", 8, 32, 34

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 32)
        amax = np.abs(xb).max(axis=1)
        d = (amax / F32(127)).astype(F32)
        idd = _inverse(d)
        q = _roundf(xb * idd[:, None]).astype(np.int8)
        out = np.empty((xb.shape[0], 34), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:] = q.view(np.uint8)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 34)
        d = _f16_value(b[:, 0:2])
        q = np.ascontiguousarray(b[:, 2:]).view(np.int8).astype(F32)
        return (q * d[:, None]).reshape(-1)


class Q8_1(QuantType):
    """Q8_1 (ggml type 9): 32 elements in 36 bytes; llama.cpp's activation format for Q4_1/Q5_1 dot products.

    offset  size  field
      0      2    d      f16 scale
      2      2    s      f16 of d * sum(qs) (the float32 product of the integer sum and the unrounded float d)
      4     32    qs     int8 quants, element j at byte 4+j

    value[j] = d * qs[j] (s is only a dot-product helper; ggml has no dequantize_row_q8_1, this is the obvious one).
    Quantize: as Q8_0 (d = amax/127, qs = roundf(x*id)), plus s. s overflows to f16 inf when |d * sum| > 65504
    (llama.cpp stores it so too).
    """
    name, ggml_type, block_size, type_size = "q8_1", 9, 32, 36

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 32)
        amax = np.abs(xb).max(axis=1)
        d = (amax / F32(127)).astype(F32)
        idd = _inverse(d)
        q = _roundf(xb * idd[:, None])
        s = (q.sum(axis=1).astype(F32) * d).astype(F32)
        out = np.empty((xb.shape[0], 36), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:4] = _f16_bytes(s)
        out[:, 4:] = q.astype(np.int8).view(np.uint8)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 36)
        d = _f16_value(b[:, 0:2])
        q = np.ascontiguousarray(b[:, 4:]).view(np.int8).astype(F32)
        return (q * d[:, None]).reshape(-1)


def _pack_2bit_128(L):
    """K-quant 2-bit packing of (blocks, 256) values 0..3 into (blocks, 64) bytes: for each half h (elements
    128h..128h+127), byte 32h + l holds elements 128h+l, +32, +64, +96 in bits 0-1, 2-3, 4-5, 6-7."""
    L = L.astype(np.uint8).reshape(-1, 2, 4, 32)
    q = L[:, :, 0] | (L[:, :, 1] << 2) | (L[:, :, 2] << 4) | (L[:, :, 3] << 6)
    return q.reshape(-1, 64)


def _unpack_2bit_128(qs):
    qs = qs.reshape(-1, 2, 1, 32)
    return ((qs >> (2 * np.arange(4, dtype=np.uint8)).reshape(1, 1, 4, 1)) & 3).reshape(-1, 256)


class Q2_K(QuantType):
    """Q2_K (ggml type 10): 256 elements in 84 bytes; 16 groups of 16, 2-bit quants with a 4-bit scale and a 4-bit
    min per group.

    offset  size  field
      0     16    scales  byte g (group g = elements 16g..16g+15): low nibble = scale code, high nibble = min code
     16     64    qs      2-bit quants: for half h (elements 128h..128h+127) byte 16+32h+l holds elements 128h+l,
                          128h+l+32, 128h+l+64, 128h+l+96 in bits 0-1, 2-3, 4-5, 6-7 (l = 0..31)
     80      2    d       f16 super-scale for the scale codes
     82      2    dmin    f16 super-scale for the min codes

    value[e] = (d * (scales[g] & 15)) * q[e] - (dmin * (scales[g] >> 4)), g = e // 16 (each product rounded).
    Note the struct order: scales and quants first, d and dmin last.
    Quantize (quantize_row_q2_K_ref): per group make_qkx2_quants(nmax=3, weights |x|, rmin -0.5, rdelta 0.1,
    nstep 15, mean-absolute error); scale codes = nearest_int(15/max_scale * scale), d = max_scale/15; min codes
    likewise with dmin = max_min/15; then every element is re-quantized with the rounded f16 scales:
    q = clamp(nearest_int((x + dm)/dl), 0, 3), skipping groups whose dl is 0 (they keep the search's quants).
    """
    name, ggml_type, block_size, type_size = "q2_k", 10, 256, 84

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 256)
        nb = xb.shape[0]
        g = xb.reshape(-1, 16)
        scales, mins, L = make_qkx2_quants(g, np.abs(g), 3, -0.5, 0.1, 15, True)
        scales, mins, L = scales.reshape(nb, 16), mins.reshape(nb, 16), L.reshape(nb, 256)
        max_scale = _pos_max(scales)
        max_min = _pos_max(mins)
        with np.errstate(divide="ignore", invalid="ignore"):
            iscale = (F32(15) / max_scale).astype(F32)
            ls = np.where((max_scale > 0)[:, None], nearest_int(iscale[:, None] * scales), 0) & 0xFF
            d = np.where(max_scale > 0, max_scale / F32(15), _ZERO).astype(F32)
            imin = (F32(15) / max_min).astype(F32)
            lm = np.where((max_min > 0)[:, None], nearest_int(imin[:, None] * mins), 0)
            dmin = np.where(max_min > 0, max_min / F32(15), _ZERO).astype(F32)
        sc = ((ls | (lm << 4)) & 0xFF).astype(np.uint8)
        dl = _f16_round(d)[:, None] * (sc & 0xF).astype(F32)
        ml = _f16_round(dmin)[:, None] * (sc >> 4).astype(F32)
        xg = xb.reshape(nb, 16, 16)
        with np.errstate(divide="ignore", invalid="ignore"):
            lq = np.clip(nearest_int((xg + ml[:, :, None]) / dl[:, :, None]), 0, 3)
        L = np.where((dl != 0)[:, :, None], lq, L.reshape(nb, 16, 16)).reshape(nb, 256)
        out = np.empty((nb, 84), np.uint8)
        out[:, 0:16] = sc
        out[:, 16:80] = _pack_2bit_128(L)
        out[:, 80:82] = _f16_bytes(d)
        out[:, 82:84] = _f16_bytes(dmin)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 256, 84)
        sc = b[:, 0:16]
        q = _unpack_2bit_128(b[:, 16:80]).astype(F32).reshape(-1, 16, 16)
        d = _f16_value(b[:, 80:82])
        dmin = _f16_value(b[:, 82:84])
        dl = d[:, None] * (sc & 0xF).astype(F32)
        ml = dmin[:, None] * (sc >> 4).astype(F32)
        return (dl[:, :, None] * q - ml[:, :, None]).astype(F32).reshape(-1)


def _pack_q3k_scales(l):
    """16 6-bit codes (blocks, 16) -> 12 bytes: bytes 0-7 low nibbles (code j in byte j%8, low nibble for j < 8,
    high nibble for j >= 8); bytes 8-11 the top 2 bits: code j's bits 4-5 go to byte 8 + j%4 at bit 2*(j//4)."""
    l = l.astype(np.uint8)
    out = np.zeros((l.shape[0], 12), np.uint8)
    out[:, 0:8] = (l[:, 0:8] & 0xF) | ((l[:, 8:16] & 0xF) << 4)
    hi = (l >> 4).reshape(-1, 4, 4)  # [j//4, j%4]
    out[:, 8:12] = hi[:, 0] | (hi[:, 1] << 2) | (hi[:, 2] << 4) | (hi[:, 3] << 6)
    return out


def _unpack_q3k_scales(s):
    lo = np.concatenate([s[:, 0:8] & 0xF, s[:, 0:8] >> 4], axis=1)
    hi = (s[:, 8:12][:, None, :] >> (2 * np.arange(4, dtype=np.uint8)).reshape(1, 4, 1)) & 3  # [j//4, j%4]
    return (lo | (hi.reshape(-1, 16) << 4)).astype(np.int32)


class Q3_K(QuantType):
    """Q3_K (ggml type 11): 256 elements in 110 bytes; 16 groups of 16, symmetric 3-bit quants, 6-bit signed scales.

    offset  size  field
      0     32    hmask   high bit of each 3-bit quant: element e's bit is bit (e // 32) of byte e % 32
     32     64    qs      low 2 bits, packed as in Q2_K: byte 32h+l holds elements 128h+l, +32, +64, +96 in bits
                          0-1, 2-3, 4-5, 6-7
     96     12    scales  16 6-bit codes: bytes 0-7 hold the low 4 bits (code j < 8 in the low nibble of byte j, code
                          j >= 8 in the high nibble of byte j-8); bytes 8-11 hold the top 2 bits (code j in byte
                          8 + j%4, bits 2*(j//4) and up)
    108      2    d       f16 super-scale

    value[e] = (d * (code[g] - 32)) * (low2[e] - (hmask bit set ? 0 : 4)), g = e // 16.
    The high bit is inverted relative to what one might expect: a CLEAR hmask bit subtracts 4 (q in -4..3).
    Quantize: per group make_q3_quants(nmax 4); the group scale of largest magnitude (signed) gives
    iscale = -32/max_scale, codes = clamp(nearest_int(iscale*scale), -32, 31) + 32, d = 1/iscale (so the largest
    group gets code 0, i.e. scale -32, and d has the opposite sign of max_scale); then re-quantize each element with
    the rounded scales,
    q = clamp(nearest_int(x/dl), -4, 3) + 4, skipping groups with dl == 0.
    """
    name, ggml_type, block_size, type_size = "q3_k", 11, 256, 110

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 256)
        nb = xb.shape[0]
        scales, L = make_q3_quants(xb.reshape(-1, 16), 4)
        scales, L = scales.reshape(nb, 16), L.reshape(nb, 256)
        _, max_scale = _signed_absmax(scales)
        nz = max_scale != 0
        with np.errstate(divide="ignore", invalid="ignore"):
            iscale = (F32(-32) / max_scale).astype(F32)
            l = nearest_int(iscale[:, None] * scales)
            l = ((l + 128) & 0xFF) - 128  # int8_t
            l = np.clip(l, -32, 31) + 32
            d = np.where(nz, _ONE / iscale, _ZERO).astype(F32)
        sbytes = np.where(nz[:, None], _pack_q3k_scales(np.where(nz[:, None], l, 0)), 0).astype(np.uint8)
        sc = _unpack_q3k_scales(sbytes) - 32
        dl = _f16_round(d)[:, None] * sc.astype(F32)
        xg = xb.reshape(nb, 16, 16)
        with np.errstate(divide="ignore", invalid="ignore"):
            lq = np.clip(nearest_int(xg / dl[:, :, None]), -4, 3) + 4
        L = np.where((dl != 0)[:, :, None], lq, L.reshape(nb, 16, 16)).reshape(nb, 256)
        hbit = (L > 3).astype(np.uint8)
        L = np.where(L > 3, L - 4, L)
        hmask = (hbit.reshape(nb, 8, 32) << np.arange(8, dtype=np.uint8).reshape(1, 8, 1)).sum(axis=1).astype(np.uint8)
        out = np.empty((nb, 110), np.uint8)
        out[:, 0:32] = hmask
        out[:, 32:96] = _pack_2bit_128(L)
        out[:, 96:108] = sbytes
        out[:, 108:110] = _f16_bytes(d)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 256, 110)
        hm = b[:, 0:32]
        low = _unpack_2bit_128(b[:, 32:96]).astype(np.int32)
        hbit = ((hm[:, None, :] >> np.arange(8, dtype=np.uint8).reshape(1, 8, 1)) & 1).reshape(-1, 256)
        q = (low - np.where(hbit != 0, 0, 4)).astype(F32).reshape(-1, 16, 16)
        sc = _unpack_q3k_scales(b[:, 96:108]) - 32
        d = _f16_value(b[:, 108:110])
        dl = d[:, None] * sc.astype(F32)
        return (dl[:, :, None] * q).astype(F32).reshape(-1)


def _pack_k4_scales(ls, lm):
    """8 6-bit scale codes and 8 6-bit min codes (blocks, 8) -> Q4_K/Q5_K's 12 scale bytes:
    j < 4:  byte j = scale j (bits 0-5), byte j+4 = min j (bits 0-5)
    j >= 4: byte j+4 = (scale j & 15) | (min j & 15) << 4; scale j's bits 4-5 -> bits 6-7 of byte j-4;
            min j's bits 4-5 -> bits 6-7 of byte j."""
    ls = ls.astype(np.uint8)
    lm = lm.astype(np.uint8)
    out = np.zeros((ls.shape[0], 12), np.uint8)
    out[:, 0:4] = ls[:, 0:4] | ((ls[:, 4:8] >> 4) << 6)
    out[:, 4:8] = lm[:, 0:4] | ((lm[:, 4:8] >> 4) << 6)
    out[:, 8:12] = (ls[:, 4:8] & 0xF) | ((lm[:, 4:8] & 0xF) << 4)
    return out


def _unpack_k4_scales(s):
    """ggml's get_scale_min_k4 for j = 0..7 -> (scale codes, min codes), each (blocks, 8)."""
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)], axis=1)
    mn = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=1)
    return sc.astype(np.int32), mn.astype(np.int32)


def _quantize_k45(xb, nmax, rmin, nstep):
    """The shared part of quantize_row_q4_K_ref / quantize_row_q5_K_ref: returns (d, dmin, 12 scale bytes, L)."""
    nb = xb.shape[0]
    xg = xb.reshape(nb * 8, 32)
    sum_x2 = np.zeros(nb * 8, F32)
    for l in range(32):
        sum_x2 = sum_x2 + xg[:, l] * xg[:, l]
    av_x = np.sqrt(sum_x2 / F32(32)).astype(F32)
    weights = av_x[:, None] + np.abs(xg)
    scales, mins, L = make_qkx2_quants(xg, weights, nmax, rmin, 0.1, nstep, False)
    scales, mins, L = scales.reshape(nb, 8), mins.reshape(nb, 8), L.reshape(nb, 256)
    max_scale = _pos_max(scales)
    max_min = _pos_max(mins)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_scale = np.where(max_scale > 0, F32(63) / max_scale, _ZERO).astype(F32)
        inv_min = np.where(max_min > 0, F32(63) / max_min, _ZERO).astype(F32)
    ls = np.minimum(63, nearest_int(inv_scale[:, None] * scales) & 0xFF)  # uint8_t, then MIN(63, .)
    lm = np.minimum(63, nearest_int(inv_min[:, None] * mins) & 0xFF)
    sbytes = _pack_k4_scales(ls, lm)
    d = (max_scale / F32(63)).astype(F32)
    dmin = (max_min / F32(63)).astype(F32)
    sc, m = _unpack_k4_scales(sbytes)
    dl = _f16_round(d)[:, None] * sc.astype(F32)
    ml = _f16_round(dmin)[:, None] * m.astype(F32)
    xs = xb.reshape(nb, 8, 32)
    with np.errstate(divide="ignore", invalid="ignore"):
        lq = np.clip(nearest_int((xs + ml[:, :, None]) / dl[:, :, None]), 0, nmax)
    L = np.where((dl != 0)[:, :, None], lq, L.reshape(nb, 8, 32)).reshape(nb, 256)
    return d, dmin, sbytes, L


class Q4_K(QuantType):
    """Q4_K (ggml type 12): 256 elements in 144 bytes; 8 groups of 32, 4-bit quants, 6-bit scale and min per group.

    offset  size  field
      0      2    d       f16 super-scale for the scale codes
      2      2    dmin    f16 super-scale for the min codes
      4     12    scales  8 scale codes sc[j] and 8 min codes m[j], 6 bits each (get_scale_min_k4):
                            j < 4:  sc[j] = byte[j] & 63,                         m[j] = byte[j+4] & 63
                            j >= 4: sc[j] = (byte[j+4] & 15) | (byte[j-4] >> 6) << 4,
                                    m[j]  = (byte[j+4] >> 4) | (byte[j]   >> 6) << 4
                          i.e. bytes 0-3: low 6 bits of sc[0..3], top bits 6-7 = bits 4-5 of sc[4..7];
                               bytes 4-7: low 6 bits of m[0..3],  top bits 6-7 = bits 4-5 of m[4..7];
                               bytes 8-11: low nibble = sc[4..7] & 15, high nibble = m[4..7] & 15
     16    128    qs      nibbles: for chunk c = 0..3 (elements 64c..64c+63) byte 16+32c+l holds element 64c+l in
                          its low nibble and element 64c+32+l in its high nibble

    value[e] = (d * sc[g]) * q[e] - (dmin * m[g]), g = e // 32.
    Quantize (quantize_row_q4_K_ref): per group weights av_x + |x| (av_x = sqrt(mean x^2)),
    make_qkx2_quants(nmax 15, rmin -1, rdelta 0.1, nstep 20, squared error); codes nearest_int(63/max * v)
    (as uint8_t, then min 63), d = max_scale/63, dmin = max_min/63; re-quantize with the rounded scales,
    q = clamp(nearest_int((x + dm)/dl), 0, 15), skipping groups with dl == 0.
    """
    name, ggml_type, block_size, type_size = "q4_k", 12, 256, 144

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 256)
        nb = xb.shape[0]
        d, dmin, sbytes, L = _quantize_k45(xb, 15, -1.0, 20)
        L = L.astype(np.uint8).reshape(nb, 4, 2, 32)
        out = np.empty((nb, 144), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:4] = _f16_bytes(dmin)
        out[:, 4:16] = sbytes
        out[:, 16:] = (L[:, :, 0] | (L[:, :, 1] << 4)).reshape(nb, 128)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 256, 144)
        d = _f16_value(b[:, 0:2])
        dmin = _f16_value(b[:, 2:4])
        sc, m = _unpack_k4_scales(b[:, 4:16])
        qs = b[:, 16:].reshape(-1, 4, 1, 32)
        q = ((qs >> np.array([0, 4], np.uint8).reshape(1, 1, 2, 1)) & 0xF).astype(F32).reshape(-1, 8, 32)
        dl = d[:, None] * sc.astype(F32)
        ml = dmin[:, None] * m.astype(F32)
        return (dl[:, :, None] * q - ml[:, :, None]).astype(F32).reshape(-1)


class Q5_K(QuantType):
    """Q5_K (ggml type 13): 256 elements in 176 bytes; as Q4_K with a 5th bit per quant.

    offset  size  field
      0      2    d       f16 super-scale for the scale codes
      2      2    dmin    f16 super-scale for the min codes
      4     12    scales  as Q4_K (get_scale_min_k4)
     16     32    qh      5th bits: element 64c+l (l < 32) has its bit at bit 2c of byte l, element 64c+32+l at
                          bit 2c+1 of byte l (c = 0..3); i.e. element e's bit is bit (e // 32) of byte e % 32
     48    128    qs      low nibbles, as Q4_K's qs

    value[e] = (d * sc[g]) * (low4[e] + 16*hbit[e]) - (dmin * m[g]), g = e // 32.
    Quantize (quantize_row_q5_K_ref): as Q4_K with nmax 31, rmin -0.5, nstep 15.
    """
    name, ggml_type, block_size, type_size = "q5_k", 13, 256, 176

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 256)
        nb = xb.shape[0]
        d, dmin, sbytes, L = _quantize_k45(xb, 31, -0.5, 15)
        L = L.astype(np.uint8)
        hbit = (L >> 4) & 1
        qh = (hbit.reshape(nb, 8, 32) << np.arange(8, dtype=np.uint8).reshape(1, 8, 1)).sum(axis=1).astype(np.uint8)
        L4 = (L & 0xF).reshape(nb, 4, 2, 32)
        out = np.empty((nb, 176), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:4] = _f16_bytes(dmin)
        out[:, 4:16] = sbytes
        out[:, 16:48] = qh
        out[:, 48:] = (L4[:, :, 0] | (L4[:, :, 1] << 4)).reshape(nb, 128)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 256, 176)
        d = _f16_value(b[:, 0:2])
        dmin = _f16_value(b[:, 2:4])
        sc, m = _unpack_k4_scales(b[:, 4:16])
        qh = b[:, 16:48]
        hbit = ((qh[:, None, :] >> np.arange(8, dtype=np.uint8).reshape(1, 8, 1)) & 1).reshape(-1, 256)
        qs = b[:, 48:].reshape(-1, 4, 1, 32)
        low = ((qs >> np.array([0, 4], np.uint8).reshape(1, 1, 2, 1)) & 0xF).reshape(-1, 256)
        q = (low.astype(np.int32) + 16 * hbit.astype(np.int32)).astype(F32).reshape(-1, 8, 32)
        dl = d[:, None] * sc.astype(F32)
        ml = dmin[:, None] * m.astype(F32)
        return (dl[:, :, None] * q - ml[:, :, None]).astype(F32).reshape(-1)


class Q6_K(QuantType):
    """Q6_K (ggml type 14): 256 elements in 210 bytes; 16 groups of 16, symmetric 6-bit quants, int8 scales.

    offset  size  field
      0    128    ql      low 4 bits: for half h (elements 128h..128h+127), l = 0..31:
                            byte 64h+l    = low4(e=128h+l)    | low4(e=128h+l+64) << 4
                            byte 64h+32+l = low4(e=128h+l+32) | low4(e=128h+l+96) << 4
    128     64    qh      high 2 bits: byte 128+32h+l holds the top 2 bits of elements 128h+l, +32, +64, +96 in
                          bits 0-1, 2-3, 4-5, 6-7
    192     16    scales  int8 scale per group of 16 (signed!)
    208      2    d       f16 super-scale

    value[e] = (d * scales[e // 16]) * (q[e] - 32), q = low4 | high2 << 4 in 0..63.
    Quantize (quantize_row_q6_K_ref): per group make_qx_quants(nmax 32, rmse_type 1); the group scale of largest
    magnitude gives iscale = -128/max_scale, d = 1/iscale, scales = min(127, nearest_int(iscale*scale)) (so the
    largest group stores -128, and d has the opposite sign of max_scale: either sign occurs);
    re-quantize q = clamp(nearest_int(x/dl), -32, 31) + 32,
    skipping groups with dl == 0. A block whose group scales are all below 1e-15 is all zero bytes.
    """
    name, ggml_type, block_size, type_size = "q6_k", 14, 256, 210

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 256)
        nb = xb.shape[0]
        scales, L = make_qx_quants(xb.reshape(-1, 16), 32)
        scales, L = scales.reshape(nb, 16), L.reshape(nb, 256)
        amax, max_scale = _signed_absmax(scales)
        zero = amax < GROUP_MAX_EPS
        with np.errstate(divide="ignore", invalid="ignore"):
            iscale = (F32(-128) / max_scale).astype(F32)
            d = (_ONE / iscale).astype(F32)
            sc = np.minimum(127, nearest_int(iscale[:, None] * scales))
        sc = np.where(zero[:, None], 0, ((sc + 128) & 0xFF) - 128).astype(np.int8)
        dl = _f16_round(np.where(zero, _ZERO, d))[:, None] * sc.astype(F32)
        xg = xb.reshape(nb, 16, 16)
        with np.errstate(divide="ignore", invalid="ignore"):
            lq = np.clip(nearest_int(xg / dl[:, :, None]), -32, 31) + 32
        L = np.where((dl != 0)[:, :, None], lq, L.reshape(nb, 16, 16)).reshape(nb, 2, 4, 32).astype(np.uint8)
        out = np.empty((nb, 210), np.uint8)
        lo, hi = L & 0xF, L >> 4
        ql = np.empty((nb, 2, 2, 32), np.uint8)
        ql[:, :, 0] = lo[:, :, 0] | (lo[:, :, 2] << 4)
        ql[:, :, 1] = lo[:, :, 1] | (lo[:, :, 3] << 4)
        out[:, 0:128] = ql.reshape(nb, 128)
        out[:, 128:192] = (hi[:, :, 0] | (hi[:, :, 1] << 2) | (hi[:, :, 2] << 4) | (hi[:, :, 3] << 6)).reshape(nb, 64)
        out[:, 192:208] = sc.view(np.uint8)
        out[:, 208:210] = _f16_bytes(np.where(zero, _ZERO, d))
        out[zero] = 0
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 256, 210)
        ql = b[:, 0:128].reshape(-1, 2, 2, 32)
        qh = b[:, 128:192].reshape(-1, 2, 32)
        lo = np.stack([ql[:, :, 0] & 0xF, ql[:, :, 1] & 0xF, ql[:, :, 0] >> 4, ql[:, :, 1] >> 4], axis=2)
        hi = np.stack([(qh >> s) & 3 for s in (0, 2, 4, 6)], axis=2)
        q = ((lo | (hi << 4)).astype(np.int32) - 32).astype(F32).reshape(-1, 16, 16)
        sc = np.ascontiguousarray(b[:, 192:208]).view(np.int8).astype(F32)
        d = _f16_value(b[:, 208:210])
        return ((d[:, None] * sc)[:, :, None] * q).astype(F32).reshape(-1)


class Q8_K(QuantType):
    """Q8_K (ggml type 15): 256 elements in 292 bytes; llama.cpp's activation format for K-quant dot products
    (never a weight type in model files).

    offset  size  field
      0      4    d      float32 scale (not f16)
      4    256    qs     int8 quants
    260     32    bsums  16 int16: bsums[g] = sum of qs[16g..16g+15]

    value[e] = d * qs[e].
    Quantize: max = element of largest |x| (signed); iscale = -127/max; qs = min(127, nearest_int(iscale*x));
    d = 1/iscale (negative when that element is positive). An all-zero block has d = 0, qs = 0 (llama.cpp leaves
    bsums unwritten there; this module writes 0).
    """
    name, ggml_type, block_size, type_size = "q8_k", 15, 256, 292

    @staticmethod
    def quantize(x):
        xb = _blocks(x, 256)
        nb = xb.shape[0]
        amax, mx = _signed_absmax(xb)
        zero = amax == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            iscale = (F32(-127) / mx).astype(F32)
            q = np.minimum(127, nearest_int(iscale[:, None] * xb))
            d = (_ONE / iscale).astype(F32)
        q = np.where(zero[:, None], 0, q).astype(np.int8)
        d = np.where(zero, _ZERO, d).astype("<f4")
        bsums = q.astype(np.int32).reshape(nb, 16, 16).sum(axis=2).astype("<i2")
        out = np.empty((nb, 292), np.uint8)
        out[:, 0:4] = d.view(np.uint8).reshape(nb, 4)
        out[:, 4:260] = q.view(np.uint8)
        out[:, 260:292] = bsums.view(np.uint8).reshape(nb, 32)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 256, 292)
        d = np.ascontiguousarray(b[:, 0:4]).view("<f4").reshape(-1).astype(F32)
        q = np.ascontiguousarray(b[:, 4:260]).view(np.int8).astype(F32)
        return (d[:, None] * q).astype(F32).reshape(-1)


class IQ4_NL(QuantType):
    """IQ4_NL (ggml type 20): 32 elements in 18 bytes; 4-bit indices into a fixed non-linear table.

    offset  size  field
      0      2    d      f16 scale
      2     16    qs     nibbles: byte j holds element j's index (low nibble) and element j+16's (high nibble)

    value[j] = d * KVALUES_IQ4NL[index[j]], KVALUES_IQ4NL = -127 -104 -83 -65 -49 -35 -22 -10 1 13 25 38 53 69 89
    113 (asymmetric: no 0, one more level below zero).
    Quantize (quantize_row_iq4_nl_ref, i.e. quantize_row_iq4_nl_impl with ntry = -1 and no importance weights):
    weights x*x; d0 = max / -127 (max = signed element of largest |x|); index = nearest table entry to x/d0
    (best_index_int8; the upper entry on an exact tie); d = sum(w*q*x)/sum(w*q*q) over the chosen levels, stored as f16.
    The indices are not recomputed with the final d.
    An all-zero block (amax < 1e-15) gets d = 0 and llama.cpp does not write its index buffer: the nibbles are
    whatever the previous block of the same call left (uninitialised for the first). This module reproduces the
    carry-over within one quantize() call and uses zeros at the start.
    quantize(x, ntry=7) gives instead what llama-quantize writes (quantize_iq4_nl without an imatrix): d0 = max/127,
    then 15 trial inverse scales (itry - 127)/max, itry = -7..7, keeping the best weighted fit, then indices
    recomputed with the final d (an all-zero block then gets index 8 everywhere).
    """
    name, ggml_type, block_size, type_size = "iq4_nl", 20, 32, 18

    @staticmethod
    def quantize(x, ntry=-1):
        xb = _blocks(x, 32)
        nb = xb.shape[0]
        kv = KVALUES_IQ4NL.astype(F32)
        w = xb * xb
        amax, mx = _signed_absmax(xb)
        zero = amax < GROUP_MAX_EPS

        def fit(idd):
            L = _best_index_int8(KVALUES_IQ4NL, idd[:, None] * xb)
            q = kv[L]
            sumqx = np.zeros(nb, F32)
            sumq2 = np.zeros(nb, F32)
            for j in range(32):
                sumqx = sumqx + w[:, j] * q[:, j] * xb[:, j]
                sumq2 = sumq2 + w[:, j] * q[:, j] * q[:, j]
            return L, sumqx, sumq2

        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            d = (-mx / kv[0]) if ntry > 0 else (mx / kv[0])
            d = d.astype(F32)
            L, sumqx, sumq2 = fit((_ONE / d).astype(F32))
            d = np.where(sumq2 > 0, sumqx / sumq2, _ZERO).astype(F32)
            best = d * sumqx
            for itry in range(-ntry, ntry + 1):
                idd = (F32(itry + int(KVALUES_IQ4NL[0])) / mx).astype(F32)
                _, sumqx, sumq2 = fit(idd)
                upd = (sumq2 > 0) & (sumqx * sumqx > best * sumq2)
                d = np.where(upd, sumqx / sumq2, d).astype(F32)
                best = np.where(upd, d * sumqx, best).astype(F32)
            d = np.where(zero, _ZERO, d).astype(F32)
            if ntry > 0:
                idd = np.where(d != 0, _ONE / d, _ZERO).astype(F32)
                L = _best_index_int8(KVALUES_IQ4NL, idd[:, None] * xb)
        if ntry <= 0 and zero.any():  # the stale index buffer
            prev = np.zeros(32, np.int32)
            for i in range(nb):
                if zero[i]:
                    L[i] = prev
                prev = L[i]
        out = np.empty((nb, 18), np.uint8)
        out[:, 0:2] = _f16_bytes(d)
        out[:, 2:] = _pack_nibbles32(L)
        return out.tobytes()

    @staticmethod
    @_quiet
    def dequantize(raw, n):
        b = _raw_blocks(raw, n, 32, 18)
        d = _f16_value(b[:, 0:2])
        qs = b[:, 2:]
        idx = _unpack_nibbles32(qs)
        return (d[:, None] * KVALUES_IQ4NL.astype(F32)[idx]).astype(F32).reshape(-1)


TYPES = {t.name: t for t in (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL)}
BY_GGML_TYPE = {t.ggml_type: t for t in TYPES.values()}


def quantize(x, name):
    return TYPES[name.lower()].quantize(x)


def dequantize(raw, n, name):
    return TYPES[name.lower()].dequantize(raw, n)
