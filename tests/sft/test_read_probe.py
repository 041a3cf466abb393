"""What the read probe counts as a value the agent read from its tools (no model needed)."""

from __future__ import annotations

import json

from trajforge.sft.copy_probe import read_values


def _dialogue(tool_output: dict, said: str, user: str = "Hi, what is the status of A1?") -> list[dict]:
    return [{"role": "user", "content": user},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "get", "arguments": {"id": "A1"}}}]},
            {"role": "tool", "content": json.dumps(tool_output)},
            {"role": "assistant", "content": said}]


def test_values_the_agent_repeats_from_its_tools_are_read_values() -> None:
    messages = _dialogue({"id": "A1", "status": "delivered", "items": [{"name": "Desk Lamp", "price": 24.99}]},
                         "A1 was delivered on time; the Desk Lamp cost $24.99.")
    # the id came from the user: copying, not reading; numbers as JSON writes them
    assert sorted(read_values(messages, 3)) == ["24.99", "Desk Lamp", "delivered"]


def test_a_value_inside_a_longer_word_or_number_is_not_said() -> None:
    messages = _dialogue({"status": "pending", "total": 10, "tag": "end"}, "It is pending; the total is $10.50 so far.")
    assert read_values(messages, 3) == ["pending"]


def test_only_tool_output_since_the_agent_last_spoke_counts() -> None:
    messages = _dialogue({"status": "shipped"}, "It has shipped.")
    messages += [{"role": "user", "content": "And the other one?"},
                 {"role": "assistant", "content": "It is shipped too."}]
    assert read_values(messages, 3) == ["shipped"]
    assert read_values(messages, 5) == []  # no tool spoke since its last words: said from memory
