"""The `sparserl` command line, run in this process (src/cli/app.h through the _cli module).

`python -m sparserl eval --matrix A.mtx --json`, the `sparserl` script of the package, and the
seed's `python -m sparserl.train_sft` / `train_minimal` all come here. The _cli module links the
C++ trainers (Debian's LibTorch), so it is imported only when a command runs, never by
`import sparserl`.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Sequence


def run(args: Sequence[str]) -> int:
    """Runs `sparserl ARGS...` and returns its exit status (0 ok, 1 error or failed check, 2
    internal error). Ctrl-C ends the process, as it does the CLI: the C++ code never returns to
    Python's handler while it trains."""
    from . import _cli

    sys.stdout.flush()
    sys.stderr.flush()
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL) if in_main_thread else None
    try:
        return _cli.run([str(a) for a in args])
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(run(sys.argv[1:] if argv is None else argv))
