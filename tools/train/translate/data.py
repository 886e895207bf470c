"""Data for the bundled English→Spanish translation model (models/wasmformer-translate-en-es): verse pairs from
three public-domain Bibles as Debian's SWORD modules ship them, and the two SentencePiece models and the shared
vocabulary in the layout of a Helsinki-NLP/opus-mt folder.

  apt-get install libsword-utils sword-text-kjv sword-text-web sword-text-sparv python3-sentencepiece
  /usr/bin/python3 tools/train/translate/data.py --out build/translate-train

Steps (all outputs under --out):
  1. the verses of the King James Version (engKJV2006eb), the World English Bible (engWEB2015eb) and the Spanish
     Reina-Valera 1909 (spaRV1909eb, package sword-text-sparv), exported and cleaned by
     tools/train/embed/bible_pairs.py (imported: `mod2imp`, markup stripped with the text of Strong's <w> tags
     kept, notes and non-canonical titles dropped, curly quotes to ASCII, NFC); in the Spanish, the capitals that
     open a chapter in print (Genesis 1:1 "EN el principio", Psalms 23:1 "… JEHOVÁ es mi pastor", "DE SIETE años
     era Joas", I Kings 6:1 "Y FUÉ en el año") are written in normal case: in a verse N:1, the first run of
     all-capital words (with a one-letter capital word before it) becomes Capitalized + lower case ("En el
     principio", "Jehová es mi pastor", "De siete años", "Y fué en el año"), names Capitalized ("A Jehová llamé":
     words the module writes Capitalized ≥ 5 times as often as in lower case); capitals elsewhere ("Yo soy JEHOVÁ
     tu Dios", "YO SOY EL QUE SOY", "la iglesia en SARDIS") are the text's own and kept;
  2. the pairs, by verse key ("Genesis 1:1"; all three modules use the KJV versification except the WEB's NRSVA,
     which agrees almost everywhere): each Spanish verse with its KJV verse and with its WEB verse, two pairs per
     verse (more English variety, one target); a verse missing or empty in a module gives no pair with it.
     Held-out books as bible_pairs.py defines them (every 7th book of the 66 in canonical order starting with the
     7th: Judges, II Chronicles, Ecclesiastes, Hosea, Habakkuk, Luke, Ephesians, Titus, II John):
     verses-train.jsonl, verses-test.jsonl ({key, book, kjv, web, es}), pairs-info.json;
  3. source.spm (English) and target.spm (Spanish): SentencePiece unigram models as OPUS-MT's are (sentencepiece's
     defaults: nmt_nfkc normalization, dummy prefix, <unk> 0, <s> 1, </s> 2, no byte fallback; character coverage
     1.0), trained on the training books only (English: the KJV and WEB verses; Spanish: the RV1909 verses);
  4. vocab.json, the one vocabulary both sides share (MarianTokenizer with separate_vocabs false), built as
     Marian's vocab.yml and transformers' convert_marian_to_pytorch.py build it: "</s>" 0, "<unk>" 1, then the
     pieces by their frequency in the training data encoded with the two models (source pieces over the English,
     target pieces over the Spanish; a piece in both models has one id), ties by piece; then the pieces of the
     two models that the training data never produced (so that every piece has an id: MarianTokenizer maps a piece
     missing from vocab.json to <unk>, but the current transformers main falls back to the SentencePiece id, which
     points at an unrelated entry); "<pad>" last (= vocab_size − 1: pad_token_id and decoder_start_token_id);
  5. train.pt / test.pt: lists of (source ids, target ids), each ending with </s> (0), as MarianTokenizer gives
     them (`tokenizer(english, text_target=spanish)`), and data-info.json.
"""
import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "embed"))
import bible_pairs  # noqa: E402

SPANISH = "spaRV1909eb"
VOCAB = {"source": 6000, "target": 6000}
EOS, UNK, PAD = "</s>", "<unk>", "<pad>"
CAPS_RUN = re.compile(r"\b(?:[A-ZÁÉÍÓÚÑÜ]\s+)?[A-ZÁÉÍÓÚÑÜ]{2,}(?:\s+[A-ZÁÉÍÓÚÑÜ]{2,})*\b")


WORD = re.compile(r"\w+")


