"""PyTorch reference encoders with Hugging Face semantics and Hugging Face tensor names (BERT heads, DistilBERT,
RoBERTa, ELECTRA, ALBERT, ModernBERT).

Written from the semantics of `transformers`' modeling_bert.py, modeling_distilbert.py, modeling_roberta.py,
modeling_electra.py, modeling_albert.py and modeling_modernbert.py (its eager/sdpa path); no code is taken from
there. `state_dict()` keys equal what `save_pretrained` writes into model.safetensors; `export_state(model)` leaves
out the tied output matrices (and the decoder bias aliases), as `save_pretrained` does. Dropout is identity (eval),
so every model is deterministic.

Every model's `forward(ids, attention_mask, token_type_ids=None)` takes (B, T) int64 ids and a (B, T) 0/1 (or bool)
attention mask and returns `(hidden_states, output)`: hidden_states = [embeddings output (after ELECTRA's
embeddings_project), after layer 1, …, after layer N], each (B, T, E); output = the head's result (a tensor, or a
(start_logits, end_logits) pair for question answering; the pooler output for BertModel, the last hidden state for
the bare DistilBertModel and ModernBertModel). ModernBERT's hidden states are HF's (before final_norm);
`last_hidden(model, hs)` gives the model's last hidden state (final_norm of hs[-1] for ModernBERT, hs[-1] for the
others). Padding is masked with the most negative float added to the attention scores, as HF does, so the real
rows of a padded batch equal those of each text alone.

Used by tools/reference/make_encoder_fixtures.py (fixtures, golden outputs) and tools/reference/pipelines.py.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import models


def _mask(ids, attention_mask):
    if attention_mask is None:
        return torch.ones_like(ids, dtype=torch.bool)
    return attention_mask.to(torch.bool)


def _act(name):
    return {"gelu": F.gelu, "relu": F.relu, "gelu_new": models.gelu_new, "tanh": torch.tanh,
            "silu": F.silu, "swish": F.silu}[name]


def _run_layers(layers, x, pad_mask):
    hidden = [x]
    for layer in layers:
        x, _ = layer(x, pad_mask)
        hidden.append(x)
    return hidden


# ---------------------------------------------------------------------------------------------------------- BERT
class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class BertModel(nn.Module):
    """HF BertModel (pooler included unless add_pooling_layer=False). Saved on its own, its keys have no prefix."""

    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.config = c
        self.embeddings = models.BertEmbeddings(c)
        self.encoder = models.BertEncoder(c)
        if add_pooling_layer:
            self.pooler = BertPooler(c)

    def hidden_states(self, ids, attention_mask=None, token_type_ids=None):
        return _run_layers(self.encoder.layer, self.embeddings(ids, token_type_ids), _mask(ids, attention_mask))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.hidden_states(ids, attention_mask, token_type_ids)
        return hs, (self.pooler(hs[-1]) if hasattr(self, "pooler") else hs[-1])


class BertForSequenceClassification(nn.Module):
    """pooler (dense + tanh on position 0) → dropout → classifier."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.bert = BertModel(c)
        self.dropout = nn.Dropout(c.get("classifier_dropout") or c.get("hidden_dropout_prob", 0.0))
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, pooled = self.bert(ids, attention_mask, token_type_ids)
        return hs, self.classifier(self.dropout(pooled))


class BertForTokenClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.bert = BertModel(c, add_pooling_layer=False)
        self.dropout = nn.Dropout(c.get("classifier_dropout") or c.get("hidden_dropout_prob", 0.0))
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, _ = self.bert(ids, attention_mask, token_type_ids)
        return hs, self.classifier(self.dropout(hs[-1]))


