"""Training positions from SGF archives (numpy only; no torch): decoding, caching, windows, batches.

Sources: folders (searched recursively for ``*.sgf``), glob patterns and single files. Any SGF
collection works; azgo's self-play archives add search statistics (see :mod:`azgo.engine.sgf`).

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

`load_dataset` picks the window (the ``window`` most recent games by file mtime, then name), holds
out a deterministic ~``val_fraction`` of games (by a hash of the file's base name), decodes
(in parallel worker processes if asked) and returns two `PositionSet` objects. Batches
(`PositionSet.sample`) draw positions uniformly (or, with a surprise weight, partly in proportion to
``AZK``), one board size per batch, and apply one of the 8 symmetries per sample, consistently to
planes, policy and ownership.

Source weights (`load_dataset`'s ``source_weights``): the games of one source (a folder or file) can be
drawn more or less often than the rest (``sample`` weight, relative to 1) and can carry a smaller policy
loss (``policy`` weight, 0 to 1; a batch's ``policy_w``), e.g. games against an outside opponent whose
value targets are wanted more than its moves.
"""

from __future__ import annotations

import glob
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from azgo.engine import planes as P
from azgo.engine import symmetry as sym
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
        target = None
        for prop in ("AZX", "AZP"):
            text = node.props.get(prop)
            if text is not None and text.strip():
                target = _visit_target(text, n)
                if target is not None:
                    stats[prop.lower()] += 1
                    break
        if target is None:
            stats["played"] += 1
            policy[j, node.move] = 1.0
        else:
            policy[j] = target
        kl = node.props.get("AZK", "").strip()
        if kl:
            try:
                value_kl = float(kl)
            except ValueError:
                value_kl = float("nan")
            if not np.isfinite(value_kl):
                raise SgfError(f"malformed AZK[{kl}] at move {idx}")
            surprise[j] = max(0.0, value_kl)
            stats["azk"] += 1
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
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **payload)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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

def find_sgf_files(sources: Iterable[str]) -> list[str]:
    """SGF files named by ``sources``: folders (recursive ``*.sgf``), glob patterns, or files.

    Hidden files and folders (names starting with ``.``, e.g. temporary files and caches) are left
    out. Duplicates are removed. Raises DatasetError for a source that matches nothing.
    """
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)

    for src in sources:
        matched = False
        if os.path.isdir(src):
            for root, dirs, files in os.walk(src):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.lower().endswith(".sgf") and not name.startswith("."):
                        add(os.path.join(root, name))
                        matched = True
            matched = True  # an empty folder is not an error (no games yet)
        elif os.path.isfile(src):
            add(src)
            matched = True
        else:
            for p in sorted(glob.glob(src, recursive=True)):
                if os.path.isfile(p) and not os.path.basename(p).startswith("."):
                    add(p)
                    matched = True
                elif os.path.isdir(p):
                    for q in find_sgf_files([p]):
                        add(q)
                    matched = True
        if not matched:
            raise DatasetError(f"no SGF files match {src!r}")
    return out


def select_window(files: Sequence[str], window: int | None) -> list[str]:
    """The ``window`` most recent files (by mtime, then name), oldest first; all when window is None/0."""
    keyed = []
    for f in files:
        try:
            keyed.append((os.stat(f).st_mtime_ns, os.path.basename(f), f))
        except OSError:
            continue
    keyed.sort()
    chosen = [f for _, _, f in keyed]
    if window:
        chosen = chosen[-window:]
    return chosen


def is_validation(path: str, fraction: float) -> bool:
    """Whether a game belongs to the held-out validation slice: a hash of its base name < fraction."""
    if fraction <= 0:
        return False
    h = int.from_bytes(hashlib.sha1(os.path.basename(path).encode()).digest()[:8], "big")
    return h / 2.0 ** 64 < fraction


# ------------------------------------------------------------------------------------- position sets

