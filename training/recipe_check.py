"""The checks of a recipe beyond each field's type: ranges and the rules between fields (``RecipeError`` names
the first bad field). `check_recipe` runs them all, before any work."""

from __future__ import annotations

import os

from .recipe import Recipe, RecipeError


def check_recipe(r: Recipe, where: str) -> None:
    """Ranges and cross-field rules of ``r``; the first problem raises, naming its field."""

    def fail(name: str, msg: str):
        raise RecipeError(f"{where}: {name}: {msg}")

    def num(name: str, v: float, lo: float | None = None, hi: float | None = None, lo_open: bool = False):
        if (lo is not None and (v < lo or (lo_open and v == lo))) or (hi is not None and v > hi):
            rng = (f"> {lo:g}" if lo_open else f">= {lo:g}") if hi is None else f"in [{lo:g}, {hi:g}]"
            fail(name, f"must be {rng}, got {v:g}")

    for check in (_check_start, _check_selfplay, _check_window, _check_training, _check_export, _check_matches,
                  _check_promotion, _check_stop):
        check(r, fail, num)


def _check_start(r: Recipe, fail, num) -> None:
    """Where the lineage starts (unless it has published a state already)."""
    published = bool(r.lineage.dir) and not r.lineage.dir.startswith("<run>/") and os.path.exists(
        os.path.join(r.resolve(r.lineage.dir), "lineage.json"))
    if published:
        pass  # the lineage goes on from its published state: [start] is its history
    elif not r.start.checkpoint:
        from .model import NET_SIZES  # torch: only for a lineage that starts from random weights
        if r.start.net not in NET_SIZES:
            fail("start.net", f"unknown network size {r.start.net!r}; known: {', '.join(NET_SIZES)}")
    if not published and r.start.checkpoint and not os.path.isfile(r.resolve(r.start.checkpoint)):
        fail("start.checkpoint", f"no such file {r.start.checkpoint!r} (relative to {os.path.relpath(r.root)})")
    for n, p in r.start.nets.items():
        if not published and not os.path.isfile(r.resolve(p)):
            fail(f"start.nets.{n}", f"no such file {p!r}")


def _check_selfplay(r: Recipe, fail, num) -> None:
    """Self-play, forked starts, komi and handicap: ``[selfplay]`` and each ``[selfplay.by_size.N]`` (whose size
    must be one that self-play plays)."""
    sp = r.selfplay
    num("selfplay.games", sp.games, 1)
    num("selfplay.workers", sp.workers, 0)
    num("selfplay.concurrent_games", sp.concurrent_games, 1)
    if sp.precision not in ("fp32", "int8"):
        fail("selfplay.precision", f"fp32 or int8, got {sp.precision!r}")
    if sp.precision == "int8" and not r.quantize.enabled:
        fail("selfplay.precision", "int8 self-play needs quantize.enabled = true")
    for n in r.selfplay_by_size:
        if n not in r.sizes:
            fail(f"selfplay.by_size.{n}", f"board size {n} is not in [sizes] (self-play plays "
                 f"{', '.join(map(str, sorted(r.sizes)))})")
    _check_selfplay_games(r, sp, "selfplay", fail, num)
    for n, s in sorted(r.selfplay_by_size.items()):
        _check_selfplay_games(r, s, f"selfplay.by_size.{n}", fail, num)
    entries = {n for n, _ in r.promotion.files()}
    for n in sorted(r.sizes):
        if r.selfplay_at(n).nets == "packaged" and n not in entries:
            pre = f"selfplay.by_size.{n}" if n in r.selfplay_by_size else "selfplay"
            fail(f"{pre}.nets", f"packaged: {n}x{n} games need a registry file of that size in promotion.entries "
                 f"(it has {', '.join(f'{m}x{m}' for m in sorted(entries)) or 'none'})")


