"""One game's training positions as compact arrays (numpy only; no torch): decoding and the per-file cache.

Positions: every move node of the main line, replayed with :class:`azgo.engine.game.Game`; the
sample is the position *before* the move, from the perspective of the player making it.

* skipped: nodes with ``AZT[0]`` (cheap searches are played but not trained on);
* policy target: ``AZX`` (pruned visit counts) if present, else ``AZP`` (raw root visit counts),
  normalised; else the played move, one-hot;
* value target: from ``RE`` (``B+...`` / ``W+...`` -> +1 / -1 from the side to move's view, ``0`` /
  ``Draw`` / ``Jigo`` -> 0); an unknown or void result gives value weight 0;
* ownership and score targets (area ownership of the final position, and its area score margin minus
  komi, both from the side to move's view) only for games played to the end (the last two moves are
  passes) and whose area score agrees with the winner in ``RE`` (a finished human game that leaves
  dead stones on the board does not); weight 0 otherwise;
* policy surprise: ``AZK`` (KL of the search target from the network's prior, written by self-play
  since 2026-11-23), NaN where absent; ``PositionSet.set_surprise_weight`` samples by it.

Each game is decoded once into compact arrays (`GameArrays`): ``planes`` uint8 ``[P, ceil(25*N*N/8)]``
(the 26 input planes of :mod:`azgo.engine.planes` without the komi plane, all 0/1, bit-packed with
``np.packbits``; 254 bytes per 9x9 position), ``komi`` float32 ``[P]``
(the value of the komi plane), ``policy`` float32 ``[P, N*N+1]``, ``value``/``value_w`` float32,
``ownership`` int8 ``[P, N*N]``, ``score``/``final_w``/``surprise`` float32. The arrays are cached per SGF file
as ``.npz`` (written atomically), keyed by the file's path, mtime and size and by the dataset and
feature versions, so that the next generation only decodes new games. By default the cache lives
in a ``.azgo-cache`` folder beside the SGF files.

Bad or foreign files (unparsable, an unsupported board size, an illegal move, a malformed ``AZP``)
are skipped with a warning that names the file; the failure is cached too.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from azgo.engine import planes as P
from azgo.engine.atomic import atomic_target
from azgo.engine.board import BLACK
from azgo.engine.features import encode_into
from azgo.engine.scoring import area_ownership
from azgo.engine.sgf import GameRecord, SgfError, decode_visits, load_sgf, parse_result  # noqa: F401 (re-exported)

#: Bump when the decoded arrays change meaning (invalidates every cache file).
DATASET_VERSION = 2  # 2: the surprise array (AZK)
#: Board sizes the network plays (games of other sizes are skipped).
MIN_SIZE, MAX_SIZE = 7, 19
#: Stored planes: every input plane but the komi plane (which must be the last one).
STORED_PLANES = P.KOMI_PLANE
assert P.KOMI_PLANE == P.NUM_PLANES - 1
CACHE_DIRNAME = ".azgo-cache"

Warn = Callable[[str], None]


class DatasetError(ValueError):
    """No usable training data (no files, or no positions)."""


# ------------------------------------------------------------------------------------- one game

@dataclass
class GameArrays:
    """The decoded positions of one game (all arrays have the same first dimension ``P``)."""

    size: int
    planes: np.ndarray      # uint8 [P, packed_len(N)]: 25 planes [25, N, N] bit-packed
    komi: np.ndarray        # float32 [P] (komi plane value: +-komi/15 from the side to move's view)
    policy: np.ndarray      # float32 [P, N*N+1], rows sum to 1
    value: np.ndarray       # float32 [P] in {-1, 0, 1}
    value_w: np.ndarray     # float32 [P] in {0, 1}
    ownership: np.ndarray   # int8 [P, N*N] in {-1, 0, 1}
    score: np.ndarray       # float32 [P] points, side to move's view
    final_w: np.ndarray     # float32 [P] in {0, 1} (weight of ownership and score)
    surprise: np.ndarray    # float32 [P] policy surprise (AZK, nats), NaN where the record has none
    stats: dict = field(default_factory=dict)  # moves, cheap (skipped), azx, azp, played, finished, azk

    ARRAYS = ("planes", "komi", "policy", "value", "value_w", "ownership", "score", "final_w", "surprise")

    def __len__(self) -> int:
        return len(self.value)

    @staticmethod
    def empty(size: int, stats: dict | None = None) -> "GameArrays":
        n = size
        return GameArrays(size, np.zeros((0, packed_len(n)), np.uint8), np.zeros(0, np.float32),
                          np.zeros((0, n * n + 1), np.float32), np.zeros(0, np.float32),
                          np.zeros(0, np.float32), np.zeros((0, n * n), np.int8),
                          np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, np.float32),
                          dict(stats or {}))


def packed_len(n: int) -> int:
    """Bytes per position of the bit-packed stored planes of an ``n`` x ``n`` board."""
    return (STORED_PLANES * n * n + 7) // 8


def unpack_planes(packed: np.ndarray, n: int) -> np.ndarray:
    """uint8 ``[B, 25, n, n]`` (0/1) from bit-packed rows ``[B, packed_len(n)]``."""
    bits = np.unpackbits(packed, axis=1, count=STORED_PLANES * n * n)
    return bits.reshape(len(packed), STORED_PLANES, n, n)


def _visit_target(text: str, size: int) -> np.ndarray | None:
    visits = decode_visits(text, size)
    total = sum(visits.values())
    if total <= 0:
        return None
    out = np.zeros(size * size + 1, np.float32)
    for move, count in visits.items():
        out[move] += count
    return out / np.float32(total)


def _policy_target(node, n: int) -> tuple[np.ndarray | None, str]:
    """A move node's policy target and its kind: ``AZX`` (pruned visits), else ``AZP`` (raw visits), else
    None for ``played`` (the move played, one-hot)."""
    for prop in ("AZX", "AZP"):
        text = node.props.get(prop)
        if text is not None and text.strip():
            target = _visit_target(text, n)
            if target is not None:
                return target, prop.lower()
    return None, "played"


def _surprise(node, idx: int) -> float:
    """A move node's policy surprise (``AZK``, nats, at least 0), NaN without one; SgfError if malformed."""
    kl = node.props.get("AZK", "").strip()
    if not kl:
        return float("nan")
    try:
        value = float(kl)
    except ValueError:
        value = float("nan")
    if not np.isfinite(value):
        raise SgfError(f"malformed AZK[{kl}] at move {idx}")
    return max(0.0, value)


