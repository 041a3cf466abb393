"""A loop run's id names what it does, not how: threads, the output folder and the prefix cache
leave it unchanged, the seed and bf16 (it changes the numbers) do not."""

from __future__ import annotations

from trajforge.loop.run import LoopConfig


def test_the_loop_run_id_ignores_how_the_work_is_done():
    base = LoopConfig(model="m")
    assert base.run_id() == "loop_74b03069a6cd1ae0b1509138"  # the id before the cache existed
    same = LoopConfig(model="m", threads=1, output_dir="elsewhere", rollout={"prefix_cache": False},
                      heldout={"prefix_cache": False})
    assert same.run_id() == base.run_id()
    assert LoopConfig(model="m", heldout={"bf16": True}).run_id() != base.run_id()
    assert LoopConfig(model="m", seed=1).run_id() != base.run_id()
    assert LoopConfig(model="m", trainable_layers=8).run_id() != base.run_id()
