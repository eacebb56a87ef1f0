"""Positions for int8 calibration (:func:`azgo.nets.quantize.quantize_int8`), from SGF games.

``sample_positions`` draws positions uniformly over all moves of a set of games of one board size (a fixed
seed; ``games_of_size`` picks them from a mixed archive), encoded with their history as the search encodes
them: planes ``[n, 26, N, N]`` float32.
``random_positions`` plays random legal moves instead, for a loop whose generation 0 has no games yet (a
weaker calibration: real games have real shapes, so it is the fallback only).
"""

from __future__ import annotations

import random

import numpy as np

from azgo.engine.features import encode_game
from azgo.engine.game import Game
from azgo.engine.planes import NUM_PLANES
from azgo.engine.sgf import GameRecord, load_sgf


def games_of_size(files, size: int) -> list[GameRecord]:
    """The games among ``files`` played on ``size`` x ``size``, each read once (unreadable files skipped)."""
    out = []
    for f in files:
        try:
            rec = load_sgf(str(f))
        except Exception:  # noqa: BLE001 - a damaged archive file is not a calibration position
            continue
        if rec.size == size:
            out.append(rec)
    return out


def sample_positions(records: list[GameRecord], positions: int, seed: int = 0) -> np.ndarray:
    """Planes ``[min(positions, available), 26, N, N]`` of positions drawn uniformly over all moves of
    ``records`` (games of one board size, N; ValueError otherwise). No moves: ``[0, 26, 0, 0]``."""
    sizes = {rec.size for rec in records}
    if len(sizes) > 1:
        raise ValueError(f"games of sizes {sorted(sizes)} (one calibration set per size)")
    picks = [(rec, k) for rec in records for k in range(len(rec.moves))]
    if not picks:
        return np.zeros((0, NUM_PLANES, 0, 0), np.float32)
    chosen = random.Random(seed).sample(picks, min(positions, len(picks)))
    return np.stack([encode_game(rec.to_game(k)) for rec, k in chosen]).astype(np.float32)


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
