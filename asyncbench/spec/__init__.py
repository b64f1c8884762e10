"""What to run: YAML configs and the command line become one frozen, validated plan.

`schema` holds the one set of coercion rules and messages that YAML and
`--set` share; `config` reads files (with file, line and key in every
error); `overrides` applies -w/-b/-d/--set/--quick; `expect` parses checks.
Loading a config imports no framework.
"""
