"""Training and evaluation of agents on trajforge data: SFT with TRL (``train``), the offline
tiny model (``tiny``), local-model policies (``policies``) and pass^k evaluation (``evaluate``).
Everything heavy (torch, transformers, trl, peft, vllm) is imported inside functions."""
