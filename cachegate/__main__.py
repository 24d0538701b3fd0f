"""`python -m cachegate` is the `cachegate` command."""
import sys

from cachegate.commands.main import main

sys.exit(main())
