import sys

from kepcheck.checks.cli import main

sys.exit(main())
