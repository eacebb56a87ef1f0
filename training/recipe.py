"""Training recipes: one TOML file that says everything a generation of ``azgo loop --recipe`` does.

A recipe is versioned (``version = 1``) and read whole before any work: every field is checked here,
and a bad one fails with a ``RecipeError`` that names it (``selfplay.komi.stdev: must be >= 0, got -1``),
so a typo never costs an hour of self-play. The sections, each documented field by field in
``recipes/README.md`` and in the dataclasses below:

* ``[start]`` where the lineage begins when nothing was published yet: a training checkpoint (or a
  random network of ``net`` size) and, optionally, the exported networks of that checkpoint by board size
  (the first gate's opponent);
* ``[lineage]`` where each generation's resume state is published inside the repository: the best
  checkpoint, ``lineage.json`` and the ladder in ``dir``, the self-play games as compressed shards in
  ``data``; a fresh clone and the same command continue from there;
* ``[sizes]`` the share of each board size in the self-play games;
* ``[selfplay]`` visits and playout-cap randomisation, workers, resignation; ``[selfplay.openings]``
  forked starts; ``[selfplay.komi]`` the komi distribution around each size's fair komi;
  ``[selfplay.handicap]`` the share of handicap games;
  ``[selfplay.opponent]`` the share of games against an outside engine (GNU Go, Pachi);
  ``[selfplay.by_size.N]`` how board size N's games differ from the rest (forked starts, komi, handicap,
  opponent, visits: any field above but the number of games and the workers);
* ``[window]`` what training reads: the lineage's own last ``generations`` (their share of the draws and
  a recency factor) and ``[[window.sources]]`` other game folders or shard folders with shares;
* ``[training]`` steps, batch, learning-rate schedule, loss weights, sampling;
* ``[export]`` the board sizes whose batch-norm statistics each exported network is recalibrated on;
* ``[quantize]`` int8 copies: calibration positions and the accuracy bar that decides which layers
  stay fp32;
* ``[gate]`` the candidate's match before promotion: opponent, games, time per move, decision rule
  (a fixed threshold or an SPRT), fixed here before any game;
* ``[[anchors]]`` lines against outside engines (GNU Go, Pachi) under one clock for both engines;
* ``[promotion]`` which registry entries a promoted network replaces (and where the registry is);
* ``[stop]`` when the loop stops by itself: generations in a row that moved nothing (``patience``, ``lines``);
* ``[[from_generation]]`` changes decided ahead: each entry names a ``generation`` and holds sections (or
  parts of them) that replace the recipe's own from that generation on, so that an unattended loop takes a
  change at a generation's start, never in the middle of one (see `Recipe.at_generation`).

Paths in a recipe are relative to its ``root`` (default: the folder above the recipe file, the
repository root for ``recipes/*.toml``). Nothing here imports torch.
"""

from __future__ import annotations

import glob
import hashlib
import math
import os
import sys
from dataclasses import MISSING as _MISSING
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPE_VERSION = 1
ENGINES = ("best", "gnugo", "pachi")  # opponents known by name; anything else is a GTP command line


class RecipeError(ValueError):
    """A recipe that cannot run; the message starts with the file and the field."""


# ------------------------------------------------------------------------------------------ schema

@dataclass(frozen=True)
class Start:
    """Generation 0 of a lineage that has published nothing yet.

    checkpoint: a training checkpoint (``.pt``) to start from; none: a random network of size ``net``.
    nets: that checkpoint's networks by board size (``{19 = "nets/large19.onnx"}``), the first gate's
        opponent; sizes left out are exported from the checkpoint at the start.
    """

    checkpoint: str = ""
    net: str = "b6c64"
    nets: dict = field(default_factory=dict)
    seed: int = 0


@dataclass(frozen=True)
class Lineage:
    """The published resume state. dir: best checkpoint + ``lineage.json`` + ladder (relative to root;
    empty: publish nothing, the run folder alone resumes). data: the folder whose ``<name>-gNNNN``
    subfolders receive each generation's self-play as compressed shards (empty: not published)."""

    dir: str = ""
    data: str = ""


