"""The strength table (``azgo strength``), kept under its old name for the commands the records quote."""

import sys

from azgo.gtp.strength import main

if __name__ == "__main__":
    sys.exit(main())
