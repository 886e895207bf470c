"""PyTorch reference decoders with Hugging Face semantics and Hugging Face tensor names: Llama, Qwen2, Mistral,
Gemma, Gemma 2, Phi-3.

Written from the semantics of `transformers`' modeling_llama.py, modeling_qwen2.py, modeling_mistral.py,
modeling_gemma.py, modeling_gemma2.py (and its configuration's layer_types), modeling_phi3.py and
modeling_rope_utils.py (the "default" and "llama3" inverse frequencies); no code is taken from there.
`state_dict()` keys equal what `save_pretrained` writes into model.safetensors (model.embed_tokens.weight,
model.layers.N.self_attn.q_proj.weight, …, model.norm.weight, lm_head.weight); `export_state(model)` leaves
lm_head.weight out when `tie_word_embeddings` is true, as `save_pretrained` does. The rotary inverse frequencies are
not parameters (HF keeps them in a non-persistent buffer).

The six families are one class, `DecoderForCausalLM`, configured by config.json's dict (model_type chooses):
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
  - Gemma:   Llama with the embeddings multiplied by √hidden_size (the normalizer is a tensor of the hidden
             dtype: torch.tensor(hidden_size ** 0.5, dtype) — f32 here, as HF), GemmaRMSNorm
             (x · rsqrt(mean(x²) + eps) · (1 + w), all in f32, cast back afterwards: the stored weight is w, the
             applied scale 1 + w), GeGLU MLP down(gelu_tanh(gate(x)) · up(x)) (`hidden_activation` /
             `hidden_act` "gelu_pytorch_tanh": transformers versions read one or the other, so a config that gives
             both must give the same), explicit `head_dim`, tied lm_head by default. No window.
  - Gemma 2: Gemma plus four norms per layer: x += post_attention_layernorm(attn(input_layernorm(x))), then
             x += post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x))); attention scores
             (q·k) · query_pre_attn_scalar^−0.5 (not head_dim^−0.5), then soft-capped
             cap · tanh(s / cap) with cap = `attn_logit_softcapping` (before the mask), final logits soft-capped
             with `final_logit_softcapping` (null: no cap); `sliding_window` W on the layers whose
             `layer_types` entry is "sliding_attention" — without layer_types (real Gemma 2 configs), HF's default:
             layer i slides when (i + 1) % 2 != 0, i.e. the EVEN layers 0, 2, 4, … (older transformers said the
             same as `not bool(layer_idx % 2)`); the odd layers attend to the whole prefix.
  - Phi-3:   Llama with fused projections: self_attn.qkv_proj (rows: the H·d query rows, then KV·d key rows,
             then KV·d value rows) and mlp.gate_up_proj (rows: intermediate_size gate rows, then as many up rows;
             down(up · silu(gate))), no biases; `sliding_window` (when not null) on every layer as Mistral's;
             `rope_scaling` must be null (longrope is not implemented) and `partial_rotary_factor` absent or 1.

`forward(ids)` takes (B, T) int64 ids (positions 0..T-1, no cache: the reference recomputes the whole prefix) and
returns (logits (B, T, V), hidden) with hidden = [embeddings output (for Gemma after the √hidden scaling), residual
stream after layer 1, …, after layer N], all BEFORE the final norm (what the engine's trace records). `window`
overrides the sliding window (None: the config's; an int: that window on every layer, 0: none; a list: one per
layer) so that the fixture script can show that the window matters. Soft-capping and query_pre_attn_scalar are
switched by building the model from an edited config (the weights load unchanged).

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


GEMMA = ("gemma", "gemma2")
FAMILIES = ("llama", "qwen2", "mistral") + GEMMA + ("phi3",)
ACTIVATIONS = {"silu": F.silu, "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh")}


def activation(c):
    """The MLP's activation name: Gemma reads hidden_activation (older transformers) or hidden_act (newer), Gemma 2
    hidden_activation, the others hidden_act."""
    mt = c["model_type"]
    if mt == "gemma":
        a, b = c.get("hidden_activation"), c.get("hidden_act")
        if a and b and a != b:
            raise NotImplementedError(f"hidden_activation {a!r} and hidden_act {b!r}: transformers versions disagree")
        name = a or b or "gelu_pytorch_tanh"
    elif mt == "gemma2":
        name = c.get("hidden_activation") or "gelu_pytorch_tanh"
    else:
        name = c.get("hidden_act", "silu")
    if name not in ACTIVATIONS:
        raise NotImplementedError(f"activation {name!r}")
    return name


class GemmaRMSNorm(nn.Module):
    """x · rsqrt(mean(x²) + eps) · (1 + w) computed in f32, then cast to x's dtype; the parameter is w (HF
    initializes it to zeros)."""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n))
        self.eps = eps

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).type_as(x)


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
        self.fused = c["model_type"] == "phi3"
        if self.fused:  # Phi-3: one matrix, rows Q (H·d), K (KV·d), V (KV·d)
            self.qkv_proj = nn.Linear(E, (self.n_head + 2 * self.n_kv) * self.d, bias=False)
        else:
            self.q_proj = nn.Linear(E, self.n_head * self.d, bias=qkv_bias)
            self.k_proj = nn.Linear(E, self.n_kv * self.d, bias=qkv_bias)
            self.v_proj = nn.Linear(E, self.n_kv * self.d, bias=qkv_bias)
        self.o_proj = nn.Linear(self.n_head * self.d, E, bias=o_bias)
        gemma2 = c["model_type"] == "gemma2"
        self.scaling = c["query_pre_attn_scalar"] ** -0.5 if gemma2 else self.d ** -0.5
        self.softcap = c.get("attn_logit_softcapping") if gemma2 else None

    def forward(self, x, cos, sin, window):
        B, T, _ = x.shape
        split = lambda t, n: t.view(B, T, n, self.d).transpose(1, 2)  # (B, n, T, d)
        if self.fused:
            qkv = self.qkv_proj(x)
            nq, nk = self.n_head * self.d, self.n_kv * self.d
            q, k, v = qkv[..., :nq], qkv[..., nq:nq + nk], qkv[..., nq + nk:]
        else:
            q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        q, k, v = split(q, self.n_head), split(k, self.n_kv), split(v, self.n_kv)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.n_head // self.n_kv  # HF's repeat_kv: kv head j serves query heads j·rep … j·rep + rep − 1
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) * self.scaling
        if self.softcap:  # Gemma 2: before the mask, as HF's eager attention
            att = torch.tanh(att / self.softcap) * self.softcap
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
        self.fused = c["model_type"] == "phi3"
        if self.fused:  # Phi-3: rows gate (I), then up (I)
            self.gate_up_proj = nn.Linear(E, 2 * I, bias=False)
        else:
            self.gate_proj = nn.Linear(E, I, bias=bias)
            self.up_proj = nn.Linear(E, I, bias=bias)
        self.down_proj = nn.Linear(I, E, bias=bias)
        self.act = ACTIVATIONS[activation(c)]

    def forward(self, x):
        if self.fused:
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
            return self.down_proj(up * self.act(gate))
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c, qkv_bias, o_bias, mlp_bias):
        super().__init__()
        E, eps = c["hidden_size"], c.get("rms_norm_eps", 1e-6)
        Norm = GemmaRMSNorm if c["model_type"] in GEMMA else RMSNorm
        self.self_attn = Attention(c, qkv_bias, o_bias)
        self.mlp = MLP(c, mlp_bias)
        self.input_layernorm = Norm(E, eps)
        self.post_attention_layernorm = Norm(E, eps)
        self.sandwich = c["model_type"] == "gemma2"
        if self.sandwich:  # Gemma 2: post_attention_layernorm normalizes the attention OUTPUT
            self.pre_feedforward_layernorm = Norm(E, eps)
            self.post_feedforward_layernorm = Norm(E, eps)

    def forward(self, x, cos, sin, window):
        if self.sandwich:
            x = x + self.post_attention_layernorm(self.self_attn(self.input_layernorm(x), cos, sin, window))
            return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, window)
        return x + self.mlp(self.post_attention_layernorm(x))


class Model(nn.Module):
    def __init__(self, c, qkv_bias, o_bias, mlp_bias):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([DecoderLayer(c, qkv_bias, o_bias, mlp_bias) for _ in range(c["num_hidden_layers"])])
        Norm = GemmaRMSNorm if c["model_type"] in GEMMA else RMSNorm
        self.norm = Norm(c["hidden_size"], c.get("rms_norm_eps", 1e-6))


def layer_windows(c):
    """The sliding window of each layer (0 = none), as HF's families decide it."""
    n = c["num_hidden_layers"]
    w = c.get("sliding_window") or 0
    if c["model_type"] == "qwen2":
        if not c.get("use_sliding_window", False):
            return [0] * n
        first = c.get("max_window_layers", n)
        return [w if l >= first else 0 for l in range(n)]
    if c["model_type"] in ("mistral", "phi3"):
        return [w] * n
    if c["model_type"] == "gemma2":
        types = c.get("layer_types") or ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
        if len(types) != n or set(types) - {"sliding_attention", "full_attention"}:
            raise ValueError(f"layer_types {types}")
        return [w if t == "sliding_attention" else 0 for t in types]
    return [0] * n  # llama, gemma: no window


