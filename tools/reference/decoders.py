"""PyTorch reference decoders with Hugging Face semantics and Hugging Face tensor names: Llama, Qwen2, Mistral.

Written from the semantics of `transformers`' modeling_llama.py, modeling_qwen2.py, modeling_mistral.py and
modeling_rope_utils.py (the "default" and "llama3" inverse frequencies); no code is taken from there.
`state_dict()` keys equal what `save_pretrained` writes into model.safetensors (model.embed_tokens.weight,
model.layers.N.self_attn.q_proj.weight, …, model.norm.weight, lm_head.weight); `export_state(model)` leaves
lm_head.weight out when `tie_word_embeddings` is true, as `save_pretrained` does. The rotary inverse frequencies are
not parameters (HF keeps them in a non-persistent buffer).

The three families are one class, `DecoderForCausalLM`, configured by config.json's dict:
  - Llama:   RMSNorm (x · rsqrt(mean(x²) + eps) · w, in f32), RoPE in HF's rotate_half layout (dimension i pairs
             with i + head_dim/2) over the whole head, optional `rope_scaling` {"rope_type": "llama3", factor,
             low_freq_factor, high_freq_factor, original_max_position_embeddings}, grouped-query attention
             (query head h reads key/value head h // (num_attention_heads / num_key_value_heads)), explicit
             `head_dim` when the config has one (else hidden_size / num_attention_heads), SwiGLU MLP
             down(silu(gate(x)) · up(x)), `attention_bias` (q/k/v/o biases) and `mlp_bias`, tied or untied lm_head.
  - Qwen2:   Llama with biases on q_proj, k_proj, v_proj (none on o_proj); `sliding_window` only applies when
             `use_sliding_window` is true (then to layers ≥ max_window_layers), as HF's Qwen2 does.
  - Mistral: Llama with `sliding_window` W (all layers): query i sees keys j with i − W < j ≤ i (HF's
             sliding_window_overlay: kv_idx > q_idx − W on top of the causal mask); null = no window.

`forward(ids)` takes (B, T) int64 ids (positions 0..T-1, no cache: the reference recomputes the whole prefix) and
returns (logits (B, T, V), hidden) with hidden = [embeddings output, residual stream after layer 1, …, after layer
N], all BEFORE the final norm (what the engine's trace records). `window` overrides the sliding window (None: the
config's; 0: none) so that the fixture script can show that the window matters.

Used by tools/reference/make_decoder_fixtures.py.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def default_inv_freq(c):
    """HF's _compute_default_rope_parameters: 1 / theta^(2i/d), i = 0..d/2-1, computed in f32."""
    d = head_dim(c)
    return 1.0 / (float(c.get("rope_theta", 10000.0)) ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))


def inv_freq(c):
    """The rotary inverse frequencies (d/2,) f32, with the config's rope_scaling (None or "default", "llama3")."""
    f = default_inv_freq(c)
    rs = c.get("rope_scaling")
    kind = (rs or {}).get("rope_type", (rs or {}).get("type", "default"))
    if kind == "default":
        return f
    if kind != "llama3":
        raise NotImplementedError(f"rope_scaling type {kind!r}")
    factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old_ctx = rs["original_max_position_embeddings"]
    lo_wavelen, hi_wavelen = old_ctx / lo, old_ctx / hi
    wavelen = 2 * math.pi / f
    # long wavelengths (low frequencies) are divided by factor, short ones kept, those between interpolated
    scaled = torch.where(wavelen > lo_wavelen, f / factor, f)
    smooth = (old_ctx / wavelen - lo) / (hi - lo)
    between = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < hi_wavelen) & ~(wavelen > lo_wavelen)
    return torch.where(medium, between, scaled)


def rope_cos_sin(c, positions):
    """cos, sin (T, d) in HF's layout: the d/2 angles repeated twice (cat(freqs, freqs)), computed in f32."""
    freqs = positions.float()[:, None] * inv_freq(c)[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dt)


