"""``python -m evaluation ...``: see :mod:`evaluation.cli`."""
import sys

from evaluation.cli import main

sys.exit(main())
