"""PyTorch reference models with Hugging Face semantics and Hugging Face tensor names.

Written from the semantics of `transformers`' modeling_bert.py (BertForMaskedLM) and modeling_gpt2.py
(GPT2LMHeadModel); no code is taken from there. `state_dict()` keys equal the names Hugging Face writes into
model.safetensors, and the tied output matrices (cls.predictions.decoder.weight, lm_head.weight) are left out
on export, as `save_pretrained` does.

Used three ways: to write random-weight fixtures and golden activations (tools/reference/make_fixtures.py),
as the model code of the training script (tools/train/train.py), and as the numerical reference in tests.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# ----------------------------------------------------------------------------------------------------------- BERT
class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_head = c["num_attention_heads"]
        self.d_head = c["hidden_size"] // self.n_head
        self.query = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.key = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.value = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, x, pad_mask):  # x: (B, T, E); pad_mask: (B, T) bool, True = real token
        B, T, E = x.shape
        split = lambda t: t.view(B, T, self.n_head, self.d_head).transpose(1, 2)  # (B, H, T, D)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.d_head)
        att = att.masked_fill(~pad_mask[:, None, None, :], torch.finfo(att.dtype).min)
        probs = att.softmax(-1)
        y = (probs @ v).transpose(1, 2).reshape(B, T, E)
        return y, probs


class BertDenseLN(nn.Module):
    """dense → dropout → LayerNorm(· + residual): BertSelfOutput and BertOutput."""

    def __init__(self, n_in, n_out, eps, p_drop):
        super().__init__()
        self.dense = nn.Linear(n_in, n_out)
        self.LayerNorm = nn.LayerNorm(n_out, eps=eps)
        self.dropout = nn.Dropout(p_drop)

    def forward(self, x, residual):
        return self.LayerNorm(self.dropout(self.dense(x)) + residual)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertDenseLN(c["hidden_size"], c["hidden_size"], c["layer_norm_eps"], c.get("hidden_dropout_prob", 0.0))


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertDenseLN(c["intermediate_size"], c["hidden_size"], c["layer_norm_eps"], c.get("hidden_dropout_prob", 0.0))

    def forward(self, x, pad_mask):
        a, probs = self.attention.self(x, pad_mask)
        x = self.attention.output(a, x)                              # post-LN
        h = F.gelu(self.intermediate.dense(x))                       # exact (erf) GELU: hidden_act "gelu"
        return self.output(h, x), probs


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        E = c["hidden_size"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], E)
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], E)
        self.token_type_embeddings = nn.Embedding(c.get("type_vocab_size", 2), E)
        self.LayerNorm = nn.LayerNorm(E, eps=c["layer_norm_eps"])
        self.dropout = nn.Dropout(c.get("hidden_dropout_prob", 0.0))

    def forward(self, ids, token_type=None):
        T = ids.shape[1]
        pos = torch.arange(T, device=ids.device)[None, :]
        tt = torch.zeros_like(ids) if token_type is None else token_type
        return self.dropout(self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos) + self.token_type_embeddings(tt)))


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])


class BertLMPredictionHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.predictions = BertLMPredictionHead(c)


class BertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.bert = BertModel(c)
        self.cls = BertOnlyMLMHead(c)

    def encode(self, ids, pad_mask=None, token_type=None):
        """Returns the final hidden states and the list [embeddings, layer 1, …, layer N] and attention probs."""
        if pad_mask is None:
            pad_mask = torch.ones_like(ids, dtype=torch.bool)
        x = self.bert.embeddings(ids, token_type)
        hidden, probs = [x], []
        for layer in self.bert.encoder.layer:
            x, p = layer(x, pad_mask)
            hidden.append(x)
            probs.append(p)
        return x, hidden, probs

    def mlm_logits(self, h, ids=None):
        """h: (..., E) → (..., V); decoder tied to the word embeddings. With `ids`, only those vocabulary columns."""
        t = self.cls.predictions.transform
        h = t.LayerNorm(F.gelu(t.dense(h)))
        w, b = self.bert.embeddings.word_embeddings.weight, self.cls.predictions.bias
        if ids is not None:
            w, b = w[ids], b[ids]
        return torch.addmm(b, h.reshape(-1, h.shape[-1]), w.T).reshape(*h.shape[:-1], -1)

    def forward(self, ids, pad_mask=None, token_type=None):
        x, _, _ = self.encode(ids, pad_mask, token_type)
        return self.mlm_logits(x)


# ---------------------------------------------------------------------------------------------------------- GPT-2
class Conv1D(nn.Module):
    """GPT-2's Conv1D: a Linear whose weight is stored (in, out)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


