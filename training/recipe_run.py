"""``azgo loop --recipe FILE``: generations of a recipe (``azgo.training.recipe``), unattended and resumable.

One generation is eight stages, each idempotent, each ending with an atomic rewrite of
``RUN/state.json`` (so a ``kill -9`` at any moment replays at most the stage it interrupted, and
nothing half-written is ever read: every file is written to a temporary name and renamed):

1. ``selfplay``  the best network plays ``selfplay.games`` games (split by ``[sizes]``) into
   ``RUN/genNNNN/selfplay/<size>/``, with the recipe's komi distribution, handicap share and forked
   starts; resumed by counting the games written;
2. ``train``     ``azgo train`` from the best checkpoint (or with ``training.init = "latest"`` the last trained
   generation's) on the window (the lineage's newest generations
   with their share and recency, plus the recipe's sources with theirs) into ``RUN/genNNNN/train/``;
   resumed from its own checkpoint;
3. ``export``    one network per ``export.bn_sizes`` size, batch-norm statistics of that size;
4. ``quantize``  int8 copies (quantize's default fp32 layers); layers of ``quantize.keep_fp32`` stay fp32 too,
   one more at a time, until the value MAE against fp32 meets ``quantize.max_value_mae`` (the outcome is recorded);
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
recipe's ``[start]``. ``plan()`` says what the next generation will do without doing it. Each generation runs
the recipe as its ``[[from_generation]]`` entries make it for that generation (`Recipe.at_generation`), taken
at the generation's first stage: a change written while a generation runs waits for the next one.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from azgo.engine.atomic import atomic_copy, atomic_write, pid_alive, remove_orphans

from .recipe import Recipe, RecipeError, load_recipe
from .recipe_data import DataMixin
from .recipe_lines import LinesMixin, sprt_bounds, sprt_llr  # noqa: F401  (re-exported)
from .recipe_plan import PlanMixin
from .recipe_stop import stop_reason
from .recipe_publish import PublishMixin, plot_ladder  # noqa: F401  (re-exported)
from .recipe_util import LADDER_FIELDS, LINEAGE_FILE, STAGES, TRAINING_CHECKPOINT, relative_paths, sha256  # noqa: F401  (re-exported)

PID_FILE = "loop.pid"  # the live loop of a run folder


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM raises KeyboardInterrupt in the main thread while the loop runs (as Ctrl-C does), so that the
    stage in progress ends its children and records its time before the loop exits (restored afterwards)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    old = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def ladder_ratings(ladder: list) -> dict[str, float]:
    """The chained head-to-head ratings (generation -> Elo) of a ladder's gate rows, which a run folder that
    continues a published lineage carries on from (the next gate adds to its best's rating, not to 0)."""
    ratings = {"0": 0.0}
    for row in ladder:
        if row.get("line") == "gate" and row.get("elo") not in ("", None):
            ratings[str(int(row["generation"]))] = float(row["elo"])
    return ratings


class RecipeRun(DataMixin, LinesMixin, PublishMixin, PlanMixin):
    """The state machine behind ``azgo loop --recipe`` (see the module docstring)."""

    def __init__(self, recipe: Recipe, run_dir: str, log=None, device: str = "auto", ray: str | None = None,
                 workers: int | None = None, progress: bool | None = None):
        self.recipe = recipe  # the file as read; self.r is what the current generation runs (at_generation)
        self.r = recipe
        self.dir = os.path.abspath(run_dir)
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.device = device
        self.ray = ray
        self.workers = workers if workers is not None else (recipe.selfplay.workers or os.cpu_count() or 1)
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.state_path = os.path.join(self.dir, "state.json")
        self.state = self._load_state()
        if self.state is not None:
            self.r = recipe.at_generation(self.state["generation"])

    def use_generation(self, g: int, reread: bool = True) -> None:
        """Run generation ``g`` by the recipe as its ``[[from_generation]]`` entries make it (logged when that
        changes what runs). With ``reread`` (a generation starting in a running loop) the file is read again
        first, so that an edit made while the loop ran (a new entry, say) counts from the generation that starts
        next and never from the middle of one; a file that no longer reads keeps the recipe as the loop read
        it, with the reason logged, so that a typo never stops an unattended run."""
        now = self.recipe
        if reread:
            try:
                now = load_recipe(self.recipe.path)
            except RecipeError as e:
                self.log(f"[gen {g}] the recipe file was edited and does not read ({e}): generation {g} runs "
                         f"the recipe as the loop read it (sha256 {self.recipe.sha256[:12]})")
        if now.name != self.recipe.name:
            self.log(f"[gen {g}] the recipe file now names the recipe {now.name!r}, this run folder's is "
                     f"{self.recipe.name!r}: generation {g} runs the recipe as the loop read it")
            now = self.recipe
        if now.sha256 != self.recipe.sha256:
            self.log(f"[gen {g}] the recipe file changed (sha256 {self.recipe.sha256[:12]} -> {now.sha256[:12]}): "
                     f"generation {g} runs it as it is now")
            self.recipe = now
        r = self.recipe.at_generation(g)
        if r.generation_changes != self.r.generation_changes:
            new = [n for n in r.generation_changes if n not in self.r.generation_changes]
            keys = sorted({k for n, ch in r.schedule if n in new for k in ch})
            self.log(f"[gen {g}] the recipe's changes from generation " + ", ".join(map(str, new))
                     + " apply: " + ", ".join(f"[{k}]" for k in keys))
        self.r = r

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
                want = best.get("nets_sha256", {}).get(n)
                if want and sha256(path) != want:  # e.g. a registry entry set back by hand to an older network
                    raise RecipeError(
                        f"{rel} is not generation {best['generation']}'s {n}x{n} network that {LINEAGE_FILE} records "
                        f"(sha256 {want[:12]}; the file has {sha256(path)[:12]}): it changed after the lineage was "
                        "published. Restore it (git checkout), or publish again from a run folder that holds the best "
                        "network (azgo loop --recipe ... --publish keeps it in the lineage folder when the registry "
                        "entry differs)")
                nets[n] = os.path.join(self.gen_dir(g0), f"net{n}.onnx")
                atomic_copy(path, nets[n])
                from azgo.nets.quantize import copy_int8_copies
                copy_int8_copies(path, nets[n])
            state.update(generation=g0 + 1, best={"generation": best["generation"], "checkpoint": ckpt, "nets": nets},
                         ladder=pub.get("ladder", []), core_hours=float(pub.get("core_hours", 0.0)),
                         selfplay=[{"generation": s["generation"], "size": s["size"], "data": s["data"]}
                                   for s in pub.get("selfplay", [])],
                         ratings=ladder_ratings(pub.get("ladder", [])))
            self.log(f"[start] from the published lineage: generation {g0} done, best is generation "
                     f"{best['generation']} ({best['checkpoint_sha256'][:12]})")
            latest = pub.get("latest")
            if latest:  # training.init = "latest": the last trained checkpoint, where that generation kept it
                src = os.path.join(lin, latest["checkpoint"])
                if sha256(src) != latest["checkpoint_sha256"]:
                    raise RecipeError(f"{src} does not match the sha256 that {LINEAGE_FILE} records")
                dst = os.path.join(self.gen_dir(int(latest["generation"])), "train", "checkpoint.pt")
                atomic_copy(src, dst)
                state["latest"] = {"generation": int(latest["generation"]), "checkpoint": dst}
                self.log(f"[start] the latest trained checkpoint is generation {latest['generation']}'s "
                         f"({latest['checkpoint_sha256'][:12]})")
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
            if STAGES.index(stage) > STAGES.index("quantize"):  # its gate and anchors play its networks
                nets = todo.get("candidate_nets_sha256") or {}
                if nets:
                    from azgo.nets.quantize import copy_int8_copies
                    for n, digest in nets.items():
                        src = os.path.join(lin, f"candidate{n}.onnx")
                        if sha256(src) != digest:
                            raise RecipeError(f"{src} does not match the sha256 that {LINEAGE_FILE} records")
                        atomic_copy(src, self.cand_net(g, int(n)))
                        copy_int8_copies(src, self.cand_net(g, int(n)))
                        card = os.path.join(lin, f"candidate{n}.json")
                        if os.path.exists(card):  # the card a promotion builds on
                            atomic_copy(card, os.path.splitext(self.cand_net(g, int(n)))[0] + ".json")
                else:  # published before the networks were: export and quantize its checkpoint again
                    state["remake_candidate_nets"] = g
        elif STAGES.index(stage) > STAGES.index("train"):
            stage = "train"  # the trained checkpoint was not published: train again
        elif stage == "train" and "training_checkpoint_sha256" in todo:  # stopped part way: go on from there
            src = os.path.join(lin, TRAINING_CHECKPOINT)
            if os.path.exists(src) and sha256(src) == todo["training_checkpoint_sha256"]:
                atomic_copy(src, os.path.join(self.gen_dir(g), "train", "checkpoint.pt"))
                self.log(f"[start] generation {g}'s training goes on from its published checkpoint ({src})")
            else:
                self.log(f"[start] generation {g}'s published training checkpoint {src} is missing or does not "
                         f"match the sha256 that {LINEAGE_FILE} records: it trains from the start")
        if STAGES.index(stage) > STAGES.index("quantize"):  # the games its gate and anchors had played
            self._take_up_started_lines(g, todo.get("lines_started", {}))
        state["generations"][str(g)] = info
        state["stage"] = stage
        self.log(f"[start] generation {g} in progress: resumed at stage {stage} "
                 f"({sum(m['games'] for m in made)} self-play games)")

    def _take_up_started_lines(self, g: int, started: dict) -> None:
        """Copy the published games of generation g's lines in progress (``lines_started``: {line: folder}) back
        where those lines write them in this run folder: each resumes from its recorded games."""
        folders = self.line_folders(g)
        for name, rel in sorted(started.items()):
            src = Path(self.path(rel))
            if name not in folders or not src.is_dir():
                self.log(f"[start] generation {g}'s {name}: its published games ({rel}) are "
                         + ("not a line of this recipe" if name not in folders else "missing") + ": not taken up")
                continue
            games = sorted(src.rglob("*.sgf"))
            for f in games:
                atomic_copy(str(f), os.path.join(folders[name], str(f.relative_to(src))))
            self.log(f"[start] generation {g}'s {name}: {len(games)} SGF files taken up from {rel} (its recorded games count)")

    def _remake_candidate_nets(self) -> None:
        """A lineage published past a generation's quantize stage without that generation's networks (before
        ``candidate_nets_sha256``): export and quantize its published checkpoint again, the stage unchanged (the
        same weights and batch-norm data; the files, their dates and the int8 calibration's record are new)."""
        g = self.state.get("remake_candidate_nets")
        if g is None:
            return
        self.log(f"[start] generation {g}'s networks were not published: exported and quantized again from its "
                 f"checkpoint for its stage {self.state['stage']}")
        self.stage_export(g)
        self.stage_quantize(g)
        del self.state["remake_candidate_nets"]
        self.save()

    def _start_best(self) -> dict:
        """Generation 0 from ``[start]``: its checkpoint (or a random one) and its networks."""
        from azgo.nets.quantize import copy_int8_copies, int8_path_for

        from .checkpoints import save_atomic

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
            save_atomic({"net": st.net, "model": model.state_dict(), "step": 0,
                         "training": f"recipe {self.r.name}: random initialisation (seed {st.seed})"}, ckpt)
            how = f"a random {st.net} network (seed {st.seed})"
        nets = {}
        for n in self.r.export.bn_sizes:
            out = os.path.join(g0, f"net{n}.onnx")
            if n in st.nets:
                atomic_copy(self.r.resolve(st.nets[n]), out)
                copy_int8_copies(self.r.resolve(st.nets[n]), out)
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
        for folder, _, _ in os.walk(self.dir):  # a run killed mid-write left temporary files
            remove_orphans(folder)
        self._remake_candidate_nets()
        stop_after = None if generations is None else self.state.setdefault("first_generation",
                                                                             self.state["generation"]) + generations - 1
        self.save()
        if stop_after is not None and self.state["generation"] > stop_after:
            first = self.state["first_generation"]
            self.log(f"nothing to do: --generations {generations} counts from generation {first}, where this run "
                     f"folder began (so that the same command resumes a killed run), and generation {stop_after} is "
                     f"done; --generations {self.state['generation'] - first + 1} runs generation "
                     f"{self.state['generation']}")
        pid_file = os.path.join(self.dir, PID_FILE)  # what --promote checks before it writes the state
        atomic_write(pid_file, f"{os.getpid()}\n")
        try:
            with terminate_as_interrupt():
                self._run_stages(stop_after)
        finally:
            if self.running_loop() is None and os.path.exists(pid_file):
                os.unlink(pid_file)

    def running_loop(self) -> int | None:
        """The pid of another live process running this run folder's loop (its ``loop.pid``), else None."""
        try:
            pid = int(open(os.path.join(self.dir, PID_FILE)).read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if pid != os.getpid() and pid_alive(pid) else None

    def stopped_by_recipe(self, g: int) -> bool:
        """Whether the recipe's ``[stop]`` (as generation ``g`` runs it) stops the loop before generation ``g``
        begins its self-play (or goes on with it), logged with the reason (`azgo.training.recipe_stop`)."""
        why = stop_reason(g - 1, self.r.stop.patience, self.state.get("generations", {}),
                          self.state.get("ladder", []), self.r.stop.lines)
        if why:
            self.log(f"[gen {g}] stopped by the recipe's [stop]: {why}; generation {g} waits at stage "
                     f"{self.state['stage']}. To go on, raise stop.patience in {os.path.basename(self.r.path)} "
                     f"(or set it from generation {g} in a [[from_generation]] entry) and run the same command")
        return bool(why)

    def _count_time(self, state: dict, g: int, stage: str, spent: float) -> None:
        """Add ``spent`` seconds of ``stage`` to generation ``g``'s stage seconds and the run's core-hours."""
        info = state["generations"].setdefault(str(g), {})
        info.setdefault("seconds", {})[stage] = round(info.get("seconds", {}).get(stage, 0.0) + spent, 1)
        cores = os.cpu_count() or 1
        state["core_hours"] = round(state.get("core_hours", 0.0) + spent * cores / 3600, 4)

    def _run_stages(self, stop_after: int | None) -> None:
        running = None  # the generation whose recipe is in use
        while stop_after is None or self.state["generation"] <= stop_after:
            g, stage = self.state["generation"], self.state["stage"]
            if g != running:  # a generation starts (or resumes, at the loop's start: the file was just read)
                self.use_generation(g, reread=running is not None)
                running = g
                if stage == STAGES[0] and self.stopped_by_recipe(g):
                    return
            t0 = time.time()
            try:
                getattr(self, f"stage_{stage}")(g)
            except BaseException:
                # A stage stopped part way (SIGTERM, Ctrl-C, an error) keeps the time it ran: counted into the
                # state as last saved (whatever the stage held in memory unsaved stays unsaved), so that a
                # generation resumed across sessions reports all its hours. Only kill -9 loses the time.
                self.state = self._load_state() or self.state
                self._count_time(self.state, g, stage, time.time() - t0)
                self.save()
                raise
            spent = time.time() - t0
            self._count_time(self.state, g, stage, spent)
            nxt = STAGES.index(stage) + 1
            if nxt == len(STAGES):
                self.state.update(generation=g + 1, stage=STAGES[0])
            else:
                self.state["stage"] = STAGES[nxt]
            self.save()
            self.log(f"[gen {g}] {stage} done in {spent / 60:.1f} min")
            if stage != "publish":
                self.publish()  # the generation in progress, for a run folder that does not survive