class PositionSet:
    """Positions of many games, concatenated per board size, with batch builders."""

    def __init__(self, games: Sequence[GameArrays] = (),
                 weights: Sequence[tuple[float, float]] | None = None) -> None:
        """``weights``: per game, ``(sample, policy)``: its positions' relative sampling weight and the
        weight of their policy loss (default ``(1, 1)`` for every game)."""
        if weights is not None and len(weights) != len(games):
            raise DatasetError("weights needs one (sample, policy) pair per game")
        by_size: dict[int, list[tuple[GameArrays, tuple[float, float]]]] = {}
        for i, g in enumerate(games):
            if len(g):
                w = (1.0, 1.0) if weights is None else (float(weights[i][0]), float(weights[i][1]))
                if w[0] < 0 or not 0 <= w[1] <= 1:
                    raise DatasetError(f"sample weight must be >= 0 and policy weight in [0, 1], got {w}")
                by_size.setdefault(g.size, []).append((g, w))
        self.arrays: dict[int, dict[str, np.ndarray]] = {}
        for n in sorted(by_size):
            group = by_size[n]
            self.arrays[n] = {name: np.concatenate([getattr(g, name) for g, _ in group])
                              for name in GameArrays.ARRAYS}
            self.arrays[n]["sample_w"] = np.concatenate(
                [np.full(len(g), w[0], np.float64) for g, w in group])
            self.arrays[n]["policy_w"] = np.concatenate(
                [np.full(len(g), w[1], np.float32) for g, w in group])
        self.games = sum(1 for g in games if len(g))
        self.sizes = sorted(self.arrays)
        self.counts = np.array([len(self.arrays[n]["value"]) for n in self.sizes], np.int64)
        self._cum: dict[int, np.ndarray] = {}  # per size: cumulative sampling weights (source, surprise)
        self._size_p = np.zeros(0)  # per size: probability of a batch (set_size_mix)
        self.set_size_mix(None)
        self.set_surprise_weight(0.0)

    def set_size_mix(self, mix: dict[int, float] | None) -> dict[int, float]:
        """Choose each batch's board size with these relative weights (``{19: 0.6, 13: 0.3, 9: 0.1}``)
        instead of in proportion to the positions of each size; sizes in the data but not in ``mix`` are
        never drawn, sizes in ``mix`` but not in the data are an error. ``None`` or ``{}`` restores the
        proportional mix. Returns the probabilities now used, by size."""
        if not mix:
            self._size_p = self.counts / self.counts.sum() if len(self.sizes) else self.counts.astype(np.float64)
        else:
            missing = sorted(set(mix) - set(self.sizes))
            if missing:
                raise DatasetError(f"size mix names board sizes with no positions: {missing} "
                                   f"(the data has {self.sizes})")
            if any(w < 0 for w in mix.values()):
                raise DatasetError("size mix weights must be >= 0")
            w = np.array([float(mix.get(n, 0.0)) for n in self.sizes])
            if w.sum() <= 0:
                raise DatasetError("size mix weights sum to 0")
            self._size_p = w / w.sum()
        return {n: float(p) for n, p in zip(self.sizes, self._size_p)}

    def drop_final_targets(self, max_margin: float) -> int:
        """Remove the ownership and score targets (``final_w`` = 0) of positions whose game ended with an
        area margin above ``max_margin`` times the board's area: games played out until one side's
        stones were all dead (a loser that filled its own eyes rather than pass) teach that everything
        dies. 0 keeps every target. Returns how many positions lost their final targets."""
        if max_margin < 0:
            raise DatasetError(f"max final margin must be >= 0, got {max_margin}")
        if max_margin == 0:
            return 0
        dropped = 0
        for n in self.sizes:
            a = self.arrays[n]
            bad = (a["final_w"] > 0) & (np.abs(a["score"]) > max_margin * n * n)
            dropped += int(bad.sum())
            a["final_w"][bad] = 0.0
        return dropped

    def set_surprise_weight(self, weight: float) -> int:
        """Sample by policy surprise (KataGo's policy surprise weighting): of every position's sampling
        weight, ``1 - weight`` is uniform and ``weight`` is in proportion to its ``surprise`` (AZK)
        relative to the mean surprise of the positions of its board size that have one, so the mean
        weight stays 1; positions without AZK keep weight 1. 0 turns it off. Returns how many
        positions carry a surprise. The source weights (see `__init__`) multiply these weights."""
        if not 0.0 <= weight <= 1.0:
            raise DatasetError(f"surprise weight must be in [0, 1], got {weight}")
        self._cum = {}
        have = 0
        for n in self.sizes:
            k = self.arrays[n]["surprise"].astype(np.float64)
            base = self.arrays[n]["sample_w"]
            known = np.isfinite(k)
            have += int(known.sum())
            w = np.ones(len(k))
            if weight > 0.0 and known.any():
                mean = float(k[known].mean())
                if mean > 0:
                    w[known] = (1.0 - weight) + weight * k[known] / mean
            w = w * base
            if np.all(w == 1.0):
                continue  # uniform: plain integers are faster
            if w.sum() <= 0:
                raise DatasetError(f"every {n}x{n} position has sampling weight 0")
            self._cum[n] = np.cumsum(w)
        return have

    def __len__(self) -> int:
        return int(self.counts.sum())

    def count(self, key: str) -> float:
        """Sum of an array over all sizes (e.g. ``value_w`` = positions with a value target)."""
        return float(sum(a[key].sum() for a in self.arrays.values()))

    def batch(self, size: int, index: np.ndarray, symmetries: np.ndarray | int = 0) -> dict[str, np.ndarray]:
        """The batch of positions ``index`` of board size ``size`` with symmetry ``symmetries[i]``.

        Returns float32 arrays: ``planes`` [B, 26, N, N] (komi plane filled in), ``policy`` [B, N*N+1],
        ``value``, ``value_w``, ``ownership`` [B, N*N], ``score``, ``final_w``, ``policy_w`` (the
        policy loss weight of the position's source).
        """
        a = self.arrays[size]
        index = np.asarray(index, np.int64)
        b = len(index)
        ks = np.broadcast_to(np.asarray(symmetries, np.int64), (b,))
        n = size
        planes = np.empty((b, P.NUM_PLANES, n, n), np.float32)
        policy = np.empty((b, n * n + 1), np.float32)
        ownership = np.empty((b, n * n), np.float32)
        src_planes = unpack_planes(a["planes"][index], n)
        src_policy, src_own = a["policy"][index], a["ownership"][index]
        for k in np.unique(ks):
            sel = np.flatnonzero(ks == k)
            perm = sym.policy_permutation(int(k), n)
            planes[sel, :STORED_PLANES] = sym.apply_planes(src_planes[sel], int(k))
            policy[sel] = src_policy[sel][:, perm]
            ownership[sel] = src_own[sel][:, perm[:-1]]
        planes[:, P.KOMI_PLANE] = a["komi"][index][:, None, None]
        return {
            "planes": planes, "policy": policy, "ownership": ownership,
            "value": a["value"][index], "value_w": a["value_w"][index],
            "score": a["score"][index], "final_w": a["final_w"][index],
            "policy_w": a["policy_w"][index],
        }

    def sample(self, rng: np.random.Generator, batch_size: int, augment: bool = True) -> dict[str, np.ndarray]:
        """A random batch: one board size (in proportion to its positions, or by `set_size_mix`), positions drawn
        with replacement (uniformly, or by the source weights and `set_surprise_weight`), one random symmetry per sample
        when ``augment``."""
        if len(self) == 0:
            raise DatasetError("no positions to sample from")
        j = int(rng.choice(len(self.sizes), p=self._size_p)) if len(self.sizes) > 1 else 0
        n = self.sizes[j]
        cum = self._cum.get(n)
        if cum is None:
            index = rng.integers(0, int(self.counts[j]), size=batch_size)
        else:
            index = np.searchsorted(cum, rng.random(batch_size) * cum[-1], side="right")
            index = np.minimum(index, int(self.counts[j]) - 1)
        ks = rng.integers(0, sym.NUM_SYMMETRIES, size=batch_size) if augment else 0
        return self.batch(n, index, ks)

    def fixed_batches(self, limit: int, batch_size: int, seed: int = 12345) -> list[dict[str, np.ndarray]]:
        """Up to ``limit`` positions spread evenly over the set (identity symmetry), in batches; the
        same every call (for validation)."""
        total = len(self)
        if total == 0:
            return []
        out = []
        for n, count in zip(self.sizes, self.counts):
            take = int(min(count, max(1, round(limit * count / total))))
            index = np.unique(np.linspace(0, count - 1, take).round().astype(np.int64))
            for s in range(0, len(index), batch_size):
                out.append(self.batch(n, index[s:s + batch_size], 0))
        return out


