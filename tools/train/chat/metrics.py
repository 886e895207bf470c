"""chrF and BLEU as sacreBLEU computes them by default (corpus scores), written from their definitions.

chrF (Popović 2015; sacreBLEU's CHRF with char_order 6, word_order 0, beta 2, eps_smoothing false): whitespace is
removed from each sentence; for n = 1..6 the character n-gram counts of hypothesis and reference are compared
(matches = the sum over n-grams of min(count in hypothesis, count in reference)); the numbers of hypothesis n-grams,
reference n-grams and matches are summed over the corpus, per n. Per n, precision = matches / hypothesis n-grams and
recall = matches / reference n-grams (only orders that have both hypothesis and reference n-grams count); the
precisions and the recalls are averaged over those orders, and chrF = 100 · (1 + β²) · P · R / (β² · P + R).

BLEU (Papineni et al. 2002; sacreBLEU's BLEU: 13a tokenization, case kept, max order 4, "exp" smoothing): each
sentence is tokenized by mteval-v13a's rules (below); clipped n-gram matches and hypothesis n-gram totals are summed
over the corpus for n = 1..4; p_n = matches / totals, except that the k-th order with no match (k = 1, 2, …) gets
p_n = 1 / (2^k · totals); brevity penalty exp(1 − r/c) when the hypotheses' total length c is below the references'
r; BLEU = 100 · BP · exp(mean(log p_n)).
"""
import math
import re
from collections import Counter

_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # punctuation and symbols (Western languages)
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period and comma unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash after a digit
]


def tokenize_13a(line):
    """mteval-v13a.pl's tokenizer as sacreBLEU's TokenizerV13a has it."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = f" {line} "
    for rx, repl in _13A:
        line = rx.sub(repl, line)
    return " ".join(line.split())


def _ngrams(seq, n):
    return Counter(tuple(seq[i:i + n]) if not isinstance(seq, str) else seq[i:i + n] for i in range(len(seq) - n + 1))


def chrf_stats(hyp, ref, order=6):
    h, r = "".join(hyp.split()), "".join(ref.split())
    out = []
    for n in range(1, order + 1):
        hn, rn = _ngrams(h, n), _ngrams(r, n)
        out += [sum(hn.values()), sum(rn.values()), sum((hn & rn).values())]
    return out


def chrf(hyps, refs, order=6, beta=2.0):
    stats = [0] * (3 * order)
    for h, r in zip(hyps, refs, strict=True):
        stats = [a + b for a, b in zip(stats, chrf_stats(h, r, order))]
    factor = beta ** 2
    prec = rec = 0.0
    eff = 0
    for n in range(order):
        n_hyp, n_ref, n_match = stats[3 * n:3 * n + 3]
        if n_hyp > 0 and n_ref > 0:
            prec += n_match / n_hyp
            rec += n_match / n_ref
            eff += 1
    if eff == 0:
        return 0.0
    prec, rec = prec / eff, rec / eff
    if prec + rec == 0:
        return 0.0
    return 100 * (1 + factor) * prec * rec / (factor * prec + rec)


def bleu(hyps, refs, max_order=4):
    """refs: one reference per hypothesis (a list of strings), or sacreBLEU's reference streams (a list of such
    lists): n-gram counts are clipped by their largest count in any reference, and the reference length is the one
    closest to the hypothesis' (the shorter on a tie)."""
    streams = [refs] if refs and isinstance(refs[0], str) else refs
    matches, totals = [0] * max_order, [0] * max_order
    c = r = 0
    for i, h in enumerate(hyps):
        ht = tokenize_13a(h).split()
        rts = [tokenize_13a(s[i]).split() for s in streams]
        c += len(ht)
        r += min((abs(len(rt) - len(ht)), len(rt)) for rt in rts)[1]
        for n in range(1, max_order + 1):
            hn = _ngrams(ht, n)
            best = Counter()
            for rt in rts:
                best |= _ngrams(rt, n)
            matches[n - 1] += sum((hn & best).values())
            totals[n - 1] += max(0, len(ht) - n + 1)
    if c == 0 or any(t == 0 for t in totals):
        return 0.0
    logs, k = [], 1.0
    for m, t in zip(matches, totals):
        if m == 0:
            k *= 2
            logs.append(math.log(1 / (k * t)))
        else:
            logs.append(math.log(m / t))
    bp = 1.0 if c >= r else math.exp(1 - r / c)
    return 100 * bp * math.exp(sum(logs) / max_order)


def self_test():
    """Values from sacreBLEU's own tests and documentation."""
    assert abs(chrf(["The relationship between Obama and Netanyahu is not exactly friendly."],
                    ["The ties between Obama and Netanyahu are not particularly friendly."]) - 61.576379378113785) < 1e-9
    refs = [["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
            ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."]]
    hyps = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
    assert abs(bleu(hyps, refs) - 48.530827) < 1e-6, bleu(hyps, refs)
    assert bleu(["", "", ""], refs) == 0.0
    return True


if __name__ == "__main__":
    print("self test:", self_test())
