"""The pure core: the step machine and the functions it runs (no I/O, no clock of its own)."""