# ------------------------------------------------------------------------------------- loading

@dataclass
class DataSummary:
    """What `load_dataset` found (for logs and the checkpoint's provenance)."""

    files: list[str]            # the window, oldest first (training and validation games)
    train_games: int = 0
    val_games: int = 0
    train_positions: int = 0
    val_positions: int = 0
    skipped_files: int = 0
    shares: dict = field(default_factory=dict)  # with source shares: per board size, the share of each source
    cheap_skipped: int = 0
    decoded: int = 0            # files decoded now (not from the cache)
    targets: dict = field(default_factory=dict)  # azx / azp / played counts (and azk: positions with AZK)
    weighted: dict = field(default_factory=dict)  # source -> training games given its source weights

    def as_dict(self) -> dict:
        return {"files": len(self.files), "train_games": self.train_games, "val_games": self.val_games,
                "train_positions": self.train_positions, "val_positions": self.val_positions,
                "skipped_files": self.skipped_files, "cheap_positions_skipped": self.cheap_skipped,
                "policy_targets": dict(self.targets), "source_weights": dict(self.weighted),
                **({"source_shares": self.shares} if self.shares else {})}


def _cached_or_none(path: str, cache_dir: str | None) -> GameArrays | str | None:
    try:
        target = cache_path(path, cache_dir)
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    return load_cache(target) if target.exists() else None


