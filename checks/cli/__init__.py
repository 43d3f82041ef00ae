"""The command line: argument parsing and the subcommands, what ``check`` prints, and ``replay``."""