def proper_names(verses):
    """Words written Capitalized at least 5 times as often as in lower case in the module (Jehová, Dios, Moisés)."""
    count = collections.Counter(w for t in verses for w in WORD.findall(t))
    return {w.lower() for w in count if w[:1].isupper() and w[1:].islower() and count[w] >= 5 * count[w.lower()]}


def chapter_case(key, text, names=frozenset()):
    """Verse N:1: the first run of all-capital words (the printed chapter opening) in normal case: the first word
    Capitalized, the others in lower case unless `names` has them (then Capitalized)."""
    if not key.endswith(":1"):
        return text
    m = CAPS_RUN.search(text)
    if not m:
        return text
    run = WORD.sub(lambda w: w.group(0).capitalize() if w.group(0).lower() in names else w.group(0).lower(),
                   m.group(0))
    return text[:m.start()] + run[0].upper() + run[1:] + text[m.end():]


def held_out_books(books):
    return [b for i, b in enumerate(books) if i % bible_pairs.HELD_OUT_EVERY == bible_pairs.HELD_OUT_START]


def make_verses(out):
    kjv, books = bible_pairs.export(bible_pairs.MODULES["kjv"])
    web, _ = bible_pairs.export(bible_pairs.MODULES["web"])
    es, es_books = bible_pairs.export(SPANISH)
    assert len(books) == 66 and es_books == books, (books, es_books)
    held = held_out_books(books)
    names = proper_names(es.values())
    es = {k: chapter_case(k, t, names) for k, t in es.items()}
    rows = {"train": [], "test": []}
    counts = collections.Counter()
    for key, e in es.items():
        book = re.fullmatch(r"(.+) \d+:\d+", key).group(1)
        split = "test" if book in held else "train"
        k, w = kjv.get(key), web.get(key)
        if not k and not w:
            counts["es_without_english"] += 1
            continue
        rows[split].append({"key": key, "book": book, "kjv": k, "web": w, "es": e})
        counts[f"{split}_kjv_pairs"] += k is not None
        counts[f"{split}_web_pairs"] += w is not None
    counts["kjv_without_es"] = sum(1 for key in kjv if key not in es)
    counts["web_without_es"] = sum(1 for key in web if key not in es)
    for s, r in rows.items():
        with open(os.path.join(out, f"verses-{s}.jsonl"), "w", encoding="utf-8") as f:
            for x in r:
                f.write(json.dumps(x, ensure_ascii=False) + "\n")
    info = {"modules": dict(bible_pairs.MODULES, es=SPANISH), "held_out_books": held,
            "verses": {s: len(r) for s, r in rows.items()},
            "pairs": {s: counts[f"{s}_kjv_pairs"] + counts[f"{s}_web_pairs"] for s in rows},
            "module_verses": {"kjv": len(kjv), "web": len(web), "es": len(es)}, **dict(sorted(counts.items()))}
    with open(os.path.join(out, "pairs-info.json"), "w") as f:
        json.dump(info, f, indent=2)
    return rows, info


