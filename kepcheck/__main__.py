import sys

from kepcheck.checks.cli.main import main

sys.exit(main())
