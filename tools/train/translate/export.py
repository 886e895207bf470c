"""Writes the translation model's Hugging Face folder (models/wasmformer-translate-en-es) from a training run's
checkpoint, laid out as a Helsinki-NLP/opus-mt folder (MarianMTModel.save_pretrained + MarianTokenizer.save_pretrained).

  /usr/bin/python3 tools/train/translate/export.py --run build/translate-train/run --data build/translate-train \\
      --out models/wasmformer-translate-en-es

Runs on any checkpoint (ckpt.pt is replaced atomically by train.py, so this works during training too). Files:
  config.json             MarianConfig's keys as converted opus-mt configs have them (sorted, indent 2): pad =
                          decoder_start = vocab_size − 1, eos = bos = forced_eos = 0, bad_words_ids [[pad]],
                          num_beams 4, max_length 512, shared and tied embeddings;
  model.safetensors       F16 (--dtype f32 for F32; half the bytes: the engine widens F16 to f32 at load, or
                          converts it to q8_0 with dtype 'q8_0'), the names save_pretrained writes: model.shared.weight (the encoder's and decoder's
                          embed_tokens and lm_head are the same tensor and left out), final_logits_bias (1, V),
                          model.{encoder,decoder}.layers.N.…; no embed_positions (static sinusoids, not saved);
                          metadata {"format": "pt"};
  generation_config.json  as opus-mt's (bad_words_ids, bos/eos/pad/decoder_start/forced_eos ids, max_length 512,
                          num_beams 4, renormalize_logits true: what transformers PR #25459 asks of Marian configs,
                          equal to the old "pad logit −inf before log_softmax" behaviour);
  source.spm, target.spm  the SentencePiece models (copied);
  vocab.json              the shared vocabulary, written as MarianTokenizer.save_vocabulary writes it
                          (json.dump indent 2, non-ASCII escaped as \\uXXXX);
  tokenizer_config.json   MarianTokenizer's settings (source_lang en, target_lang es, separate_vocabs false,
                          model_max_length 512, sp_model_kwargs {}, the special tokens);
  special_tokens_map.json eos, unk, pad;
  training.json           the run's settings, its loss history, the data's numbers (evaluate.py --into adds scores);
  model-files.json        the files and their sizes (as web/bin/model-files.mjs writes it).
`--manifest DIR` only rewrites DIR/model-files.json (after a README.md is added by hand).
"""
import argparse
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))
import marian  # noqa: E402
import model as M  # noqa: E402
import safetensors_io  # noqa: E402

SOURCE_LANG, TARGET_LANG = "en", "es"


