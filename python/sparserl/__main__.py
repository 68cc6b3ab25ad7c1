"""python -m sparserl ARGS...: the sparserl command line, in-process (sparserl/cli.py)."""

from .cli import main

main()