def decode_record(rec: GameRecord) -> GameArrays:
    """Decode a game record into training arrays (see the module docstring); SgfError if unusable."""
    n = rec.size
    if not MIN_SIZE <= n <= MAX_SIZE:
        raise SgfError(f"board size {n}x{n} is not trained (the network plays {MIN_SIZE}..{MAX_SIZE})")
    game = rec.to_game()
    move_nodes = [node for node in rec.nodes if node.move is not None]
    move_entries = [i for i, (_, m) in enumerate(game.moves) if m is not None]
    if len(move_nodes) != len(move_entries):  # pragma: no cover - to_game plays every move node
        raise SgfError("replay does not match the record's moves")
    black_outcome = parse_result(rec.result)
    final = game.boards[-1]
    finished = final.game_over
    final_owner = area_ownership(final).reshape(-1).astype(np.int8) if finished else None
    final_score = 0.0
    if finished:
        final_score = float(final_owner.sum()) - rec.komi
        if black_outcome is not None and black_outcome != 0.0 and np.sign(final_score) != black_outcome:
            finished = False  # the board as it stands disagrees with RE (dead stones left on it?)
    keep = []
    stats = {"moves": len(move_nodes), "cheap": 0, "azx": 0, "azp": 0, "played": 0, "azk": 0,
             "finished": int(finished)}
    for node, idx in zip(move_nodes, move_entries):
        if node.props.get("AZT", "").strip() == "0":
            stats["cheap"] += 1
            continue
        keep.append((node, idx))
    count = len(keep)
    out = GameArrays.empty(n)
    out.stats = stats
    if count == 0:
        return out
    planes = np.zeros((count, P.NUM_PLANES, n, n), np.float32)
    policy = np.zeros((count, n * n + 1), np.float32)
    value = np.zeros(count, np.float32)
    value_w = np.zeros(count, np.float32)
    ownership = np.zeros((count, n * n), np.int8)
    score = np.zeros(count, np.float32)
    final_w = np.zeros(count, np.float32)
    surprise = np.full(count, np.nan, np.float32)
    for j, (node, idx) in enumerate(keep):
        board = game.boards[idx]
        if board.to_move != node.color:  # out-of-turn move in the record: the mover's view
            board = board.copy()
            board.to_move = node.color
        history = [board] + game.boards[idx - 1::-1][: P.HISTORY - 1] if idx > 0 else [board]
        encode_into(planes[j], history, rec.komi)
        target, kind = _policy_target(node, n)
        stats[kind] += 1
        if target is None:
            policy[j, node.move] = 1.0
        else:
            policy[j] = target
        surprise[j] = _surprise(node, idx)
        stats["azk"] += int(not np.isnan(surprise[j]))
        sign = 1.0 if node.color == BLACK else -1.0
        if black_outcome is not None:
            value[j] = sign * black_outcome
            value_w[j] = 1.0
        if finished:
            ownership[j] = final_owner * np.int8(sign)
            score[j] = sign * final_score
            final_w[j] = 1.0
    out.planes = np.packbits(planes[:, :STORED_PLANES].reshape(count, -1).astype(np.uint8), axis=1)
    out.komi = np.ascontiguousarray(planes[:, P.KOMI_PLANE, 0, 0])
    out.policy, out.value, out.value_w = policy, value, value_w
    out.ownership, out.score, out.final_w = ownership, score, final_w
    out.surprise = surprise
    out.stats = stats
    return out


