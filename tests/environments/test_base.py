"""The environment machinery: tool schemas, execution, crash handling, hashing, diffs, registry."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from trajforge.environments import (
    Domain,
    State,
    Toolkit,
    ToolKind,
    domain_names,
    load_domain,
    load_domain_class,
    tool,
)
from trajforge.environments.base import StateHasher, state_diff, toolkit_tools
from trajforge.environments.retail import RetailDomain
from trajforge.environments.retail.data import RetailState
from trajforge.environments.retail.tools import RetailTools
from trajforge.errors import ConfigError, ToolCrash, ToolError
from trajforge.generators import generate_blueprints
from trajforge.schemas import (
    AssistantMessage,
    EpisodeSpec,
    Message,
    TaskBlueprint,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from trajforge.schemas.base import Record
from trajforge.schemas.config import GenerationConfig
from trajforge.simulation import AgentReply, EpisodeLimits, UserReply, run_episode


@pytest.fixture(scope="module")
def domain() -> RetailDomain:
    return RetailDomain(40, 1)


@pytest.fixture(scope="module")
def blueprints(domain: RetailDomain) -> list[TaskBlueprint]:
    return [b for b in generate_blueprints(domain, GenerationConfig(p_read_only_intent=0.0), "r", 0, 80)
            if isinstance(b, TaskBlueprint)]


def _call(name: str, arguments: Any, call_id: str = "c1") -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=name, arguments=text)


def _order(state: RetailState, status: str) -> Any:
    return next(o for o in state.orders.values() if o.status == status)


# --- a tiny domain of its own -----------------------------------------------------------------

class Note(Record):
    text: str


class NotesState(State):
    notes: dict[str, Note]


class NotesTools(Toolkit):
    state: NotesState

    @tool(ToolKind.read)
    def read_note(self, note_id: str) -> Note:
        """Read one note.

        Args:
            note_id: The note's key, e.g. "n1".
        """
        note = self.state.notes.get(note_id)
        if note is None:
            raise ToolError(f"note {note_id} not found")
        return note

    @tool(ToolKind.write)
    def write_note(self, note_id: str, text: str, pinned: bool = False) -> str:
        """Write a note, replacing any note with that key.

        Args:
            note_id: The note's key.
            text: What the note says. It may be long, and this
                description continues on a second line.
            pinned: Whether to pin it.
        """
        self.state.notes[note_id] = Note(text=text)
        return "ok"

    @tool(ToolKind.write)
    def divide_notes(self, by: int) -> float:
        """Divide the number of notes (a buggy tool: it divides by zero).

        Args:
            by: The divisor.
        """
        return len(self.state.notes) / by

    def helper(self) -> None:
        """Not a tool: no marker."""


class NotesDomain(Domain):
    name: ClassVar[str] = "notes"
    toolkit_type = NotesTools
    policy = "Be nice to notes."
    policy_rules: ClassVar[dict[str, str]] = {}

    @classmethod
    def build_state(cls, rng: random.Random, size: int) -> State:
        return NotesState(notes={f"n{i}": Note(text=f"note {rng.randint(0, 999)}") for i in range(size)})


def test_tiny_domain_schema_from_signature_and_docstring() -> None:
    tools = NotesDomain(3, 0).tools
    assert set(tools) == {"read_note", "write_note", "divide_notes"}
    assert tools["read_note"].kind is ToolKind.read and tools["write_note"].kind is ToolKind.write
    fn = tools["write_note"].spec.function
    assert fn.description == "Write a note, replacing any note with that key."
    params = fn.parameters
    assert params["required"] == ["note_id", "text"]  # pinned has a default
    assert params["properties"]["pinned"]["type"] == "boolean"
    assert params["properties"]["pinned"]["default"] is False
    assert params["properties"]["text"]["description"] == (
        "What the note says. It may be long, and this description continues on a second line.")
    assert tools["divide_notes"].spec.function.parameters["properties"]["by"]["type"] == "integer"


def test_a_tool_that_raises_a_plain_exception_is_a_crash() -> None:
    notes = NotesDomain(3, 0)
    env = notes.environment()
    with pytest.raises(ToolCrash, match="divide_notes crashed: ZeroDivisionError"):
        env.execute(_call("divide_notes", {"by": 0}))
    with pytest.raises(ToolCrash) as info:
        env.call("divide_notes", {"by": 0})
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    # the same tool called correctly works, and a ToolError is not a crash
    assert env.execute(_call("divide_notes", {"by": 2})).content == "1.5"
    missing = env.execute(_call("read_note", {"note_id": "zz"}))
    assert missing.is_error and "not found" in missing.content


class _CallOnce:
    """An agent that calls one tool, then says something."""

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.done = False

    async def respond(self, messages: Sequence[Message]) -> AgentReply:
        if self.done:
            return AgentReply(AssistantMessage(content="Done."))
        self.done = True
        return AgentReply(AssistantMessage(content=None, tool_calls=(self.call,)))


class _QuietUser:
    async def respond(self, messages: Sequence[Message]) -> UserReply:
        return UserReply(UserMessage(content="Please divide my notes."))


def test_a_crashing_tool_ends_the_episode_as_tool_crash() -> None:
    notes = NotesDomain(3, 0)
    spec = EpisodeSpec(agent="test", user="test", seed=0, max_turns=5)
    crashed = asyncio.run(run_episode("bp_x", notes.environment(), _CallOnce(_call("divide_notes", {"by": 0})),
                                      _QuietUser(), EpisodeLimits(max_turns=5), run_id="r", episode=spec))
    assert crashed.termination is TerminationReason.tool_crash
    fine = asyncio.run(run_episode("bp_x", notes.environment(), _CallOnce(_call("divide_notes", {"by": 1})),
                                   _QuietUser(), EpisodeLimits(max_turns=2), run_id="r", episode=spec))
    assert fine.termination is TerminationReason.max_turns


def test_toolkits_without_docstrings_types_or_tools_are_refused() -> None:
    class NoDoc(Toolkit):
        @tool(ToolKind.read)
        def f(self, x: int) -> int:
            return x

    class NoType(Toolkit):
        @tool(ToolKind.read)
        def f(self, x) -> int:  # type: ignore[no-untyped-def]
            """Doc."""
            return 1

    class NoTools(Toolkit):
        def f(self) -> None:
            """Doc."""

    for cls, match in ((NoDoc, "no docstring"), (NoType, "has no type"), (NoTools, "no tools")):
        with pytest.raises(TypeError, match=match):
            toolkit_tools(cls)


# --- retail tool schemas ----------------------------------------------------------------------

def test_retail_tool_schemas(domain: RetailDomain) -> None:
    specs = domain.tool_specs()
    names = [s.name for s in specs]
    assert len(specs) >= 12 and len(set(names)) == len(names)
    writes = {n for n, t in domain.tools.items() if t.kind is ToolKind.write}
    assert len(writes) >= 5
    assert {"cancel_pending_order", "return_delivered_order_items", "modify_customer_address"} <= writes
    assert {"get_order_details", "find_customer_id_by_email"}.isdisjoint(writes)
    for spec in specs:
        dumped = spec.model_dump()
        assert dumped["type"] == "function"
        fn = dumped["function"]
        method = getattr(RetailTools, fn["name"])
        assert fn["description"] and fn["description"] in " ".join(method.__doc__.split())
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert "title" not in json.dumps(params)
        for pname, prop in params["properties"].items():
            assert prop.get("description"), f"{fn['name']}.{pname} has no description"
        json.dumps(dumped)  # plain JSON, as the OpenAI API wants it
    by_name = {s.name: s.function.parameters for s in specs}
    assert by_name["cancel_pending_order"]["required"] == ["order_id", "reason"]
    assert by_name["find_customer_id_by_name_zip"]["required"] == ["first_name", "last_name", "zip"]
    assert by_name["return_delivered_order_items"]["properties"]["item_ids"] == {
        "description": "Ids of the items to return.", "items": {"type": "string"}, "type": "array"}
    assert "required" not in by_name["list_product_types"] and by_name["list_product_types"]["properties"] == {}
    assert domain.tools["get_order_details"].account_params == ("order_id",)
    assert domain.tools["get_customer_details"].account_params == ("customer_id",)
    assert domain.tools["get_product_details"].account_params == ()


# --- Environment.execute ----------------------------------------------------------------------

@pytest.mark.parametrize("name, arguments, needle", [
    ("drop_all_tables", {}, "unknown tool"),
    ("get_order_details", '{"order_id": ', "not a JSON object"),
    ("get_order_details", "[1, 2]", "not a JSON object"),
    ("get_order_details", {}, "invalid arguments"),  # missing a required argument
    ("get_order_details", {"order_id": 1234567}, "invalid arguments"),  # wrong type
    ("get_order_details", {"order_id": "#W1", "verbose": True}, "invalid arguments"),  # extra
    ("cancel_pending_order", {"order_id": "#W0000000", "reason": "no longer needed"}, "not found"),
])
def test_bad_calls_become_error_messages_and_leave_the_state_alone(
        domain: RetailDomain, name: str, arguments: Any, needle: str) -> None:
    env = domain.environment()
    before = env.state_hash()
    message = env.execute(_call(name, arguments, "call_7"))
    assert isinstance(message, ToolMessage)
    assert message.is_error is True
    assert needle in message.content
    assert message.tool_call_id == "call_7" and message.name == name
    assert env.state_hash() == before == domain.hasher.hash(domain.template)
    assert env.diff() == ()


def test_schema_invalid_write_changes_nothing(domain: RetailDomain) -> None:
    env = domain.environment()
    order = _order(env.state, "pending")
    before = env.state.orders[order.id]
    message = env.execute(_call("cancel_pending_order", {"order_id": order.id}))
    assert message.is_error and "reason" in message.content
    assert env.state.orders[order.id] is before
    ok = env.execute(_call("cancel_pending_order", {"order_id": order.id, "reason": "no longer needed"}))
    assert not ok.is_error and json.loads(ok.content)["status"] == "cancelled"
    assert env.state_hash() != domain.hasher.hash(domain.template)


def test_results_are_json_text(domain: RetailDomain) -> None:
    env = domain.environment()
    order = _order(env.state, "delivered")
    assert json.loads(env.execute(_call("get_order_details", {"order_id": order.id})).content)["id"] == order.id
    types = json.loads(env.execute(_call("list_product_types", {})).content)
    assert isinstance(types, dict) and len(types) == len(env.state.products)
    customer = env.state.customers[order.customer_id]
    found = env.execute(_call("find_customer_id_by_email", {"email": customer.email.upper()}))
    assert found.content == customer.id and not found.is_error


# --- hashing, fresh states, diffs -------------------------------------------------------------

def _address(zip_code: str) -> dict[str, str]:
    return {"address1": "1 Test St", "address2": "", "city": "Austin", "state": "TX", "zip": zip_code}


def test_equal_states_hash_equal_whatever_the_write_order(domain: RetailDomain) -> None:
    customers = sorted(domain.template.customers)[:2]
    pending = [o for o in domain.template.orders.values() if o.status == "pending"][:2]
    writes = [
        ("modify_customer_address", {"customer_id": customers[0], **_address("11111")}),
        ("modify_customer_address", {"customer_id": customers[1], **_address("22222")}),
        ("cancel_pending_order", {"order_id": pending[0].id, "reason": "ordered by mistake"}),
        ("modify_pending_order_address", {"order_id": pending[1].id, **_address("33333")}),
    ]
    hashes = set()
    for seed in range(4):
        env = domain.environment()
        order = list(writes)
        random.Random(seed).shuffle(order)
        for name, args in order:
            env.call(name, args)
        hashes.add(env.state_hash())
    assert len(hashes) == 1
    # a state built independently (not derived from the template) hashes the same way too
    env = domain.environment()
    for name, args in writes:
        env.call(name, args)
    rebuilt = RetailState.model_validate(env.state.model_dump())
    assert domain.hasher.hash(rebuilt) in hashes
    assert StateHasher(domain.template).hash(rebuilt) in hashes


def test_a_state_equal_to_the_template_hashes_like_it(domain: RetailDomain) -> None:
    template_hash = domain.hasher.hash(domain.template)
    assert domain.environment().state_hash() == template_hash
    assert RetailDomain(40, 1).hasher.hash(RetailDomain(40, 1).template) == template_hash
    assert RetailDomain(40, 2).environment().state_hash() != template_hash
    # write, then write back: new record objects, same content, same hash
    env = domain.environment()
    customer = next(iter(env.state.customers.values()))
    original = customer.address.model_dump()
    env.call("modify_customer_address", {"customer_id": customer.id, **_address("99999")})
    assert env.state_hash() != template_hash
    env.call("modify_customer_address", {"customer_id": customer.id, **original})
    assert env.state.customers[customer.id] is not customer
    assert env.state_hash() == template_hash
    assert env.diff() == ()


def test_added_and_removed_records_change_the_hash(domain: RetailDomain) -> None:
    template_hash = domain.hasher.hash(domain.template)
    state = domain.fresh_state()
    key, record = next(iter(state.orders.items()))
    del state.orders[key]
    removed = domain.hasher.hash(state)
    assert removed != template_hash
    state.orders["#W_new"] = record
    assert domain.hasher.hash(state) not in (template_hash, removed)
    del state.orders["#W_new"]
    state.orders[key] = record
    assert domain.hasher.hash(state) == template_hash


def test_every_write_tool_changes_the_hash(domain: RetailDomain, blueprints: list[TaskBlueprint]) -> None:
    writes = {n for n, t in domain.tools.items() if t.kind is ToolKind.write}
    seen: set[str] = set()
    for bp in blueprints:
        env = domain.environment()
        for call in bp.ground_truth.calls:
            before = env.state_hash()
            env.call(call.name, call.arguments)
            if call.kind == "write":
                seen.add(call.name)
                assert env.state_hash() != before, call
            else:
                assert env.state_hash() == before, call
        assert env.state_hash() == bp.ground_truth.final_state_hash
    assert seen == writes


def test_fresh_state_does_not_leak_writes_into_the_template(domain: RetailDomain) -> None:
    template_hash = domain.hasher.hash(domain.template)
    order = _order(domain.template, "pending")
    customer_id = order.customer_id
    template_customer = domain.template.customers[customer_id]
    env = domain.environment()
    env.call("cancel_pending_order", {"order_id": order.id, "reason": "no longer needed"})
    env.call("modify_customer_address", {"customer_id": customer_id, **_address("12345")})
    assert env.state.orders[order.id].status == "cancelled"
    assert domain.template.orders[order.id].status == "pending"
    assert domain.template.orders[order.id] is order
    assert domain.template.customers[customer_id] is template_customer
    assert domain.hasher.hash(domain.template) == template_hash
    again = domain.fresh_state()
    assert again.orders[order.id].status == "pending"
    assert again.customers[customer_id].address == template_customer.address
    assert domain.hasher.hash(again) == template_hash
    assert again is not domain.template and again.orders is not domain.template.orders


def test_state_diff_lists_field_paths(domain: RetailDomain) -> None:
    env = domain.environment()
    order = _order(env.state, "pending")
    customer = env.state.customers[order.customer_id]
    env.call("cancel_pending_order", {"order_id": order.id, "reason": "ordered by mistake"})
    new_address = {**customer.address.model_dump(), "zip": "00001", "city": "Denver"}
    env.call("modify_customer_address", {"customer_id": customer.id, **new_address})
    diff = env.diff()
    assert diff == state_diff(domain.template, env.state)
    paths = [(c.table, c.key, c.path) for c in diff]
    assert paths == sorted(paths)
    by_path = {(c.table, c.path): c for c in diff}
    assert by_path[("orders", "status")].before == "pending"
    assert by_path[("orders", "status")].after == "cancelled"
    assert by_path[("orders", "cancel_reason")].after == "ordered by mistake"
    assert ("orders", "payments") in by_path  # a list changes as a whole
    assert by_path[("customers", "address.zip")].after == "00001"
    assert by_path[("customers", "address.city")].after == "Denver"
    assert ("customers", "address.address1") not in by_path  # unchanged fields are not listed
    assert {c.key for c in diff} == {order.id, customer.id}
    assert state_diff(domain.template, domain.fresh_state()) == ()


# --- registry ---------------------------------------------------------------------------------

def test_registry_finds_retail() -> None:
    assert "retail" in domain_names()
    assert load_domain_class("retail") is RetailDomain
    loaded = load_domain("retail", 15, 4)
    assert isinstance(loaded, RetailDomain) and loaded.size == 15 and loaded.seed == 4
    assert len(loaded.template.customers) == 15


def test_registry_reports_unknown_domains_as_config_errors() -> None:
    with pytest.raises(ConfigError) as info:
        load_domain("no_such_domain", 10, 0)
    assert info.value.field == "domain.name"
    assert "no_such_domain" in str(info.value) and "retail" in str(info.value)
