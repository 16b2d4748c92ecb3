"""`python -m boardlab`: the `boardlab` command."""
import sys

from boardlab.cli import main

if __name__ == "__main__":
    sys.exit(main())
