"""Data for the bundled chat model (models/wasmformer-chat-mini): King James verses to rewrite, World English Bible
verses as the answers, as ChatML conversations; and its SentencePiece BPE tokenizer.

  apt-get install libsword-utils sword-text-kjv sword-text-web python3-sentencepiece
  /usr/bin/python3 tools/train/chat/data.py --out build/chat-train

Steps (all outputs under --out):
  1. the verse pairs, from tools/train/embed/bible_pairs.py (imported: the same SWORD modules, the same cleaning, the
     same held-out books: every 7th book of the 66 starting with the 7th, Judges): pairs-train.jsonl,
     pairs-test.jsonl, pairs-info.json;
  2. the tokenizer: a SentencePiece BPE model (tokenizer.model) trained on the training books' KJV and WEB verses,
     one verse a line (held-out books not seen), with the words of the chat format (system, user, assistant, the
     system message) added 2,000 times each, in the Llama layout: <unk> 0, <s> 1, </s> 2, the ChatML markers
     <|im_start|> and <|im_end|> as user-defined pieces (matched in text, never split), byte fallback (<0x00> …
     <0xFF>) for whatever the pieces miss (a newline is <0x0A>), digits split, no normalization (identity), no
     dummy prefix (add_dummy_prefix false: a rendered chat template is tokenized as one string, and no "▁" is put
     in front of it or, as some tokenizers do for Llama vocabularies, after every special token);
  3. the training conversations, tokenized: train.pt (a list of (ids, labels) with labels -100 except on the
     assistant's answers and their <|im_end|>), and test.pt likewise (single-turn, for the validation loss).

The conversation format is ChatML as Qwen2.5's chat template renders it (see chat_format.py). A training conversation
holds 1 to 3 consecutive verses of one chapter as successive user turns (the earlier answers in the history),
so that the model also answers inside a longer chat; half of them begin with <s> (BOS) and half do not, because
Hugging Face's and wasmformer's apply_chat_template add no BOS to the rendered ChatML text while llama.cpp adds one
when add_bos_token is true.
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "embed"))
sys.path.insert(0, HERE)
import bible_pairs  # noqa: E402
from chat_format import IM_START, IM_END, SYSTEM, render  # noqa: E402

VOCAB = 4096
ROLE_LINES = 2000
MAX_TOKENS = 384  # a multi-turn training conversation longer than this is cut into single verses


def make_pairs(out):
    """pairs-{train,test}.jsonl as bible_pairs.py writes them (its export and held-out rule, imported)."""
    kjv, books = bible_pairs.export(bible_pairs.MODULES["kjv"])
    web, _ = bible_pairs.export(bible_pairs.MODULES["web"])
    assert len(books) == 66, books
    held = [b for i, b in enumerate(books) if i % bible_pairs.HELD_OUT_EVERY == bible_pairs.HELD_OUT_START]
    rows = {"train": [], "test": []}
    for key, k in kjv.items():
        w = web.get(key)
        if w is None:
            continue
        book = re.fullmatch(r"(.+) \d+:\d+", key).group(1)
        rows["test" if book in held else "train"].append({"key": key, "book": book, "kjv": k, "web": w})
    for s, r in rows.items():
        with open(os.path.join(out, f"pairs-{s}.jsonl"), "w", encoding="utf-8") as f:
            for x in r:
                f.write(json.dumps(x, ensure_ascii=False) + "\n")
    info = {"modules": bible_pairs.MODULES, "held_out_books": held, "pairs": {s: len(r) for s, r in rows.items()}}
    with open(os.path.join(out, "pairs-info.json"), "w") as f:
        json.dump(info, f, indent=2)
    return rows


def read_pairs(out, split):
    with open(os.path.join(out, f"pairs-{split}.jsonl"), encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def train_tokenizer(out, train_rows, vocab=VOCAB):
    import sentencepiece as spm
    text = os.path.join(out, "tokenizer-text.txt")
    with open(text, "w", encoding="utf-8") as f:
        for r in train_rows:
            f.write(r["kjv"] + "\n" + r["web"] + "\n")
        for _ in range(ROLE_LINES):  # the chat format's own words, so that they get pieces of their own
            f.write("system\nuser\nassistant\n" + SYSTEM + "\n")
    spm.SentencePieceTrainer.train(
        input=text, model_prefix=os.path.join(out, "tokenizer"), model_type="bpe", vocab_size=vocab,
        character_coverage=1.0, byte_fallback=True, split_digits=True, normalization_rule_name="identity",
        add_dummy_prefix=False, remove_extra_whitespaces=False, allow_whitespace_only_pieces=True,
        user_defined_symbols=[IM_START, IM_END], unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        unk_piece="<unk>", bos_piece="<s>", eos_piece="</s>", max_sentence_length=8192,
        num_threads=1, input_sentence_size=0, shuffle_input_sentence=False, minloglevel=1)
    return os.path.join(out, "tokenizer.model")


class Encoder:
    """The tokenizer plus the ids the conversations need."""

    def __init__(self, model_path):
        import sentencepiece as spm
        self.sp = spm.SentencePieceProcessor(model_file=model_path)
        self.bos, self.eos = self.sp.bos_id(), self.sp.eos_id()
        self.im_start, self.im_end = self.sp.piece_to_id(IM_START), self.sp.piece_to_id(IM_END)
        assert self.sp.id_to_piece(self.im_end) == IM_END and self.sp.id_to_piece(self.im_start) == IM_START

    def encode(self, text):
        return self.sp.encode(text)

    def conversation(self, turns, bos):
        """turns: [(kjv, web)]. ids of the rendered conversation, and labels (-100 except on each assistant answer and
        its <|im_end|>). Rendered pieces are tokenized separately and joined; the test below checks that this equals
        tokenizing the whole rendered text (the markers are user-defined pieces, so nothing merges across them)."""
        ids, labels = ([self.bos] if bos else []), ([-100] if bos else [])
        prompt = render([{"role": "system", "content": SYSTEM}], add_generation_prompt=False)
        for kjv, web in turns:
            prompt += render([{"role": "user", "content": kjv}], add_generation_prompt=True, system=False)
            p = self.encode(prompt)
            a = self.encode(web + IM_END)
            ids += p + a
            labels += [-100] * len(p) + a
            prompt = "\n"
        return ids, labels

    def prompt(self, kjv, bos=False):
        """Token ids of the generation prompt for one verse (what apply_chat_template gives)."""
        return ([self.bos] if bos else []) + self.encode(
            render([{"role": "system", "content": SYSTEM}, {"role": "user", "content": kjv}], add_generation_prompt=True))


def chapters(rows):
    """Consecutive verses grouped by chapter, in order."""
    out, key = [], None
    for r in rows:
        ch = r["key"].rsplit(":", 1)[0]
        if ch != key:
            out.append([])
            key = ch
        out[-1].append(r)
    return out


def build_conversations(enc, rows, seed, multi=True):
    rng = random.Random(seed)
    convs = []
    for ch in chapters(rows):
        i = 0
        while i < len(ch):
            n = rng.choice([1, 1, 1, 2, 3]) if multi else 1
            turns = [(r["kjv"], r["web"]) for r in ch[i:i + n]]
            i += n
            bos = rng.random() < 0.5
            c = enc.conversation(turns, bos=bos)
            if len(turns) > 1 and len(c[0]) > MAX_TOKENS:
                convs += [enc.conversation([t], bos=bos) for t in turns]
            else:
                convs.append(c)
    return convs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="build/chat-train")
    ap.add_argument("--vocab", type=int, default=VOCAB)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    import torch
    os.makedirs(a.out, exist_ok=True)
    rows = make_pairs(a.out)
    model = train_tokenizer(a.out, rows["train"], a.vocab)
    enc = Encoder(model)
    # joining separately tokenized pieces must equal tokenizing the whole rendered conversation
    for r in rows["train"][:200] + rows["test"][:200]:
        ids, _ = enc.conversation([(r["kjv"], r["web"]), (r["web"], r["kjv"])], bos=False)
        whole = render([{"role": "system", "content": SYSTEM}, {"role": "user", "content": r["kjv"]},
                        {"role": "assistant", "content": r["web"]}, {"role": "user", "content": r["web"]},
                        {"role": "assistant", "content": r["kjv"]}], add_generation_prompt=False)
        assert ids + enc.encode("\n") == enc.encode(whole), r["key"]
        assert enc.prompt(r["kjv"]) == ids[:len(enc.prompt(r["kjv"]))]
    train = build_conversations(enc, rows["train"], a.seed)
    test = build_conversations(enc, rows["test"], a.seed, multi=False)
    torch.save(train, os.path.join(a.out, "train.pt"))
    torch.save(test, os.path.join(a.out, "test.pt"))
    lens = sorted(len(i) for i, _ in train)
    info = {"vocab": enc.sp.get_piece_size(), "bos": enc.bos, "eos": enc.eos, "im_start": enc.im_start,
            "im_end": enc.im_end, "train_conversations": len(train), "test_conversations": len(test),
            "train_tokens": sum(lens), "train_answer_tokens": sum(sum(l != -100 for l in lab) for _, lab in train),
            "longest": lens[-1], "median": lens[len(lens) // 2],
            "system_prompt_tokens": len(enc.encode(render([{"role": "system", "content": SYSTEM}])))}
    with open(os.path.join(a.out, "data-info.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
