"""Writes tests/data/chat-mini/greedy.json: held-out verses, the chat template's prompt for each (one user message,
the default system message, a generation prompt) and PyTorch's greedy answer (evaluate.py's, decoded until
<|im_end|>), for the engine's tests of the bundled chat model.

    /usr/bin/python3 tools/train/chat/evaluate.py ... --json build/chat-train/eval.json    (see README.md)
    python3 tools/train/chat/make_fixture.py build/chat-train tests/data/chat-mini/greedy.json
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_format import render  # noqa: E402

data, out = Path(sys.argv[1]), Path(sys.argv[2])
pairs = {p["key"]: p for p in map(json.loads, (data / "pairs-test.jsonl").read_text().splitlines())}
evaluation = json.loads((data / "eval.json").read_text())
assert evaluation["bos"] is False and evaluation["source"]["model"] == "models/wasmformer-chat-mini"
outputs = evaluation["outputs"]
step = len(outputs) // 12
verses = []
for o in outputs[::step][:12]:
    kjv = pairs[o["key"]]["kjv"]
    verses.append({"key": o["key"], "kjv": kjv, "prompt": render([{"role": "user", "content": kjv}], add_generation_prompt=True),
                   "torch": o["model"]})
out.write_text(json.dumps({"model": "models/wasmformer-chat-mini", "decode": evaluation["decode"], "verses": verses},
                          indent=1, ensure_ascii=False) + "\n")
print(f"wrote {out}: {len(verses)} verses")
