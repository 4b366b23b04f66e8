"""``python -m kvgate.cli``: the console script, from a checkout."""

import sys

from kvgate.cli.command_line import main

sys.exit(main())
