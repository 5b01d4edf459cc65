"""Start a child process that Ctrl-C and SIGTERM reach, however the test session itself was started.

A shell without job control starts a background job (``make test &`` in a script, CI runners) with SIGINT
ignored, and an ignored signal stays ignored across ``exec``: Python then never installs its
``KeyboardInterrupt`` handler, and the child cannot be stopped with Ctrl-C. Signals blocked in the
parent stay blocked in the child too. :func:`default_stop_signals` (a ``preexec_fn``) gives the child
the disposition a terminal gives a foreground command.
"""
from __future__ import annotations

import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def default_stop_signals() -> None:
    """Between fork and exec: SIGINT and SIGTERM unblocked, with their default actions."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
