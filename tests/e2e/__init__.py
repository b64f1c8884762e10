"""End-to-end tests: the real `asyncbench` command in subprocesses (run, ab, merge, record, signals, full disks, the
examples), on real frameworks and files. `make test-fast` leaves this folder out; `make test` runs it."""
