"""What this process's `sys.exit` asked for: atexit handlers (the launcher's supervisor, the process
group's teardown) cannot see a SystemExit's code, so `sys.exit` is wrapped once to note it."""
from __future__ import annotations

import sys
from typing import Optional

from torchstrategy import _context


def note_exit_codes() -> None:
    """Wraps `sys.exit` (once per process) so that `requested_exit_code()` can tell a failing exit."""
    original = sys.exit
    if getattr(original, "_notes_exit_code", False):
        return

    def exit_and_note(status: object = None) -> None:
        _context.set_exit_request(0 if status is None else (status if isinstance(status, int) else 1))
        original(status)

    exit_and_note.__doc__ = original.__doc__
    exit_and_note._notes_exit_code = True  # type: ignore[attr-defined]
    sys.exit = exit_and_note


def requested_exit_code() -> Optional[int]:
    """The code of the last `sys.exit` call (None if there was none since `note_exit_codes`)."""
    return _context.exit_request()
