"""Planes of real positions from SGF games, for int8 calibration (``python -m azgo.nets.quantize``).

Usage::

    python3 scripts/calibration_positions.py OUT.npy GAME_DIR_OR_SGF... [--positions 400] [--seed 0]

Every game must have the same board size (one ``.npy`` per size). Positions are sampled uniformly
over all moves of all games (fixed seed), encoded with their history as the search encodes them.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

from azgo.engine.features import encode_game
from azgo.engine.sgf import load_sgf


def sgf_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.rglob("*.sgf")) if p.is_dir() else [p]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("games", nargs="+")
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    picks = []
    size = None
    for f in sgf_files(args.games):
        rec = load_sgf(str(f))
        n = len(rec.moves)
        if size is None:
            size = rec.size
        if rec.size != size:
            sys.exit(f"{f}: board size {rec.size}, expected {size} (one .npy per size)")
        picks += [(rec, k) for k in range(n)]
    chosen = rng.sample(picks, min(args.positions, len(picks)))
    planes = np.stack([encode_game(rec.to_game(k)) for rec, k in chosen]).astype(np.float32)
    np.save(args.out, planes)
    print(f"wrote {args.out}: {planes.shape} from {len({id(r) for r, _ in chosen})} games")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
