"""python -m streamdsl: the command line (streamdsl.cli)."""
import sys

from .cli import main

sys.exit(main())
