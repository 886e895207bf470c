"""The chat model's network: Hugging Face's LlamaForCausalLM in plain PyTorch (RMSNorm, RoPE in the rotate_half
layout, grouped-query attention, SwiGLU MLP, tied input/output embeddings), with Hugging Face's parameter names.

The modules and the reference forward pass are tools/reference/decoders.py's `DecoderForCausalLM` (the project's
reference for Llama, the one the engine's golden tests come from); this file adds what training and evaluation need:
Hugging Face's initialisation, a forward pass with position ids, an attention mask and a key/value cache (for
batched greedy decoding), grouped-query attention without copying the key/value heads, and a loss computed on
the labelled positions only. `check()` tests that this forward equals the reference's.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
import decoders  # noqa: E402


def make_config(vocab_size, bos_token_id, eos_token_id, hidden_size=256, num_hidden_layers=6, num_attention_heads=8,
                num_key_value_heads=4, intermediate_size=704, max_position_embeddings=512, rope_theta=10000.0,
                rms_norm_eps=1e-5):
    """config.json as LlamaConfig.save_pretrained writes it (transformers 4.4x keys, sorted on writing)."""
    return {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": bos_token_id, "eos_token_id": eos_token_id, "head_dim": hidden_size // num_attention_heads,
        "hidden_act": "silu", "hidden_size": hidden_size, "initializer_range": 0.02,
        "intermediate_size": intermediate_size, "max_position_embeddings": max_position_embeddings,
        "mlp_bias": False, "model_type": "llama", "num_attention_heads": num_attention_heads,
        "num_hidden_layers": num_hidden_layers, "num_key_value_heads": num_key_value_heads, "pretraining_tp": 1,
        "rms_norm_eps": rms_norm_eps, "rope_scaling": None, "rope_theta": rope_theta, "tie_word_embeddings": True,
        "torch_dtype": "float32", "use_cache": True, "vocab_size": vocab_size,
    }


class LlamaForCausalLM(decoders.DecoderForCausalLM):
    def __init__(self, c, init=True):
        super().__init__(c)
        assert c["model_type"] == "llama" and not c.get("attention_bias") and not c.get("mlp_bias")
        self.register_buffer("inv_freq", decoders.inv_freq(c), persistent=False)
        if init:
            self.init_weights()

    def init_weights(self):
        """Hugging Face's LlamaPreTrainedModel._init_weights: Linear and Embedding weights N(0, initializer_range),
        RMSNorm weights 1 (tied: the embedding is lm_head's weight)."""
        std = self.config.get("initializer_range", 0.02)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, std)
                elif isinstance(m, decoders.RMSNorm):
                    m.weight.fill_(1.0)

    def n_params(self):
        return sum(p.numel() for p in self.parameters())  # the tied matrix once

    def body(self, ids, positions, mask, cache=None):
        """The decoder stack. ids, positions: (B, T) int64; mask: (B, T, S) bool, True where query t may attend to
        key s (S = cached + T keys); cache: None or a list of (k, v) per layer, (B, KV, S0, d), extended in place of
        the list. Returns the residual stream after the final norm (B, T, E)."""
        c = self.config
        B, T = ids.shape
        freqs = positions.float()[..., None] * self.inv_freq  # (B, T, d/2), as HF's rotary embedding
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]  # (B, 1, T, d)
        neg = torch.finfo(torch.float32).min
        bias = torch.zeros(mask.shape, dtype=torch.float32).masked_fill_(~mask, neg)[:, None, None]  # (B,1,1,T,S)
        x = self.model.embed_tokens(ids)
        for l, layer in enumerate(self.model.layers):
            a = layer.self_attn
            H, KV, d = a.n_head, a.n_kv, a.d
            h = layer.input_layernorm(x)
            q = a.q_proj(h).view(B, T, H, d).transpose(1, 2)
            k = a.k_proj(h).view(B, T, KV, d).transpose(1, 2)
            v = a.v_proj(h).view(B, T, KV, d).transpose(1, 2)
            q = q * cos + decoders.rotate_half(q) * sin
            k = k * cos + decoders.rotate_half(k) * sin
            if cache is not None:
                if len(cache) > l:
                    k = torch.cat([cache[l][0], k], dim=2)
                    v = torch.cat([cache[l][1], v], dim=2)
                    cache[l] = (k, v)
                else:
                    cache.append((k, v))
            # query head j·rep + r reads key/value head j (HF's repeat_kv), without copying k and v
            rep = H // KV
            att = (q.view(B, KV, rep, T, d) @ k[:, :, None].transpose(-1, -2)) * d ** -0.5 + bias
            y = att.softmax(-1) @ v[:, :, None]  # (B, KV, rep, T, d)
            x = x + a.o_proj(y.reshape(B, H, T, d).transpose(1, 2).reshape(B, T, H * d))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.model.norm(x)

    def loss(self, ids, labels):
        """Mean cross-entropy of the next token over the positions whose next label is not -100. ids, labels: (B, T)
        right-padded (padding after a sequence's end never reaches its positions under the causal mask)."""
        B, T = ids.shape
        pos = torch.arange(T)[None].expand(B, T)
        causal = torch.ones(T, T, dtype=torch.bool).tril()[None].expand(B, T, T)
        h = self.body(ids, pos, causal)
        tgt = labels[:, 1:]
        sel = tgt != -100
        logits = self.lm_head(h[:, :-1][sel])  # the output layer only where there is a label
        return F.cross_entropy(logits, tgt[sel], reduction="sum"), int(sel.sum())

    @torch.no_grad()
    def greedy(self, prompts, max_new, stop_id, pad_id=0):
        """Batched greedy decoding with a key/value cache. prompts: lists of ids (any lengths; left-padded, each
        prompt's positions start at 0, padding masked out). Returns the generated ids of each prompt, up to and
        without stop_id."""
        B, L = len(prompts), max(len(p) for p in prompts)
        ids = torch.full((B, L), pad_id, dtype=torch.long)
        valid = torch.zeros(B, L, dtype=torch.bool)
        for b, p in enumerate(prompts):
            ids[b, L - len(p):] = torch.tensor(p)
            valid[b, L - len(p):] = True
        pos = (valid.long().cumsum(1) - 1).clamp(min=0)
        mask = torch.ones(L, L, dtype=torch.bool).tril()[None] & valid[:, None, :]
        cache = []
        h = self.body(ids, pos, mask, cache)
        nxt = self.lm_head(h[:, -1]).argmax(-1)
        out = [[] for _ in range(B)]
        done = torch.zeros(B, dtype=torch.bool)
        cur_pos = pos[:, -1]
        for _ in range(max_new):
            for b in range(B):
                if not done[b]:
                    if int(nxt[b]) == stop_id:
                        done[b] = True
                    else:
                        out[b].append(int(nxt[b]))
            if bool(done.all()):
                break
            cur_pos = cur_pos + 1
            valid = torch.cat([valid, torch.ones(B, 1, dtype=torch.bool)], 1)
            h = self.body(nxt[:, None], cur_pos[:, None], valid[:, None, :], cache)
            nxt = self.lm_head(h[:, -1]).argmax(-1)
        return out


def check(seed=0):
    """This file's forward (padded, cached, GQA without copies) against decoders.DecoderForCausalLM's."""
    torch.manual_seed(seed)
    c = make_config(300, 1, 4, hidden_size=64, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2,
                    intermediate_size=96)
    m = LlamaForCausalLM(c).eval()
    ref = decoders.DecoderForCausalLM(c).eval()
    decoders.load_state(ref, decoders.export_state(m))
    ids = torch.randint(0, 300, (3, 17))
    with torch.no_grad():
        want, _ = ref(ids)
        T = ids.shape[1]
        h = m.body(ids, torch.arange(T)[None].expand(3, T), torch.ones(T, T, dtype=torch.bool).tril()[None].expand(3, T, T))
        got = m.lm_head(h)
        assert torch.allclose(got, want, atol=1e-5), float((got - want).abs().max())
        # greedy with left padding and a cache equals the reference's full recomputation
        prompts = [ids[0, :5].tolist(), ids[1, :11].tolist()]
        outs = m.greedy(prompts, 8, stop_id=-1)
        for p, o in zip(prompts, outs):
            seq, _ = ref.greedy(p, 8)
            assert seq[len(p):] == o, (seq[len(p):], o)
    return True


if __name__ == "__main__":
    print("check:", check())
