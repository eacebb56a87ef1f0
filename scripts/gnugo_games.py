"""GNU Go self-play games (``azgo gnugo-games``), kept under its old name for the commands the records quote."""

import sys

from azgo.training.gnugo_games import main

if __name__ == "__main__":
    sys.exit(main())
