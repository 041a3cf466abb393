"""Which errors are worth a retry: transient ones only (DESIGN.md section 7).

A timeout, a dropped connection, a rate limit or a provider's 5xx may pass if tried again; a bad
config, a schema mismatch or a bug will not, and retrying it only hides it for longer.
"""

from __future__ import annotations

import errno
from typing import Any

# errno values of an OS error that a retry may cure (a busy or briefly unreachable filesystem)
_TRANSIENT_ERRNOS = {errno.EAGAIN, errno.EBUSY, errno.EINTR, errno.ETIMEDOUT, errno.ECONNRESET,
                     errno.ECONNREFUSED, errno.ECONNABORTED, errno.EHOSTUNREACH, errno.ENETUNREACH}
# provider errors named as litellm and the OpenAI client name them, matched by name so that
# neither has to be imported (or installed) to classify them
_TRANSIENT_NAMES = {"RateLimitError", "APIConnectionError", "APITimeoutError", "Timeout",
                    "ServiceUnavailableError", "InternalServerError"}


def is_transient(exc: BaseException) -> bool:
    """True for an error a retry may cure."""
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return True
    if isinstance(exc, OSError) and exc.errno in _TRANSIENT_ERRNOS:
        return True
    if type(exc).__name__ in _TRANSIENT_NAMES:
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or 500 <= status < 600)


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry a failed task run only if its error is transient."""
    try:
        state.result(raise_on_failure=True)
    except BaseException as exc:  # noqa: BLE001 - the state's own exception, re-raised by Prefect
        return is_transient(exc)
    return False