def _check_selfplay_games(r: Recipe, sp, pre: str, fail, num) -> None:
    """The fields of one size's self-play settings ``sp``, named under ``pre``."""
    num(f"{pre}.full_visits", sp.full_visits, 1)
    num(f"{pre}.cheap_visits", sp.cheap_visits, 1)
    num(f"{pre}.full_prob", sp.full_prob, 0, 1)
    num(f"{pre}.resign_threshold", sp.resign_threshold, 0, 1)
    num(f"{pre}.no_resign_fraction", sp.no_resign_fraction, 0, 1)
    num(f"{pre}.max_moves", sp.max_moves, 0)
    num(f"{pre}.gumbel_m", sp.gumbel_m, 0)
    if sp.nets not in ("best", "packaged"):
        fail(f"{pre}.nets", f"best or packaged, got {sp.nets!r}")
    num(f"{pre}.openings.fraction", sp.openings.fraction, 0, 1)
    num(f"{pre}.openings.min_moves", sp.openings.min_moves, 1)
    num(f"{pre}.openings.max_moves", sp.openings.max_moves, sp.openings.min_moves)
    for name, what in (("around_peak", "whose largest lead to fork around"), ("around_ko", "whose kos to fork at")):
        ap = getattr(sp.openings, name)
        if ap:
            if len(ap) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in ap):
                fail(f"{pre}.openings.{name}", f"expected [before, after], two whole numbers >= 0, got {list(ap)}")
            if not sp.openings.lost_by:
                fail(f"{pre}.openings.{name}", f"needs lost_by ({what})")
    if sp.openings.around_peak and sp.openings.around_ko:
        fail(f"{pre}.openings.around_ko", "forks around a peak or a ko, not both (around_peak, around_ko)")
    if sp.openings.fraction > 0 and not sp.openings.sources:
        fail(f"{pre}.openings.sources", "forked starts (fraction > 0) need sources")
    for i, s in enumerate(sp.openings.sources):
        if not isinstance(s, str) or not r.expand(s):
            fail(f"{pre}.openings.sources[{i}]", f"no such folder {s!r}")
    o = sp.opponent
    num(f"{pre}.opponent.fraction", o.fraction, 0, 1)
    num(f"{pre}.opponent.level", o.level, 1, 10)
    num(f"{pre}.opponent.playouts", o.playouts, 1, 10_000_000)
    if o.fork_fraction >= 0:
        num(f"{pre}.opponent.fork_fraction", o.fork_fraction, 0, 1)
    if (o.fraction > 0 or o.fork_fraction > 0) and not o.engine.strip():
        fail(f"{pre}.opponent.engine", "games against an opponent (fraction > 0) need its engine: gnugo, pachi "
             "or a GTP command line")
    if o.fork_side not in ("any", "winner"):
        fail(f"{pre}.opponent.fork_side", f"any or winner, got {o.fork_side!r}")
    if o.fork_side == "winner" and not ((sp.openings.around_peak or sp.openings.around_ko) and sp.openings.lost_by):
        fail(f"{pre}.opponent.fork_side", "winner needs forked starts around the peaks or kos of lost games "
             "([selfplay.openings] around_peak or around_ko, and lost_by)")
    k = sp.komi
    num(f"{pre}.komi.stdev", k.stdev, 0)
    num(f"{pre}.komi.wide_fraction", k.wide_fraction, 0, 1)
    if len(k.range) != 2 or not all(isinstance(x, (int, float)) for x in k.range) or k.range[0] > k.range[1]:
        fail(f"{pre}.komi.range", f"expected [low, high] with low <= high, got {list(k.range)}")
    for n in r.sizes:
        if n not in k.fair:
            fail(f"{pre}.komi.fair", f"no fair komi for board size {n} (in [sizes])")
        if not k.range[0] <= k.fair[n] <= k.range[1]:
            fail(f"{pre}.komi.fair.{n}", f"{k.fair[n]:g} lies outside {pre}.komi.range")
    h = sp.handicap
    num(f"{pre}.handicap.fraction", h.fraction, 0, 1)
    if len(h.stones) != 2 or not all(isinstance(x, int) for x in h.stones) or not 2 <= h.stones[0] <= h.stones[1] <= 9:
        fail(f"{pre}.handicap.stones", f"expected [fewest, most] within 2..9, got {list(h.stones)}")


def _check_window(r: Recipe, fail, num) -> None:
    """The training window and its shares per board size."""
    w = r.window
    num("window.generations", w.generations, 1)
    for n, k in w.size_generations.items():
        num(f"window.size_generations.{n}", k, 1)
    num("window.selfplay_share", w.selfplay_share, 0, 1)
    num("window.recency", w.recency, 0, 1, lo_open=True)
    for i, s in enumerate(w.sources):
        if not s.path:
            fail(f"window.sources[{i}].path", "required")
        num(f"window.sources[{i}].share", s.share, 0, 1)
        num(f"window.sources[{i}].policy_weight", s.policy_weight, 0, 1)
        if s.size and not 7 <= s.size <= 19:
            fail(f"window.sources[{i}].size", f"a board size 7-19 (or 0: any), got {s.size}")
        if not r.expand(s.path):
            fail(f"window.sources[{i}].path", f"no such folder {s.path!r}")
    for n in set(r.sizes) | {s.size for s in w.sources if s.size}:
        total = (w.selfplay_share if n in r.sizes else 0.0) + sum(s.share for s in w.sources if s.size in (0, n))
        if total > 1 + 1e-9:
            fail("window", f"the shares of the {n}x{n} draws sum to {total:g} > 1 (selfplay_share and sources)")


