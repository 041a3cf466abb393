"""The export writer's format table covers every export format, and nothing else, in the order
the formats are declared (the order the CLI lists them in)."""

from __future__ import annotations

from trajforge.store.export_writer import FORMATS
from trajforge.store.features import EXPORT_FORMATS, FEATURES


def test_every_export_format_has_one_table_entry_and_features() -> None:
    assert tuple(FORMATS) == EXPORT_FORMATS
    assert set(FEATURES) >= set(EXPORT_FORMATS)
