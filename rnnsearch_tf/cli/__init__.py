"""The command line: `rnnsearch <command>` (`main.py`) and one module per command."""
