#!/bin/bash
# Issue 18's BERT-mini on a lent GPU (the device tool: one H100, one call of at most 10 minutes; see README.md here).
# Several shapes train side by side on the one GPU, each in two phases (16-token windows, then 128), keeping the
# checkpoint with the best held-out top-1 (--keep-best); then each is measured (tools/train/measure.py --examples)
# and the best of those that answer "Let there be [MASK]." with "light" (else the best) comes back under $OUT (its model.safetensors in
# parts of 15 MB, the device tool's limit per file is 16 MiB): join them with `cat model.safetensors.part-* >
# model.safetensors`.
#
# Needs the corpus with its token caches (made here, before the call: tools/train/corpus.py and one train.py start,
# see README.md) in $CORPUS (default build/gpu/corpus), carried with the call.
#   BUDGET: seconds from the start of this script until training must end (default 440)
#   RUN_ONLY: one of the RUNS' names (alone it trains about 3× faster than four sharing the GPU)
#   INIT: a model folder to continue (carried with the call) instead of phase 1 from scratch; LR: phase 2's rate
#   DEVICE=cpu PY=/usr/bin/python3 (with a small BUDGET): the whole script on this machine's CPU, as a check
set -u
cd "$(dirname "$0")/../../.."
T0=$(date +%s)
C=${CORPUS:-build/gpu/corpus}
R=build/gpu/runs
OUT=${OUT:-build/gpu/out}
BUDGET=${BUDGET:-440}
P1_MINUTES=${P1_MINUTES:-1.5}
PY=${PY:-python3}
mkdir -p "$R" "$OUT"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
$PY -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"

# name | shape flags | phase-2 batch, lr, dropout
RUNS=(
  "l6h256-d10|--layers 6 --hidden 256 --heads 4|256 0.0007 0.1"
  "l6h256-d0|--layers 6 --hidden 256 --heads 4|256 0.0007 0.0"
  "l8h256-d10|--layers 8 --hidden 256 --heads 4|256 0.0007 0.1"
  "l6h384-d10|--layers 6 --hidden 384 --heads 6|256 0.0005 0.1"
)
one() {  # $1 name, $2 shape, $3 "batch lr dropout"
  local n=$1 shape=$2 b lr d
  read -r b lr d <<< "$3"
  local common="--model bert --whole-word $shape --device ${DEVICE:-cuda} --corpus $C"
  local init="$R/$n/phase1" warmup=1000 seed=43
  if [ -n "${INIT:-}" ]; then  # continue a trained model (its shape must match): no phase 1, a short warm-up
    init=$INIT warmup=200 seed=44
  else
    $PY tools/train/train.py $common --out "$R/$n/phase1" --minutes "$P1_MINUTES" --batch 512 --seq-len 16 \
        --lr 0.001 --warmup 500 --unigram-bias --seed 42 --export-every 100 > "$R/$n.log" 2>&1 || return 1
  fi
  local left=$(( T0 + BUDGET - $(date +%s) ))
  local m2=$($PY -c "print(round(max(0.5, ($left - 25) / 60), 2))")
  echo "phase 2: $m2 minutes" >> "$R/$n.log"
  $PY tools/train/train.py $common --out "$R/$n/model" --init "$init" --minutes "$m2" --batch "$b" \
      --lr "${LR:-$lr}" --warmup $warmup --dropout "$d" --seed $seed --keep-best --export-every 0.5 >> "$R/$n.log" 2>&1
}
PIDS=()
for r in "${RUNS[@]}"; do
  IFS='|' read -r n shape rest <<< "$r"
  if [ -n "${RUN_ONLY:-}" ] && [ "$n" != "$RUN_ONLY" ]; then continue; fi
  one "$n" "$shape" "$rest" &
  PIDS+=($!)
done
# a watchdog, should the GPU be slower than planned: the --keep-best folders hold the last good checkpoint
( sleep $(( BUDGET + 40 )); pkill -f tools/train/train.py ) > /dev/null 2>&1 & WD=$!
wait "${PIDS[@]}"
pkill -P $WD; kill $WD 2>/dev/null
echo "training done after $(( $(date +%s) - T0 )) s"

# Measure each kept model (CPU, the PyTorch reference): held-out splits, the examples, the 80 CI sentences.
for d in "$R"/*/model; do
  [ -f "$d/model.safetensors" ] || continue
  timeout 75 $PY tools/train/measure.py "$d" --corpus "$C" --examples --threads 4 > "$d/measure.json" 2> "$d/measure.err" &
done
wait
echo "measured after $(( $(date +%s) - T0 )) s"

$PY - "$R" "$OUT" <<'EOF'
import json, os, shutil, sys
runs, out = sys.argv[1], sys.argv[2]
rows = []
for n in sorted(os.listdir(runs)):
    d = os.path.join(runs, n, "model")
    if not os.path.exists(os.path.join(d, "measure.json")):
        continue
    try:
        m = json.load(open(os.path.join(d, "measure.json")))
    except ValueError:
        print(n, "measure failed:", open(os.path.join(d, "measure.err")).read()[-400:])
        continue
    t = json.load(open(os.path.join(d, "training.json")))
    ex = m["examples"]
    light = all(ex[k].split()[0] == "light" for k in ("Let there be [MASK].", "And God said, Let there be [MASK]."))
    old = m["test-kjv-austen.txt"]["mlm_top1"]
    rows.append(dict(name=n, light=light, old_top1=old, measure=m, training=t,
                     size=os.path.getsize(os.path.join(d, "model.safetensors"))))
    print(f"{n}: steps {t['steps']} old-split top1 {old:.3f} top5 {m['test-kjv-austen.txt']['mlm_top5']:.3f} "
          f"test top1 {m['test.txt']['mlm_top1']:.3f} ww {m['test.txt']['whole_word_eval']['mlm_top1']:.3f} "
          f"ci {m['ci_heldout_sentences']} light {light} | {ex['Let there be [MASK].']}")
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=1)
ok = [r for r in rows if r["light"]] or rows
best = max(ok, key=lambda r: r["old_top1"])
print("best:", best["name"])
d = os.path.join(runs, best["name"], "model")
for f in ("config.json", "training.json"):
    shutil.copy(os.path.join(d, f), os.path.join(out, f))
data = open(os.path.join(d, "model.safetensors"), "rb").read()
for i in range(0, len(data), 15 << 20):
    open(os.path.join(out, f"model.safetensors.part-{i // (15 << 20)}"), "wb").write(data[i:i + (15 << 20)])
EOF
$PY - "$R"/*.log > "$OUT/logs.txt" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    print("==", path)
    for line in open(path):
        if line.startswith(("checkpoint", "final")):
            m = json.loads(line.split(" ", 1)[1])
            o = m.get("old_split", {})
            print(f"  {line.split()[0]} T={m['seq_len']} steps {m['steps']} min {m['train_minutes']} top1 {m['mlm_top1']:.3f} "
                  f"top5 {m['mlm_top5']:.3f} old {o.get('mlm_top1', 0):.3f} ww {m['whole_word_eval']['mlm_top1']:.3f}")
        elif line.startswith(("step", "phase", "initialised", "tokens", "Traceback")) or "Error" in line:
            if not line.startswith("step") or int(line.split()[1]) % 1000 == 0:
                print("  " + line.rstrip()[:200])
EOF
cat "$OUT/logs.txt"
echo "all done after $(( $(date +%s) - T0 )) s"
