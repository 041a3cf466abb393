"""Teacher-forced copy accuracy of a trained policy: in the authentication call of the first 40
validation conversations of an ``sft`` export, how often the model's most likely next token is
the right one inside each value it must copy from the user's message (email, or first name,
last name and zip), for the value's first token and for all of them. A model that copies scores
near 1 on both; one that writes values from its prior scores near chance on the first token
(1/50 for a name) and well above it on the rest (``@example.com`` needs no copying).

    .venv/bin/python benchmarks/copy_probe.py MODEL_DIR EXPORT_DIR
"""
import json, sys, glob
import pyarrow.parquet as pq, torch
from transformers import AutoModelForCausalLM, AutoTokenizer

torch.set_num_threads(1)
path, export = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(path); model = AutoModelForCausalLM.from_pretrained(path).eval()
rows = pq.read_table(glob.glob(export + "/sft/validation-*.parquet")[0]).to_pylist()[:40]
first_ok = first_n = all_ok = all_n = 0
for row in rows:
    msgs = [json.loads(m) for m in row["messages"]]; tools = [json.loads(t) for t in row["tools"]]
    k = next((i for i, m in enumerate(msgs) if m.get("tool_calls") and m["tool_calls"][0]["function"]["name"].startswith("find_customer")), None)
    if k is None: continue
    args = msgs[k]["tool_calls"][0]["function"]["arguments"]
    args = json.loads(args) if isinstance(args, str) else args
    prefix = tok.apply_chat_template(msgs[:k], tools=tools, tokenize=False, add_generation_prompt=True)
    full = tok.apply_chat_template(msgs[:k + 1], tools=tools, tokenize=False)
    ids = tok(full, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        pred = model(torch.tensor([ids])).logits[0].argmax(-1).tolist()
    # positions of each value's tokens inside the call
    call_text = full[len(prefix):]
    for key, value in args.items():
        value = str(value)
        start = len(prefix) + call_text.index(json.dumps(value))  + 1
        pre_ids = tok(full[:start], add_special_tokens=False)["input_ids"]
        val_ids = tok(full[:start + len(value)], add_special_tokens=False)["input_ids"]
        if val_ids[:len(pre_ids)] != pre_ids: continue
        span = range(len(pre_ids), len(val_ids))
        hits = [pred[p - 1] == ids[p] for p in span]
        if not hits: continue
        first_ok += hits[0]; first_n += 1; all_ok += sum(hits); all_n += len(hits)
print(f"{path}: first value token {first_ok}/{first_n} = {first_ok/max(first_n,1):.2f}; all value tokens {all_ok}/{all_n} = {all_ok/max(all_n,1):.2f}")