def load_games(files: Sequence[str], cache_dir: str | None = None, use_cache: bool = True,
               workers: int = 0, warn: Warn | None = None,
               progress: Callable[[int], None] | None = None) -> list[GameArrays | None]:
    """Decode ``files`` (from the cache where valid); unusable ones are warned about and give None.

    Files without a valid cache are decoded in ``workers`` processes (0: one per core, capped at 4,
    when at least 32 files need decoding; 1: in this process).
    """
    results: list[GameArrays | str | None] = [None] * len(files)
    todo = []
    for i, f in enumerate(files):
        r = _cached_or_none(f, cache_dir) if use_cache else None
        if r is None:
            todo.append(i)
        else:
            results[i] = r
            if progress:
                progress(1)
    if workers <= 0:
        workers = min(os.cpu_count() or 1, 4) if len(todo) >= 32 else 1
    jobs = [(files[i], cache_dir, use_cache) for i in todo]
    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        chunk = max(1, min(32, len(jobs) // (4 * workers)))
        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
            for i, r in zip(todo, pool.map(_load_game_job, jobs, chunksize=chunk)):
                results[i] = r
                if progress:
                    progress(1)
    else:
        for i, job in zip(todo, jobs):
            results[i] = load_game(*job)
            if progress:
                progress(1)
    out: list[GameArrays | None] = []
    for f, r in zip(files, results):
        if isinstance(r, str) or r is None:
            if warn:
                warn(f"skipping {f}: {r}")
            out.append(None)
        else:
            out.append(r)
    return out


def _match_source(path: str, roots: Sequence[str]) -> int:
    """The index of the first of ``roots`` (real paths) that holds ``path``, else -1."""
    real = os.path.realpath(path)
    for i, root in enumerate(roots):
        if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
            return i
    return -1


def share_weights(games: Sequence[GameArrays], owner: Sequence[int], shares: Sequence[float],
                  names: Sequence[str] = (), groups: Sequence[str] = ()
                  ) -> tuple[list[float], dict[str, dict[str, float]]]:
    """Per-game sample weights that give source ``i`` (``owner[g] == i``; -1: no listed source) the share
    ``shares[i]`` of the draws within each board size, the unlisted games the rest in proportion to their
    positions. Sources of one of ``groups`` (a name per source; "" for none) hold that share together,
    split by positions (each member lists the group's share). A size where the listed shares present sum
    over 1 is an error; one with no unlisted positions (or shares summing to exactly 1) has its listed
    shares scaled to fill it. Returns the weights and, per size, the shares drawn
    (``{"19": {"runs/sp19x": 0.4, "other": 0.6}}``)."""
    if any(not 0 <= s <= 1 for s in shares):
        raise DatasetError(f"source shares must be in [0, 1], got {list(shares)}")
    names = list(names) or [str(i) for i in range(len(shares))]
    groups = list(groups) or [""] * len(shares)
    key = [groups[i] or names[i] for i in range(len(shares))]  # sources of one group share one key
    first = {}
    for i, k in enumerate(key):
        first.setdefault(k, i)
    unit = [first[k] for k in key]  # a source -> the index that stands for its group
    count: dict[int, dict[int, int]] = {}
    for g, o in zip(games, owner):
        if len(g):
            u = unit[o] if o >= 0 else -1
            count.setdefault(g.size, {}).setdefault(u, 0)
            count[g.size][u] += len(g)
    per: dict[tuple[int, int], float] = {}
    report: dict[str, dict[str, float]] = {}
    for n, c in count.items():
        listed = {u: shares[u] for u in c if u >= 0}
        total = sum(listed.values())
        if total > 1 + 1e-9:
            raise DatasetError(f"source shares of the {n}x{n} games sum to {total:.3f} > 1: "
                               + ", ".join(f"{key[u]} {sh:g}" for u, sh in listed.items()))
        rest = max(0.0, 1.0 - total) if -1 in c else 0.0
        scale = 1.0 / total if rest == 0 and total > 0 else 1.0
        report[str(n)] = {}
        for u, k in c.items():
            share = rest if u < 0 else listed[u] * scale
            per[(n, u)] = share / k
            report[str(n)]["other" if u < 0 else key[u]] = round(share, 4)
    mean = {n: sum(c.values()) for n, c in count.items()}  # weights scaled so a size's mean weight is 1
    return [per.get((g.size, unit[o] if o >= 0 else -1), 0.0) * mean.get(g.size, 0) if len(g) else 1.0
            for g, o in zip(games, owner)], report


def load_dataset(sources: Sequence[str] | None = None, *, files: Sequence[str] | None = None,
                 window: int | None = None, val_fraction: float = 0.05, cache_dir: str | None = None,
                 use_cache: bool = True, workers: int = 0, warn: Warn | None = None,
                 progress: Callable[[int], None] | None = None,
                 source_weights: Sequence[tuple[str, float, float]] = (),
                 source_shares: Sequence[tuple] = ()
                 ) -> tuple[PositionSet, PositionSet, DataSummary]:
    """Training and validation `PositionSet` from ``sources`` (or an explicit ordered ``files`` list).

    ``source_weights``: ``(source, sample, policy)`` triples; the training games under ``source`` (a
    folder, or one file) get these weights (`PositionSet`); the first matching source wins. Validation
    stays unweighted. ``source_shares``: ``(source, share[, group])`` items that set the sample weights
    instead (see `share_weights`): the positions under ``source`` (with the rest of its group) make
    ``share`` of the draws of each board size's batches (policy weights still come from ``source_weights``). Returns ``(train, validation,
    summary)``.
    """
    if files is None:
        files = select_window(find_sgf_files(sources or []), window)
    files = list(files)
    games = load_games(files, cache_dir, use_cache, workers, warn, progress)
    summary = DataSummary(files=files)
    train, val, weights, train_files = [], [], [], []
    roots = [(os.path.realpath(src), float(w), float(pw)) for src, w, pw in source_weights]
    matched = [0] * len(roots)
    targets = {"azx": 0, "azp": 0, "played": 0, "azk": 0}
    for f, g in zip(files, games):
        if g is None:
            summary.skipped_files += 1
            continue
        summary.cheap_skipped += g.stats.get("cheap", 0)
        for k in targets:
            targets[k] += g.stats.get(k, 0)
        if is_validation(f, val_fraction):
            val.append(g)
            continue
        train.append(g)
        train_files.append(f)
        w = (1.0, 1.0)
        real = os.path.realpath(f)
        for i, (root, sw, pw) in enumerate(roots):
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                w = (sw, pw)
                matched[i] += 1
                break
        weights.append(w)
    summary.targets = targets
    summary.weighted = {src: m for (src, _, _), m in zip(source_weights, matched)}
    if source_shares:
        share_roots = [os.path.realpath(item[0]) for item in source_shares]
        owner = [_match_source(f, share_roots) for f in train_files]
        sample, summary.shares = share_weights(train, owner, [float(item[1]) for item in source_shares],
                                               [str(item[0]) for item in source_shares],
                                               [str(item[2]) if len(item) > 2 else "" for item in source_shares])
        weights = [(sw, w[1]) for sw, w in zip(sample, weights)]
    train_set, val_set = PositionSet(train, weights), PositionSet(val)
    summary.train_games, summary.val_games = train_set.games, val_set.games
    summary.train_positions, summary.val_positions = len(train_set), len(val_set)
    return train_set, val_set, summary