@dataclass(frozen=True)
class Openings:
    """Forked starts: ``fraction`` of the even games begin with the first ``min_moves``..``max_moves`` moves
    of a random game of ``sources`` (folders of SGF or of shards; glob patterns allowed), played without
    search, not trained on; with ``lost_by``, only games lost by a player whose name contains it (e.g.
    "azgo": the games lost to an anchor, forked where the misjudgement began). ``around_peak = [before, after]``
    (with ``lost_by``): each lost game forks between ``before`` moves before and ``after`` moves after the
    position, within its first ``max_moves`` moves, where the best network counted the loser furthest ahead
    (`azgo.training.fork_peaks`), instead of anywhere in ``min_moves..max_moves``. ``around_ko = [before,
    after]`` (with ``lost_by``, not with ``around_peak``): around each lost game's first ko capture within its
    first ``max_moves`` moves instead (games without one are left out)."""

    sources: tuple = ()
    fraction: float = 0.0
    min_moves: int = 1
    max_moves: int = 8
    lost_by: str = ""
    around_peak: tuple = ()
    around_ko: tuple = ()


@dataclass(frozen=True)
class Komi:
    """Each game's komi: ``fair[size]`` plus a normal spread of ``stdev`` points, or in ``wide_fraction`` of
    the games uniform over ``range``; rounded to 0.5 and kept inside ``range``."""

    fair: dict = field(default_factory=lambda: {7: 9.0, 9: 7.0, 13: 7.5, 19: 7.5})
    stdev: float = 0.0
    wide_fraction: float = 0.0
    range: tuple = (-10.0, 20.0)


@dataclass(frozen=True)
class Handicap:
    """``fraction`` of the games start from ``stones`` (fewest, most) fixed handicap stones, komi ``komi``;
    ``resign = false`` plays every such game out, so that each one gives score and ownership targets."""

    fraction: float = 0.0
    stones: tuple = (2, 9)
    komi: float = 0.5
    resign: bool = True


@dataclass(frozen=True)
class Opponent:
    """``fraction`` of the self-play games are the best network against an outside ``engine`` (``gnugo`` at
    ``level``, ``pachi`` at ``playouts`` a move, or a GTP command line): its moves are not trained on, azgo's
    are, valued by how the game ended. Forked games (``[selfplay.openings]``) are against it at
    ``fork_fraction`` instead when that is set (>= 0), and with ``fork_side = "winner"`` it plays the colour
    that won the game the start comes from: it goes on from where it (or another engine) took the game."""

    engine: str = ""
    level: int = 10
    playouts: int = 5000  # Pachi's fixed search a move (``-t =N``): self-play games have no clock
    fraction: float = 0.0
    fork_fraction: float = -1.0  # of the forked games, the share against it (negative: ``fraction`` too)
    fork_side: str = "any"  # forked games: "any" colour, or "winner": the side that won the game forked from


@dataclass(frozen=True)
class SelfPlay:
    """games: per generation, split over ``[sizes]``; the rest as ``azgo selfplay`` takes them
    (``workers``: processes, 0 = one per core)."""

    games: int = 200
    full_visits: int = 160
    cheap_visits: int = 32
    full_prob: float = 0.25
    precision: str = "int8"
    workers: int = 0
    concurrent_games: int = 16
    resign_threshold: float = 0.05
    no_resign_fraction: float = 0.1
    max_moves: int = 0
    openings: Openings = field(default_factory=Openings)
    komi: Komi = field(default_factory=Komi)
    handicap: Handicap = field(default_factory=Handicap)
    opponent: Opponent = field(default_factory=Opponent)
    gumbel_m: int = 0
    nets: str = "best"  # who plays: "best" (the best generation's network of the size) or "packaged" (the file
    #                     promotion.entries gives the size, as its lines last decided it)


@dataclass(frozen=True)
class Source:
    """A game folder (SGF, or ``data/`` shards; a glob pattern names several, which hold ``share`` together)
    trained on with ``share`` of the draws of its board size (``size``: the one size it holds, so the
    shares of a size can be checked before any work); ``policy_weight`` scales its policy loss."""

    path: str = ""
    share: float = 0.0
    size: int = 0
    policy_weight: float = 1.0


