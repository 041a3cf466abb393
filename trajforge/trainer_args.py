"""What the SFT and RL trainers share about their (transformers / TRL) arguments: numbers that
YAML 1.1 readers leave as strings, fields renamed between transformers releases, and a wall-clock
time limit that the learning-rate schedule follows. Imported by ``sft.train`` and ``rl.train``, so
neither imports the other."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
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


def paced(schedule: Callable[[int], float], warmup: int, total: int, seconds: float,
          elapsed: Callable[[], float]) -> Callable[[int], float]:
    """``schedule`` (a step -> factor function of a ``LambdaLR``) run to whichever end comes first,
    ``total`` steps or ``seconds`` of ``elapsed`` time: past the warmup it reads the later of the
    step and the step that the elapsed share of the time corresponds to, so a cosine or linear
    decay ends when the time does even if the steps would have gone on."""

    def factor(step: int) -> float:
        if step >= warmup and total > warmup:
            share = min(1.0, elapsed() / seconds)
            step = max(step, warmup + math.ceil(share * (total - warmup)))
        return schedule(step)

    return factor


def time_limit(seconds: float, clock: Callable[[], float] = time.perf_counter) -> Any:
    """A callback that ends training (with a final evaluation and save) once ``seconds`` of
    training have passed: a wall-clock budget rather than a step count. The learning-rate
    schedule follows the same budget (``paced``): a decay planned over the run's steps ends when
    the time ends, whichever comes first. Schedules that are not a ``LambdaLR`` (reduce-on-plateau)
    keep their steps. On ``--resume`` the time counts from the resumed session's start. ``clock``
    (seconds) is there for tests."""
    from torch.optim.lr_scheduler import LambdaLR
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def __init__(self) -> None:
            self.started: float | None = None

        def elapsed(self) -> float:
            return clock() - self.started if self.started is not None else 0.0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = clock()
            scheduler = kwargs.get("lr_scheduler")
            scheduler = getattr(scheduler, "scheduler", scheduler)  # accelerate's wrapper
            if isinstance(scheduler, LambdaLR) and state.max_steps > 0:
                warmup = args.get_warmup_steps(state.max_steps)
                scheduler.lr_lambdas = [paced(f, warmup, state.max_steps, seconds, self.elapsed)
                                        for f in scheduler.lr_lambdas]

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if self.started is not None and self.elapsed() >= seconds:
                control.should_training_stop = True
                control.should_evaluate = args.eval_strategy != "no"
                control.should_save = True
            return control

    return TimeLimit()
