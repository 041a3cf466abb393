"""The core knows no domain: outside the domain folders (``environments/<domain>/``), no
trajforge source names a retail entity. (Python's builtin ``zip(`` is not a zip code; the
dialogue recogniser's labelled banks and weights are data, written in the four built-in
domains' words, and are left out. The planted-instruction detector's cue patterns name the
person an agent serves in plain English, "customer" among "user", "client", "guest", "patient":
there, and only there, that one word is a word of the language, not a retail entity.)"""

from __future__ import annotations

import re
from pathlib import Path

import trajforge
from trajforge.environments.registry import domain_names, load_domain_class

ROOT = Path(trajforge.__file__).resolve().parent
WORDS = re.compile(r"customer|order_id|#W|zip(?!\()", re.IGNORECASE)
DATA = ("environments/dialogue/banks/", "environments/dialogue/weights.json")
LANGUAGE = {"environments/injection.py": re.compile(r"order_id|#W|zip(?!\()", re.IGNORECASE)}


def _domain_folders() -> set[Path]:
    folders = set()
    for name in domain_names():
        module = load_domain_class(name).__module__
        path = ROOT.parent / Path(*module.split("."))
        if path.is_dir() and path.parent == ROOT / "environments":
            folders.add(path)
    return folders


def test_no_retail_name_outside_the_domain_folders() -> None:
    folders = _domain_folders()
    assert ROOT / "environments" / "retail" in folders
    hits = []
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if not path.is_file() or path.suffix not in (".py", ".json", ".jsonl", ".md", ".txt", ".yaml") \
                or any(f in path.parents for f in folders) or rel.startswith(DATA):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if LANGUAGE.get(rel, WORDS).search(line):
                hits.append(f"{rel}:{number}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)