@dataclass(frozen=True)
class Window:
    """generations: the lineage's newest generations trained on; selfplay_share: their share of the draws
    of each self-play size; recency: each generation's share relative to the next newer one (1: by
    positions); sources: other games; size_generations: board size = the newest generations whose games of
    that size are trained on, where it differs from ``generations``."""

    generations: int = 4
    selfplay_share: float = 1.0
    recency: float = 1.0
    sources: tuple = ()
    size_generations: dict = field(default_factory=dict)  # board size -> its own ``generations`` (fewer or more)


@dataclass(frozen=True)
class Training:
    """As ``azgo train`` takes them. ``init``: the checkpoint each generation's training starts from: ``best``
    (the best network's), or ``latest`` (the last trained generation's, promoted or not: Leela Zero's way, so
    that gains its gate could not yet confirm carry on; self-play and the gate still use the best). ``net``: a
    deeper network size (``b10c64``) that training grows the init checkpoint into first (`azgo.training.grow`:
    the grown network computes what the init computes, new blocks start as identities); empty: the init's size.
    The gate then decides at equal time whether the larger network plays better than the best one."""

    init: str = "best"
    net: str = ""

    steps: int = 1000
    batch_size: int = 256
    lr: float = 0.02
    lr_steps: tuple = ()
    lr_decay: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-4
    loss_weights: dict = field(default_factory=lambda: {"policy": 1.0, "value": 1.0, "ownership": 0.5,
                                                        "score": 0.2})
    surprise_weight: float = 0.0
    max_final_margin: float = 0.0
    komi_augment: float = 0.0
    handicap_weight: float = 1.0
    komi_inputs: bool = False
    size_mix: dict = field(default_factory=dict)
    val_fraction: float = 0.05
    threads: int = 0
    seed: int = 0


@dataclass(frozen=True)
class Export:
    """One network per size of ``bn_sizes``, its batch-norm statistics recalibrated on that size's
    positions of the generation's self-play (or of the window)."""

    bn_sizes: tuple = ()
    bn_batches: int = 64


@dataclass(frozen=True)
class Quantize:
    """int8 copies (``enabled``): calibrated on ``calibration_positions`` positions of the generation's
    games, with quantize's default layers in fp32 (stem, value/score/ownership head, global-pooling
    matrices); while the value MAE against fp32 exceeds ``max_value_mae``, the next node of ``keep_fp32``
    is left in fp32 as well (in order); the copy that first meets the bar is kept, and recorded.
    ``percentile`` > 0 takes each activation range at that percentile of the calibration values instead of
    their extremes (MinMax); the weights stay 7-bit, so the file runs in int8 on every CPU. ``percentiles``
    lists several such rules (0 = MinMax): each copy is made, and the one whose score lead is closest to
    fp32's (median over positions held out of the calibration) is kept: which rule wins varies by network.
    ``vnni_percentiles`` lists rules (0 = MinMax) for a second copy with 8-bit weights, ``<net>.int8-vnni.onnx``,
    which ``azgo analysis`` uses in place of the 7-bit copy on a CPU with VNNI (same speed, closer to fp32):
    the closest of them is kept only if it is closer than the 7-bit copy kept and within ``max_value_mae``.
    ``vnni_keep_fp32``: nodes the 8-bit copies keep in fp32 beyond the 7-bit copy's (e.g. whole residual
    blocks: slower, closer to fp32)."""

    enabled: bool = True
    calibration_positions: int = 400
    max_value_mae: float = 0.05
    keep_fp32: tuple = ()
    percentile: float = 0.0
    percentiles: tuple = ()
    vnni_percentiles: tuple = ()
    vnni_keep_fp32: tuple = ()


