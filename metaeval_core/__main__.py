"""Entry point of ``python -m metaeval_core``."""

import sys

from metaeval_core.cli.main import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m metaeval_core"))