def _check_training(r: Recipe, fail, num) -> None:
    """The training settings."""
    t = r.training
    num("training.steps", t.steps, 1)
    num("training.batch_size", t.batch_size, 1)
    num("training.lr", t.lr, 0, lo_open=True)
    num("training.lr_decay", t.lr_decay, 0, lo_open=True)
    num("training.momentum", t.momentum, 0, 1)
    num("training.weight_decay", t.weight_decay, 0)
    num("training.surprise_weight", t.surprise_weight, 0, 1)
    num("training.komi_augment", t.komi_augment, 0, 1)
    num("training.handicap_weight", t.handicap_weight, 0, 100)
    num("training.max_final_margin", t.max_final_margin, 0, 2)
    num("training.val_fraction", t.val_fraction, 0, 0.5)
    num("training.threads", t.threads, 0)
    if t.net:
        from .model import NET_SIZES  # torch: only for a recipe that grows its network
        if t.net not in NET_SIZES:
            fail("training.net", f"unknown network size {t.net!r}; known: {', '.join(NET_SIZES)}")
    if t.init not in ("best", "latest"):
        fail("training.init", f"best or latest, got {t.init!r}")
    if any(not isinstance(s, int) or not 0 < s < t.steps for s in t.lr_steps) or list(t.lr_steps) != sorted(t.lr_steps):
        fail("training.lr_steps", f"increasing steps between 1 and training.steps - 1, got {list(t.lr_steps)}")
    if set(t.loss_weights) != {"policy", "value", "ownership", "score"}:
        fail("training.loss_weights", "needs policy, value, ownership and score")
    for key, v in t.loss_weights.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            fail(f"training.loss_weights.{key}", f"a number >= 0, got {v!r}")
    for n, v in t.size_mix.items():
        num(f"training.size_mix.{n}", v, 0)


def _check_export(r: Recipe, fail, num) -> None:
    """Export and quantization."""
    bn = r.export.bn_sizes
    if not bn or any(not isinstance(n, int) or not 7 <= n <= 19 for n in bn) or len(set(bn)) != len(bn):
        fail("export.bn_sizes", f"distinct board sizes 7-19, at least one, got {list(bn)}")
    num("export.bn_batches", r.export.bn_batches, 1)
    q = r.quantize
    num("quantize.calibration_positions", q.calibration_positions, 16)
    num("quantize.max_value_mae", q.max_value_mae, 0, lo_open=True)
    if q.percentile != 0 and not 50 < q.percentile <= 100:
        fail("quantize.percentile", f"0 for MinMax ranges, or a percentile in (50, 100], got {q.percentile}")
    for field, rules in (("quantize.percentiles", q.percentiles), ("quantize.vnni_percentiles", q.vnni_percentiles)):
        for x in rules:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or (x != 0 and not 50 < x <= 100):
                fail(field, f"numbers: 0 for MinMax ranges, or percentiles in (50, 100], got {list(rules)}")
        if len(set(rules)) != len(rules):
            fail(field, f"each rule once, got {list(rules)}")
    if q.percentiles and q.percentile:
        fail("quantize.percentiles", "set either percentile (one rule) or percentiles (the closest copy is kept), not both")
    if any(not isinstance(x, str) or not x for x in q.keep_fp32):
        fail("quantize.keep_fp32", "graph node names (strings)")
    if any(not isinstance(x, str) or not x for x in q.vnni_keep_fp32):
        fail("quantize.vnni_keep_fp32", "graph node names (strings)")
    if q.vnni_keep_fp32 and not q.vnni_percentiles:
        fail("quantize.vnni_keep_fp32", "applies to the 8-bit copies: set vnni_percentiles too")