def gelu_new(x):  # GPT-2's tanh approximation ("gelu_new")
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        E = c["n_embd"]
        self.n_head = c["n_head"]
        self.c_attn = Conv1D(E, 3 * E)
        self.c_proj = Conv1D(E, E)
        self.attn_dropout = nn.Dropout(c.get("attn_pdrop", 0.0))
        self.resid_dropout = nn.Dropout(c.get("resid_pdrop", 0.0))

    def forward(self, x, past=None):  # x: (B, T, E); past: (k, v) each (B, H, Tp, D)
        B, T, E = x.shape
        D = E // self.n_head
        q, k, v = self.c_attn(x).split(E, dim=2)
        split = lambda t: t.view(B, T, self.n_head, D).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        if past is not None:
            k, v = torch.cat([past[0], k], 2), torch.cat([past[1], v], 2)
        Tk = k.shape[2]
        att = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        causal = torch.ones(T, Tk, dtype=torch.bool, device=x.device).tril(Tk - T)
        att = att.masked_fill(~causal, torch.finfo(att.dtype).min)
        probs = att.softmax(-1)
        y = (self.attn_dropout(probs) @ v).transpose(1, 2).reshape(B, T, E)
        return self.resid_dropout(self.c_proj(y)), (k, v), probs


class GPT2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        E = c["n_embd"]
        inner = c.get("n_inner") or 4 * E
        self.c_fc = Conv1D(E, inner)
        self.c_proj = Conv1D(inner, E)
        self.dropout = nn.Dropout(c.get("resid_pdrop", 0.0))

    def forward(self, x):
        return self.dropout(self.c_proj(gelu_new(self.c_fc(x))))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        E, eps = c["n_embd"], c["layer_norm_epsilon"]
        self.ln_1 = nn.LayerNorm(E, eps=eps)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(E, eps=eps)
        self.mlp = GPT2MLP(c)

    def forward(self, x, past=None):
        a, present, probs = self.attn(self.ln_1(x), past)   # pre-LN
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, present, probs


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["n_positions"], c["n_embd"])
        self.drop = nn.Dropout(c.get("embd_pdrop", 0.0))
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"], eps=c["layer_norm_epsilon"])


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = GPT2Model(c)

    def forward(self, ids, past=None):
        """ids: (B, T). Returns logits (B, T, V), the new cache, hidden states [emb, block 1..N, ln_f] and probs."""
        t = self.transformer
        p0 = 0 if past is None else past[0][0].shape[2]
        pos = torch.arange(p0, p0 + ids.shape[1], device=ids.device)[None, :]
        x = t.drop(t.wte(ids) + t.wpe(pos))
        hidden, presents, probs = [x], [], []
        for i, block in enumerate(t.h):
            x, present, p = block(x, None if past is None else past[i])
            hidden.append(x)
            presents.append(present)
            probs.append(p)
        x = t.ln_f(x)
        hidden.append(x)
        return x @ t.wte.weight.T, presents, hidden, probs   # tied LM head


def init_weights(model, std=0.02):
    """Hugging Face's initialisation: normal(0, std) for matrices and embeddings, LayerNorm 1/0, biases 0."""
    for name, p in model.named_parameters():
        if name.endswith("LayerNorm.weight") or ".ln_" in name and name.endswith(".weight") or name.endswith("ln_f.weight"):
            nn.init.ones_(p)
        elif p.dim() == 1:
            nn.init.zeros_(p)
        else:
            nn.init.normal_(p, std=std)
    if isinstance(model, GPT2LMHeadModel):  # GPT-2 scales the residual projections by 1/sqrt(2·n_layer)
        for name, p in model.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=std / math.sqrt(2 * model.config["n_layer"]))


def init_positions_sinusoidal(model, scale=None):
    """Position embeddings initialised as the Transformer's sinusoids (still learned parameters).

    Scaled to the word embeddings' RMS so that neither dominates the sum the embedding LayerNorm normalises; gives
    attention a usable notion of distance from step 0 instead of learning it from noise."""
    wpe = model.bert.embeddings.position_embeddings.weight if isinstance(model, BertForMaskedLM) else model.transformer.wpe.weight
    wte = model.bert.embeddings.word_embeddings.weight if isinstance(model, BertForMaskedLM) else model.transformer.wte.weight
    P, E = wpe.shape
    pos = torch.arange(P, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, E, 2, dtype=torch.float32) / E)
    table = torch.zeros(P, E)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    with torch.no_grad():
        wpe.copy_(table * (scale if scale is not None else wte.pow(2).mean().sqrt().item() / table.pow(2).mean().sqrt().item()))


TIED = {"bert": "cls.predictions.decoder.weight", "gpt2": "lm_head.weight"}


def export_state(model):
    """Tensors as Hugging Face stores them: tied outputs left out."""
    return {k: v.detach().contiguous() for k, v in model.state_dict().items()}
