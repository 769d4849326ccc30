"""``python -m agents``: the command line."""

import sys

from agents.cli import main

if __name__ == "__main__":
    sys.exit(main())