def _check_matches(r: Recipe, fail, num) -> None:
    """The gate and the anchor lines."""
    bn = r.export.bn_sizes
    for label, m in [("gate", r.gate)] + [(f"anchors[{i}]", a) for i, a in enumerate(r.anchors)]:
        num(f"{label}.games", m.games, 1)
        num(f"{label}.seconds", m.seconds, 0, lo_open=m.visits == 0)
        num(f"{label}.visits", m.visits, 0)
        num(f"{label}.threads", m.threads, 1)
        num(f"{label}.level", m.level, 1, 10)
        num(f"{label}.parallel", m.parallel, 1, m.games)
        num(f"{label}.every", m.every, 1)
        if not 7 <= m.size <= 19:
            fail(f"{label}.size", f"a board size 7-19, got {m.size}")
        if m.net_size and m.net_size not in bn:
            fail(f"{label}.net_size", f"no network is exported for {m.net_size}x{m.net_size} (export.bn_sizes)")
        elif not m.net_size and m.size not in bn:
            fail(f"{label}.size", f"no network is exported for {m.size}x{m.size} (export.bn_sizes; net_size "
                                  "names another exported network to play it)")
        if m.handicap and not 2 <= m.handicap <= 9:
            fail(f"{label}.handicap", f"0 or 2-9 stones, got {m.handicap}")
        if m.komi * 2 != int(m.komi * 2):
            fail(f"{label}.komi", f"a multiple of 0.5, got {m.komi:g}")
        if not m.opponent:
            fail(f"{label}.opponent", "best, gnugo, pachi or a GTP command line")
        if m.early_stop not in ("", "always", "banked"):
            fail(f"{label}.early_stop", f"always, banked or empty (azgo's default), got {m.early_stop!r}")
        if m is r.gate and m.played_out:
            fail(f"{label}.played_out", "only for anchor lines (the gate stops only by its rule)")
        if m.opponent == "pachi" and m.same_clock and not m.visits and m.seconds != int(m.seconds):
            fail(f"{label}.seconds", f"Pachi's clock takes whole seconds, got {m.seconds:g}")
    names = [a.name for a in r.anchors]
    if len(set(names)) != len(names) or "gate" in names:
        fail("anchors", f"each anchor line needs its own name (not 'gate'), got {names}")
    if r.gate.rule not in ("threshold", "sprt"):
        fail("gate.rule", f"threshold or sprt, got {r.gate.rule!r}")
    num("gate.threshold", r.gate.threshold, 0, 1)
    num("gate.alpha", r.gate.alpha, 0, 0.5, lo_open=True)
    num("gate.beta", r.gate.beta, 0, 0.5, lo_open=True)
    if r.gate.rule == "sprt" and not r.gate.elo1 > r.gate.elo0:
        fail("gate.elo1", "must be above gate.elo0")


def _check_promotion(r: Recipe, fail, num) -> None:
    """Which registry entries a promoted network replaces."""
    bn = r.export.bn_sizes
    for n, f in r.promotion.files():
        if n not in bn:
            fail(f"promotion.entries.{n}", f"no network is exported for {n}x{n} (export.bn_sizes)")
        if not f.endswith(".onnx") or "/" in f:
            fail(f"promotion.entries.{n}", f"a file name ending in .onnx in the registry folder, got {f!r}")
    anchors = {a.name: a for a in r.anchors}
    for name in r.promotion.lines:
        a = anchors.get(name)
        if a is None:
            fail("promotion.lines", f"{name!r} is not an anchor line (anchors: {sorted(anchors)})")
        elif a.every != 1:
            fail("promotion.lines", f"{name!r} plays every {a.every} generations: a line that decides packaging "
                                    "plays every generation (every = 1)")
        elif a.opponent == "best":
            fail("promotion.lines", f"{name!r} plays the best network: packaging is decided against a fixed "
                                    "opponent (gnugo, pachi or a GTP command)")
    if r.promotion.lines and not r.promotion.entries:
        fail("promotion.lines", "decide packaging: set promotion.entries (the registry files) too")
    for n in r.promotion.by_lines_alone:
        if isinstance(n, bool) or not isinstance(n, int) or n not in r.promotion.entries:
            fail("promotion.by_lines_alone", f"board sizes of promotion.entries "
                                             f"({sorted(r.promotion.entries)}), got {n!r}")
    if r.promotion.by_lines_alone and not r.promotion.lines:
        fail("promotion.by_lines_alone", "its files are decided by promotion.lines alone: name those lines")
    for name, pts in r.promotion.margins.items():
        if name not in r.promotion.lines or name not in anchors:
            fail("promotion.margins", f"{name!r} is not a line of promotion.lines ({list(r.promotion.lines)})")
        elif isinstance(pts, bool) or not isinstance(pts, (int, float)) or not 0 <= pts < anchors[name].games:
            fail("promotion.margins", f"{name!r}: points from 0 to below the line's {anchors[name].games} games, "
                                      f"got {pts!r}")


def _check_stop(r: Recipe, fail, num) -> None:
    """When the loop stops by itself: a count of generations, over anchor lines the recipe has."""
    num("stop.patience", r.stop.patience, 0)
    anchors = {a.name for a in r.anchors}
    for name in r.stop.lines:
        if name not in anchors:
            fail("stop.lines", f"{name!r} is not an anchor line (anchors: {sorted(anchors)})")
