"""SFT throughput of a ~100M-parameter Llama (built from a config, bf16) on an accelerator:
tokens per second over a bounded number of steps of ``train_sft`` on a scripted export.

    .venv/bin/python benchmarks/sft_gpu_throughput.py --steps 100

Results: benchmarks/results/sft_gpu_throughput.{md,json}. Needs a CUDA device.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "sft"))
from _common import command_line, machine_info, machine_markdown, utc_now, write_results  # noqa: E402


def main() -> None:
    import torch

    from trajforge.config import load_config
    from trajforge.store.builds import run_build
    from trajforge.sft.train import TrainConfig, train_sft
    from trajforge.store.export_writer import write_export
    from test_gpu import SIZE_100M  # the size the gpu test trains

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--blueprints", type=int, default=1000)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run_build(load_config(None, {"store.out": str(root / "data"), "generation.n_blueprints": args.blueprints}))
        write_export(root / "data", root / "export", ["sft"])
        summary = train_sft(TrainConfig(
            model="tiny", data=str(root / "export"), output_dir=str(root / "model"), tiny=SIZE_100M,
            max_eval_rows=32, sft={"max_steps": args.steps, "per_device_train_batch_size": args.batch_size,
                                   "learning_rate": 5e-4, "logging_steps": 10, "eval_steps": args.steps,
                                   "save_steps": args.steps, "bf16": True}))
    payload = {"benchmark": "sft_gpu_throughput", "date": utc_now(), "command": command_line(),
               "machine": machine_info(), "device": torch.cuda.get_device_name(0), "train": summary}
    md = [f"# SFT throughput, ~100M Llama in bf16 ({payload['date']})", "", f"Command: `{payload['command']}`", "",
          f"Device: {payload['device']}", "", *machine_markdown(payload["machine"]), "",
          f"{summary['parameters']:,} parameters, {summary['global_step']} steps, batch {args.batch_size}: "
          f"**{summary['tokens_per_second']} tokens/s** ({summary['num_tokens']} tokens in {summary['seconds']} s, "
          f"incl. evaluation and saving); train loss {summary['train_loss']:.3f}."]
    print(write_results("sft_gpu_throughput", payload, "\n".join(md))[0].read_text())


if __name__ == "__main__":
    main()
