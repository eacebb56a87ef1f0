"""Planes of real positions from SGF games, for int8 calibration (``python -m azgo.nets.quantize``).

Usage::

    python3 scripts/calibration_positions.py OUT.npy GAME_DIR_OR_SGF... [--positions 400] [--seed 0]

Every game must have the same board size (one ``.npy`` per size). Positions are sampled uniformly
over all moves of all games (fixed seed), encoded with their history as the search encodes them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from azgo.engine.atomic import atomic_target
from azgo.engine.sgf import load_sgf
from azgo.training.calibration import sample_positions
from azgo.training.dataset import DatasetError, find_sgf_files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("games", nargs="+")
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        planes = sample_positions([load_sgf(f) for f in find_sgf_files(args.games)], args.positions, args.seed)
    except (ValueError, DatasetError) as e:
        sys.exit(str(e))
    out = Path(args.out)
    # a file object: np.save would append .npy to a .tmp name; a killed run leaves no half-written file
    with atomic_target(out) as tmp, open(tmp, "wb") as f:
        np.save(f, planes)
    print(f"wrote {args.out}: {planes.shape}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
