"""``python -m course_lib ...``: the command line (see :mod:`course_lib.lab.cli`)."""

import sys

from .lab.cli import main

sys.exit(main())
