"""`python -m asyncbench` runs the CLI, like the `asyncbench` console script."""

from asyncbench.console import main

main()
