"""``azgo loop --recipe FILE``: generations of a recipe (``azgo.training.recipe``), unattended and resumable.

One generation is eight stages, each idempotent, each ending with an atomic rewrite of
``RUN/state.json`` (so a ``kill -9`` at any moment replays at most the stage it interrupted, and
nothing half-written is ever read: every file is written to a temporary name and renamed):

1. ``selfplay``  the best network plays ``selfplay.games`` games (split by ``[sizes]``) into
   ``RUN/genNNNN/selfplay/<size>/``, with the recipe's komi distribution, handicap share and forked
   starts; resumed by counting the games written;
2. ``train``     ``azgo train`` from the best checkpoint on the window (the lineage's newest generations
   with their share and recency, plus the recipe's sources with theirs) into ``RUN/genNNNN/train/``;
   resumed from its own checkpoint;
3. ``export``    one network per ``export.bn_sizes`` size, batch-norm statistics of that size;
4. ``quantize``  int8 copies; layers of ``quantize.keep_fp32`` stay fp32, one more at a time, until the
   value MAE against fp32 meets ``quantize.max_value_mae`` (the outcome is recorded);
5. ``gate``      the candidate against the gate's opponent under the recipe's rule (a threshold, or an
   SPRT stopped when decided), games resumed from the SGF written;
6. ``anchors``   each anchor line (GNU Go, Pachi, any GTP engine), both engines' seconds per move kept;
7. ``promote``   a candidate that passed its gate becomes the best network; with ``[promotion]`` its
   networks replace the registry entries and their cards are written (paths relative to the recipe's
   root, never this machine's);
8. ``publish``   with ``[lineage]``: the generation's self-play packed as shards into ``data/``, the best
   checkpoint, ``lineage.json`` and the ladder (CSV + PNG) into ``lineage.dir``: what a fresh clone needs
   to continue with the same command.

A new run folder starts from ``lineage.dir/lineage.json`` when one was published, else from the
recipe's ``[start]``. ``plan()`` says what the next generation will do without doing it.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import json
import math
import os
import shlex
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from azgo.engine.atomic import atomic_copy, atomic_write

from .recipe import Recipe, RecipeError

STAGES = ("selfplay", "train", "export", "quantize", "gate", "anchors", "promote", "publish")
LADDER_FIELDS = ("generation", "line", "opponent", "size", "seconds", "games", "wins", "losses", "draws",
                 "score", "elo", "promoted", "core_hours")
LINEAGE_FILE = "lineage.json"


def sha256(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sprt_llr(scores: list[float], elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of ``elo1`` against ``elo0`` for a list of game scores (1, 0.5, 0), by the
    normal approximation of the score (GSPRT); the variance has one win and one loss of prior weight, so a
    few games never decide alone."""
    n = len(scores)
    if n == 0:
        return 0.0
    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    total = sum(scores)
    mean = (total + 1.0) / (n + 2)
    var = (sum((x - mean) ** 2 for x in scores) + (1 - mean) ** 2 + mean ** 2) / (n + 2)
    return (s1 - s0) * (total - n * (s0 + s1) / 2) / max(var, 1e-6)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds of Wald's test: reject below, accept above."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def relative_paths(obj, root: str, run_dir: str):
    """``obj`` (JSON-like) with every absolute path under ``root`` made relative to it and every path
    under ``run_dir`` written as ``<run>/...``; other absolute paths keep only their file name."""
    if isinstance(obj, dict):
        return {relative_paths(k, root, run_dir): relative_paths(v, root, run_dir) for k, v in obj.items()}
    if isinstance(obj, list):
        return [relative_paths(v, root, run_dir) for v in obj]
    if isinstance(obj, str):
        out = obj
        for prefix, repl in ((os.path.realpath(run_dir), "<run>/"), (os.path.abspath(run_dir), "<run>/"),
                             (os.path.realpath(root), ""), (os.path.abspath(root), "")):
            out = out.replace(prefix + os.sep, repl).replace(prefix, repl.rstrip("/") or ".")
        home = os.path.expanduser("~")
        if home not in ("/", "~"):
            out = out.replace(home + os.sep, "~/")
        return out
    return obj