class BertForQuestionAnswering(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.bert = BertModel(c, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(c["hidden_size"], 2)

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, _ = self.bert(ids, attention_mask, token_type_ids)
        start, end = self.qa_outputs(hs[-1]).split(1, dim=-1)
        return hs, (start.squeeze(-1), end.squeeze(-1))


# ---------------------------------------------------------------------------------------------------- DistilBERT
class DistilEmbeddings(nn.Module):
    """word + learned position embeddings (no token types) → LayerNorm (eps 1e-12) → dropout."""

    def __init__(self, c):
        super().__init__()
        if c.get("sinusoidal_pos_embds"):
            raise NotImplementedError("sinusoidal_pos_embds")
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["dim"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["dim"])
        self.LayerNorm = nn.LayerNorm(c["dim"], eps=1e-12)
        self.dropout = nn.Dropout(c.get("dropout", 0.0))

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)[None, :]
        return self.dropout(self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos)))


class DistilMultiHeadSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads, self.dim = c["n_heads"], c["dim"]
        self.q_lin = nn.Linear(c["dim"], c["dim"])
        self.k_lin = nn.Linear(c["dim"], c["dim"])
        self.v_lin = nn.Linear(c["dim"], c["dim"])
        self.out_lin = nn.Linear(c["dim"], c["dim"])

    def forward(self, x, pad_mask):
        B, T, E = x.shape
        D = E // self.n_heads
        split = lambda t: t.view(B, T, self.n_heads, D).transpose(1, 2)
        q = split(self.q_lin(x)) / math.sqrt(D)          # DistilBERT scales q before the product
        k, v = split(self.k_lin(x)), split(self.v_lin(x))
        scores = q @ k.transpose(-1, -2)
        scores = scores.masked_fill(~pad_mask[:, None, None, :], torch.finfo(scores.dtype).min)
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, E)
        return self.out_lin(ctx)


class DistilFFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin1 = nn.Linear(c["dim"], c["hidden_dim"])
        self.lin2 = nn.Linear(c["hidden_dim"], c["dim"])
        self.act = _act(c.get("activation", "gelu"))

    def forward(self, x):
        return self.lin2(self.act(self.lin1(x)))


class DistilTransformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = DistilMultiHeadSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(c["dim"], eps=1e-12)
        self.ffn = DistilFFN(c)
        self.output_layer_norm = nn.LayerNorm(c["dim"], eps=1e-12)

    def forward(self, x, pad_mask):
        sa = self.sa_layer_norm(self.attention(x, pad_mask) + x)
        return self.output_layer_norm(self.ffn(sa) + sa), None


class DistilTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([DistilTransformerBlock(c) for _ in range(c["n_layers"])])


class DistilBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embeddings = DistilEmbeddings(c)
        self.transformer = DistilTransformer(c)

    def hidden_states(self, ids, attention_mask=None, token_type_ids=None):   # token types ignored
        return _run_layers(self.transformer.layer, self.embeddings(ids), _mask(ids, attention_mask))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.hidden_states(ids, attention_mask)
        return hs, hs[-1]


class DistilBertForMaskedLM(nn.Module):
    """vocab_transform → activation → vocab_layer_norm → vocab_projector (weight tied to the word embeddings)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.distilbert = DistilBertModel(c)
        self.vocab_transform = nn.Linear(c["dim"], c["dim"])
        self.vocab_layer_norm = nn.LayerNorm(c["dim"], eps=1e-12)
        self.vocab_projector = nn.Linear(c["dim"], c["vocab_size"])
        self.vocab_projector.weight = self.distilbert.embeddings.word_embeddings.weight
        self.act = _act(c.get("activation", "gelu"))

    def mlm_logits(self, h):
        return self.vocab_projector(self.vocab_layer_norm(self.act(self.vocab_transform(h))))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.distilbert.hidden_states(ids, attention_mask)
        return hs, self.mlm_logits(hs[-1])


class DistilBertForSequenceClassification(nn.Module):
    """position 0 → pre_classifier → ReLU → dropout → classifier."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.distilbert = DistilBertModel(c)
        self.pre_classifier = nn.Linear(c["dim"], c["dim"])
        self.classifier = nn.Linear(c["dim"], c["num_labels"])
        self.dropout = nn.Dropout(c.get("seq_classif_dropout", 0.0))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.distilbert.hidden_states(ids, attention_mask)
        return hs, self.classifier(self.dropout(F.relu(self.pre_classifier(hs[-1][:, 0]))))


class DistilBertForTokenClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.distilbert = DistilBertModel(c)
        self.dropout = nn.Dropout(c.get("dropout", 0.0))
        self.classifier = nn.Linear(c["dim"], c["num_labels"])

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.distilbert.hidden_states(ids, attention_mask)
        return hs, self.classifier(self.dropout(hs[-1]))


class DistilBertForQuestionAnswering(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.distilbert = DistilBertModel(c)
        self.qa_outputs = nn.Linear(c["dim"], 2)
        self.dropout = nn.Dropout(c.get("qa_dropout", 0.0))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.distilbert.hidden_states(ids, attention_mask)
        start, end = self.qa_outputs(self.dropout(hs[-1])).split(1, dim=-1)
        return hs, (start.squeeze(-1), end.squeeze(-1))


# ------------------------------------------------------------------------------------------------------- RoBERTa
def roberta_position_ids(ids, padding_idx):
    """padding_idx + 1 + cumulative count of non-pad tokens; pad tokens get padding_idx."""
    m = ids.ne(padding_idx).to(torch.int64)
    return torch.cumsum(m, dim=1) * m + padding_idx


class RobertaEmbeddings(models.BertEmbeddings):
    def __init__(self, c):
        super().__init__(c)
        self.padding_idx = c.get("pad_token_id", 1)

    def forward(self, ids, token_type=None):
        pos = roberta_position_ids(ids, self.padding_idx)
        tt = torch.zeros_like(ids) if token_type is None else token_type
        return self.dropout(self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos)
                                           + self.token_type_embeddings(tt)))


class RobertaModel(BertModel):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__(c, add_pooling_layer)
        self.embeddings = RobertaEmbeddings(c)


class RobertaLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.layer_norm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))


class RobertaForMaskedLM(nn.Module):
    """lm_head: dense → gelu → layer_norm → decoder (tied to the word embeddings) + lm_head.bias."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.roberta = RobertaModel(c, add_pooling_layer=False)
        self.lm_head = RobertaLMHead(c)

    def mlm_logits(self, h):
        t = self.lm_head
        return F.linear(t.layer_norm(F.gelu(t.dense(h))), self.roberta.embeddings.word_embeddings.weight, t.bias)

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, _ = self.roberta(ids, attention_mask, token_type_ids)
        return hs, self.mlm_logits(hs[-1])


class RobertaClassificationHead(nn.Module):
    def __init__(self, c, act="tanh"):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.out_proj = nn.Linear(c["hidden_size"], c["num_labels"])
        self.act = _act(act)

    def forward(self, h):
        return self.out_proj(self.act(self.dense(h[:, 0])))


class RobertaForSequenceClassification(nn.Module):
    """classifier: position 0 → dense → tanh → out_proj."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.roberta = RobertaModel(c, add_pooling_layer=False)
        self.classifier = RobertaClassificationHead(c, "tanh")

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, _ = self.roberta(ids, attention_mask, token_type_ids)
        return hs, self.classifier(hs[-1])


class RobertaForTokenClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.roberta = RobertaModel(c, add_pooling_layer=False)
        self.dropout = nn.Dropout(c.get("classifier_dropout") or c.get("hidden_dropout_prob", 0.0))
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, _ = self.roberta(ids, attention_mask, token_type_ids)
        return hs, self.classifier(self.dropout(hs[-1]))