def dump(obj, path):
    """As transformers' to_json_file: indent 2, sorted keys, a final newline."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def generation_config(cfg):
    pad = cfg["pad_token_id"]
    return {"bad_words_ids": [[pad]], "bos_token_id": cfg["bos_token_id"], "decoder_start_token_id": pad,
            "eos_token_id": cfg["eos_token_id"], "forced_eos_token_id": cfg["forced_eos_token_id"],
            "max_length": cfg["max_length"], "num_beams": cfg["num_beams"], "pad_token_id": pad,
            "renormalize_logits": True}


def tokenizer_config(context):
    return {"clean_up_tokenization_spaces": False, "eos_token": "</s>", "model_max_length": context,
            "pad_token": "<pad>", "separate_vocabs": False, "source_lang": SOURCE_LANG, "sp_model_kwargs": {},
            "target_lang": TARGET_LANG, "target_vocab_file": None, "tokenizer_class": "MarianTokenizer",
            "unk_token": "<unk>"}


def manifest(folder):
    files = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, folder)
            if rel != "model-files.json":
                files[rel] = os.path.getsize(p)
    with open(os.path.join(folder, "model-files.json"), "w") as f:
        f.write(json.dumps({"files": dict(sorted(files.items()))}, indent=2) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", default="build/translate-train/run")
    ap.add_argument("--data", default="build/translate-train")
    ap.add_argument("--out", default="models/wasmformer-translate-en-es")
    ap.add_argument("--manifest", default=None)
    ap.add_argument("--dtype", choices=("f16", "f32"), default="f16")
    a = ap.parse_args()
    if a.manifest:
        manifest(a.manifest)
        return
    ck = torch.load(os.path.join(a.run, "ckpt.pt"))
    cfg = dict(ck["config"])
    cfg.pop("transformers_version", None)  # the first run's checkpoints carry one; no transformers wrote this
    model = M.Translator(cfg, init=False)
    half = a.dtype == "f16"
    # the model as the folder holds it: with --dtype f16 its weights rounded to half precision, so that the check
    # below compares the folder with exactly what it stores
    model.load_state_dict({k: v.half().float() if half and v.is_floating_point() else v for k, v in ck["model"].items()})
    state = marian.export_state(model)
    assert float(state["model.shared.weight"][cfg["pad_token_id"]].abs().max()) == 0.0, "pad row must stay zero"
    with open(os.path.join(a.data, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    assert len(vocab) == cfg["vocab_size"] and vocab["<pad>"] == cfg["pad_token_id"] and vocab["</s>"] == 0
    os.makedirs(a.out, exist_ok=True)
    dump(cfg, os.path.join(a.out, "config.json"))
    dump(generation_config(cfg), os.path.join(a.out, "generation_config.json"))
    safetensors_io.save(os.path.join(a.out, "model.safetensors"), state, metadata={"format": "pt"},
                        dtype=torch.float16 if half else None)
    for name in ("source.spm", "target.spm"):
        shutil.copyfile(os.path.join(a.data, name), os.path.join(a.out, name))
    with open(os.path.join(a.out, "vocab.json"), "w") as f:
        json.dump(vocab, f, indent=2)  # MarianTokenizer.save_vocabulary's save_json (ASCII, \\u escapes)
    dump(tokenizer_config(cfg["max_position_embeddings"]), os.path.join(a.out, "tokenizer_config.json"))
    dump({"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"},
         os.path.join(a.out, "special_tokens_map.json"))

    # the folder must load back into the reference and compute what the checkpoint computes
    ref, tok, gen = marian.load(a.out)
    src = torch.tensor([tok("In the beginning God created the heaven and the earth.")])
    dec = torch.tensor([[cfg["pad_token_id"]] + tok.target("En el principio crió Dios los cielos y la tierra.")[:-1]])
    with torch.no_grad():
        model.eval()
        want = model(src, dec)["logits"]
        got = ref(src, dec)["logits"]
    assert torch.allclose(got, want, atol=1e-5), float((got - want).abs().max())

    # training.json: the run's settings, its log, the data's numbers (evaluate.py --into adds the evaluation)
    log = [json.loads(l) for l in open(os.path.join(a.run, "log.jsonl"))]
    with open(os.path.join(a.data, "data-info.json")) as f:
        info = json.load(f)
    tj_path = os.path.join(a.out, "training.json")
    old = json.load(open(tj_path)) if os.path.exists(tj_path) else {}
    args = {k: v for k, v in ck["args"].items() if k not in ("resume",)}
    n_params = model.n_params()
    tj = {
        "model": "MarianMTModel (tools/train/translate/model.py), trained from scratch",
        "objective": "label-smoothed cross-entropy of the Spanish verse given the English (KJV or WEB) verse",
        "data": info, "args": args, "steps_done": ck["step"], "epochs_started": ck["epoch"] + 1,
        "target_tokens_seen": ck["tokens"], "train_minutes": round(ck["elapsed"] / 60, 1),
        "final": ck["step"] >= args["steps"], "params": n_params,
        "q8_0_bytes_estimate": int(n_params * 34 / 32),
        "loss_history": [r for r in log if r.get("checkpoint") or r["step"] % 100 == 0 or r["step"] == 1],
    }
    if "evaluation" in old and old.get("steps_done") == tj["steps_done"]:
        tj["evaluation"] = old["evaluation"]
    with open(tj_path, "w") as f:
        json.dump(tj, f, indent=2, ensure_ascii=False)
        f.write("\n")
    manifest(a.out)
    print(json.dumps({k: tj[k] for k in ("steps_done", "train_minutes", "final", "params", "q8_0_bytes_estimate")}))


if __name__ == "__main__":
    main()
