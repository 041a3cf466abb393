"""Copy and read probes (trajforge.sft.copy_probe) of saved policies on an export's validation rows,
teacher-forced: printed, for a results file's reading.

    .venv/bin/python benchmarks/read_probe.py    # the paths below: the minilm_policy-fast run's
"""
import glob, json, time, torch
import datasets
from transformers import AutoModelForCausalLM, AutoTokenizer
from trajforge.sft.copy_probe import copy_probe, read_probe
torch.set_num_threads(2)
rows = datasets.load_dataset("parquet", data_files=sorted(glob.glob("/tmp/m19/export/sft/validation-*")), split="train")
for path in ("/tmp/m19/model", "/tmp/m19/untrained"):
    try:
        tok = AutoTokenizer.from_pretrained(path); model = AutoModelForCausalLM.from_pretrained(path)
    except Exception as e:
        print(path, "unavailable", e); continue
    t = time.time()
    print(path, "copy", copy_probe(model, tok, rows, 24, 2048).as_dict(), "read", read_probe(model, tok, rows, 24, 2048).as_dict(), round(time.time() - t), "s", flush=True)