def read_verses(out, split):
    with open(os.path.join(out, f"verses-{split}.jsonl"), encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def pairs(rows):
    """(english, spanish, which) for every verse: the KJV pair, then the WEB pair."""
    out = []
    for r in rows:
        for which in ("kjv", "web"):
            if r[which]:
                out.append((r[which], r["es"], which))
    return out


def train_spm(out, name, lines, vocab):
    import sentencepiece as spm
    text = os.path.join(out, f"{name}-text.txt")
    with open(text, "w", encoding="utf-8") as f:
        for l in lines:
            f.write(l + "\n")
    spm.SentencePieceTrainer.train(
        input=text, model_prefix=os.path.join(out, name), model_type="unigram", vocab_size=vocab,
        character_coverage=1.0, max_sentence_length=8192, num_threads=1, input_sentence_size=0,
        shuffle_input_sentence=False, minloglevel=1)
    os.replace(os.path.join(out, f"{name}.model"), os.path.join(out, f"{name}.spm"))
    os.remove(os.path.join(out, f"{name}.vocab"))
    return os.path.join(out, f"{name}.spm")


def build_vocab(src_sp, tgt_sp, english, spanish):
    """vocab.json as Marian's vocab.yml plus transformers' <pad>: </s> 0, <unk> 1, pieces by frequency, unseen
    pieces, <pad> last."""
    count = collections.Counter()
    for t in english:
        count.update(src_sp.encode(t, out_type=str))
    for t in spanish:
        count.update(tgt_sp.encode(t, out_type=str))
    vocab = {EOS: 0, UNK: 1}
    for piece, _ in sorted(count.items(), key=lambda x: (-x[1], x[0])):
        if piece not in vocab:
            vocab[piece] = len(vocab)
    unseen = 0
    for sp in (src_sp, tgt_sp):
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            p = sp.id_to_piece(i)
            if p not in vocab:
                vocab[p] = len(vocab)
                unseen += 1
    vocab[PAD] = len(vocab)
    return vocab, unseen


class Tokenizer:
    """MarianTokenizer's encoding: SentencePiece pieces (source.spm for the source text, target.spm for the
    target), each looked up in vocab.json (missing: <unk>), then </s>."""

    def __init__(self, folder):
        import sentencepiece as spm
        self.src = spm.SentencePieceProcessor(model_file=os.path.join(folder, "source.spm"))
        self.tgt = spm.SentencePieceProcessor(model_file=os.path.join(folder, "target.spm"))
        with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)
        self.ids = {v: k for k, v in self.vocab.items()}
        self.eos, self.unk, self.pad = self.vocab[EOS], self.vocab[UNK], self.vocab[PAD]

    def _ids(self, sp, text):
        return [self.vocab.get(p, self.unk) for p in sp.encode(text, out_type=str)] + [self.eos]

    def source(self, text):
        return self._ids(self.src, text)

    def target(self, text):
        return self._ids(self.tgt, text)

    def decode(self, ids):
        """skip_special_tokens: </s>, <pad> and <unk> dropped; the pieces joined, ▁ → space, stripped."""
        pieces = [self.ids[i] for i in ids if i not in (self.eos, self.pad, self.unk)]
        return "".join(pieces).replace("\u2581", " ").strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="build/translate-train")
    ap.add_argument("--source-vocab", type=int, default=VOCAB["source"])
    ap.add_argument("--target-vocab", type=int, default=VOCAB["target"])
    a = ap.parse_args()
    import sentencepiece as spm
    import torch
    os.makedirs(a.out, exist_ok=True)
    rows, info = make_verses(a.out)
    train_pairs, test_pairs = pairs(rows["train"]), pairs(rows["test"])
    english = [e for e, _, _ in train_pairs]
    spanish = [r["es"] for r in rows["train"]]
    src = spm.SentencePieceProcessor(model_file=train_spm(a.out, "source", english, a.source_vocab))
    tgt = spm.SentencePieceProcessor(model_file=train_spm(a.out, "target", spanish, a.target_vocab))
    vocab, unseen = build_vocab(src, tgt, english, spanish)
    with open(os.path.join(a.out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, indent=2, ensure_ascii=False)
    tok = Tokenizer(a.out)
    for name, ps in (("train", train_pairs), ("test", test_pairs)):
        data = [(tok.source(e), tok.target(s)) for e, s, _ in ps]
        torch.save(data, os.path.join(a.out, f"{name}.pt"))
        if name == "train":
            src_lens = sorted(len(x) for x, _ in data)
            tgt_lens = sorted(len(y) for _, y in data)
            n_unk = sum(x.count(tok.unk) + y.count(tok.unk) for x, y in data)
    info.update({
        "source_spm_pieces": src.get_piece_size(), "target_spm_pieces": tgt.get_piece_size(),
        "vocab_size": len(vocab), "vocab_unseen_pieces": unseen,
        "shared_pieces": sum(1 for i in range(src.get_piece_size()) if tgt.piece_to_id(src.id_to_piece(i)) != 0 and
                             not src.is_control(i) and not src.is_unknown(i)),
        "eos_token_id": vocab[EOS], "unk_token_id": vocab[UNK], "pad_token_id": vocab[PAD],
        "train_pairs": len(train_pairs), "test_pairs": len(test_pairs),
        "train_source_tokens": sum(src_lens), "train_target_tokens": sum(tgt_lens),
        "longest_source": src_lens[-1], "longest_target": tgt_lens[-1],
        "median_source": src_lens[len(src_lens) // 2], "median_target": tgt_lens[len(tgt_lens) // 2],
        "train_unk_tokens": n_unk,
    })
    with open(os.path.join(a.out, "data-info.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
