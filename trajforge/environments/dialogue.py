"""Dialogue-act vocabulary shared by the scripted policies and the verifiers.

The scripted agent phrases confirmations with one of ``CONFIRM_MARKERS``; the scripted user and
the confirmation verifier recognise them, and recognise an explicit yes with ``is_affirmative``.
"""

from __future__ import annotations

import re

CONFIRM_MARKERS = ("shall i go ahead", "want me to proceed", "should i proceed", "okay to proceed",
                   "shall i proceed", "may i proceed")
ANYTHING_ELSE_MARKERS = ("anything else",)
IDENTITY_MARKERS = ("email", "zip code")

_YES = re.compile(r"^\W*(yes|yep|yeah|sure|ok|okay|confirmed|correct|absolutely|definitely|"
                  r"please proceed|please go ahead|go ahead|that's right|do it)\b", re.IGNORECASE)
_BUT = re.compile(r"\b(actually|instead|wait|don't|do not|not yet|changed my mind|hold on)\b",
                  re.IGNORECASE)


def is_affirmative(text: str | None) -> bool:
    """An explicit yes, with no hedge that takes it back."""
    return bool(text) and bool(_YES.search(text)) and not _BUT.search(text)  # type: ignore[arg-type]


def is_confirmation_request(text: str | None) -> bool:
    low = (text or "").lower()
    return "?" in low and any(m in low for m in CONFIRM_MARKERS)


def asks_anything_else(text: str | None) -> bool:
    low = (text or "").lower()
    return any(m in low for m in ANYTHING_ELSE_MARKERS)
