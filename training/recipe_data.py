"""The data stages of a recipe's generation: self-play (komi, handicap, forked starts), the training window
(the lineage's generations and the recipe's sources, with their shares), training, export and the int8 copy."""

from __future__ import annotations

import csv
import glob
import hashlib
import os
import shlex
import sys
import time
from pathlib import Path

from azgo.engine.atomic import atomic_write

from .children import run_child
from .recipe import RecipeError
from .recipe_util import relative_paths, sha256

HELD_OUT = 256  # positions drawn beside the calibration set, on which each int8 copy is compared with fp32


def _closest(tries: list, max_value_mae: float) -> int:
    """Index of the int8 copy to keep among ``tries`` ``[(percentile, path, keep_fp32, report), ...]``: of
    those within the value-MAE bar (all of them if none is), the smallest median score-lead error (the
    value MAE without a score head); the earlier listed on a tie at the precision the records keep (see
    `_brief`), so that what a card shows always explains which copy was kept."""
    ok = [i for i, t in enumerate(tries) if t[3]["value_mae"] <= max_value_mae] or list(range(len(tries)))
    def error(t: tuple) -> float:
        brief = _brief(t)
        return brief.get("lead_median_abs", brief["value_mae"])
    return min(ok, key=lambda i: (error(tries[i]), i))


def _brief(t: tuple) -> dict:
    """The record of one int8 try ``(percentile, path, keep_fp32, report)``: its rule and its errors."""
    return {"percentile": t[0], "value_mae": round(t[3]["value_mae"], 5),
            **({"lead_median_abs": round(t[3]["lead_median_abs"], 4)} if "lead_median_abs" in t[3] else {})}