class Attention(nn.Module):
    def __init__(self, c, qkv_bias, o_bias):
        super().__init__()
        E = c["hidden_size"]
        self.n_head = c["num_attention_heads"]
        self.n_kv = c.get("num_key_value_heads") or self.n_head
        self.d = head_dim(c)
        self.q_proj = nn.Linear(E, self.n_head * self.d, bias=qkv_bias)
        self.k_proj = nn.Linear(E, self.n_kv * self.d, bias=qkv_bias)
        self.v_proj = nn.Linear(E, self.n_kv * self.d, bias=qkv_bias)
        self.o_proj = nn.Linear(self.n_head * self.d, E, bias=o_bias)

    def forward(self, x, cos, sin, window):
        B, T, _ = x.shape
        split = lambda t, n: t.view(B, T, n, self.d).transpose(1, 2)  # (B, n, T, d)
        q, k, v = split(self.q_proj(x), self.n_head), split(self.k_proj(x), self.n_kv), split(self.v_proj(x), self.n_kv)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.n_head // self.n_kv  # HF's repeat_kv: kv head j serves query heads j·rep … j·rep + rep − 1
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) * self.d ** -0.5
        i = torch.arange(T)[:, None]
        j = torch.arange(T)[None, :]
        allowed = j <= i
        if window:
            allowed = allowed & (j > i - window)
        att = att.masked_fill(~allowed, torch.finfo(att.dtype).min)
        probs = att.softmax(-1, dtype=torch.float32).to(q.dtype)
        y = (probs @ v).transpose(1, 2).reshape(B, T, self.n_head * self.d)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, c, bias):
        super().__init__()
        E, I = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(E, I, bias=bias)
        self.up_proj = nn.Linear(E, I, bias=bias)
        self.down_proj = nn.Linear(I, E, bias=bias)
        if c.get("hidden_act", "silu") != "silu":
            raise NotImplementedError(f"hidden_act {c['hidden_act']!r}")

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c, qkv_bias, o_bias, mlp_bias):
        super().__init__()
        E, eps = c["hidden_size"], c.get("rms_norm_eps", 1e-6)
        self.self_attn = Attention(c, qkv_bias, o_bias)
        self.mlp = MLP(c, mlp_bias)
        self.input_layernorm = RMSNorm(E, eps)
        self.post_attention_layernorm = RMSNorm(E, eps)

    def forward(self, x, cos, sin, window):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, window)
        return x + self.mlp(self.post_attention_layernorm(x))


class Model(nn.Module):
    def __init__(self, c, qkv_bias, o_bias, mlp_bias):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([DecoderLayer(c, qkv_bias, o_bias, mlp_bias) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c.get("rms_norm_eps", 1e-6))


def layer_windows(c):
    """The sliding window of each layer (0 = none), as HF's families decide it."""
    n = c["num_hidden_layers"]
    w = c.get("sliding_window") or 0
    if c["model_type"] == "qwen2":
        if not c.get("use_sliding_window", False):
            return [0] * n
        first = c.get("max_window_layers", n)
        return [w if l >= first else 0 for l in range(n)]
    if c["model_type"] == "mistral":
        return [w] * n
    return [0] * n  # llama: no window


class DecoderForCausalLM(nn.Module):
    """LlamaForCausalLM, Qwen2ForCausalLM and MistralForCausalLM (config["model_type"] chooses the biases and the
    window rule)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        mt = c["model_type"]
        if mt not in ("llama", "qwen2", "mistral"):
            raise NotImplementedError(mt)
        qkv_bias = mt == "qwen2" or bool(c.get("attention_bias", False))
        o_bias = mt != "qwen2" and bool(c.get("attention_bias", False))
        mlp_bias = mt == "llama" and bool(c.get("mlp_bias", False))
        self.model = Model(c, qkv_bias, o_bias, mlp_bias)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        self.tied = bool(c.get("tie_word_embeddings", False))  # HF's default for all three: untied
        if self.tied:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, ids, window=None):
        """ids (B, T) → logits (B, T, V), [embeddings, after layer 1, …, after layer N] (before the final norm).
        window: None = the config's per-layer windows; an int overrides every layer's (0 = no window)."""
        T = ids.shape[1]
        cos, sin = rope_cos_sin(self.config, torch.arange(T))
        wins = layer_windows(self.config) if window is None else [window] * len(self.model.layers)
        x = self.model.embed_tokens(ids)
        hidden = [x]
        for layer, w in zip(self.model.layers, wins):
            x = layer(x, cos, sin, w)
            hidden.append(x)
        return self.lm_head(self.model.norm(x)), hidden

    def greedy(self, ids, n_new):
        """The prompt then n_new greedily chosen tokens (full forward each step, no cache); also each step's gap
        between the best and the second-best logit."""
        seq, gaps = list(ids), []
        for _ in range(n_new):
            logits, _ = self(torch.tensor([seq]))
            top = logits[0, -1].topk(2)
            gaps.append(float(top.values[0] - top.values[1]))
            seq.append(int(top.indices[0]))
        return seq, gaps


def export_state(model):
    """Tensors as Hugging Face stores them: lm_head.weight left out when tied."""
    s = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    if model.tied:
        s.pop("lm_head.weight")
    return s


def load_state(model, tensors):
    """Loads a model.safetensors dict (any float dtype, widened to f32); a tied model takes no lm_head.weight."""
    own = model.state_dict()
    missing = set(own) - set(tensors) - ({"lm_head.weight"} if model.tied else set())
    extra = set(tensors) - set(own)
    if missing or extra:
        raise ValueError(f"missing {sorted(missing)}, unexpected {sorted(extra)}")
    with torch.no_grad():
        for k, v in tensors.items():
            own[k].copy_(v.float())