@dataclass(frozen=True)
class Match:
    """A line of games: ``opponent`` (best | gnugo | pachi | a GTP command line), ``games``, ``size``,
    ``komi``, the candidate's ``seconds`` a move (or ``visits``: 0 = by time), ``threads`` for azgo,
    ``handicap`` stones (azgo White), ``level`` for GNU Go. Under ``same_clock`` both engines receive
    the time setting (byo-yomi of ``seconds`` a move): the opponent spends it too. ``parallel`` sub-lines
    play at once (each in its own folder, one core each), as the campaign ran its lines. An anchor line
    runs every ``every`` generations (1: each one). ``net_size``: the exported network that plays, by the
    board size of its batch-norm statistics (0: the line's own size), e.g. the 19x19 network on 13x13 as the
    registry gives it to users there. ``early_stop``: azgo's ``--early-stop`` in this line ("always" or
    "banked"; empty: azgo's default), so that a ladder keeps the search its earlier generations were measured
    with when azgo's default changes. ``played_out``: an anchor line of ``promotion.lines`` that is played is
    played to its last game even once it can no longer reach a card (``stop_early`` still decides whether it
    is played at all), so that its record is a whole line, comparable with another generation's."""

    name: str = "gate"
    opponent: str = "best"
    games: int = 12
    size: int = 19
    komi: float = 7.5
    seconds: float = 1.0
    visits: int = 0
    threads: int = 1
    handicap: int = 0
    level: int = 10
    same_clock: bool = True
    parallel: int = 1
    every: int = 1
    net_size: int = 0
    early_stop: str = ""
    played_out: bool = False


@dataclass(frozen=True)
class Gate(Match):
    """The promotion match; ``rule``: "threshold" (the candidate's score >= ``threshold`` after all games)
    or "sprt" (Wald's test of ``elo0`` against ``elo1`` at ``alpha``/``beta``, stopped when decided;
    undecided after ``games``: rejected)."""

    rule: str = "threshold"
    threshold: float = 0.55
    elo0: float = 0.0
    elo1: float = 35.0
    alpha: float = 0.05
    beta: float = 0.05


@dataclass(frozen=True)
class Promotion:
    """entries: the registry file (or files) per exported network's board size that a promoted network
    replaces, with its card: ``{19 = "large19.onnx"}``, or ``{19 = ["large19.onnx", "large13.onnx"]}`` where one
    exported network may go into two entries of the registry (each serving its own board sizes, its
    ``registry.json`` range; a file not yet there serves its key's size only); registry: the folder of
    ``registry.json`` (relative to root; default the package's nets/).
    ``lines``: names of anchor lines that decide packaging. A generation its gate promotes becomes the best
    network (the lineage goes on from it) but replaces a registry file only if, on each of these lines that
    decides it (played by the file's network, on a board size the file serves), it scores at least what that
    file's card records for a line on the same terms (opponent and its level, board, komi, handicap, seconds,
    threads, games); a line the card has no record of does not hold it back. Each file is decided on its own
    board sizes: a generation may replace the 19x19 file and leave the 13x13 one (see `files`). The gate decides
    the lineage, these lines what users play. ``stop_early`` (default true): these lines are played only when
    they can still decide something: not at all for a generation its gate did not promote, nor once every file
    a line decides is already held back by an earlier line, and a line ends as soon as it can no longer reach
    any of its files' card scores (its record then says ``stopped``); a line that can package is always played
    in full.
    ``by_lines_alone``: exported board sizes (keys of ``entries``) whose registry files the lines decide without
    the gate: a generation its gate did not promote (the lineage stays on the best network) still replaces such a
    file when the lines that decide it score at least its card (at least one of them compared with a card line on
    the same terms), and those lines are played for it. The gate plays one board size; a network exported for
    another is then judged by games on its own size.
    ``margins``: {name of a line of ``lines``: points (wins + draws / 2) of its games that it may score below the
    card's line and still hold it}, for a line that guards against a loss rather than one that must climb: the
    card's record was the best of the lines played so far, and a network as strong scores below it half
    the time or more. Lines not named have no margin (at least the card's score)."""

    entries: dict = field(default_factory=dict)
    registry: str = "nets"
    lines: tuple = ()
    stop_early: bool = True
    by_lines_alone: tuple = ()
    margins: dict = field(default_factory=dict)

    def margin(self, line: str) -> float:
        """The points line ``line`` may score below its card line and still hold it (``margins``; 0)."""
        return float(self.margins.get(line, 0.0))

    def files(self) -> list[tuple[int, str]]:
        """(board size of the exported network, registry file) of every entry, by size, then as written."""
        return [(n, f) for n, fs in sorted(self.entries.items()) for f in ((fs,) if isinstance(fs, str) else fs)]

    def gated(self, fname: str) -> bool:
        """Whether registry file ``fname`` is replaced only by a generation its gate promoted (see
        ``by_lines_alone``)."""
        return not any(f == fname and n in self.by_lines_alone for n, f in self.files())


