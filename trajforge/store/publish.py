"""Publish an export folder to the Hugging Face Hub.

``stage`` writes exactly the folder that is uploaded (exports, card, plots, export info) and
checks it for leaks; ``--dry-run`` stops there. ``publish`` then creates the dataset repo if
needed (and the branch, for ``--revision``) and uploads the folder with one commit per shard
group: one per export format (split further if a format has more than ``MAX_FILES_PER_COMMIT``
files), then the card, plots and export info last, so the card never describes data that is not
there yet. Remote files under the folders it manages that the new export no longer has (shards
of an earlier, larger export) are deleted in the same commits.

The token is whatever ``huggingface_hub`` finds (``HF_TOKEN`` or the saved ``hf auth login``);
trajforge never reads it into a file, a log line or an error message.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import ConfigError, StoreError
from trajforge.store.card import PLOTS_DIR, write_card
from trajforge.store.export_writer import EXPORT_INFO_FILE, ExportSummary, write_export
from trajforge.store.features import EXPORT_FORMATS, ExportFormat
from trajforge.store.splits import SplitConfig

MAX_FILES_PER_COMMIT = 50
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_TEXT_SUFFIXES = {".md", ".json", ".jsonl", ".txt", ".yaml", ".yml"}
_SECRET_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def check_repo_id(repo_id: str) -> str:
    if not _REPO_ID.fullmatch(repo_id) or ".." in repo_id or repo_id.endswith((".", "-")):
        raise ConfigError("--repo-id", f"'{repo_id}' is not ORG/NAME (letters, digits, '.', '_', '-')")
    return repo_id


def default_staging(out: Path, repo_id: str) -> Path:
    return Path(out) / "publish" / repo_id.replace("/", "__")


# --- leak check -------------------------------------------------------------------------------

def forbidden_strings(*paths: Path) -> list[str]:
    """What must not appear in a published file: local paths of this machine and the Hub
    token values the process can see."""
    found: list[str] = []
    for p in paths:
        resolved = str(Path(p).resolve())
        if len(resolved) > 1:
            found.append(resolved)
    home = str(Path.home())
    if len(home) > 1:
        found.append(home)
    for name in _SECRET_ENV:
        value = os.environ.get(name, "")
        if len(value) >= 8:
            found.append(value)
    try:
        from huggingface_hub import get_token

        token = get_token()
        if token and len(token) >= 8:
            found.append(token)
    except ImportError:
        pass
    return sorted(set(found), key=len, reverse=True)


def check_no_leaks(folder: Path, forbidden: Sequence[str]) -> None:
    """Refuse a folder whose text files (the card, export info, JSONL) or Parquet metadata hold
    a forbidden string. The error names the file, never the string."""
    needles = [s.encode() for s in forbidden if s]
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in _TEXT_SUFFIXES:
            data = path.read_bytes()
        elif path.suffix == ".parquet":
            import pyarrow.parquet as pq

            metadata = pq.read_schema(path).metadata or {}
            data = b"".join(k + v for k, v in metadata.items())
        else:
            continue
        if any(n in data for n in needles):
            rel = path.relative_to(folder).as_posix()
            raise StoreError(f"{rel}: holds a local path or a token; nothing was published")


# --- staging ----------------------------------------------------------------------------------

def stage(out: Path, folder: Path, *, repo_id: str, formats: Sequence[ExportFormat] = EXPORT_FORMATS,
          split_config: SplitConfig | None = None, run_ids: Sequence[str] | None = None,
          license_id: str = "apache-2.0", pretty_name: str | None = None,
          shard_rows: int | None = None) -> ExportSummary:
    """Write the folder that ``publish`` uploads, byte for byte, and check it for leaks."""
    check_repo_id(repo_id)
    kwargs: dict[str, Any] = {"shard_rows": shard_rows} if shard_rows else {}
    summary = write_export(out, folder, formats, split_config, run_ids, **kwargs)
    write_card(out, folder, summary, repo_id=repo_id, license_id=license_id, pretty_name=pretty_name)
    check_no_leaks(folder, forbidden_strings(out, folder))
    return summary


def folder_files(folder: Path) -> list[str]:
    """Every file under ``folder`` as a POSIX path relative to it, sorted."""
    return sorted(p.relative_to(folder).as_posix() for p in Path(folder).rglob("*") if p.is_file())


@dataclass(frozen=True)
class CommitGroup:
    """One commit: a title and the repo paths it adds."""

    title: str
    paths: tuple[str, ...]
    prefix: str  # remote files under this folder that are not re-added are deleted


def upload_plan(folder: Path) -> list[CommitGroup]:
    """One commit per export format (chunked to ``MAX_FILES_PER_COMMIT``), then the card."""
    files = folder_files(folder)
    groups: list[CommitGroup] = []
    for fmt in EXPORT_FORMATS:
        mine = [f for f in files if f.startswith(f"{fmt}/")]
        chunks = [mine[i:i + MAX_FILES_PER_COMMIT] for i in range(0, len(mine), MAX_FILES_PER_COMMIT)]
        for n, chunk in enumerate(chunks, start=1):
            suffix = f" ({n}/{len(chunks)})" if len(chunks) > 1 else ""
            groups.append(CommitGroup(f"Upload {fmt} export{suffix}", tuple(chunk), f"{fmt}/"))
    grouped = {p for g in groups for p in g.paths}
    rest = [f for f in files if f not in grouped]
    if rest:
        groups.append(CommitGroup("Upload dataset card, plots and export info", tuple(rest), f"{PLOTS_DIR}/"))
    return groups


# --- upload -----------------------------------------------------------------------------------

def publish(folder: Path, repo_id: str, *, private: bool = False, revision: str | None = None,
            api: Any = None) -> list[str]:
    """Upload a staged folder; returns the commit URLs. ``api`` defaults to ``HfApi()``."""
    check_repo_id(repo_id)
    if not (Path(folder) / EXPORT_INFO_FILE).is_file():
        raise StoreError(f"{folder}: not a staged export (no {EXPORT_INFO_FILE})")
    check_no_leaks(Path(folder), forbidden_strings(Path(folder)))  # also when called directly
    try:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    except ImportError as exc:
        raise ConfigError("publish", "needs huggingface_hub: pip install 'trajforge[hub]'") from exc
    from huggingface_hub.errors import HfHubHTTPError

    api = api or HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision and revision != "main":
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        remote = set(api.list_repo_files(repo_id, repo_type="dataset", revision=revision))
        plan = upload_plan(Path(folder))
        local = {p for g in plan for p in g.paths}
        urls: list[str] = []
        deleted_prefixes: set[str] = set()
        for group in plan:
            operations: list[Any] = []
            if group.prefix not in deleted_prefixes:
                deleted_prefixes.add(group.prefix)
                operations += [CommitOperationDelete(path_in_repo=p) for p in sorted(remote)
                               if p.startswith(group.prefix) and p not in local]
            operations += [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(Path(folder) / p))
                           for p in group.paths]
            info = api.create_commit(repo_id, operations=operations, commit_message=group.title,
                                     repo_type="dataset", revision=revision)
            urls.append(str(getattr(info, "commit_url", info)))
    except HfHubHTTPError as exc:
        # the message is the server's; it never echoes the token
        raise StoreError(f"Hub: {str(exc).splitlines()[0]}") from exc
    return urls
