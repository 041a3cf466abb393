"""What the SFT and RL trainers share about their (transformers / TRL) arguments: numbers that
YAML 1.1 readers leave as strings, fields renamed between transformers releases, and a wall-clock
time limit. Imported by ``sft.train`` and ``rl.train``, so neither imports the other."""

from __future__ import annotations

import re
import time
from typing import Any

# `3e-3` read as a string by a YAML 1.1 loader; as a trainer argument it is a float
SCIENTIFIC = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


# transformers renamed TrainingArguments.gradient_checkpointing to activation_checkpointing;
# either name works with either version
RENAMED = (("activation_checkpointing", "gradient_checkpointing"),)


def renamed_fields(cls: Any, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each renamed field under the name the installed ``cls`` knows."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    values = dict(values)
    for new, old in RENAMED:
        for have, want in ((new, old), (old, new)):
            if have in values and have not in names and want in names:
                value = values.pop(have)
                values.setdefault(want, value)  # where both are given, the installed name's value wins
    return values


def time_limit(seconds: float) -> Any:
    """A callback that ends training (with a final evaluation and save) once ``seconds`` of
    training have passed: a wall-clock budget rather than a step count."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def __init__(self) -> None:
            self.started: float | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if self.started is not None and time.perf_counter() - self.started >= seconds:
                control.should_training_stop = True
                control.should_evaluate = args.eval_strategy != "no"
                control.should_save = True
            return control

    return TimeLimit()
