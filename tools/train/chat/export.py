"""Writes the chat model's Hugging Face folder (models/wasmformer-chat-mini) from a training run's checkpoint.

  /usr/bin/python3 tools/train/chat/export.py --run build/chat-train/run --data build/chat-train \\
      --out models/wasmformer-chat-mini

The folder is laid out as LlamaForCausalLM.save_pretrained and LlamaTokenizer.save_pretrained write it:
config.json (sorted keys, indent 2), model.safetensors (F32, tied lm_head left out, metadata {"format": "pt"}),
generation_config.json, tokenizer.model (the SentencePiece model, copied), tokenizer_config.json (with the ChatML
chat template of chat_format.py); and the project's training.json (settings, loss history; evaluate.py adds the
held-out scores) and model-files.json (the files and their sizes, as web/bin/model-files.mjs writes it).
The model card README.md is written by hand. `--manifest DIR` only rewrites DIR/model-files.json.
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
import chat_format  # noqa: E402
import decoders  # noqa: E402
import model as M  # noqa: E402
import safetensors_io  # noqa: E402


def dump(obj, path):
    """As transformers' to_json_file: indent 2, sorted keys, a final newline."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def tokenizer_config(context):
    added = {}
    for i, t in enumerate(["<unk>", "<s>", "</s>", chat_format.IM_START, chat_format.IM_END]):
        added[str(i)] = {"content": t, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
                         "special": True}
    return {
        "add_bos_token": True, "add_eos_token": False, "add_prefix_space": False, "added_tokens_decoder": added,
        "additional_special_tokens": [chat_format.IM_START, chat_format.IM_END], "bos_token": "<s>",
        "chat_template": chat_format.TEMPLATE, "clean_up_tokenization_spaces": False, "eos_token": chat_format.IM_END,
        "legacy": False, "model_max_length": context, "pad_token": None, "sp_model_kwargs": {},
        "spaces_between_special_tokens": False, "tokenizer_class": "LlamaTokenizer", "unk_token": "<unk>",
        "use_default_system_prompt": False,
    }


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
    ap.add_argument("--run", default="build/chat-train/run")
    ap.add_argument("--data", default="build/chat-train")
    ap.add_argument("--out", default="models/wasmformer-chat-mini")
    ap.add_argument("--manifest", default=None)
    a = ap.parse_args()
    if a.manifest:
        manifest(a.manifest)
        return
    import sentencepiece as spm
    ck = torch.load(os.path.join(a.run, "ckpt.pt"))
    cfg = ck["config"]
    model = M.LlamaForCausalLM(cfg, init=False)
    model.load_state_dict(ck["model"])
    sp = spm.SentencePieceProcessor(model_file=os.path.join(a.data, "tokenizer.model"))
    assert sp.get_piece_size() == cfg["vocab_size"]
    assert sp.id_to_piece(cfg["eos_token_id"]) == chat_format.IM_END and sp.id_to_piece(cfg["bos_token_id"]) == "<s>"
    os.makedirs(a.out, exist_ok=True)
    dump(cfg, os.path.join(a.out, "config.json"))
    dump({"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"]},
         os.path.join(a.out, "generation_config.json"))
    safetensors_io.save(os.path.join(a.out, "model.safetensors"), decoders.export_state(model), metadata={"format": "pt"})
    shutil.copyfile(os.path.join(a.data, "tokenizer.model"), os.path.join(a.out, "tokenizer.model"))
    dump(tokenizer_config(cfg["max_position_embeddings"]), os.path.join(a.out, "tokenizer_config.json"))

    # training.json: the run's settings, its log, the data's numbers (evaluate.py --into adds the evaluation)
    log = [json.loads(l) for l in open(os.path.join(a.run, "log.jsonl"))]
    with open(os.path.join(a.data, "data-info.json")) as f:
        info = json.load(f)
    tj_path = os.path.join(a.out, "training.json")
    old = json.load(open(tj_path)) if os.path.exists(tj_path) else {}
    args = {k: v for k, v in ck["args"].items() if k not in ("resume",)}
    tj = {
        "model": "LlamaForCausalLM (tools/train/chat/model.py), trained from scratch",
        "objective": "next-token cross-entropy on the assistant's answers (and their <|im_end|>) only",
        "data": info, "args": args, "steps_done": ck["step"], "epochs_started": ck["epoch"] + 1,
        "answer_tokens_seen": ck["tokens"], "train_minutes": round(ck["elapsed"] / 60, 1),
        "final": ck["step"] >= args["steps"], "params": model.n_params(),
        "loss_history": [r for r in log if r.get("checkpoint") or r["step"] % 100 == 0 or r["step"] == 1],
    }
    if "evaluation" in old and old.get("steps_done") == tj["steps_done"]:
        tj["evaluation"] = old["evaluation"]
    with open(tj_path, "w") as f:
        json.dump(tj, f, indent=2, ensure_ascii=False)
        f.write("\n")
    manifest(a.out)
    print(json.dumps({k: tj[k] for k in ("steps_done", "train_minutes", "final", "params")}))


if __name__ == "__main__":
    main()
