"""The machine this process runs on, and other processes on it: a leaf below every layer but `errors`.

`facts` says what the host is (usable cores, CPU, git checkout, variables
that change how frameworks behave); `processes` spawns, watches and tears
down child processes; `worktrees` checks revisions out as temporary git
worktrees named after their owner, and removes those whose owner is gone;
`git` runs every git command asyncbench runs (a revision from a file only
after `--end-of-options`).
Nothing here knows about frameworks or workloads.
"""