class DecoderForCausalLM(nn.Module):
    """LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM, GemmaForCausalLM, Gemma2ForCausalLM and
    Phi3ForCausalLM (config["model_type"] chooses the biases, norms, MLP, scaling, caps and the window rule)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        mt = c["model_type"]
        if mt not in FAMILIES:
            raise NotImplementedError(mt)
        if mt == "phi3" and c.get("partial_rotary_factor", 1.0) != 1.0:
            raise NotImplementedError("partial_rotary_factor")
        inv_freq(c)  # refuses rope_scaling types it does not implement (Phi-3's longrope)
        attention_bias = mt != "phi3" and bool(c.get("attention_bias", False))  # Phi-3 has no biases
        qkv_bias = mt == "qwen2" or attention_bias
        o_bias = mt != "qwen2" and attention_bias
        mlp_bias = mt == "llama" and bool(c.get("mlp_bias", False))
        self.model = Model(c, qkv_bias, o_bias, mlp_bias)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        # HF's default: tied for Gemma and Gemma 2, untied for the others
        self.tied = bool(c.get("tie_word_embeddings", mt in GEMMA))
        if self.tied:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.final_softcap = c.get("final_logit_softcapping") if mt == "gemma2" else None

    def forward(self, ids, window=None):
        """ids (B, T) → logits (B, T, V), [embeddings, after layer 1, …, after layer N] (before the final norm).
        window: None = the config's per-layer windows; an int overrides every layer's (0 = no window); a list gives
        each layer's."""
        T = ids.shape[1]
        cos, sin = rope_cos_sin(self.config, torch.arange(T))
        n = len(self.model.layers)
        wins = layer_windows(self.config) if window is None else list(window) if isinstance(window, (list, tuple)) \
            else [window] * n
        assert len(wins) == n
        x = self.model.embed_tokens(ids)
        if self.config["model_type"] in GEMMA:  # √hidden as a tensor of the hidden dtype (HF's normalizer)
            x = x * torch.tensor(self.config["hidden_size"] ** 0.5, dtype=x.dtype)
        hidden = [x]
        for layer, w in zip(self.model.layers, wins):
            x = layer(x, cos, sin, w)
            hidden.append(x)
        logits = self.lm_head(self.model.norm(x))
        if self.final_softcap:
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
        return logits, hidden

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
