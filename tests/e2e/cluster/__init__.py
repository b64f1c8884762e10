"""End-to-end tests of sweeps on clusters: the real `asyncbench run --executor` and `gather` in subprocesses, on
submitit's local executor and a real single-node Slurm (the `slurm` tests, `make slurm`)."""
