"""``python -m course_lib ...``: the command line (see :mod:`course_lib.cli`)."""

import sys

from .cli import main

sys.exit(main())
