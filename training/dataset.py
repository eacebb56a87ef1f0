"""Training data from SGF archives (numpy only; no torch): which games (the window, validation, source
shares) and loading them into `PositionSet` objects.

Sources: folders (searched recursively for ``*.sgf``), glob patterns and single files. Any SGF
collection works; azgo's self-play archives add search statistics (see :mod:`azgo.engine.sgf`).

How one game becomes training positions (targets, skipped nodes, the cache) is `azgo.training.game_arrays`;
positions and batches are `azgo.training.positions`. Both are re-exported here.

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
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from azgo.engine.atomic import remove_orphans
from azgo.engine.sgf import SgfError, parse_result, read_handicap  # noqa: F401 (SgfError, parse_result re-exported)

from .game_arrays import (  # noqa: F401 (re-exported: the dataset's names before the split)
    CACHE_DIRNAME, DATASET_VERSION, STORED_PLANES, DatasetError, GameArrays, Warn, _load_game_job, cache_path,
    decode_file, decode_record, load_cache, load_game, unpack_planes,
)
from .positions import PositionSet

SHARE_SLACK = 1e-4  # source shares come rounded (e.g. 6 digits on azgo loop's command line): a sum of 1.000001 is 1


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
    handicap_games: int = 0     # training games begun with 2+ handicap stones, when they are weighted
    handicap_positions: int = 0

    def as_dict(self) -> dict:
        return {"files": len(self.files), "train_games": self.train_games, "val_games": self.val_games,
                "train_positions": self.train_positions, "val_positions": self.val_positions,
                "skipped_files": self.skipped_files, "cheap_positions_skipped": self.cheap_skipped,
                "policy_targets": dict(self.targets), "source_weights": dict(self.weighted),
                **({"handicap_games": self.handicap_games, "handicap_positions": self.handicap_positions}
                   if self.handicap_games else {}),
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
    if use_cache and todo:  # a run killed while writing caches left temporary files there
        for folder in {cache_dir} if cache_dir else {os.path.join(os.path.dirname(files[i]), CACHE_DIRNAME)
                                                     for i in todo}:
            remove_orphans(folder)
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
                  names: Sequence[str] = (), groups: Sequence[str] = (), multipliers: Sequence[float] = ()
                  ) -> tuple[list[float], dict[str, dict[str, float]]]:
    """Per-game sample weights that give source ``i`` (``owner[g] == i``; -1: no listed source) the share
    ``shares[i]`` of the draws within each board size, the unlisted games the rest in proportion to their
    positions. Sources of one of ``groups`` (a name per source; "" for none) hold that share together,
    split by positions (each member lists the group's share). A size where the listed shares present sum
    over 1 is an error; one with no unlisted positions (or shares summing to exactly 1) has its listed
    shares scaled to fill it. ``multipliers`` (per game, default 1): within its source, a game's positions are
    drawn this many times as often as the others' (the source's share holds). Returns the weights and, per
    size, the shares drawn (``{"19": {"runs/sp19x": 0.4, "other": 0.6}}``)."""
    if any(not 0 <= s <= 1 for s in shares):
        raise DatasetError(f"source shares must be in [0, 1], got {list(shares)}")
    names = list(names) or [str(i) for i in range(len(shares))]
    groups = list(groups) or [""] * len(shares)
    key = [groups[i] or names[i] for i in range(len(shares))]  # sources of one group share one key
    first = {}
    for i, k in enumerate(key):
        first.setdefault(k, i)
    unit = [first[k] for k in key]  # a source -> the index that stands for its group
    mult = [float(m) for m in multipliers] or [1.0] * len(games)
    count: dict[int, dict[int, float]] = {}  # per size and source: positions, each counted by its multiplier
    mean: dict[int, int] = {}  # per size: positions (weights are scaled so that a size's mean weight is 1)
    for g, o, m in zip(games, owner, mult):
        if len(g):
            u = unit[o] if o >= 0 else -1
            count.setdefault(g.size, {}).setdefault(u, 0.0)
            count[g.size][u] += len(g) * m
            mean[g.size] = mean.get(g.size, 0) + len(g)
    per: dict[tuple[int, int], float] = {}  # shares a hair over 1 (rounded on a command line) are scaled to 1
    report: dict[str, dict[str, float]] = {}
    for n, c in count.items():
        listed = {u: shares[u] for u in c if u >= 0}
        total = sum(listed.values())
        if total > 1 + SHARE_SLACK:
            raise DatasetError(f"source shares of the {n}x{n} games sum to {total:.3f} > 1: "
                               + ", ".join(f"{key[u]} {sh:g}" for u, sh in listed.items()))
        rest = max(0.0, 1.0 - total) if -1 in c else 0.0
        scale = 1.0 / total if rest == 0 and total > 0 else 1.0
        report[str(n)] = {}
        for u, k in c.items():
            share = rest if u < 0 else listed[u] * scale
            per[(n, u)] = share / k if k > 0 else 0.0
            report[str(n)]["other" if u < 0 else key[u]] = round(share, 4)
    return [per.get((g.size, unit[o] if o >= 0 else -1), 0.0) * mean.get(g.size, 0) * m if len(g) else 1.0
            for g, o, m in zip(games, owner, mult)], report


def load_dataset(sources: Sequence[str] | None = None, *, files: Sequence[str] | None = None,
                 window: int | None = None, val_fraction: float = 0.05, cache_dir: str | None = None,
                 use_cache: bool = True, workers: int = 0, warn: Warn | None = None,
                 progress: Callable[[int], None] | None = None,
                 source_weights: Sequence[tuple[str, float, float]] = (),
                 source_shares: Sequence[tuple] = (), handicap_weight: float = 1.0
                 ) -> tuple[PositionSet, PositionSet, DataSummary]:
    """Training and validation `PositionSet` from ``sources`` (or an explicit ordered ``files`` list).

    ``source_weights``: ``(source, sample, policy)`` triples; the training games under ``source`` (a
    folder, or one file) get these weights (`PositionSet`); the first matching source wins. Validation
    stays unweighted. ``source_shares``: ``(source, share[, group])`` items that set the sample weights
    instead (see `share_weights`): the positions under ``source`` (with the rest of its group) make
    ``share`` of the draws of each board size's batches (policy weights still come from ``source_weights``).
    ``handicap_weight``: the positions of training games begun with 2 or more handicap stones (``HA``) are
    drawn this many times as often as the other positions of their source (with source shares, the source's
    share holds). Returns ``(train, validation, summary)``.
    """
    if handicap_weight < 0:
        raise DatasetError(f"handicap weight must be >= 0, got {handicap_weight}")
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
    mult = [1.0] * len(train)
    if handicap_weight != 1.0:
        for i, f in enumerate(train_files):
            if read_handicap(f) >= 2:
                mult[i] = float(handicap_weight)
                summary.handicap_games += 1
                summary.handicap_positions += len(train[i])
    if source_shares:
        share_roots = [os.path.realpath(item[0]) for item in source_shares]
        owner = [_match_source(f, share_roots) for f in train_files]
        sample, summary.shares = share_weights(train, owner, [float(item[1]) for item in source_shares],
                                               [str(item[0]) for item in source_shares],
                                               [str(item[2]) if len(item) > 2 else "" for item in source_shares],
                                               mult)
        weights = [(sw, w[1]) for sw, w in zip(sample, weights)]
    elif handicap_weight != 1.0:
        weights = [(w[0] * m, w[1]) for w, m in zip(weights, mult)]
    train_set, val_set = PositionSet(train, weights), PositionSet(val)
    summary.train_games, summary.val_games = train_set.games, val_set.games
    summary.train_positions, summary.val_positions = len(train_set), len(val_set)
    return train_set, val_set, summary
