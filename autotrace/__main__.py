"""`python -m autotrace grad FILE.py::FUNCTION` and `... graph ...`: see autotrace/cli.py."""
import sys

from autotrace.cli import main

sys.exit(main())
