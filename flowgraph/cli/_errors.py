"""The CLI's own failures: a one-line message and the exit status that goes with it."""

from __future__ import annotations

__all__ = ["EXIT_BUSY", "EXIT_ERROR", "EXIT_PAUSED", "EXIT_USAGE", "CliError", "UsageError"]

EXIT_ERROR = 1
"""Something the user asked for failed (missing file, thread, checkpoint; a run raised)."""
EXIT_USAGE = 2
"""The command line itself is wrong (unknown option, bad JSON, bad app spec)."""
EXIT_PAUSED = 3
"""A run paused on interrupt() and is waiting for a resume value."""
EXIT_BUSY = 4
"""The thread is busy: a run (of this or another process) holds it; try again later."""


class CliError(Exception):
    """A failure the CLI reports as one line on stderr, exiting with `code`."""

    code = EXIT_ERROR


class UsageError(CliError):
    """A command line that cannot be right whatever the store holds."""

    code = EXIT_USAGE
