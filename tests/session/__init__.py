"""The session: the spine's sequence and each place that fills its hooks, unit-tested (the e2e tests run the real thing)."""