class RobertaForQuestionAnswering(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.roberta = RobertaModel(c, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(c["hidden_size"], 2)

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, _ = self.roberta(ids, attention_mask, token_type_ids)
        start, end = self.qa_outputs(hs[-1]).split(1, dim=-1)
        return hs, (start.squeeze(-1), end.squeeze(-1))


# -------------------------------------------------------------------------------------------------------- ELECTRA
class ElectraModel(nn.Module):
    """Embeddings of width embedding_size (word, position, token type, LayerNorm), then embeddings_project
    (embedding_size → hidden_size) when the two differ, then BERT layers. No pooler."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embeddings = models.BertEmbeddings(dict(c, hidden_size=c["embedding_size"]))
        if c["embedding_size"] != c["hidden_size"]:
            self.embeddings_project = nn.Linear(c["embedding_size"], c["hidden_size"])
        self.encoder = models.BertEncoder(c)

    def hidden_states(self, ids, attention_mask=None, token_type_ids=None):
        x = self.embeddings(ids, token_type_ids)
        if hasattr(self, "embeddings_project"):
            x = self.embeddings_project(x)
        return _run_layers(self.encoder.layer, x, _mask(ids, attention_mask))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.hidden_states(ids, attention_mask, token_type_ids)
        return hs, hs[-1]


class ElectraDiscriminatorPredictions(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.dense_prediction = nn.Linear(c["hidden_size"], 1)
        self.act = _act(c.get("hidden_act", "gelu"))

    def forward(self, h):
        return self.dense_prediction(self.act(self.dense(h))).squeeze(-1)


class ElectraForPreTraining(nn.Module):
    """The discriminator: one logit per token (B, T)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.electra = ElectraModel(c)
        self.discriminator_predictions = ElectraDiscriminatorPredictions(c)

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.electra.hidden_states(ids, attention_mask, token_type_ids)
        return hs, self.discriminator_predictions(hs[-1])


class ElectraGeneratorPredictions(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["embedding_size"])
        self.LayerNorm = nn.LayerNorm(c["embedding_size"], eps=c["layer_norm_eps"])

    def forward(self, h):
        return self.LayerNorm(F.gelu(self.dense(h)))


class ElectraForMaskedLM(nn.Module):
    """The generator: generator_predictions (hidden → embedding_size, gelu, LayerNorm) → generator_lm_head (tied to
    the word embeddings) + generator_lm_head.bias."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.electra = ElectraModel(c)
        self.generator_predictions = ElectraGeneratorPredictions(c)
        self.generator_lm_head = nn.Linear(c["embedding_size"], c["vocab_size"])
        self.generator_lm_head.weight = self.electra.embeddings.word_embeddings.weight

    def mlm_logits(self, h):
        return self.generator_lm_head(self.generator_predictions(h))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.electra.hidden_states(ids, attention_mask, token_type_ids)
        return hs, self.mlm_logits(hs[-1])


class ElectraForSequenceClassification(nn.Module):
    """classifier: position 0 → dense → gelu → out_proj (ElectraClassificationHead)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.electra = ElectraModel(c)
        self.classifier = RobertaClassificationHead(c, "gelu")

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.electra.hidden_states(ids, attention_mask, token_type_ids)
        return hs, self.classifier(hs[-1])


# --------------------------------------------------------------------------------------------------------- ALBERT
class AlbertAttention(models.BertSelfAttention):
    """query/key/value, then dense and LayerNorm(· + residual) in one module, as modeling_albert.py names them."""

    def __init__(self, c):
        super().__init__(c)
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])


class AlbertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = AlbertAttention(c)
        self.ffn = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.ffn_output = nn.Linear(c["intermediate_size"], c["hidden_size"])
        self.full_layer_layer_norm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.act = _act(c.get("hidden_act", "gelu_new"))

    def forward(self, x, pad_mask):
        a, probs = models.BertSelfAttention.forward(self.attention, x, pad_mask)
        x = self.attention.LayerNorm(x + self.attention.dense(a))
        return self.full_layer_layer_norm(x + self.ffn_output(self.act(self.ffn(x)))), probs