@dataclass(frozen=True)
class Stop:
    """When the loop stops by itself (`azgo.training.recipe_stop`): ``patience`` finished generations in a row
    that replaced no registry file and, on each anchor line named in ``lines``, scored no more points (wins +
    draws / 2) than every earlier generation's line of that name. 0 (the default): the loop runs until stopped.
    It stops at a generation's boundary; the same command then stops again at once, until ``patience`` is raised
    (or a ``[[from_generation]]`` entry changes it)."""

    patience: int = 0
    lines: tuple = ()


@dataclass(frozen=True)
class Recipe:
    """A whole recipe (see the module docstring); ``path`` and ``root`` are absolute."""

    version: int
    name: str
    path: str
    root: str
    description: str = ""
    start: Start = field(default_factory=Start)
    lineage: Lineage = field(default_factory=Lineage)
    sizes: dict = field(default_factory=lambda: {9: 1.0})
    selfplay: SelfPlay = field(default_factory=SelfPlay)
    selfplay_by_size: dict = field(default_factory=dict)  # board size -> SelfPlay: [selfplay.by_size.N] merged in
    window: Window = field(default_factory=Window)
    training: Training = field(default_factory=Training)
    export: Export = field(default_factory=Export)
    quantize: Quantize = field(default_factory=Quantize)
    gate: Gate = field(default_factory=Gate)
    anchors: tuple = ()
    promotion: Promotion = field(default_factory=Promotion)
    stop: Stop = field(default_factory=Stop)
    sha256: str = ""
    base: dict = field(default_factory=dict, repr=False, compare=False)  # the TOML without [[from_generation]]
    schedule: tuple = ()  # ((generation, changes), ...) of [[from_generation]], generations ascending
    generation_changes: tuple = ()  # the generations of the entries applied to this recipe (see at_generation)

    def at_generation(self, g: int) -> "Recipe":
        """The recipe that generation ``g`` runs: the file's own sections with every ``[[from_generation]]``
        entry of generation <= g merged in, in order (tables merge key by key, anything else is replaced; ``sizes``
        and ``size_mix`` are replaced whole)."""
        due = tuple(n for n, _ in self.schedule if n <= g)
        if due == self.generation_changes:
            return self
        data = self.base
        for n, changes in self.schedule:
            if n <= g:
                data = _merged(data, changes)
        return _parse(data, self.path, self.sha256, self.base, self.schedule, due)

    def selfplay_at(self, size: int) -> SelfPlay:
        """The self-play settings of board size ``size``: ``[selfplay]`` with its ``[selfplay.by_size.<size>]``
        table merged in (key by key), where the recipe has one."""
        return self.selfplay_by_size.get(size, self.selfplay)

    def resolve(self, rel: str) -> str:
        """An absolute path for a recipe path (relative to ``root``)."""
        return rel if os.path.isabs(rel) else os.path.normpath(os.path.join(self.root, rel))

    def expand(self, rel: str) -> list[str]:
        """The existing paths a recipe path names (a glob pattern may name several), sorted."""
        path = self.resolve(rel)
        if any(c in rel for c in "*?["):
            return sorted(glob.glob(path))
        return [path] if os.path.exists(path) else []

    def games_per_size(self) -> dict[int, int]:
        """Self-play games of each size per generation (largest remainders; every listed size >= 1 game)."""
        total = sum(self.sizes.values())
        raw = {n: self.selfplay.games * w / total for n, w in self.sizes.items()}
        out = {n: max(1, math.floor(v)) for n, v in raw.items()}
        left = self.selfplay.games - sum(out.values())
        for n in sorted(raw, key=lambda n: raw[n] - math.floor(raw[n]), reverse=True):
            if left <= 0:
                break
            out[n] += 1
            left -= 1
        return out

    @property
    def main_size(self) -> int:
        """The size the gate plays (and the first of ``export.bn_sizes``)."""
        return self.gate.size


