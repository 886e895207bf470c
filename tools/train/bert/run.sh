#!/bin/sh
# The BERT-mini retraining of issue 18 (see README.md here): 6 layers × 256, whole-word masking, KJV + Austen + World
# English Bible, two phases on one CPU thread at nice 19. Rerun the same command to resume after an interruption: a
# finished phase is skipped (its training.json says "final": true), an unfinished one continues from its --state.
#
#   setsid nohup sh tools/train/bert/run.sh >> build/bert-train/train.log 2>&1 < /dev/null &
#
# RUN (default build/bert-train) holds the corpus, both phases and the exported folder.
set -e
cd "$(dirname "$0")/../../.."
R=${RUN:-build/bert-train}
export OMP_NUM_THREADS=1
PY="nice -n 19 /usr/bin/python3"
SHAPE="--model bert --whole-word --layers 6 --hidden 256 --heads 4 --export-every 10"
mkdir -p "$R"
echo $$ > "$R/run.pid"
# nice orders processes only inside their autogroup (one per session, sched_autogroup_enabled = 1 here): lower this
# session's whole group too, so that builds and tests get the cores first (tools/train/README.md)
echo 19 > /proc/self/autogroup 2>/dev/null || true

finished() {  # $1: a model folder whose training.json is a final export
    /usr/bin/python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1] + '/training.json')).get('final') else 1)" "$1" 2>/dev/null
}

[ -f "$R/corpus/test-kjv-austen.txt" ] || /usr/bin/python3 tools/train/corpus.py --out "$R/corpus"

# Phase 1, from scratch: 16-token windows (128 of them a step), where a post-LN encoder leaves the masked-LM plateau
# (tools/train/README.md); a fixed number of steps, so it reproduces exactly.
echo "phase 1 $(date -Is)"
finished "$R/phase1" || $PY tools/train/train.py $SHAPE --corpus "$R/corpus" --out "$R/phase1" --state "$R/phase1.state" \
    --steps 3000 --batch 128 --seq-len 16 --lr 0.001 --warmup 1000 --unigram-bias --seed 42

# Phase 2, from phase 1's weights (a fresh optimizer): 128-token windows, 16 a step, a wall-clock budget with the
# cosine laid over it (the machine is shared, so the budget fixes the end; training.json records the steps reached).
echo "phase 2 $(date -Is)"
finished "$R/export/wasmformer-bert-mini" || $PY tools/train/train.py $SHAPE --corpus "$R/corpus" \
    --out "$R/export/wasmformer-bert-mini" --state "$R/phase2.state" --init "$R/phase1" \
    --minutes ${PHASE2_MINUTES:-270} --batch 16 --lr 0.0005 --warmup 500 --seed 43
echo "done $(date -Is)"
