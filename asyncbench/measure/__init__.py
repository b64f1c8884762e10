"""The three clocks and the stopping rule (`timing`), and ranks that measure together (`distributed`).

Below the workloads, because a workload that measures itself across
processes (comm_overlap's ranks) or calibrates its parts (multi_device) runs
the very same sampling loop as the engine.
"""
