"""The translation model's network: Hugging Face's MarianMTModel in plain PyTorch, with Hugging Face's parameter names
(what save_pretrained writes): tools/reference/marian.py's `MarianMTModel` plus what training and evaluation need.

Added here: Hugging Face's initialisation (MarianPreTrainedModel._init_weights: Linear and Embedding N(0, init_std
0.02), biases 0, LayerNorm 1 / 0, the pad row of the shared embedding 0); dropout as the config's `dropout` puts it
(after the embeddings + positions, after each attention and after fc2; attention_dropout and activation_dropout 0);
`final_logits_bias` as a trained parameter (HF keeps it as a buffer; opus-mt's values are the Marian model's trained
output bias, so it is trained here too); a label-smoothed loss whose softmax leaves the pad token out (generation
never produces it: bad_words_ids [[pad]] with renormalize_logits), so that the pad row of the shared matrix — the
decoder start token's embedding — gets no gradient from the output layer either and stays exactly zero, as in
converted opus-mt models; and batched greedy decoding with a cache for evaluation. `python3 model.py` checks the
forward and the decoding against the reference.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
import marian  # noqa: E402


def make_config(vocab_size, d_model=256, encoder_layers=4, decoder_layers=4, heads=4, ffn_dim=1024,
                max_position_embeddings=512, num_beams=4, dropout=0.1):
    """config.json as an opus-mt folder has it (MarianConfig.to_json_string of a converted model: the keys of
    Helsinki-NLP/opus-mt-en-es's config with this model's sizes, less _name_or_path and transformers_version, since
    no transformers wrote it). pad = decoder start = the last id; eos = bos = 0."""
    pad = vocab_size - 1
    return {
        "_num_labels": 3, "activation_dropout": 0.0, "activation_function": "swish", "add_bias_logits": False,
        "add_final_layer_norm": False, "architectures": ["MarianMTModel"], "attention_dropout": 0.0,
        "bad_words_ids": [[pad]], "bos_token_id": 0, "classif_dropout": 0.0, "classifier_dropout": 0.0,
        "d_model": d_model, "decoder_attention_heads": heads, "decoder_ffn_dim": ffn_dim, "decoder_layerdrop": 0.0,
        "decoder_layers": decoder_layers, "decoder_start_token_id": pad, "decoder_vocab_size": vocab_size,
        "dropout": dropout, "encoder_attention_heads": heads, "encoder_ffn_dim": ffn_dim, "encoder_layerdrop": 0.0,
        "encoder_layers": encoder_layers, "eos_token_id": 0, "forced_eos_token_id": 0, "gradient_checkpointing": False,
        "id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}, "init_std": 0.02, "is_encoder_decoder": True,
        "label2id": {"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2}, "max_length": 512,
        "max_position_embeddings": max_position_embeddings, "model_type": "marian", "normalize_before": False,
        "normalize_embedding": False, "num_beams": num_beams, "num_hidden_layers": encoder_layers,
        "pad_token_id": pad, "scale_embedding": True, "share_encoder_decoder_embeddings": True,
        "static_position_embeddings": True, "tie_word_embeddings": True, "torch_dtype": "float32",
        "use_cache": True, "vocab_size": vocab_size,
    }


class Translator(marian.MarianMTModel):
    def __init__(self, c, init=True):
        super().__init__(c)
        self.pad = c["pad_token_id"]
        assert self.pad == c["vocab_size"] - 1, "the loss drops the last logit column: pad must be the last id"
        self.p = c.get("dropout", 0.0)
        del self.final_logits_bias
        self.final_logits_bias = nn.Parameter(torch.zeros(1, c["vocab_size"]))
        self.model.shared.padding_idx = self.pad  # no gradient to the pad row through the lookup
        if init:
            self.init_weights()

    def init_weights(self):
        std = self.config.get("init_std", 0.02)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    m.weight.normal_(0.0, std)
                    m.bias.zero_()
                elif isinstance(m, nn.Embedding):
                    m.weight.normal_(0.0, std)
                    m.weight[self.pad].zero_()
                elif isinstance(m, nn.LayerNorm):
                    m.weight.fill_(1.0)
                    m.bias.zero_()
            self.final_logits_bias.zero_()

    def n_params(self):
        return sum(p.numel() for p in self.parameters())  # the shared matrix once

    def drop(self, x):
        return F.dropout(x, self.p, self.training) if self.p else x

    def encode_train(self, ids, mask):
        x = self.drop(self.embed(ids))
        bias = marian.key_bias(mask)
        for layer in self.model.encoder.layers:
            a = layer.self_attn
            k, v = a.kv(x)
            x = layer.self_attn_layer_norm(x + self.drop(a(x, k, v, bias)))
            x = layer.final_layer_norm(x + self.drop(layer.fc2(layer.act(layer.fc1(x)))))
        return x

    def decode_train(self, ids, enc, mask):
        T = ids.shape[1]
        x = self.drop(self.embed(ids))
        causal = torch.full((T, T), marian.NEG).triu(1)[None, None]
        cross_bias = marian.key_bias(mask)
        for layer in self.model.decoder.layers:
            a = layer.self_attn
            k, v = a.kv(x)
            x = layer.self_attn_layer_norm(x + self.drop(a(x, k, v, causal)))
            ck, cv = layer.encoder_attn.kv(enc)
            x = layer.encoder_attn_layer_norm(x + self.drop(layer.encoder_attn(x, ck, cv, cross_bias)))
            x = layer.final_layer_norm(x + self.drop(layer.fc2(layer.act(layer.fc1(x)))))
        return x

    def loss(self, src, src_mask, dec_in, labels, smoothing=0.1):
        """Sum of the label-smoothed cross-entropy over the labelled target tokens (labels −100 elsewhere), the plain
        cross-entropy sum (for reporting), and the token count. Softmax over every id but pad (the last)."""
        enc = self.encode_train(src, src_mask)
        h = self.decode_train(dec_in, enc, src_mask)
        sel = labels != -100
        logits = self.logits(h[sel])[:, :-1]
        y = labels[sel]
        ls = F.cross_entropy(logits, y, reduction="sum", label_smoothing=smoothing)
        with torch.no_grad():
            ce = F.cross_entropy(logits, y, reduction="sum")
        return ls, float(ce), int(sel.sum())

    @torch.no_grad()
    def greedy(self, sources, max_new, eos=0):
        """Batched greedy decoding as HF's generate (num_beams 1, bad_words_ids [[pad]], forced EOS at max_length):
        sources: lists of ids (each ending with </s>), right-padded and masked. Returns the generated ids of each
        (without the start token, up to and including EOS)."""
        B, S = len(sources), max(len(s) for s in sources)
        src = torch.full((B, S), self.pad, dtype=torch.long)
        mask = torch.zeros(B, S, dtype=torch.long)
        for b, s in enumerate(sources):
            src[b, :len(s)] = torch.tensor(s)
            mask[b, :len(s)] = 1
        enc = self.encode(src, mask)
        cache, cross = {"past": 0, "layers": []}, self.cross_kv(enc)
        cur = torch.full((B, 1), self.pad, dtype=torch.long)
        out = [[] for _ in range(B)]
        done = torch.zeros(B, dtype=torch.bool)
        max_length = max_new + 1
        for step in range(1, max_length):
            h = self.decode(cur, enc, mask, cache=cache, cross=cross)
            lg = self.logits(h[:, -1])
            lg[:, self.pad] = -float("inf")
            nxt = lg.argmax(-1)
            if step == max_length - 1:
                nxt[:] = eos
            for b in range(B):
                if not done[b]:
                    out[b].append(int(nxt[b]))
                    done[b] = int(nxt[b]) == eos
            if bool(done.all()):
                break
            cur = torch.where(done, torch.full_like(nxt, self.pad), nxt)[:, None]
        return out


def check(seed=0):
    """The training forward (eval mode), the loss and the batched greedy decoding against marian.py."""
    torch.manual_seed(seed)
    c = make_config(41, d_model=32, encoder_layers=2, decoder_layers=2, heads=4, ffn_dim=48,
                    max_position_embeddings=64)
    m = Translator(c).eval()
    with torch.no_grad():
        for n, p in m.named_parameters():
            p.normal_(0, 0.3)
        m.model.shared.weight[m.pad] = 0
    ref = marian.MarianMTModel(c).eval()
    marian.load_state(ref, marian.export_state(m))
    assert set(marian.export_state(m)) == set(ref.state_dict())
    src = torch.randint(1, 40, (3, 11))
    mask = torch.ones(3, 11, dtype=torch.long)
    mask[1, 8:] = 0
    mask[2, 5:] = 0
    src[mask == 0] = m.pad
    dec = torch.randint(1, 40, (3, 7))
    dec[:, 0] = m.pad
    with torch.no_grad():
        want = ref(src, dec, mask)["logits"]
        got = m.logits(m.decode_train(dec, m.encode_train(src, mask), mask))
        assert torch.allclose(got, want, atol=1e-5), float((got - want).abs().max())
        labels = torch.cat([dec[:, 1:], torch.zeros(3, 1, dtype=torch.long)], 1)
        ls, ce, n = m.loss(src, mask, dec, labels, smoothing=0.0)
        lp = want[..., :-1].log_softmax(-1)
        assert abs(float(ls) - float(-lp.gather(-1, labels[..., None]).sum())) < 1e-3 and n == 21
        srcs = [src[b, :int(mask[b].sum())].tolist() for b in range(3)]
        g = m.greedy(srcs, 9)
        want_g = marian.generate(ref, srcs, max_new_tokens=9)
        assert [[c["pad_token_id"]] + x for x in g] == want_g, (g, want_g)
    # dropout only in training mode; the pad row gets no gradient
    m.train()
    m.p = 0.1
    ls, _, _ = m.loss(src, mask, dec, labels)
    ls.backward()
    assert float(m.model.shared.weight.grad[m.pad].abs().max()) == 0.0
    return True


if __name__ == "__main__":
    print("check:", check())
