#!/usr/bin/env bash
# The accelerator checks, as one run on a machine with one CUDA GPU and no network:
#   1. (alone on the GPU) benchmarks/sft_gpu_throughput.py (the ~100M Llama in bf16: tokens per second);
#   2. the tests marked gpu (tests/sft/test_gpu.py, tests/rl: GRPO with transformers rollouts;
#      the vLLM ones skip where vLLM is not installed);
#   3. benchmarks/sft_recipe_sweep.py in the background (tiny-model SFT recipes at the CPU's
#      step budget, to choose the recipe of benchmarks/sft_tiny_cpu.py).
# The machine's own Python must have torch (CUDA), transformers, accelerate and peft; the rest
# (trl, datasets, duckdb, pydantic and trajforge's own wheel) comes as wheels in WHEELS, built
# beforehand where pip works (see benchmarks/README.md). Results go to OUT.
set -u
OUT=${OUT:-/tmp/trajforge-gpu-checks}
WHEELS=${WHEELS:-.whl}
SWEEP_S=${SWEEP_S:-370}
RECIPES=${RECIPES:-benchmarks/recipes/tiny_sft_sweep-2.json}
STEM=${STEM:-sft_recipe_sweep}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false LITELLM_LOCAL_MODEL_COST_MAP=True
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$WHEELS"/*.whl || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
started=$(date +%s)
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, transformers, trl, datasets, pyarrow, duckdb, pydantic, accelerate, trajforge
print({m.__name__: m.__version__ for m in (torch, transformers, trl, datasets, pyarrow, duckdb, pydantic, accelerate)})
print('cuda', torch.cuda.is_available(), torch.version.cuda)"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
# the throughput alone on the GPU first; then the sweep and the tests side by side
timeout 180 python3 benchmarks/sft_gpu_throughput.py --steps 100 > "$OUT/throughput.log" 2>&1
echo "throughput rc=$? at $(( $(date +%s) - started )) s"
tail -3 "$OUT/throughput.log"
(timeout "$SWEEP_S" python3 benchmarks/sft_recipe_sweep.py --recipes "$RECIPES" --stem "$STEM" \
    --work /tmp/sweep --build-workers 6 --parallel 7 > "$OUT/sweep.log" 2>&1) &
timeout 300 python3 -m pytest -m gpu -p no:cacheprovider -q tests/sft/test_gpu.py tests/rl/test_rl_and_loop.py \
    > "$OUT/pytest-gpu.log" 2>&1
echo "pytest rc=$? at $(( $(date +%s) - started )) s"
tail -5 "$OUT/pytest-gpu.log"
wait
echo "sweep done at $(( $(date +%s) - started )) s"
tail -3 "$OUT/sweep.log"
tar czf "$OUT/results.tgz" benchmarks/results/sft_gpu_throughput.* benchmarks/results/"$STEM".* \
    /tmp/sweep/*.log /tmp/sweep/eval-*.json 2>/dev/null
ls -la "$OUT"