class RecipeRun:
    """The state machine behind ``azgo loop --recipe`` (see the module docstring)."""

    def __init__(self, recipe: Recipe, run_dir: str, log=None, device: str = "auto", ray: str | None = None,
                 workers: int | None = None, progress: bool | None = None):
        self.r = recipe
        self.dir = os.path.abspath(run_dir)
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.device = device
        self.ray = ray
        self.workers = workers if workers is not None else (recipe.selfplay.workers or os.cpu_count() or 1)
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.state_path = os.path.join(self.dir, "state.json")
        self.state = self._load_state()

    # ------------------------------------------------------------------ state
    def _load_state(self) -> dict | None:
        if os.path.exists(self.state_path):
            with open(self.state_path) as f:
                state = json.load(f)
            if state.get("recipe") != self.r.name:
                raise RecipeError(f"{self.dir} holds a run of recipe {state.get('recipe')!r}, not {self.r.name!r}")
            return state
        return None

    def save(self) -> None:
        atomic_write(self.state_path, json.dumps(self.state, indent=1, sort_keys=True))

    def path(self, rel: str) -> str:
        """An absolute path for a recipe path: ``<run>/...`` inside the run folder, else under the root."""
        if rel.startswith("<run>/"):
            return os.path.join(self.dir, rel[len("<run>/"):])
        return self.r.resolve(rel)

    def rel(self, path: str) -> str:
        """The recipe path of an absolute one (``<run>/...`` inside the run folder)."""
        inside = os.path.relpath(path, self.dir)
        if not inside.startswith(".."):
            return "<run>/" + inside
        return os.path.relpath(path, self.r.root)

    def lineage_file(self) -> str | None:
        if not self.r.lineage.dir:
            return None
        return os.path.join(self.path(self.r.lineage.dir), LINEAGE_FILE)

    def published(self) -> dict | None:
        """The published lineage state (``lineage.json``), if any."""
        path = self.lineage_file()
        if path and os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        return None

    def gen_dir(self, g: int) -> str:
        return os.path.join(self.dir, f"gen{g:04d}")

    # ------------------------------------------------------------------ the start
    def init(self) -> None:
        """A new run folder: from the published lineage, else from ``[start]`` (generation 0)."""
        os.makedirs(self.dir, exist_ok=True)
        pub = self.published()
        state = {"recipe": self.r.name, "recipe_sha256": self.r.sha256, "stage": "selfplay", "generations": {},
                 "ladder": [], "core_hours": 0.0, "selfplay": []}
        if pub is not None:
            lin = self.path(self.r.lineage.dir)
            best = pub["best"]
            g0 = int(pub["generation"])
            ckpt = os.path.join(self.gen_dir(g0), "checkpoint.pt")
            src = os.path.join(lin, best["checkpoint"])
            if sha256(src) != best["checkpoint_sha256"]:
                raise RecipeError(f"{src} does not match the sha256 that {LINEAGE_FILE} records")
            atomic_copy(src, ckpt)
            nets = {}
            for n, rel in best["nets"].items():
                path = self.path(rel)
                nets[n] = os.path.join(self.gen_dir(g0), f"net{n}.onnx")
                atomic_copy(path, nets[n])
                from azgo.nets.quantize import int8_path_for
                if int8_path_for(path).exists():
                    atomic_copy(int8_path_for(path), int8_path_for(nets[n]))
            state.update(generation=g0 + 1, best={"generation": best["generation"], "checkpoint": ckpt, "nets": nets},
                         ladder=pub.get("ladder", []), core_hours=float(pub.get("core_hours", 0.0)),
                         selfplay=[{"generation": s["generation"], "size": s["size"], "data": s["data"]}
                                   for s in pub.get("selfplay", [])])
            self.log(f"[start] from the published lineage: generation {g0} done, best is generation "
                     f"{best['generation']} ({best['checkpoint_sha256'][:12]})")
            todo = pub.get("in_progress")
            if todo and todo["generation"] == g0 + 1:
                self._resume_progress(state, todo, lin)
        else:
            state.update(generation=1, best=self._start_best())
            state["ladder"].append(self._ladder_row(0, "gate", "start", self.r.main_size, 0, {"elo": 0.0}, True, 0.0))
        self.state = state
        self.save()

    def _resume_progress(self, state: dict, todo: dict, lin: str) -> None:
        """Take up the published generation in progress: its self-play shards unpacked where the stage
        expects them, its trained checkpoint, its stage."""
        from .shards import unpack
        g = todo["generation"]
        made = []
        for s in todo.get("selfplay", []):
            out = os.path.join(self.gen_dir(g), "selfplay", str(s["size"]))
            unpack(self.path(s["data"]), out)
            made.append({"generation": g, "size": s["size"], "path": out,
                         "games": len(glob.glob(os.path.join(out, "*.sgf")))})
        info = dict(todo.get("info", {}))
        stage = todo["stage"]
        if made and STAGES.index(stage) > STAGES.index("selfplay"):
            info["selfplay"] = made
        if "candidate_checkpoint_sha256" in todo:
            src = os.path.join(lin, "candidate.pt")
            if sha256(src) != todo["candidate_checkpoint_sha256"]:
                raise RecipeError(f"{src} does not match the sha256 that {LINEAGE_FILE} records")
            atomic_copy(src, os.path.join(self.gen_dir(g), "train", "checkpoint.pt"))
        elif STAGES.index(stage) > STAGES.index("train"):
            stage = "train"  # the trained checkpoint was not published: train again
        state["generations"][str(g)] = info
        state["stage"] = stage
        self.log(f"[start] generation {g} in progress: resumed at stage {stage} "
                 f"({sum(m['games'] for m in made)} self-play games)")

    def _start_best(self) -> dict:
        """Generation 0 from ``[start]``: its checkpoint (or a random one) and its networks."""
        import torch

        from azgo.nets.quantize import int8_path_for

        from .export import export_checkpoint
        from .model import build_model
        g0 = self.gen_dir(0)
        os.makedirs(g0, exist_ok=True)
        ckpt = os.path.join(g0, "checkpoint.pt")
        st = self.r.start
        if st.checkpoint:
            atomic_copy(self.r.resolve(st.checkpoint), ckpt)
            how = f"the checkpoint {st.checkpoint}"
        else:
            model = build_model(st.net, seed=st.seed).eval()
            tmp = ckpt + ".tmp"
            torch.save({"net": st.net, "model": model.state_dict(), "step": 0,
                        "training": f"recipe {self.r.name}: random initialisation (seed {st.seed})"}, tmp)
            os.replace(tmp, ckpt)
            how = f"a random {st.net} network (seed {st.seed})"
        nets = {}
        for n in self.r.export.bn_sizes:
            out = os.path.join(g0, f"net{n}.onnx")
            if n in st.nets:
                atomic_copy(self.r.resolve(st.nets[n]), out)
                src8 = int8_path_for(self.r.resolve(st.nets[n]))
                if src8.exists():
                    atomic_copy(src8, int8_path_for(out))
            else:
                export_checkpoint(ckpt, out, check=False)
            nets[str(n)] = out
        if self.r.quantize.enabled:
            for n, path in nets.items():
                if not int8_path_for(path).exists():
                    self._quantize_one(path, int(n), [], 0)
        self.log(f"[start] generation 0 is {how}")
        return {"generation": 0, "checkpoint": ckpt, "nets": nets}

    # ------------------------------------------------------------------ driver
    def run(self, generations: int | None = None) -> None:
        """Run (or resume) until ``generations`` more generations than the run's first are done
        (None: until killed)."""
        for m in (self.r.gate, *self.r.anchors):  # every opponent program is there before any work
            if m.opponent != "best":
                self._opponent(m)
        if self.state is None:
            self.init()
        stop_after = None if generations is None else self.state.setdefault("first_generation",
                                                                             self.state["generation"]) + generations - 1
        self.save()
        while stop_after is None or self.state["generation"] <= stop_after:
            g, stage = self.state["generation"], self.state["stage"]
            t0 = time.time()
            getattr(self, f"stage_{stage}")(g)
            spent = time.time() - t0
            info = self.state["generations"].setdefault(str(g), {})
            info.setdefault("seconds", {})[stage] = round(info.get("seconds", {}).get(stage, 0.0) + spent, 1)
            cores = os.cpu_count() or 1
            self.state["core_hours"] = round(self.state.get("core_hours", 0.0) + spent * cores / 3600, 4)
            nxt = STAGES.index(stage) + 1
            if nxt == len(STAGES):
                self.state.update(generation=g + 1, stage=STAGES[0])
            else:
                self.state["stage"] = STAGES[nxt]
            self.save()
            self.log(f"[gen {g}] {stage} done in {spent / 60:.1f} min")
            if stage != "publish":
                self.publish()  # the generation in progress, for a run folder that does not survive

    # ------------------------------------------------------------------ 1. self-play
    def selfplay_config(self, size: int):
        from .selfplay import SelfPlayConfig, load_openings
        sp = self.r.selfplay
        forks = ()
        if sp.openings.fraction > 0:
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
            opening_min_moves=sp.openings.min_moves, komi_stdev=sp.komi.stdev,
            komi_wide_fraction=sp.komi.wide_fraction, komi_range=tuple(float(x) for x in sp.komi.range),
            handicap_fraction=sp.handicap.fraction, handicap_stones=tuple(sp.handicap.stones),
            handicap_komi=sp.handicap.komi)

    def opening_files(self, size: int) -> list[str]:
        """The SGF games whose openings fork self-play of this size (``openings.lost_by``: those lost by
        that player), sorted."""
        from azgo.engine.sgf import SgfError, load_sgf

        from .dataset import find_sgf_files
        op = self.r.selfplay.openings
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
            if op.lost_by:
                winner = rec.result[:1].upper()
                loser = rec.white if winner == "B" else rec.black if winner == "W" else ""
                if op.lost_by.lower() not in (loser or "").lower():
                    continue
            out.append(f)
        return out

    def _expand(self, rel: str) -> list[str]:
        return [self.path(rel)] if rel.startswith("<run>/") else self.r.expand(rel)

    def best_net(self, size: int) -> str:
        nets = self.state["best"]["nets"]
        return nets.get(str(size)) or nets[str(self.r.main_size)]

    def stage_selfplay(self, g: int) -> None:
        from .workers import archive_games, run_selfplay
        made = []
        for n, count in sorted(self.r.games_per_size().items()):
            out = os.path.join(self.gen_dir(g), "selfplay", str(n))
            cfg = self.selfplay_config(n)
            have = len(archive_games(out)) if os.path.isdir(out) else 0
            self.log(f"[gen {g}] selfplay: {have} -> {count} {n}x{n} games with generation "
                     f"{self.state['best']['generation']} ({cfg.precision}, {self.workers} workers)")
            t0 = time.time()
            if self.ray:
                from .ray_selfplay import RaySelfPlay
                pool = RaySelfPlay(self.ray, cfg, workers=self.workers, device=self.device, log=self.log)
                try:
                    pool.play(out, count, net=self.best_net(n), seed=self._seed(g, n), show_progress=self.progress)
                finally:
                    pool.close()
            else:
                run_selfplay(out, count, self.workers, cfg, net=self.best_net(n), seed=self._seed(g, n),
                             show_progress=self.progress, device=self.device)
            games = len(archive_games(out))
            made.append({"generation": g, "size": n, "path": out, "games": games})
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
        ``window.generations`` generations (g itself included) and the recipe's sources."""
        w = self.r.window
        own = [s for s in self.state.get("selfplay", [])]
        own += [{"generation": s["generation"], "size": s["size"], "path": s["path"]}
                for s in self.state["generations"].get(str(g), {}).get("selfplay", [])]
        gens = sorted({s["generation"] for s in own}, reverse=True)[: w.generations]
        sources, shares, weights = [], [], []
        for n in sorted(self.r.sizes):
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
        if t.lr_steps:
            cmd += ["--lr-steps", ",".join(str(s) for s in t.lr_steps)]
        if t.threads:
            cmd += ["--threads", str(t.threads)]
        if t.size_mix:
            cmd += ["--size-mix", ",".join(f"{n}={v:g}" for n, v in sorted(t.size_mix.items()))]
        for path, share, *group in shares:
            cmd += ["--source-share", f"{path}={share:.6g}" + (f"@{group[0]}" if group else "")]
        for path, sw, pw in weights:
            cmd += ["--source-weight", f"{path}={sw:g}:{pw:g}"]
        if os.path.exists(os.path.join(out, "checkpoint.pt")):
            cmd.append("--resume")
        else:
            cmd += ["--init", self.state["best"]["checkpoint"]]
        self.log(f"[gen {g}] train: {len(sources)} sources, {t.steps} steps from generation "
                 f"{self.state['best']['generation']}")
        subprocess.run(cmd, check=True)
        info = self.state["generations"].setdefault(str(g), {})
        info["train"] = {"command": relative_paths(shlex.join(["azgo", *cmd[3:]]), self.r.root, self.dir),
                         "validation": self._last_validation(out)}

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
                              bn_size=n if folders else None, bn_batches=self.r.export.bn_batches)
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
        """The int8 copy of ``net``: every layer first, then one more ``keep_fp32`` node at a time until the
        value MAE meets the bar (the last try is kept if none does)."""
        from azgo.nets.quantize import compare_int8, quantize_int8

        from .calibration import games_of_size, random_positions, sample_positions
        from .workers import archive_games
        q = self.r.quantize
        files = [f for d in folders for f in archive_games(d)]
        planes = sample_positions(games_of_size(files, n), q.calibration_positions, seed=g) if files else []
        note = f"{len(planes)} positions of {n}x{n} games of generation {g}'s data"
        if len(planes) == 0:
            planes, note = random_positions(n, q.calibration_positions, seed=g), "random legal positions"
        keep: list[str] = []
        report = {}
        for k in range(len(q.keep_fp32) + 1):
            keep = list(q.keep_fp32[:k])
            out = quantize_int8(net, planes, calibration_note=note, keep_fp32=keep)
            report = compare_int8(net, out, planes[-256:])
            self.log(f"[gen {g}] int8 {n}x{n}: fp32 layers {keep or 'none'}: value MAE {report['value_mae']:.4f}, "
                     f"top-1 agreement {report['top1_agreement']:.3f}")
            if report["value_mae"] <= q.max_value_mae:
                break
        return {"keep_fp32": keep, "value_mae": round(report["value_mae"], 5),
                "top1_agreement": round(report["top1_agreement"], 4), "calibration": note}

    # ------------------------------------------------------------------ 5. gate, 6. anchors
    def _azgo(self, net: str, m) -> str:
        precision = "int8" if self.r.quantize.enabled else "fp32"
        limit = f"--visits {m.visits}" if m.visits else f"--seconds {m.seconds:g}"
        if m.visits == 0 and m.same_clock and m.opponent != "best":
            limit = "--lag 0.1"  # the clock (byo-yomi of `seconds` a move) sets azgo's time, as the opponent's
        return (f"{shlex.quote(sys.executable)} -m azgo.gtp.cli gtp --net {shlex.quote(net)} --threads {m.threads} "
                f"--precision {precision} --device cpu {limit}")

    def _opponent(self, m) -> str:
        if m.opponent == "best":
            return self._azgo(self.best_net(m.size), m)
        from azgo.gtp.opponents import OpponentMissing, gnugo_command, pachi_command
        try:
            if m.opponent == "gnugo":
                return gnugo_command(m.level)
            if m.opponent == "pachi":
                return pachi_command(m.threads)
        except OpponentMissing as e:
            raise RecipeError(f"{m.name}: {e}") from None
        return m.opponent

    def _time_settings(self, m):
        from azgo.engine.timecontrol import TimeSettings
        if m.visits or not m.same_clock or m.opponent == "best":
            return None
        return TimeSettings("byoyomi", 0.0, float(m.seconds), 3)

    def _line(self, g: int, m, folder: str, should_stop=None):
        """Play line ``m`` for generation g in ``folder`` (with ``parallel`` sub-lines ``folder/part<k>`` at
        once, each with its share of the games); games already written count (resumed). Returns the
        combined summary."""
        import threading

        from azgo.gtp.match import MatchSummary, run_match
        name_b = m.opponent if m.opponent in ("best", "gnugo", "pachi") else m.name
        cmd_a, cmd_b, ts = self._azgo(self.cand_net(g, m.size), m), self._opponent(m), self._time_settings(m)
        parts = [m.games // m.parallel + (1 if k < m.games % m.parallel else 0) for k in range(m.parallel)]
        live: list = [None] * m.parallel  # each sub-line's summary so far, for a test on all of them
        lock = threading.Lock()

        def combined():
            out = MatchSummary(0, 0, 0, 0, f"gen{g}", name_b)
            for s in live:
                if s is None:
                    continue
                out.games += s.games
                out.a_wins += s.a_wins
                out.b_wins += s.b_wins
                out.draws += s.draws
                out.scores += s.scores
                for e in ("a", "b"):
                    out.add_time(e, *s.seconds[e])
            return out

        def part(k: int):
            def stop(summary, k=k):
                with lock:
                    live[k] = summary
                    return should_stop is not None and should_stop(combined())
            sub = folder if m.parallel == 1 else os.path.join(folder, f"part{k}")
            try:
                s = run_match(cmd_a, cmd_b, parts[k], m.size, m.komi, time_settings=ts, sgf_dir=sub, log=self.log,
                              name_a=f"gen{g}", name_b=name_b, resume=True, replay_crashes="b",
                              handicap=m.handicap, should_stop=stop)
            except BaseException as e:  # handed to the stage: a line with a failed part is not done
                errors.append(e)
                return
            with lock:
                live[k] = s
        errors: list = []
        if m.parallel == 1:
            part(0)
        else:
            threads = [threading.Thread(target=part, args=(k,)) for k in range(m.parallel)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        summary = combined()
        for line in summary.lines():
            self.log(f"[gen {g}] {m.name}: {line}")
        here = f"{shlex.quote(sys.executable)} -m azgo.gtp.cli"  # shown as the command a user types
        cmd_a, cmd_b = cmd_a.replace(here, "azgo"), cmd_b.replace(here, "azgo")
        summary.meta = {"command": relative_paths(f"azgo match -a {shlex.quote(cmd_a)} -b {shlex.quote(cmd_b)} "
                                                  f"--size {m.size} --komi {m.komi:g}"
                                                  + (f" --handicap {m.handicap}" if m.handicap else ""),
                                                  self.r.root, self.dir),
                        "games_folder": self.rel(folder)}
        return summary

    def stage_gate(self, g: int) -> None:
        gate = self.r.gate
        folder = os.path.join(self.gen_dir(g), "gate")
        lo, hi = sprt_bounds(gate.alpha, gate.beta)

        def decided(summary) -> bool:
            if gate.rule != "sprt":
                return False
            llr = sprt_llr(summary.scores, gate.elo0, gate.elo1)
            return llr <= lo or llr >= hi
        s = self._line(g, gate, folder, should_stop=decided)
        score = (s.a_wins + 0.5 * s.draws) / s.games if s.games else 0.0
        if gate.rule == "sprt":
            llr = sprt_llr(s.scores, gate.elo0, gate.elo1)
            passed = llr >= hi
            verdict = f"SPRT LLR {llr:.2f} in ({lo:.2f}, {hi:.2f}): {'accepted' if passed else 'rejected'}"
        else:
            passed = score >= gate.threshold
            verdict = f"score {score:.3f} against the threshold {gate.threshold:g}: {'passed' if passed else 'failed'}"
        self.log(f"[gen {g}] gate: {verdict}")
        info = self.state["generations"].setdefault(str(g), {})
        info["gate"] = self._record(gate, s) | {"passed": passed, "verdict": verdict}

    def stage_anchors(self, g: int) -> None:
        info = self.state["generations"].setdefault(str(g), {})
        lines = {}
        for a in self.r.anchors:
            if g % a.every:
                self.log(f"[gen {g}] {a.name}: not this generation (every {a.every})")
                continue
            s = self._line(g, a, os.path.join(self.gen_dir(g), "anchors", a.name))
            lines[a.name] = self._record(a, s)
        info["anchors"] = lines

    @staticmethod
    def _record(m, s) -> dict:
        """A strength line as a record (the card and the ladder take these)."""
        from azgo.gtp.match import elo, wilson
        score = (s.a_wins + 0.5 * s.draws) / s.games if s.games else 0.0
        lo, hi = wilson(s.a_wins + 0.5 * s.draws, s.games) if s.games else (0.0, 1.0)
        meta = getattr(s, "meta", {})
        return {"line": m.name, "opponent": m.opponent, "size": m.size, "komi": m.komi, "handicap": m.handicap,
                "seconds": m.seconds if not m.visits else None, "visits": m.visits or None, "threads": m.threads,
                "games": s.games, "wins": s.a_wins, "losses": s.b_wins, "draws": s.draws, "score": round(score, 4),
                "interval": [round(lo, 4), round(hi, 4)], "elo": round(max(-999.0, min(999.0, elo(score))), 1) + 0.0,
                "seconds_per_move": {"azgo": s.per_move("a"), "opponent": s.per_move("b")},
                "command": meta.get("command", ""), "games_folder": meta.get("games_folder", "")}

    # ------------------------------------------------------------------ 7. promotion
    def stage_promote(self, g: int) -> None:
        info = self.state["generations"].setdefault(str(g), {})
        passed = bool(info.get("gate", {}).get("passed"))
        hours = self.state.get("core_hours", 0.0)
        ratings = self.state.setdefault("ratings", {"0": 0.0})
        for name, rec in [("gate", info.get("gate"))] + list(info.get("anchors", {}).items()):
            if not rec:
                continue
            smoothed = _elo_of((rec["wins"] + 0.5 * rec["draws"] + 0.5) / (rec["games"] + 1))
            if name == "gate" and rec["opponent"] == "best":  # the ladder chains head-to-head steps
                ratings[str(g)] = round(ratings.get(str(self.state["best"]["generation"]), 0.0) + smoothed, 1)
                self._add_ladder(g, dict(rec, elo=ratings[str(g)]), passed, hours)
            else:  # against a fixed opponent: Elo of the (half-a-win smoothed) score
                self._add_ladder(g, dict(rec, elo=round(smoothed, 1)), passed, hours)
        if not passed:
            info["promoted"] = False
            self.log(f"[gen {g}] not promoted: generation {self.state['best']['generation']} stays the best")
            return
        nets = {str(n): self.cand_net(g, n) for n in self.r.export.bn_sizes}
        self.state["best"] = {"generation": g, "checkpoint": os.path.join(self.gen_dir(g), "train", "checkpoint.pt"),
                              "nets": nets}
        info["promoted"] = True
        if self.r.promotion.entries:
            self._promote_registry(g, info)
        self.log(f"[gen {g}] promoted: generation {g} is the best network")

    def _promote_registry(self, g: int, info: dict) -> None:
        from azgo.nets.quantize import int8_path_for
        reg = self.path(self.r.promotion.registry)
        os.makedirs(reg, exist_ok=True)
        registry_path = os.path.join(reg, "registry.json")
        registry = json.load(open(registry_path)) if os.path.exists(registry_path) else {"networks": []}
        for n, fname in sorted(self.r.promotion.entries.items()):
            src = self.cand_net(g, n)
            dst = os.path.join(reg, fname)
            if os.path.exists(int8_path_for(src)):
                atomic_copy(int8_path_for(src), int8_path_for(dst))
            atomic_copy(src, dst)
            card = self.card(g, n, info, dst)
            old_card = Path(dst).with_suffix(".json")
            if old_card.exists():  # what it replaces, by hash (the old card's history stays in git)
                try:
                    old = json.loads(old_card.read_text())
                    card["previous"] = {"sha256": old.get("sha256"), "name": old.get("name"),
                                        "recipe_generation": (old.get("recipe") or {}).get("generation")}
                except ValueError:
                    pass
            atomic_write(old_card, json.dumps(card, indent=2) + "\n")
            entry = next((e for e in registry["networks"] if e["file"] == fname), None)
            if entry is None:
                registry["networks"].append({"file": fname, "sizes": [n, n], "card": Path(fname).with_suffix(".json").name})
            self.log(f"[gen {g}] registry: {fname} <- generation {g} ({sha256(dst)[:12]})")
        atomic_write(registry_path, json.dumps(registry, indent=2) + "\n")

    def card(self, g: int, n: int, info: dict, dst: str) -> dict:
        """The card of generation g's size-n network as promoted (relative paths only)."""
        from azgo.nets.quantize import int8_path_for
        src_card = Path(self.cand_net(g, n)).with_suffix(".json")
        base = json.loads(src_card.read_text()) if src_card.exists() else {}
        base["name"] = Path(dst).stem
        base["file"] = os.path.basename(dst)
        base["sha256"] = sha256(dst)
        if int8_path_for(dst).exists():
            base["int8"] = {"file": int8_path_for(dst).name, "sha256": sha256(int8_path_for(dst)),
                            **info.get("quantize", {}).get(str(n), {})}
        gens = self.state["generations"]
        base["recipe"] = {"name": self.r.name, "file": os.path.relpath(self.r.path, self.r.root),
                          "sha256": self.r.sha256, "generation": g,
                          "parent_generation": self._parent(g),
                          "core_hours": self.state.get("core_hours", 0.0),
                          "hours_this_generation": round(sum(gens[str(g)].get("seconds", {}).values()) / 3600, 3),
                          "selfplay": [{"size": s["size"], "games": s["games"]} for s in info.get("selfplay", [])],
                          "train": info.get("train", {})}
        base["strength"] = [rec for rec in [info.get("gate")] + list(info.get("anchors", {}).values()) if rec]
        return relative_paths(base, self.r.root, self.dir)

    def _parent(self, g: int) -> int | None:
        rows = [r for r in self.state["ladder"] if r.get("promoted") in ("1", 1, True) and int(r["generation"]) < g]
        return int(rows[-1]["generation"]) if rows else None

    # ------------------------------------------------------------------ ladder
    def _ladder_row(self, g, line, opponent, size, games, rec, promoted, hours) -> dict:
        rec = rec or {}
        return {"generation": g, "line": line, "opponent": opponent, "size": size,
                "seconds": rec.get("seconds") or "", "games": games, "wins": rec.get("wins", ""),
                "losses": rec.get("losses", ""), "draws": rec.get("draws", ""), "score": rec.get("score", ""),
                "elo": rec.get("elo", ""), "promoted": int(bool(promoted)), "core_hours": round(hours, 3)}

    def _add_ladder(self, g: int, rec: dict, promoted: bool, hours: float) -> None:
        ladder = [r for r in self.state["ladder"] if not (int(r["generation"]) == g and r["line"] == rec["line"])]
        ladder.append(self._ladder_row(g, rec["line"], rec["opponent"], rec["size"], rec["games"], rec, promoted, hours))
        self.state["ladder"] = ladder

    def write_ladder(self, folder: str) -> None:
        """``ladder.csv`` and ``ladder.png`` (the score of every line by generation) into ``folder``."""
        import io
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=LADDER_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(self.state["ladder"])
        atomic_write(os.path.join(folder, "ladder.csv"), buf.getvalue())
        plot_ladder(self.state["ladder"], os.path.join(folder, "ladder.png"), self.r.name)

    # ------------------------------------------------------------------ 8. publish
    def stage_publish(self, g: int) -> None:
        self.write_ladder(self.dir)
        if not self.r.lineage.dir:
            self._keep_selfplay(g, [])
            return
        published = self._pack_selfplay(g)
        self._keep_selfplay(g, published)
        self.publish(done=g)

    def _pack_selfplay(self, g: int) -> list[dict]:
        """Generation g's self-play (as far as it got) packed into ``lineage.data``; returns the folders."""
        from .shards import pack
        out = []
        if not self.r.lineage.data:
            return out
        for n in sorted(self.r.sizes):
            src = os.path.join(self.gen_dir(g), "selfplay", str(n))
            if not os.path.isdir(src):
                continue
            rel = os.path.join(self.r.lineage.data, f"{self.r.name}-g{g:04d}-{n}")
            pack(src, self.path(rel), per_shard=1500)
            out.append({"generation": g, "size": n, "data": rel,
                        "games": len(glob.glob(os.path.join(src, "*.sgf")))})
        return out

    def publish(self, done: int | None = None) -> str | None:
        """Write the lineage's resume state into ``lineage.dir``: the best checkpoint and networks (the registry's
        files when they are the promoted ones), ``lineage.json``, the ladder; with ``done`` = g, generation g is
        finished; else the generation in progress goes with it (its self-play so far packed as shards, its
        trained checkpoint, the stage to resume), so that a new run folder (a fresh clone) continues it.
        Returns the lineage file (None without ``lineage.dir``)."""
        if not self.r.lineage.dir or self.state is None:
            return None
        from azgo.nets.quantize import int8_path_for
        lin = self.path(self.r.lineage.dir)
        os.makedirs(lin, exist_ok=True)
        best = self.state["best"]
        ckpt_dst = os.path.join(lin, "best.pt")
        if not os.path.exists(ckpt_dst) or sha256(ckpt_dst) != sha256(best["checkpoint"]):
            atomic_copy(best["checkpoint"], ckpt_dst)
        nets = {}
        registry = self.path(self.r.promotion.registry)
        for n, path in best["nets"].items():
            entry = self.r.promotion.entries.get(int(n))
            promoted = (entry and not self.r.promotion.registry.startswith("<run>/")  # a run's registry goes with it
                        and os.path.exists(os.path.join(registry, entry))
                        and sha256(os.path.join(registry, entry)) == sha256(path))
            if promoted:
                nets[n] = self.rel(os.path.join(registry, entry))
                for stale in (os.path.join(lin, f"best{n}.onnx"), str(int8_path_for(os.path.join(lin, f"best{n}.onnx")))):
                    if os.path.exists(stale):
                        os.remove(stale)
            else:
                dst = os.path.join(lin, f"best{n}.onnx")
                if not os.path.exists(dst) or sha256(dst) != sha256(path):
                    atomic_copy(path, dst)
                if int8_path_for(path).exists():
                    atomic_copy(int8_path_for(path), int8_path_for(dst))
                nets[n] = self.rel(dst)
        finished = done if done is not None else self.state["generation"] - 1
        pub = {"recipe": self.r.name, "recipe_sha256": self.r.sha256, "generation": finished,
               "best": {"generation": best["generation"], "checkpoint": "best.pt",
                        "checkpoint_sha256": sha256(ckpt_dst), "nets": nets,
                        "nets_sha256": {n: sha256(p) for n, p in best["nets"].items()}},
               "selfplay": [{k: s[k] for k in ("generation", "size", "data")} for s in self.state["selfplay"]
                            if s.get("data") and s["generation"] <= finished],
               "ladder": self.state["ladder"], "core_hours": self.state.get("core_hours", 0.0),
               "generations": relative_paths({k: {kk: vv for kk, vv in v.items() if kk != "selfplay"}
                                              for k, v in self.state["generations"].items() if int(k) <= finished},
                                             self.r.root, self.dir)}
        cand = os.path.join(lin, "candidate.pt")
        if done is None:
            g = self.state["generation"]
            progress = {"generation": g, "stage": self.state["stage"], "selfplay": self._pack_selfplay(g),
                        "info": relative_paths({k: v for k, v in self.state["generations"].get(str(g), {}).items()
                                                if k != "selfplay"}, self.r.root, self.dir)}
            trained = os.path.join(self.gen_dir(g), "train", "checkpoint.pt")
            if STAGES.index(self.state["stage"]) > STAGES.index("train") and os.path.exists(trained):
                if not os.path.exists(cand) or sha256(cand) != sha256(trained):
                    atomic_copy(trained, cand)
                progress["candidate_checkpoint_sha256"] = sha256(cand)
            elif os.path.exists(cand):
                os.remove(cand)
            pub["in_progress"] = progress
        elif os.path.exists(cand):
            os.remove(cand)
        path = os.path.join(lin, LINEAGE_FILE)
        atomic_write(path, json.dumps(pub, indent=1) + "\n")
        self.write_ladder(lin)
        what = f"generation {finished} done" + (f", generation {self.state['generation']} at stage "
                                                 f"{self.state['stage']}" if done is None else "")
        self.log(f"[publish] {self.rel(lin)}: {what}, best {best['generation']}")
        return path

    def _keep_selfplay(self, g: int, published: list[dict]) -> None:
        """Add generation g's self-play to the lineage's list (with its shard folder when published)."""
        data = {(p["generation"], p["size"]): p["data"] for p in published}
        keep = [s for s in self.state.get("selfplay", []) if s["generation"] != g]
        for s in self.state["generations"].get(str(g), {}).get("selfplay", []):
            keep.append({"generation": g, "size": s["size"], "path": s["path"],
                         **({"data": data[(g, s["size"])]} if (g, s["size"]) in data else {})})
        newest = sorted({s["generation"] for s in keep}, reverse=True)[: self.r.window.generations]
        self.state["selfplay"] = [s for s in keep if s["generation"] in newest]

    # ------------------------------------------------------------------ plan
    def plan(self) -> str:
        """What the next generation will do, and from which state (nothing is run or written)."""
        r = self.r
        lines = [f"recipe {r.name} ({os.path.relpath(r.path)}, sha256 {r.sha256[:12]}), run folder {self.dir}"]
        if self.state is not None:
            g, stage = self.state["generation"], self.state["stage"]
            best = self.state["best"]
            lines.append(f"state: the run folder, generation {g} at stage {stage}; best is generation "
                         f"{best['generation']} ({os.path.relpath(best['checkpoint'])})")
        else:
            pub = self.published()
            if pub is not None:
                g = pub["generation"] + 1
                lines.append(f"state: the published lineage {os.path.relpath(self.lineage_file())}: generation "
                             f"{pub['generation']} done, best is generation {pub['best']['generation']} "
                             f"(checkpoint {pub['best']['checkpoint_sha256'][:12]}, networks "
                             + ", ".join(f"{n}x{n} {p}" for n, p in pub["best"]["nets"].items()) + ")")
            else:
                g = 1
                st = r.start
                lines.append("state: nothing run or published yet; generation 0 is "
                             + (f"the checkpoint {st.checkpoint}" if st.checkpoint else f"a random {st.net} network")
                             + (", networks " + ", ".join(f"{n}x{n} {p}" for n, p in st.nets.items()) if st.nets else ""))
            stage = "selfplay"
        sp = r.selfplay
        lines.append(f"next: generation {g}, from stage {stage}")
        per = r.games_per_size()
        lines.append("  selfplay: " + ", ".join(f"{c} {n}x{n} games" for n, c in sorted(per.items()))
                     + f" at {sp.full_visits} visits ({sp.full_prob:g} of moves; else {sp.cheap_visits}), {sp.precision}, "
                     + f"{self.workers} workers")
        lines.append("            komi " + ", ".join(f"{n}x{n} {sp.komi.fair[n]:g}" for n in sorted(per))
                     + f" +- {sp.komi.stdev:g} (normal), {sp.komi.wide_fraction:g} of games uniform in "
                     + f"[{sp.komi.range[0]:g}, {sp.komi.range[1]:g}]; {sp.handicap.fraction:g} handicap games of "
                     + f"{sp.handicap.stones[0]}-{sp.handicap.stones[1]} stones at komi {sp.handicap.komi:g}")
        if sp.openings.fraction:
            lines.append(f"            forked starts: {sp.openings.fraction:g} of even games from the first "
                         f"{sp.openings.min_moves}-{sp.openings.max_moves} moves of the games in "
                         f"{', '.join(sp.openings.sources)}"
                         + (f" lost by {sp.openings.lost_by}" if sp.openings.lost_by else ""))
        w = r.window
        known = self.state.get("selfplay", []) if self.state else (self.published() or {}).get("selfplay", [])
        gens = sorted({s["generation"] for s in known} | {g}, reverse=True)[: w.generations]
        lines.append(f"  window: the lineage's generations {', '.join(map(str, sorted(gens)))} "
                     f"(share {w.selfplay_share:g} of their sizes' draws, recency {w.recency:g})"
                     + "".join(f"; {s.path} share {s.share:g}" + (f" ({s.size}x{s.size})" if s.size else "")
                               for s in w.sources))
        t = r.training
        lines.append(f"  train: {t.steps} steps of {t.batch_size}, lr {t.lr:g}"
                     + (f" x{t.lr_decay:g} at {', '.join(map(str, t.lr_steps))}" if t.lr_steps else "")
                     + ", loss weights " + ", ".join(f"{k} {v:g}" for k, v in t.loss_weights.items())
                     + (", size mix " + ", ".join(f"{n}x{n} {v:g}" for n, v in sorted(t.size_mix.items())) if t.size_mix else ""))
        lines.append("  export: " + ", ".join(f"{n}x{n} (batch norm of {n}x{n} positions)" for n in r.export.bn_sizes))
        q = r.quantize
        lines.append(f"  quantize: int8, value MAE <= {q.max_value_mae:g} on {q.calibration_positions} positions, "
                     f"fp32 fallbacks {list(q.keep_fp32) or 'none'}" if q.enabled else "  quantize: off")
        for m in [r.gate, *r.anchors]:
            how = f"{m.visits} visits" if m.visits else f"{m.seconds:g} s a move" + (" (both engines' clock)" if m.same_clock and m.opponent != "best" else "")
            rule = ""
            if m is r.gate:
                rule = (f"; SPRT elo {r.gate.elo0:g} vs {r.gate.elo1:g}, alpha {r.gate.alpha:g}, beta {r.gate.beta:g}"
                        if r.gate.rule == "sprt" else f"; passes at a score >= {r.gate.threshold:g}")
            lines.append(f"  {m.name}: {m.games} games against {m.opponent} on {m.size}x{m.size}, komi {m.komi:g}"
                         + (f", {m.handicap} handicap stones" if m.handicap else "") + f", {how}{rule}"
                         + (f" ({m.parallel} at once)" if m.parallel > 1 else "")
                         + (f"; every {m.every} generations" + ("" if g % m.every else ", this one")
                            if m is not r.gate and m.every > 1 else ""))
        p = r.promotion
        lines.append("  promote: " + (", ".join(f"{n}x{n} -> {p.registry}/{f}" for n, f in sorted(p.entries.items()))
                                      if p.entries else "best network of the run only (no registry entry)"))
        lines.append("  publish: " + (f"{r.lineage.dir} (best.pt, lineage.json, ladder)" if r.lineage.dir else "nothing")
                     + (f", self-play shards under {r.lineage.data}/" if r.lineage.data else ""))
        return "\n".join(lines)


def _elo_of(score: float) -> float:
    from azgo.gtp.match import elo
    return elo(score)


def plot_ladder(rows: list[dict], png: str, title: str) -> bool:
    """Each line's Elo against the lineage's core-hours (promoted generations in green; the gate line chains
    the head-to-head steps from generation 0, the anchor lines are against their fixed opponent, each
    score smoothed by half a win on each side); needs matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    lines: dict[str, list] = {}
    for r in rows:
        if r.get("elo") in ("", None):
            continue
        lines.setdefault(r["line"], []).append((float(r.get("core_hours") or 0.0), float(r["elo"]),
                                                str(r["promoted"]) == "1", int(r["generation"])))
    if not lines:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        ax.plot([p[0] for p in pts if p[2]], [p[1] for p in pts if p[2]], "o", color="green")
        for x, y, _, gen in pts:
            ax.annotate(str(gen), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
    ax.set_xlabel("core-hours of the lineage (labels: generation)")
    ax.set_ylabel("Elo (gate: chained head to head; anchors: against them)")
    ax.set_title(f"{title}: ladder (green: promoted)")
    ax.set_xlim(left=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    tmp = png + ".tmp.png"
    fig.savefig(tmp, dpi=90, bbox_inches="tight")
    plt.close(fig)
    os.replace(tmp, png)
    return True


def describe(recipe: Recipe) -> dict:
    """The recipe as plain data (for logs)."""
    return asdict(recipe)
