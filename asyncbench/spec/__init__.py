"""What to run: YAML configs and the command line become one frozen, validated plan.

`schema` holds the one set of coercion rules and messages that YAML and
`--set` share; `document` reads a file's YAML (each value's line kept, every
mistake said at once); `config` checks it (with file, line and key in every
error); `overrides` applies -w/-b/-d/--set/--quick; `expect` parses checks.
Loading a config imports no framework.
"""
