"""asyncbench tests, one folder per package."""
