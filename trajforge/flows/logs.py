"""A command's Prefect log in a file under the output folder, and its failure as one line.

While a build runs, Prefect's console handlers are silenced (``verbose`` keeps them) and every
log record, tracebacks included, goes to ``<out>/logs/build-<time>-<pid>.log``. When the flow
fails, the error the user sees is the one that caused it: a ``StoreError`` from a shard write is
often wrapped, or followed, by Prefect's own failures (a task-run state it could not report, an
HTTP 500 from a server whose database is on the same full disk), and those are not the news.
``root_error`` walks the chain back to the first error trajforge raised (or the first OS error);
the CLI prints it as one line that names the log file.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from trajforge.errors import StoreError, TrajforgeError
from trajforge.store.shards import os_reason

LOGS_DIR = "logs"
_SILENT = logging.CRITICAL + 1


def _console_handlers() -> list[logging.Handler]:
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in ("prefect", "prefect._internal",
                                                                     "uvicorn", "fastapi"))]
    return [h for lg in loggers for h in lg.handlers
            if isinstance(h, PrefectConsoleHandler) or type(h).__name__ == "_SafeStreamHandler"]


@contextmanager
def command_log(out: Path, command: str, verbose: bool = False) -> Iterator[Path | None]:
    """Send every log record to a file under ``out/logs`` for the duration, and keep Prefect's
    console quiet unless ``verbose``. Yields the file's path (``None`` when it cannot be
    created, e.g. on a full disk: the command's one-line error still reaches the terminal)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path: Path | None = Path(out).resolve() / LOGS_DIR / f"{command}-{stamp}-{os.getpid()}.log"
    handler: logging.Handler | None = None
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8", delay=False)
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    except OSError:
        path, handler = None, None
    root = logging.getLogger()
    consoles = [] if verbose else _console_handlers()
    levels = [h.level for h in consoles]
    for console in consoles:
        console.setLevel(_SILENT)
    if handler is not None:
        root.addHandler(handler)
    # a handler that cannot write (this log on a full disk, Prefect's API log on a server whose
    # database is on it) prints "--- Logging error ---" and a traceback per record unless told not to
    raise_exceptions = logging.raiseExceptions
    logging.raiseExceptions = verbose
    try:
        yield path
    finally:
        logging.raiseExceptions = raise_exceptions
        for console, level in zip(consoles, levels, strict=True):
            console.setLevel(level)
        if handler is not None:
            root.removeHandler(handler)
            try:
                handler.close()
            except OSError:
                pass


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)


def root_error(exc: BaseException) -> BaseException:
    """The error that caused ``exc``: the first ``TrajforgeError`` in its chain, else the first
    disk-level OS error (as a ``StoreError`` naming its file), else ``exc`` itself."""
    chain = list(_chain(exc))
    for error in chain:
        if isinstance(error, TrajforgeError):
            return error
    for error in chain:
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS,
                                                          errno.EACCES, errno.EIO, errno.EFBIG):
            where = f" {error.filename}" if error.filename else ""
            return StoreError(f"cannot write{where}: {os_reason(error)}")
    return exc


LOG_NOTE = "log: "  # the note on an exception that names the command's log file


def note_log(exc: BaseException, log: Path | None) -> None:
    """Say on ``exc`` where its command's log is (the CLI's one line ends with it)."""
    if log is not None and not any(n.startswith(LOG_NOTE) for n in getattr(exc, "__notes__", ())):
        exc.add_note(f"{LOG_NOTE}{log}")


def logged_at(exc: BaseException) -> str | None:
    return next((n[len(LOG_NOTE):] for n in getattr(exc, "__notes__", ()) if n.startswith(LOG_NOTE)), None)


def one_line_failure(exc: BaseException) -> TrajforgeError:
    """``exc``'s root cause as a ``TrajforgeError`` (a bug's, blame ``bug``, when it is not one
    of ours), carrying the note that names the log."""
    root = root_error(exc)
    if not isinstance(root, TrajforgeError):
        root = TrajforgeError(f"{type(root).__name__}: {root}")
    note_log(root, Path(log) if (log := logged_at(exc)) else None)
    return root


def log_failure(exc: BaseException) -> None:
    """The failure's traceback into the log (console handlers are silenced meanwhile)."""
    logging.getLogger("trajforge").error("failed: %s", exc, exc_info=exc)