def decode_file(path: str | os.PathLike) -> GameArrays:
    """Load and decode one SGF file; SgfError naming the problem if it cannot be used."""
    return decode_record(load_sgf(str(path)))


# ------------------------------------------------------------------------------------- cache

def _file_key(path: str, st: os.stat_result) -> str:
    text = f"{os.path.abspath(path)}|{st.st_mtime_ns}|{st.st_size}|d{DATASET_VERSION}|f{P.FEATURE_VERSION}"
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def cache_path(path: str, cache_dir: str | None, st: os.stat_result | None = None) -> Path:
    """Where the decoded arrays of SGF file ``path`` are cached (``cache_dir`` None: beside the file)."""
    st = st or os.stat(path)
    folder = Path(cache_dir) if cache_dir else Path(path).parent / CACHE_DIRNAME
    return folder / f"{Path(path).stem}-{_file_key(path, st)}.npz"


def save_cache(target: Path, arrays: GameArrays | None, error: str | None = None) -> None:
    """Write the arrays (or a cached decoding error) to ``target`` atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    payload: dict[str, np.ndarray] = {"version": np.array(DATASET_VERSION)}
    if arrays is None:
        payload["error"] = np.array(error or "unusable")
    else:
        payload["size"] = np.array(arrays.size)
        for name in GameArrays.ARRAYS:
            payload[name] = getattr(arrays, name)
        keys = sorted(arrays.stats)
        payload["stat_keys"] = np.array(keys)
        payload["stat_values"] = np.array([arrays.stats[k] for k in keys], np.int64)
    with atomic_target(target) as tmp, open(tmp, "wb") as f:  # a file object: np.savez would add .npz
        np.savez(f, **payload)


def load_cache(target: Path) -> GameArrays | str | None:
    """Cached arrays, the cached error text, or None when there is no usable cache file."""
    try:
        with np.load(target, allow_pickle=False) as z:
            if int(z["version"]) != DATASET_VERSION:
                return None
            if "error" in z.files:
                return str(z["error"])
            stats = {str(k): int(v) for k, v in zip(z["stat_keys"], z["stat_values"])}
            return GameArrays(int(z["size"]), *(z[name] for name in GameArrays.ARRAYS), stats=stats)
    except (OSError, ValueError, KeyError, EOFError):
        return None


def load_game(path: str, cache_dir: str | None = None, use_cache: bool = True) -> GameArrays | str:
    """Decoded arrays of one SGF file (from its cache when valid), or the error text if unusable."""
    try:
        st = os.stat(path)
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    target = cache_path(path, cache_dir, st) if use_cache else None
    if target is not None and target.exists():
        cached = load_cache(target)
        if cached is not None:
            return cached
    try:
        arrays: GameArrays | None = decode_file(path)
        error = None
    except SgfError as e:
        arrays, error = None, str(e)
    except (ValueError, IndexError, KeyError, RecursionError) as e:  # foreign data the engine rejects
        arrays, error = None, f"{type(e).__name__}: {e}"
    if target is not None:
        try:
            save_cache(target, arrays, error)
        except OSError:
            pass  # read-only archive: decode again next time
    return arrays if arrays is not None else str(error)


def _load_game_job(job: tuple[str, str | None, bool]) -> GameArrays | str:
    return load_game(*job)


# ------------------------------------------------------------------------------------- files
