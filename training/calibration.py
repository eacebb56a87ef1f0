"""Positions for int8 calibration (:func:`azgo.nets.quantize.quantize_int8`), from SGF games.

``sample_positions`` draws positions uniformly over all moves of a set of games of one board size (a fixed
seed), encoded with their history as the search encodes them: planes ``[n, 26, N, N]`` float32.
``random_positions`` plays random legal moves instead, for a loop whose generation 0 has no games yet (a
weaker calibration: real games have real shapes, so it is the fallback only).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from azgo.engine.features import encode_game
from azgo.engine.game import Game
from azgo.engine.sgf import load_sgf


def sgf_files(paths) -> list[Path]:
    """Every ``*.sgf`` under each folder of ``paths`` (sorted), and each file given directly."""
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.rglob("*.sgf")) if p.is_dir() else [p]
    return out


def sample_positions(files, positions: int, seed: int = 0, size: int | None = None) -> np.ndarray:
    """Planes ``[min(positions, available), 26, N, N]`` of positions drawn from the games in ``files``.

    Every game must have ``size`` (default: the first game's size), else ValueError naming the file; pick
    the games with :func:`games_of_size` first where sizes mix. No games: an empty ``[0, 26, size, size]``.
    """
    rng = random.Random(seed)
    picks = []
    for f in files:
        rec = load_sgf(str(f))
        if size is None:
            size = rec.size
        if rec.size != size:
            raise ValueError(f"{f}: board size {rec.size}, expected {size} (one calibration set per size)")
        picks += [(rec, k) for k in range(len(rec.moves))]
    if not picks:
        from azgo.engine.planes import NUM_PLANES
        return np.zeros((0, NUM_PLANES, size or 0, size or 0), np.float32)
    chosen = rng.sample(picks, min(positions, len(picks)))
    return np.stack([encode_game(rec.to_game(k)) for rec, k in chosen]).astype(np.float32)


def games_of_size(files, size: int) -> list[Path]:
    """The files among ``files`` whose game is played on ``size`` x ``size`` (unreadable files skipped)."""
    out = []
    for f in files:
        try:
            if load_sgf(str(f)).size == size:
                out.append(Path(f))
        except Exception:  # noqa: BLE001 - a damaged archive file is not a calibration position
            continue
    return out


def random_positions(size: int, positions: int, seed: int = 0, komi: float = 7.5) -> np.ndarray:
    """Planes ``[positions, 26, size, size]`` of positions reached by random legal moves (no passes until
    none is left), each game cut at a random length up to ``size * size`` moves."""
    rng = random.Random(seed)
    out = []
    while len(out) < positions:
        game = Game(size, komi)
        for _ in range(rng.randrange(size * size)):
            moves = game.board.legal_moves()[:-1]  # pass is last
            if not moves:
                break
            game.play(rng.choice(moves))
        out.append(encode_game(game))
    return np.stack(out).astype(np.float32)