class AlbertLayerGroup(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.albert_layers = nn.ModuleList([AlbertLayer(c) for _ in range(c.get("inner_group_num", 1))])


class AlbertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embedding_hidden_mapping_in = nn.Linear(c["embedding_size"], c["hidden_size"])
        self.albert_layer_groups = nn.ModuleList([AlbertLayerGroup(c) for _ in range(c.get("num_hidden_groups", 1))])

    def layers(self, c):
        """Layer l runs group l · num_hidden_groups // num_hidden_layers (its inner layers in turn)."""
        n, g = c["num_hidden_layers"], c.get("num_hidden_groups", 1)
        return [layer for l in range(n) for layer in self.albert_layer_groups[l * g // n].albert_layers]


class AlbertModel(nn.Module):
    """Embeddings of width embedding_size, embedding_hidden_mapping_in, shared layers, pooler (dense + tanh)."""

    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.config = c
        self.embeddings = models.BertEmbeddings(dict(c, hidden_size=c["embedding_size"]))
        self.encoder = AlbertEncoder(c)
        if add_pooling_layer:
            self.pooler = nn.Linear(c["hidden_size"], c["hidden_size"])

    def hidden_states(self, ids, attention_mask=None, token_type_ids=None):
        x = self.encoder.embedding_hidden_mapping_in(self.embeddings(ids, token_type_ids))
        return _run_layers(self.encoder.layers(self.config), x, _mask(ids, attention_mask))

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.hidden_states(ids, attention_mask, token_type_ids)
        return hs, torch.tanh(self.pooler(hs[-1][:, 0])) if hasattr(self, "pooler") else hs[-1]


class AlbertForSequenceClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.albert = AlbertModel(c)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs, pooled = self.albert(ids, attention_mask, token_type_ids)
        return hs, self.classifier(pooled)


class AlbertMLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["embedding_size"])
        self.LayerNorm = nn.LayerNorm(c["embedding_size"], eps=c["layer_norm_eps"])
        self.decoder = nn.Linear(c["embedding_size"], c["vocab_size"])
        self.bias = self.decoder.bias
        self.act = _act(c.get("hidden_act", "gelu_new"))

    def forward(self, h):
        return self.decoder(self.LayerNorm(self.act(self.dense(h))))


class AlbertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.albert = AlbertModel(c, add_pooling_layer=False)
        self.predictions = AlbertMLMHead(c)
        self.predictions.decoder.weight = self.albert.embeddings.word_embeddings.weight  # tied

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.albert.hidden_states(ids, attention_mask, token_type_ids)
        return hs, self.predictions(hs[-1])


# ---------------------------------------------------------------------------------------------------- ModernBERT
def _mb_norm(c):
    """nn.LayerNorm(hidden_size, eps=norm_eps, bias=norm_bias): this torch has no bias argument, so the bias is
    dropped by hand (still an nn.LayerNorm, which `randomize` recognises)."""
    ln = nn.LayerNorm(c["hidden_size"], eps=c["norm_eps"])
    if not c.get("norm_bias", False):
        del ln.bias
        ln.register_parameter("bias", None)
    return ln


def modernbert_is_local(c, layer):
    return layer % c["global_attn_every_n_layers"] != 0


def modernbert_rope(c, layer, T):
    """cos, sin (T, D) of layer `layer`: inv_freq = 1 / theta^(arange(0, D, 2) / D) in f32 with theta =
    local_rope_theta on local layers and global_rope_theta on global ones; angles cat(freqs, freqs) (NeoX halves)."""
    D = c["hidden_size"] // c["num_attention_heads"]
    theta = float(c["local_rope_theta"] if modernbert_is_local(c, layer) else c["global_rope_theta"])
    inv = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    freqs = torch.arange(T).float()[:, None] * inv[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def _rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class ModernBertEmbeddings(nn.Module):
    """tok_embeddings → norm (no positions, no token types)."""

    def __init__(self, c):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.norm = _mb_norm(c)

    def forward(self, ids):
        return self.norm(self.tok_embeddings(ids))


class ModernBertAttention(nn.Module):
    """Wqkv (3E, E): rows q | k | v, each (heads, head_dim); RoPE on q and k over the whole head; scores · D^-0.5;
    local layers see only keys with |i - j| <= local_attention // 2 (and never padding); Wo (E, E)."""

    def __init__(self, c, layer):
        super().__init__()
        E = c["hidden_size"]
        self.c, self.layer = c, layer
        self.n_head = c["num_attention_heads"]
        self.d = E // self.n_head
        self.Wqkv = nn.Linear(E, 3 * E, bias=c.get("attention_bias", False))
        self.Wo = nn.Linear(E, E, bias=c.get("attention_bias", False))

    def forward(self, x, pad_mask, sliding_window=True):
        B, T, E = x.shape
        qkv = self.Wqkv(x).view(B, T, 3, self.n_head, self.d)
        q, k, v = qkv.transpose(3, 1).unbind(dim=2)            # (B, H, T, D) each
        cos, sin = modernbert_rope(self.c, self.layer, T)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        att = (q @ k.transpose(-1, -2)) * self.d ** -0.5
        allowed = pad_mask[:, None, None, :]
        if sliding_window and modernbert_is_local(self.c, self.layer):
            i = torch.arange(T)
            allowed = allowed & ((i[:, None] - i[None, :]).abs() <= self.c["local_attention"] // 2)[None, None]
        att = att.masked_fill(~allowed, torch.finfo(att.dtype).min)
        probs = att.softmax(-1, dtype=torch.float32).to(q.dtype)
        y = (probs @ v).transpose(1, 2).reshape(B, T, E)
        return self.Wo(y)


class ModernBertMLP(nn.Module):
    """Wi (2F, E) → input, gate = chunk(2) (input first) → act(input) · gate → Wo (E, F)."""

    def __init__(self, c):
        super().__init__()
        E, F_ = c["hidden_size"], c["intermediate_size"]
        self.Wi = nn.Linear(E, 2 * F_, bias=c.get("mlp_bias", False))
        self.Wo = nn.Linear(F_, E, bias=c.get("mlp_bias", False))
        self.act = _act(c.get("hidden_activation", "gelu"))

    def forward(self, x):
        inp, gate = self.Wi(x).chunk(2, dim=-1)
        return self.Wo(self.act(inp) * gate)


class ModernBertEncoderLayer(nn.Module):
    """Pre-norm: x + attn(attn_norm(x)), then x + mlp(mlp_norm(x)); layer 0's attn_norm is the identity."""

    def __init__(self, c, layer):
        super().__init__()
        self.attn_norm = nn.Identity() if layer == 0 else _mb_norm(c)
        self.attn = ModernBertAttention(c, layer)
        self.mlp_norm = _mb_norm(c)
        self.mlp = ModernBertMLP(c)

    def forward(self, x, pad_mask, sliding_window=True):
        x = x + self.attn(self.attn_norm(x), pad_mask, sliding_window)
        return x + self.mlp(self.mlp_norm(x))


class ModernBertModel(nn.Module):
    """embeddings, layers, final_norm. hidden states as HF's output_hidden_states gives them: the embeddings output,
    then after each layer (before final_norm); the model's output (last_hidden_state) is final_norm of the last."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embeddings = ModernBertEmbeddings(c)
        self.layers = nn.ModuleList([ModernBertEncoderLayer(c, l) for l in range(c["num_hidden_layers"])])
        self.final_norm = _mb_norm(c)

    def hidden_states(self, ids, attention_mask=None, token_type_ids=None, sliding_window=True):   # no token types
        pad_mask = _mask(ids, attention_mask)
        x = self.embeddings(ids)
        hidden = [x]
        for layer in self.layers:
            x = layer(x, pad_mask, sliding_window)
            hidden.append(x)
        return hidden

    def last_hidden(self, hs):
        return self.final_norm(hs[-1])

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        hs = self.hidden_states(ids, attention_mask)
        return hs, self.last_hidden(hs)


class ModernBertPredictionHead(nn.Module):
    """dense (E, E; bias if classifier_bias) → classifier_activation → norm."""

    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"], bias=c.get("classifier_bias", False))
        self.act = _act(c.get("classifier_activation", "gelu"))
        self.norm = _mb_norm(c)

    def forward(self, h):
        return self.norm(self.act(self.dense(h)))


class _ModernBertTask(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.model = ModernBertModel(c)
        self.head = ModernBertPredictionHead(c)

    def hidden_states(self, ids, attention_mask=None, token_type_ids=None, sliding_window=True):
        return self.model.hidden_states(ids, attention_mask, token_type_ids, sliding_window)

    def last_hidden(self, hs):
        return self.model.last_hidden(hs)

    def forward(self, ids, attention_mask=None, token_type_ids=None, sliding_window=True):
        hs = self.hidden_states(ids, attention_mask, token_type_ids, sliding_window)
        return hs, self.task(self.last_hidden(hs), _mask(ids, attention_mask))


class ModernBertForMaskedLM(_ModernBertTask):
    """decoder(head(h)): decoder (V, E) tied to tok_embeddings (left out of model.safetensors), bias if
    decoder_bias."""

    def __init__(self, c):
        super().__init__(c)
        self.decoder = nn.Linear(c["hidden_size"], c["vocab_size"], bias=c.get("decoder_bias", True))
        self.decoder.weight = self.model.embeddings.tok_embeddings.weight

    def mlm_logits(self, h):
        return self.decoder(self.head(h))

    def task(self, h, pad_mask):
        return self.mlm_logits(h)


class ModernBertForSequenceClassification(_ModernBertTask):
    """classifier_pooling "cls" (position 0) or "mean" (over the real tokens), then head, then classifier."""

    def __init__(self, c):
        super().__init__(c)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def task(self, h, pad_mask):
        pooling = self.config.get("classifier_pooling", "cls")
        if pooling == "cls":
            pooled = h[:, 0]
        elif pooling == "mean":
            m = pad_mask.to(h.dtype)
            pooled = (h * m[..., None]).sum(dim=1) / m.sum(dim=1, keepdim=True)
        else:
            raise NotImplementedError(f"classifier_pooling {pooling!r}")
        return self.classifier(self.head(pooled))


class ModernBertForTokenClassification(_ModernBertTask):
    def __init__(self, c):
        super().__init__(c)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def task(self, h, pad_mask):
        return self.classifier(self.head(h))


def last_hidden(model, hs):
    """The model's last hidden state from its hidden states: hs[-1], or ModernBERT's final_norm of it."""
    return model.last_hidden(hs) if hasattr(model, "last_hidden") else hs[-1]


# ---------------------------------------------------------------------------------------------------------- export
ARCHITECTURES = {cls.__name__: cls for cls in [
    BertModel, BertForSequenceClassification, BertForTokenClassification, BertForQuestionAnswering,
    DistilBertModel, DistilBertForMaskedLM, DistilBertForSequenceClassification, DistilBertForTokenClassification,
    DistilBertForQuestionAnswering, RobertaModel, RobertaForMaskedLM, RobertaForSequenceClassification,
    RobertaForTokenClassification, RobertaForQuestionAnswering, ElectraModel, ElectraForPreTraining,
    ElectraForMaskedLM, ElectraForSequenceClassification, AlbertModel, AlbertForSequenceClassification,
    AlbertForMaskedLM, ModernBertModel, ModernBertForMaskedLM, ModernBertForSequenceClassification,
    ModernBertForTokenClassification]}

# keys save_pretrained leaves out (tied to the word embeddings, or an alias of a bias that is written)
TIED = {
    "DistilBertForMaskedLM": ["vocab_projector.weight"],
    "RobertaForMaskedLM": ["lm_head.decoder.weight", "lm_head.decoder.bias"],
    "ElectraForMaskedLM": ["generator_lm_head.weight"],
    "AlbertForMaskedLM": ["predictions.decoder.weight", "predictions.decoder.bias"],
    "ModernBertForMaskedLM": ["decoder.weight"],
}


def build(config):
    return ARCHITECTURES[config["architectures"][0]](config).eval()


def export_state(model):
    """Tensors as Hugging Face stores them: tied outputs left out."""
    drop = set(TIED.get(type(model).__name__, []))
    return {k: v.detach().contiguous() for k, v in model.state_dict().items() if k not in drop}


def randomize(model, seed):
    """As make_fixtures.randomize: LayerNorm weights 1 + 0.1·N(0,1), every other parameter 0.08·N(0,1), in
    named_parameters order (tied parameters once), from torch.Generator(seed)."""
    g = torch.Generator().manual_seed(seed)
    ln = {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, nn.LayerNorm)}
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name in ln:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.08 * torch.randn(p.shape, generator=g))
