"""asyncbench's version: a leaf, so that results can name the tool that wrote them without importing the package's API."""

__version__ = "0.1.0"
