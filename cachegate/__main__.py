"""`python -m cachegate` is the `cachegate` command."""
import sys

from cachegate.cli import main

sys.exit(main())
