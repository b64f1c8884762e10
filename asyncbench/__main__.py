"""`python -m asyncbench` runs the CLI, like the `asyncbench` console script."""

from asyncbench.cli import main

main()