# ------------------------------------------------------------------------------------------ loading

def load_recipe(path: str | os.PathLike) -> Recipe:
    """Read and check a recipe file; ``RecipeError`` names the first bad field."""
    path = os.path.abspath(str(path))
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise RecipeError(f"{path}: cannot read the recipe: {e.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise RecipeError(f"{path}: not a TOML file: {e}") from None
    return parse_recipe(data, path, hashlib.sha256(raw).hexdigest())


FIXED = ("version", "name", "root", "description", "start", "lineage")  # what [[from_generation]] cannot change


WHOLE_TABLES = ("sizes", "size_mix")  # shares over board sizes: a change names every size it keeps


def _merged(data: dict, changes: dict) -> dict:
    """``data`` with ``changes`` merged in: tables key by key (recursively), anything else replaced, and the
    tables of shares over board sizes (`WHOLE_TABLES`) replaced whole, so that a change can leave a size out."""
    out = dict(data)
    for k, v in changes.items():
        out[k] = (_merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in WHOLE_TABLES
                  else v)
    return out


def parse_recipe(data: dict, path: str, sha256: str = "") -> Recipe:
    """A `Recipe` from parsed TOML ``data`` (see `load_recipe`): the file's own sections, with every
    ``[[from_generation]]`` entry checked now by parsing the recipe each one makes (so that a bad field of a
    change due in ten generations fails before the first)."""
    where = os.path.basename(path)
    base = dict(data)
    entries = base.pop("from_generation", [])
    p = _Parser(where)
    schedule = []
    for i, e in enumerate(p.table_list(entries, "from_generation")):
        label = f"from_generation[{i}]"
        e = dict(e)
        n = e.pop("generation", None)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise RecipeError(f"{where}: {label}.generation: required, an integer >= 1, got {n!r}")
        if schedule and n <= schedule[-1][0]:
            raise RecipeError(f"{where}: {label}.generation: entries in ascending order of generation, "
                              f"got {n} after {schedule[-1][0]}")
        for k in e:
            if k in FIXED or k == "from_generation":
                raise RecipeError(f"{where}: {label}.{k}: a lineage keeps its {k} (only the sections of a "
                                  f"generation's work can change)")
        if not e:
            raise RecipeError(f"{where}: {label}: changes nothing")
        schedule.append((n, e))
    recipe = _parse(base, path, sha256, base, tuple(schedule), ())
    data = base
    for i, (n, changes) in enumerate(schedule):
        data = _merged(data, changes)
        try:
            _parse(data, path, sha256, base, (), ())
        except RecipeError as e:
            msg = str(e)
            prefix = f"{where}: "
            raise RecipeError(f"{where}: from_generation[{i}] (generation {n}): "
                              f"{msg[len(prefix):] if msg.startswith(prefix) else msg}") from None
    return recipe


def _parse(data: dict, path: str, sha256: str, base: dict, schedule: tuple, applied: tuple) -> Recipe:
    """A `Recipe` from TOML ``data`` without ``[[from_generation]]``; ``base``, ``schedule`` and ``applied``
    are carried into it (see `Recipe.at_generation`)."""
    where = os.path.basename(path)
    p = _Parser(where)
    version = data.get("version")
    if version != RECIPE_VERSION:
        raise RecipeError(f"{where}: version: this azgo reads recipe version {RECIPE_VERSION}, got {version!r}")
    top = dict(data)
    top.pop("version")
    name = p.string(top, "name", "", required=True)
    if not name.replace("-", "").replace("_", "").isalnum():
        raise RecipeError(f"{where}: name: letters, digits, - and _ only, got {name!r}")
    description = p.string(top, "description", "")
    root = p.string(top, "root", "..")
    root = os.path.normpath(os.path.join(os.path.dirname(path), root))
    sizes = p.size_map(top.pop("sizes", {9: 1.0}), "sizes", positive=True)
    if not sizes:
        raise RecipeError(f"{where}: sizes: at least one board size")
    start = p.section(top, "start", Start)
    lineage = p.section(top, "lineage", Lineage)
    selfplay_raw = top.get("selfplay", {})
    by_size_raw = {}
    if isinstance(selfplay_raw, dict) and "by_size" in selfplay_raw:
        selfplay_raw = dict(selfplay_raw)
        by_size_raw = selfplay_raw.pop("by_size")
        top["selfplay"] = selfplay_raw
    selfplay = p.section(top, "selfplay", SelfPlay)
    selfplay_by_size = p.selfplay_by_size(by_size_raw, selfplay_raw)
    window = p.section(top, "window", Window)
    training = p.section(top, "training", Training)
    export = p.section(top, "export", Export)
    quantize = p.section(top, "quantize", Quantize)
    gate = p.section(top, "gate", Gate)
    anchors = tuple(p.section({"a": a}, "a", Match, label=f"anchors[{i}]")
                    for i, a in enumerate(p.table_list(top.pop("anchors", []), "anchors")))
    promotion = p.section(top, "promotion", Promotion)
    stop = p.section(top, "stop", Stop)
    if top:
        raise RecipeError(f"{where}: {sorted(top)[0]}: unknown field (see recipes/README.md)")
    recipe = Recipe(version=RECIPE_VERSION, name=name, path=path, root=root, description=description,
                    start=start, lineage=lineage, sizes=sizes, selfplay=selfplay, selfplay_by_size=selfplay_by_size,
                    window=window,
                    training=training, export=export, quantize=quantize, gate=gate, anchors=anchors,
                    promotion=promotion, stop=stop, sha256=sha256, base=base, schedule=schedule, generation_changes=applied)
    from .recipe_check import check_recipe
    check_recipe(recipe, where)
    return recipe


class _Parser:
    """Turns TOML tables into the dataclasses above, naming the field of every problem."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, name: str, msg: str):
        raise RecipeError(f"{self.where}: {name}: {msg}")

    def string(self, table: dict, key: str, default: str, required: bool = False) -> str:
        if key not in table:
            if required:
                self.fail(key, "required")
            return default
        v = table.pop(key)
        if not isinstance(v, str):
            self.fail(key, f"expected a string, got {v!r}")
        return v

    BY_SIZE_FIXED = ("games", "workers", "concurrent_games", "precision", "by_size")

    def selfplay_by_size(self, v, base: dict) -> dict:
        """``[selfplay.by_size]``: board size = a table of ``[selfplay]`` fields merged into ``base`` (the raw
        ``[selfplay]`` table) for that size's games; the number of games, the workers and the precision stay
        the whole self-play's. ``base`` is a table: ``section`` has checked ``[selfplay]`` first."""
        if not isinstance(v, dict):
            self.fail("selfplay.by_size", f"expected a table of board size = table, got {v!r}")
        sizes = self.size_map({k: 1.0 for k in v}, "selfplay.by_size")
        out = {}
        for (k, t), n in zip(v.items(), sizes):
            label = f"selfplay.by_size.{k}"
            if not isinstance(t, dict):
                self.fail(label, f"expected a table of [selfplay] fields, got {t!r}")
            if not t:
                self.fail(label, "changes nothing")
            for key in t:
                if key in self.BY_SIZE_FIXED:
                    self.fail(f"{label}.{key}", "the same for every board size (set it in [selfplay])")
            out[n] = self.section({"s": _merged(base, t)}, "s", SelfPlay, label=label)
        return out

    def table_list(self, v, name: str) -> list:
        if not isinstance(v, list) or any(not isinstance(x, dict) for x in v):
            self.fail(name, "expected an array of tables ([[...]])")
        return v

    def entry_map(self, v, name: str) -> dict:
        """``promotion.entries``: board size = a registry file, or an array of them (each file once)."""
        if not isinstance(v, dict):
            self.fail(name, f"expected a table of board size = registry file, got {v!r}")
        lists = {k: x for k, x in v.items() if isinstance(x, list)}
        out = self.size_map({k: ("x" if k in lists else x) for k, x in v.items()}, name, number=str)
        seen = set()
        for k, x in v.items():
            files = x if isinstance(x, list) else [x]
            if not files or not all(isinstance(f, str) for f in files):
                self.fail(f"{name}.{k}", f"expected a file name or an array of them, got {x!r}")
            for f in files:
                if f in seen:
                    self.fail(f"{name}.{k}", f"{f!r} is named twice: a registry file takes one network")
                seen.add(f)
            if isinstance(x, list):
                out[int(k)] = files[0] if len(files) == 1 else tuple(files)
        return out

    def size_map(self, v, name: str, positive: bool = False, number=float) -> dict:
        if not isinstance(v, dict):
            self.fail(name, f"expected a table of board size = value, got {v!r}")
        out = {}
        for k, x in v.items():
            try:
                n = int(k)
            except ValueError:
                self.fail(f"{name}.{k}", "keys are board sizes 7-19")
            if not 7 <= n <= 19:
                self.fail(f"{name}.{k}", "keys are board sizes 7-19")
            if isinstance(x, bool) or not isinstance(x, (int, float, str)):
                self.fail(f"{name}.{k}", f"expected a {'number' if number is float else 'string'}, got {x!r}")
            if number is float:
                if isinstance(x, str):
                    self.fail(f"{name}.{k}", f"expected a number, got {x!r}")
                x = float(x)
                if positive and not x > 0:
                    self.fail(f"{name}.{k}", f"must be > 0, got {x:g}")
            elif not isinstance(x, str):
                self.fail(f"{name}.{k}", f"expected a string, got {x!r}")
            out[n] = x
        return out

    def section(self, top: dict, key: str, cls, label: str | None = None):
        label = label or key
        table = top.pop(key, {})
        if not isinstance(table, dict):
            self.fail(label, f"expected a table, got {table!r}")
        table = dict(table)
        kw = {}
        for f in fields(cls):
            name = f"{label}.{f.name}"
            if f.name not in table:
                if f.default is _MISSING and f.default_factory is _MISSING:  # type: ignore[misc]
                    self.fail(name, "required")
                continue
            v = table.pop(f.name)
            default = f.default if f.default is not _MISSING else f.default_factory()  # type: ignore[misc]
            kw[f.name] = self.value(v, default, name, f.name, cls)
        if table:
            self.fail(f"{label}.{sorted(table)[0]}", "unknown field (see recipes/README.md)")
        return cls(**kw)

    def value(self, v, default, name: str, key: str, cls):
        if is_dataclass(default):
            return self.section({key: v}, key, type(default), label=name)
        if key == "sources" and cls is Window:
            return tuple(self.section({"s": s}, "s", Source, label=f"{name}[{i}]")
                         for i, s in enumerate(self.table_list(v, name)))
        if isinstance(default, bool):
            if not isinstance(v, bool):
                self.fail(name, f"expected true or false, got {v!r}")
            return v
        if isinstance(default, int) and not isinstance(default, bool) and not isinstance(v, float):
            if isinstance(v, bool) or not isinstance(v, int):
                self.fail(name, f"expected an integer, got {v!r}")
            return v
        if isinstance(default, float) or (isinstance(default, int) and isinstance(v, float)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self.fail(name, f"expected a number, got {v!r}")
            if isinstance(default, int):
                self.fail(name, f"expected an integer, got {v!r}")
            return float(v)
        if isinstance(default, str):
            if not isinstance(v, str):
                self.fail(name, f"expected a string, got {v!r}")
            return v
        if isinstance(default, tuple):
            if not isinstance(v, list):
                self.fail(name, f"expected an array, got {v!r}")
            return tuple(v)
        if isinstance(default, dict):
            if key in ("fair", "size_mix"):
                return self.size_map(v, name)
            if key == "size_generations":
                out = self.size_map(v, name)
                for n, x in out.items():
                    if not x.is_integer():
                        self.fail(f"{name}.{n}", f"expected a whole number of generations, got {x:g}")
                return {n: int(x) for n, x in out.items()}
            if key == "entries":
                return self.entry_map(v, name)
            if key == "nets":
                return self.size_map(v, name, number=str)
            if not isinstance(v, dict):
                self.fail(name, f"expected a table, got {v!r}")
            return dict(v)
        return v  # pragma: no cover