class DataMixin:
    """Stages 1-4 of `azgo.training.recipe_run.RecipeRun`."""

    # ------------------------------------------------------------------ 1. self-play
    def selfplay_config(self, size: int, net: str | None = None):
        """The self-play settings of ``size`` (``net``: the network that reads the forked games' peaks; default the
        best of the run)."""
        from .selfplay import SelfPlayConfig, load_openings
        sp = self.r.selfplay_at(size)
        forks, lows, winners = (), (), ()
        if sp.openings.fraction > 0 and sp.openings.around_peak:
            forks, lows, winners = self.peak_forks(size, net or self.best_net(size))
        elif sp.openings.fraction > 0 and sp.openings.around_ko:
            forks, lows, winners = self.ko_forks(size)
        elif sp.openings.fraction > 0:
            files = self.opening_files(size)
            try:
                forks = load_openings(files, size, sp.openings.max_moves) if files else ()
            except ValueError:
                forks = ()  # no opening of this size: even games from the empty board
        return SelfPlayConfig(
            size=size, komi=float(sp.komi.fair[size]), full_visits=sp.full_visits, cheap_visits=sp.cheap_visits,
            full_prob=sp.full_prob, resign_threshold=sp.resign_threshold, no_resign_fraction=sp.no_resign_fraction,
            concurrent_games=sp.concurrent_games, max_moves=sp.max_moves or None, precision=sp.precision,
            openings=forks, opening_fraction=sp.openings.fraction if forks else 0.0,
            opening_min_moves=sp.openings.min_moves, opening_lows=lows, opening_winners=winners,
            komi_stdev=sp.komi.stdev,
            komi_wide_fraction=sp.komi.wide_fraction, komi_range=tuple(float(x) for x in sp.komi.range),
            handicap_fraction=sp.handicap.fraction, handicap_stones=tuple(sp.handicap.stones),
            handicap_komi=sp.handicap.komi, handicap_resign=sp.handicap.resign, gumbel_m=sp.gumbel_m,
            **self.selfplay_opponent(size))

    def selfplay_opponent(self, size: int) -> dict:
        """``SelfPlayConfig``'s opponent fields from ``[selfplay.opponent]`` (GNU Go or Pachi found now;
        RecipeError when it is missing). Pachi plays one thread, ``playouts`` a move, and passes only once
        every group is settled (``pass_all_alive``), as in the strength lines."""
        o = self.r.selfplay_at(size).opponent
        if o.fraction <= 0 and o.fork_fraction <= 0:
            return {}
        forks = {"opponent_fraction": o.fraction, "opponent_fork_side": o.fork_side,
                 "opponent_fork_fraction": o.fork_fraction if o.fork_fraction >= 0 else None}
        if o.engine not in ("gnugo", "pachi"):
            return {"opponent": o.engine, **forks}
        from azgo.gtp.opponents import OpponentMissing, gnugo_command, pachi_command
        try:
            if o.engine == "pachi":
                return {"opponent": f"{pachi_command(1)} -t ={o.playouts}", "opponent_name": f"Pachi {o.playouts}",
                        **forks}
            return {"opponent": gnugo_command(o.level), "opponent_name": f"GNU Go {o.level}", **forks}
        except OpponentMissing as e:
            raise RecipeError(f"selfplay.opponent: {e}") from None

    def opening_files(self, size: int) -> list[str]:
        """The SGF games whose openings fork self-play of this size (``openings.lost_by``: those lost by
        that player), sorted."""
        from azgo.engine.sgf import SgfError, load_sgf

        from .dataset import find_sgf_files
        from .fork_peaks import loser_colour
        op = self.r.selfplay_at(size).openings
        folders = [self._readable(p) for rel in op.sources for p in self._expand(rel)]
        files = sorted(find_sgf_files(folders)) if folders else []
        out = []
        for f in files:
            try:
                rec = load_sgf(f)
            except (SgfError, ValueError, OSError):
                continue
            if rec.size != size:
                continue
            if op.lost_by and loser_colour(rec, op.lost_by) is None:
                continue
            out.append(f)
        return out

    def peak_forks(self, size: int, net: str) -> tuple[tuple, tuple, tuple]:
        """``(openings, lows, winners)`` around each lost game's peak (``openings.around_peak``; winners: the
        colour that won each game forked from, the side ``[selfplay.opponent] fork_side = "winner"`` gives the
        opponent), read by the best
        network ``net`` (no search; answers cached for that network in ``peaks/<size>.json`` of the lineage
        folder, published with it so that a new run folder of the same generation does not read every lost
        game again, else of the run folder)."""
        from azgo.nets.evaluator import EvalConfig, OnnxEvaluator

        from .fork_peaks import lead_peaks, peak_openings
        from .selfplay import opening_moves
        op = self.r.selfplay_at(size).openings
        files = [f for f in self.opening_files(size) if opening_moves(f, size, 1)]  # even games only
        if not files:
            return (), (), ()
        # the self-play workers have not started: the evaluation gets the cores (19x19, batches of 32, int8: 5.8 s
        # against 10.2 s with one thread for four games on the 2-core machine, the same peaks)
        threads = max(1, min(os.cpu_count() or 1, 8))
        evaluator = OnnxEvaluator(net, EvalConfig(threads=threads, precision=self.r.selfplay_at(size).precision))
        home = self.path(self.r.lineage.dir) if self.r.lineage.dir else self.dir
        peaks = lead_peaks(files, op.lost_by, evaluator, cache=os.path.join(home, "peaks", f"{size}.json"),
                           key=f"{sha256(evaluator.path)}", max_moves=op.max_moves, log=self.log, root=self.r.root)
        before, after = op.around_peak
        rows = [(opening_moves(f, size, peaks[f] + after), peaks[f], self._winner(f, op.lost_by))
                for f in files if f in peaks]
        return peak_openings([row for row in rows if row[0]], before, after, op.min_moves)

    def ko_forks(self, size: int) -> tuple[tuple, tuple, tuple]:
        """``(openings, lows, winners)`` around the first ko capture of each lost even game of ``size``
        (``openings.around_ko``, within its first ``max_moves`` moves; games without a ko there are left out;
        winners as `peak_forks`). No network: the games are replayed."""
        from azgo.engine.sgf import SgfError, load_sgf

        from .fork_peaks import first_ko, peak_openings
        from .selfplay import opening_moves
        op = self.r.selfplay_at(size).openings
        before, after = op.around_ko
        rows = []
        for f in self.opening_files(size):
            try:
                rec = load_sgf(f)
            except (SgfError, ValueError, OSError):
                continue
            at = first_ko(rec, op.max_moves)
            if at is None:
                continue
            moves = opening_moves(f, size, at + after)  # even games only: () for handicap or setup stones
            if moves:
                rows.append((moves, at, self._winner(rec, op.lost_by)))
        return peak_openings(rows, before, after, op.min_moves)

    @staticmethod
    def _winner(game, lost_by: str) -> int:
        """The colour that won ``game`` (a path or an already read record) when ``lost_by`` lost it (0 when not
        known)."""
        from azgo.engine.board import BLACK, WHITE
        from azgo.engine.sgf import load_sgf

        from .fork_peaks import loser_colour
        if not lost_by:
            return 0
        loser = loser_colour(load_sgf(game) if isinstance(game, str) else game, lost_by)
        return WHITE if loser == BLACK else BLACK if loser == WHITE else 0

    def _expand(self, rel: str) -> list[str]:
        return [self.path(rel)] if rel.startswith("<run>/") else self.r.expand(rel)

    def best_net(self, size: int) -> str:
        """The best generation's network for ``size``x``size`` games. A size the recipe exports
        (``export.bn_sizes``) that the best generation has no network of (it was trained before that size was
        exported, or the size was added since) gets one made now from its checkpoint, batch-norm statistics of
        that size and int8 copies (`_best_net_of_size`): a network normalised on 19x19 positions misjudges 9x9
        and 13x13 ones (value error on held-out 13x13 games 0.85-0.97, with 13x13 statistics 0.52-0.56). Other
        sizes play the main size's network."""
        nets = self.state["best"]["nets"]
        if str(size) not in nets and size in self.r.export.bn_sizes:
            made = self._best_net_of_size(size)
            if made:
                return made
        return nets.get(str(size)) or nets[str(self.r.main_size)]

    def selfplay_net(self, size: int) -> tuple[str, str]:
        """(network, who it is for the log) that plays ``size``x``size`` self-play: the best generation's
        (`best_net`), or with ``selfplay.nets = "packaged"`` the registry file that ``promotion.entries`` gives
        the size (the first of them), as the lines last decided it: with ``promotion.by_lines_alone`` that can be
        a newer generation than the best, or an older one its lines kept. A registry file not there yet falls
        back to the best, logged. The forked starts' peaks are read by the best network either way."""
        best = f"generation {self.state['best']['generation']}"
        if self.r.selfplay_at(size).nets == "packaged":
            files = [f for n, f in self.r.promotion.files() if n == size]
            path = os.path.join(self.path(self.r.promotion.registry), files[0]) if files else ""
            if path and os.path.exists(path):
                return path, f"{self.rel(path)} (selfplay.nets = packaged, sha256 {sha256(path)[:12]})"
            self.log(f"[selfplay] {size}x{size}: no packaged network ({self.rel(path) if path else 'no entry'}): "
                     f"the best network plays")
        return self.best_net(size), best

    def _best_net_of_size(self, n: int) -> str | None:
        """Export the best generation's checkpoint with batch-norm statistics of ``n``x``n`` positions (its
        own self-play of that size, else the window's sources of it) into its generation folder, quantize it as
        the recipe does, and record it among the best networks; None when no game of that size is at hand."""
        from .export import export_checkpoint
        best = self.state["best"]
        g = int(best["generation"])
        folders = self._size_folders(g, n)
        if not folders or not os.path.exists(best["checkpoint"]):
            return None
        out = os.path.join(self.gen_dir(g), f"net{n}.onnx")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        export_checkpoint(best["checkpoint"], out, check=True, bn_data=folders, bn_size=n,
                          bn_batches=self.r.export.bn_batches,
                          name_source=lambda p: relative_paths(p, self.r.root, self.dir))
        if self.r.quantize.enabled:
            self._quantize_one(out, n, folders, g)
        best["nets"][str(n)] = out
        self.log(f"[gen {g}] export: {os.path.relpath(out, self.dir)} (the best generation had no {n}x{n} "
                 f"network: its checkpoint with batch-norm statistics of {n}x{n} positions, for self-play)")
        self.save()
        return out

    def stage_selfplay(self, g: int) -> None:
        from .workers import archive_games, run_selfplay
        made = []
        for n, count in sorted(self.r.games_per_size().items()):
            out = os.path.join(self.gen_dir(g), "selfplay", str(n))
            cfg = self.selfplay_config(n)
            net, who = self.selfplay_net(n)
            have = len(archive_games(out)) if os.path.isdir(out) else 0
            self.log(f"[gen {g}] selfplay: {have} -> {count} {n}x{n} games with {who} "
                     f"({cfg.precision}, {self.workers} workers)")
            t0 = time.time()
            if self.ray:
                from .ray_selfplay import RaySelfPlay
                pool = RaySelfPlay(self.ray, cfg, workers=self.workers, device=self.device, log=self.log)
                try:
                    pool.play(out, count, net=net, seed=self._seed(g, n), show_progress=self.progress)
                finally:
                    pool.close()
            else:
                run_selfplay(out, count, self.workers, cfg, net=net, seed=self._seed(g, n),
                             show_progress=self.progress, device=self.device)
            games = len(archive_games(out))
            made.append({"generation": g, "size": n, "path": out, "games": games, "net": self.rel(net),
                         "net_sha256": sha256(net)})
            self.log(f"[gen {g}] selfplay: {games} {n}x{n} games ({(time.time() - t0) / 60:.1f} min now)")
        self.state["generations"].setdefault(str(g), {})["selfplay"] = made

    def _seed(self, g: int, n: int) -> int:
        return (self.r.training.seed * 1_000_003 + g * 1009 + n) & 0x7FFFFFF

    # ------------------------------------------------------------------ window
    def _readable(self, rel: str) -> str:
        """A folder of SGF files for a recipe source (one path, no pattern): the folder itself, or its shards
        unpacked into the run."""
        from .shards import is_shard_folder, unpack
        path = self.path(rel)
        if not is_shard_folder(path):
            return path
        out = os.path.join(self.dir, "sources", hashlib.sha1(path.encode()).hexdigest()[:8] + "-" + os.path.basename(path))
        marker = os.path.join(out, ".unpacked")
        shards = sorted(os.path.basename(p) for p in glob.glob(os.path.join(path, "*.tar.xz")))
        if not os.path.exists(marker) or Path(marker).read_text() != "\n".join(shards):
            unpack(path, out)
            atomic_write(marker, "\n".join(shards))
        return out

    def window(self, g: int) -> tuple[list[str], list[list], list[list]]:
        """(sources, source shares, source weights) of generation g's training: the lineage's newest
        ``window.generations`` generations (g itself included; ``window.size_generations`` for a size that has
        its own) and the recipe's sources."""
        w = self.r.window
        own = [s for s in self.state.get("selfplay", [])]
        own += [{"generation": s["generation"], "size": s["size"], "path": s["path"]}
                for s in self.state["generations"].get(str(g), {}).get("selfplay", [])]
        newest = sorted({s["generation"] for s in own}, reverse=True)
        sources, shares, weights = [], [], []
        for n in sorted(self.r.sizes):
            gens = newest[: w.size_generations.get(n, w.generations)]
            mine = [s for s in own if s["generation"] in gens and s["size"] == n]
            if not mine:
                continue
            ages = {s["generation"]: gens.index(s["generation"]) for s in mine}
            norm = sum(w.recency ** a for a in set(ages.values()))
            for s in mine:
                path = s.get("path") or self._readable(s["data"])
                sources.append(path)
                if w.recency == 1.0:
                    shares.append([path, w.selfplay_share, f"selfplay{n}"])
                else:
                    shares.append([path, w.selfplay_share * w.recency ** ages[s["generation"]] / norm])
        for i, s in enumerate(w.sources):
            paths = [self._readable(p) for p in self._expand(s.path)]
            for path in paths:
                sources.append(path)
                shares.append([path, s.share, f"source{i}"] if len(paths) > 1 else [path, s.share])
                if s.policy_weight != 1.0:
                    weights.append([path, 1.0, s.policy_weight])
        return sources, shares, weights

    # ------------------------------------------------------------------ 2. training
    def stage_train(self, g: int) -> None:
        t = self.r.training
        out = os.path.join(self.gen_dir(g), "train")
        sources, shares, weights = self.window(g)
        lw = t.loss_weights
        cmd = [sys.executable, "-m", "azgo.gtp.cli", "train", *sources, "--out", out,
               "--steps", str(t.steps), "--batch-size", str(t.batch_size), "--lr", f"{t.lr:g}",
               "--lr-decay", f"{t.lr_decay:g}", "--momentum", f"{t.momentum:g}", "--weight-decay", f"{t.weight_decay:g}",
               "--loss-weights", ",".join(f"{lw[k]:g}" for k in ("policy", "value", "ownership", "score")),
               "--val-fraction", f"{t.val_fraction:g}", "--seed", str(self._seed(g, 0)), "--device", self.device,
               "--surprise-weight", f"{t.surprise_weight:g}", "--max-final-margin", f"{t.max_final_margin:g}",
               "--no-tensorboard", "--progress" if self.progress else "--no-progress",
               "--validate-every", str(max(1, t.steps // 2)), "--checkpoint-every", str(max(1, t.steps // 4))]
        if t.komi_augment:
            cmd += ["--komi-augment", f"{t.komi_augment:g}"]
        if t.komi_inputs:
            cmd += ["--komi-inputs"]
        if t.handicap_weight != 1.0:
            cmd += ["--handicap-weight", f"{t.handicap_weight:g}"]
        if t.lr_steps:
            cmd += ["--lr-steps", ",".join(str(s) for s in t.lr_steps)]
        if t.threads:
            cmd += ["--threads", str(t.threads)]
        if t.size_mix:
            cmd += ["--size-mix", ",".join(f"{n}={v:g}" for n, v in sorted(t.size_mix.items()))]
        for path, share, *group in shares:
            cmd += ["--source-share", f"{path}={share:.10g}" + (f"@{group[0]}" if group else "")]
        for path, sw, pw in weights:
            cmd += ["--source-weight", f"{path}={sw:g}:{pw:g}"]
        init = self.init_checkpoint(g)
        if os.path.exists(os.path.join(out, "checkpoint.pt")):
            cmd.append("--resume")
        elif t.net:  # grow the init into training.net (a copy when it is that size already), then train that
            grown = os.path.join(self.gen_dir(g), "grown_init.pt")
            run_child([sys.executable, "-m", "azgo.gtp.cli", "grow", init["checkpoint"], "--net", t.net,
                       "--out", grown, "--seed", str(self._seed(g, 0))])
            cmd += ["--init", grown]
        else:
            cmd += ["--init", init["checkpoint"]]
        self.log(f"[gen {g}] train: {len(sources)} sources, {t.steps} steps from generation "
                 f"{init['generation']} ({'the best' if init['generation'] == self.state['best']['generation'] else 'the latest trained'})"
                 + (f", grown to {t.net}" if t.net and "--init" in cmd else ""))
        run_child(cmd)  # stops with the loop (a SIGTERM to the loop saves the training's checkpoint)
        info = self.state["generations"].setdefault(str(g), {})
        info["train"] = {"command": relative_paths(shlex.join(["azgo", *cmd[3:]]), self.r.root, self.dir),
                         "init_generation": init["generation"], "validation": self._last_validation(out)}
        if t.net:
            info["train"]["net"] = t.net

    def init_checkpoint(self, g: int) -> dict:
        """``{"generation", "checkpoint"}`` that generation g's training starts from: the best network's, or with
        ``training.init = "latest"`` `latest_trained` when it is newer than the best."""
        best = self.state["best"]
        latest = self.latest_trained(g) if self.r.training.init == "latest" else None
        return latest if latest and latest["generation"] > best["generation"] else best

    def latest_trained(self, g: int) -> dict | None:
        """The newest generation before g with a trained checkpoint: as the state records it (its promotion
        stage, or the published lineage a run folder began from), else found in the run folder."""
        latest = self.state.get("latest")
        if latest and latest["generation"] < g and os.path.exists(latest["checkpoint"]):
            return latest
        for k in sorted((int(k) for k in self.state["generations"] if int(k) < g), reverse=True):
            path = os.path.join(self.gen_dir(k), "train", "checkpoint.pt")
            if "train" in self.state["generations"][str(k)] and os.path.exists(path):
                return {"generation": k, "checkpoint": path}
        return None

    @staticmethod
    def _last_validation(out: str) -> dict:
        path = os.path.join(out, "train_log.csv")
        if not os.path.exists(path):
            return {}
        rows = [r for r in csv.DictReader(open(path)) if r.get("kind") == "val"]
        if not rows:
            return {}
        out = {}
        for k, v in rows[-1].items():
            try:
                out[k] = float(v)
            except (TypeError, ValueError):
                if v not in ("", None) and k != "kind":
                    out[k] = v
        return out

    # ------------------------------------------------------------------ 3. export, 4. quantize
    def cand_net(self, g: int, n: int) -> str:
        return os.path.join(self.gen_dir(g), f"net{n}.onnx")

    def _size_folders(self, g: int, n: int) -> list[str]:
        """Games of size n for batch-norm statistics and calibration: generation g's own, else the window's."""
        mine = [s["path"] for s in self.state["generations"].get(str(g), {}).get("selfplay", []) if s["size"] == n]
        if mine:
            return mine
        return [self._readable(p) for s in self.r.window.sources if s.size == n for p in self._expand(s.path)]

    def stage_export(self, g: int) -> None:
        from .export import export_checkpoint
        ckpt = os.path.join(self.gen_dir(g), "train", "checkpoint.pt")
        for n in self.r.export.bn_sizes:
            folders = self._size_folders(g, n)
            export_checkpoint(ckpt, self.cand_net(g, n), check=True, bn_data=folders or None,
                              bn_size=n if folders else None, bn_batches=self.r.export.bn_batches,
                              name_source=lambda p: relative_paths(p, self.r.root, self.dir))
            self.log(f"[gen {g}] export: {os.path.relpath(self.cand_net(g, n), self.dir)}"
                     + (f" (batch-norm statistics of {n}x{n} positions)" if folders else ""))

    def stage_quantize(self, g: int) -> None:
        if not self.r.quantize.enabled:
            return
        result = {}
        for n in self.r.export.bn_sizes:
            result[str(n)] = self._quantize_one(self.cand_net(g, n), n, self._size_folders(g, n), g)
        self.state["generations"].setdefault(str(g), {})["quantize"] = result

    def _quantize_one(self, net: str, n: int, folders: list[str], g: int) -> dict:
        """The int8 copy of ``net``: quantize's default first (its `default_fp32_nodes` in fp32, the rest int8),
        then one more ``keep_fp32`` node at a time until the value MAE meets the bar (the last try is kept if
        none does). With ``quantize.percentiles`` every activation-range rule listed is tried that way, and the
        copy closest to fp32 on held-out positions is kept (see `_closest`)."""
        from azgo.nets.quantize import compare_int8, int8_path_for, int8_vnni_path_for, quantize_int8

        from .calibration import games_of_size, random_positions, sample_positions
        from .workers import archive_games
        q = self.r.quantize
        want = q.calibration_positions + HELD_OUT
        files = [f for d in folders for f in archive_games(d)]
        drawn = sample_positions(games_of_size(files, n), want, seed=g) if files else []
        source = f"generation {g}'s data"
        if files and len(drawn) < q.calibration_positions + 16:  # short games: add the training window's
            more = [f for d in self.window(g)[0] if d not in folders for f in archive_games(d)]
            wider = sample_positions(games_of_size(files + more, n), want, seed=g) if more else []
            if len(wider) > len(drawn):
                drawn, source = wider, f"generation {g}'s data and the training window's"
        held = min(HELD_OUT, max(len(drawn) - q.calibration_positions, len(drawn) // 4))
        if held >= 16:  # too few games for both sets: a quarter of the positions is held out
            planes, test = drawn[:-held], drawn[-held:]
            note, where = f"{len(planes)} positions of {n}x{n} games of {source}", "held-out"
        elif len(drawn):
            planes, test = drawn, drawn[-HELD_OUT:]
            note, where = f"{len(planes)} positions of {n}x{n} games of {source}", "calibration"
        else:
            planes = random_positions(n, want, seed=g)
            planes, test = planes[:-HELD_OUT], planes[-HELD_OUT:]
            note, where = "random legal positions", "held-out random"
        keep_fp32, vnni_keep = self._nodes_in(net, q.keep_fp32, g), self._nodes_in(net, q.vnni_keep_fp32, g)
        final = int8_path_for(net)
        rules = q.percentiles or (q.percentile,)
        tries = []
        for p in rules:
            label = f"percentile {p:g}" if p else "MinMax"
            out_path = final if len(rules) == 1 else final.with_name(f"{final.stem}.try{len(tries)}.onnx")
            for k in range(len(keep_fp32) + 1):
                keep = list(keep_fp32[:k])
                out = quantize_int8(net, planes, out_path, calibration_note=note, keep_fp32=keep,
                                    percentile=p or None)
                report = compare_int8(net, out, test)
                lead = f", score lead median {report['lead_median_abs']:.3f}" if "lead_median_abs" in report else ""
                self.log(f"[gen {g}] int8 {n}x{n} ({label}): fp32 layers beyond the default {keep or 'none'}: "
                         f"value MAE {report['value_mae']:.4f}, top-1 agreement {report['top1_agreement']:.3f}{lead} "
                         f"({len(test)} {where} positions)")
                if report["value_mae"] <= q.max_value_mae:
                    break
            tries.append((p, out, keep, report))
        best = _closest(tries, q.max_value_mae)
        p, out, keep, report = tries[best]
        if len(tries) > 1:
            os.replace(out, final)
            for t in tries:
                if os.path.exists(t[1]):
                    os.remove(t[1])
            self.log(f"[gen {g}] int8 {n}x{n}: kept the {'MinMax' if not p else f'percentile {p:g}'} copy")
        result = {"keep_fp32": keep, "value_mae": round(report["value_mae"], 5),
                  "top1_agreement": round(report["top1_agreement"], 4), "calibration": note,
                  "measured_on": f"{len(test)} {where} positions"}
        if "lead_median_abs" in report:
            result["lead_median_abs"] = round(report["lead_median_abs"], 4)
        if p:
            result["percentile"] = p
        if len(tries) > 1:
            result["tried"] = [_brief(t) for t in tries]
        vnni = int8_vnni_path_for(net)
        if vnni.exists():  # a copy left by an earlier try of this stage, or another network's
            vnni.unlink()
        if q.vnni_percentiles:
            result["vnni"] = self._vnni_copy(net, n, g, planes, test, note, where, keep, report, vnni_keep)
        return result

    def _nodes_in(self, net: str, names, g: int) -> list[str]:
        """``names`` that are nodes of ``net``'s graph (the recipe's fp32 nodes name one network size's layers;
        a grown network has other block numbers); the rest are logged and left out."""
        import onnx
        present = {node.name for node in onnx.load(net, load_external_data=False).graph.node}
        missing = [x for x in names if x not in present]
        if missing:
            self.log(f"[gen {g}] int8: {os.path.basename(net)} has no node {', '.join(missing)}; left out of keep_fp32")
        return [x for x in names if x in present]

    def _vnni_copy(self, net, n, g, planes, test, note, where, keep, kept7, vnni_keep) -> dict:
        """The 8-bit-weight copy ``<net>.int8-vnni.onnx`` (``quantize.vnni_percentiles``, with the 7-bit copy's
        fp32 layers): the closest of its rules is kept if it is within the value bar and closer to fp32 than
        the 7-bit copy ``kept7`` (its report); else no such file. ``vnni_keep``: the recipe's ``vnni_keep_fp32``
        nodes that this network has. Returns the record of what was tried."""
        from azgo.nets.quantize import compare_int8, int8_vnni_path_for, quantize_int8
        q = self.r.quantize
        final = int8_vnni_path_for(net)
        tries = []
        for p in q.vnni_percentiles:
            out = quantize_int8(net, planes, final.with_name(f"{final.stem}.try{len(tries)}.onnx"),
                                calibration_note=note, keep_fp32=keep + [k for k in vnni_keep if k not in keep],
                                full_range=True, percentile=p or None)
            report = compare_int8(net, out, test)
            lead = f", score lead median {report['lead_median_abs']:.3f}" if "lead_median_abs" in report else ""
            self.log(f"[gen {g}] int8 {n}x{n} 8-bit ({f'percentile {p:g}' if p else 'MinMax'}): value MAE "
                     f"{report['value_mae']:.4f}, top-1 agreement {report['top1_agreement']:.3f}{lead} "
                     f"({len(test)} {where} positions)")
            tries.append((p, out, keep, report))
        best = _closest(tries, q.max_value_mae)
        p, out, _, report = tries[best]
        closer = (report["value_mae"] <= q.max_value_mae
                  and _closest([(0, "", [], kept7), tries[best]], q.max_value_mae) == 1)
        if closer:
            os.replace(out, final)
        for t in tries:
            if os.path.exists(t[1]):
                os.remove(t[1])
        self.log(f"[gen {g}] int8 {n}x{n}: " + (f"kept the 8-bit {'MinMax' if not p else f'percentile {p:g}'} copy "
                                                f"for analysis on VNNI CPUs ({final.name})" if closer
                                                else "no 8-bit copy: none closer than the 7-bit one"))
        record = {"kept": closer, "tried": [_brief(t) for t in tries],
                  **({"keep_fp32": vnni_keep} if vnni_keep else {})}
        if closer:
            record.update(_brief(tries[best]), top1_agreement=round(report["top1_agreement"], 4),
                          measured_on=f"{len(test)} {where} positions")
        return record
