"""Results: the self-describing data a run produces, its versioned JSON schema, and the statistics and units it carries.

The bottom layer that knows about benchmarks: every other layer reads and
writes these types, and this package imports none of them (nor a framework).
"""
