"""``azgo loop``: generations of self-play -> train -> export -> gate on one machine, resumable.

Layout of the loop folder::

    state.json             where the loop is (generation, stage, best network, ratings)
    games/                 the shared SGF archive; games/best.onnx is the network self-play uses
    nets/genNNNN.onnx      every generation's network (+ its card genNNNN.json)
    checkpoints/genNNNN/   every generation's training run (checkpoint.pt, train_log.csv, tb/)
    matches/genNNNN/       the gating match's SGF games
    matches/genNNNN-anchor/  the games against the outside anchor (with ``--anchor``)
    ladder.csv, ladder.png the Elo ladder across generations

Generation 0 is the randomly initialised network, or the checkpoint given by ``--init`` (for example a
network trained on GNU Go games, the supervised start). Generation g: self-play until the archive holds
``g * games_per_generation`` games (with the current best network), train from the best network's
checkpoint on a window of the most recent games (of the loop's archive and of any ``--extra-games``
folders together, by file time, so older extra games leave the window as self-play fills it), export,
then gate: the candidate plays the best network ``gate_games`` games at equal visits and replaces it
when it wins at least ``gate_threshold`` (55%, as Leela Zero gated). Each candidate's Elo is the best
network's Elo plus the Elo of its gating score (smoothed by half a win on each side, so a clean sweep
gives a finite step), so the ladder rates every new network against the earlier ones it had to beat.

Beating its predecessors can overstate a network (self-play learns to beat itself), so ``--anchor CMD``
adds a fixed outside opponent: after its gate every generation plays ``anchor_games`` games against
that GTP engine (for example GNU Go level 10) at ``anchor_visits`` visits, and the ladder gets a second
row for it (opponent ``anchor``; its Elo is against the anchor, smoothed the same way). A killed anchor
match goes on from the games already written.

With an anchor, the anchor also decides promotion (``--anchor-gate``, the default): a candidate that won
its gate is promoted only when its smoothed score against the anchor is at least the best network's minus
``anchor_margin``. The best network's own anchor games are played once, when a candidate first needs them
(generation 0, or a best network from a loop run without the anchor), and kept in the state. So a network
that learned to beat its predecessor but plays the outside world worse stays out of self-play.
``--no-anchor-gate`` keeps the anchor as a report only (promotion by the gate alone).

``--precision int8`` plays self-play and the gate with each generation's static int8 copy (2-3x the
positions a second on the CPU): every exported network is quantized at once beside itself
(``nets/genNNNN.int8.onnx``), calibrated on positions of the newest games of this board size in the
archive and the extra folders (random legal positions for a generation 0 that has none), and
``games/best.int8.onnx`` follows ``games/best.onnx``. The log gives each copy's top-1 agreement and value MAE
against its fp32 network; ``--int8-keep-fp32 NODE`` (repeatable) leaves named layers in fp32 in every copy, as
``azgo quantize --keep-fp32`` does (one 19x19 network needed three for its value, MAE 0.109 -> 0.035).

``--device`` says where the networks run: training (``azgo train --device``, torch; mixed precision on
CUDA) and self-play (onnxruntime); gating matches stay on the CPU (a few visits per move: a GPU batch
would be the whole search). ``--ray auto|local|ADDRESS`` plays self-play on Ray actors instead of
local processes (see :mod:`azgo.training.ray_selfplay`): the actors live for the whole loop and get each
promoted network once through Ray's object store; games come back to this machine's archive.

Every stage is idempotent and changes only the state; ``state.json`` is replaced atomically after each,
and ``games/best.onnx`` and the ladder files are then rewritten from it. So a loop killed at any moment
resumes where it stopped when the same command runs again, with no doubled ladder row and no best
network the state does not name.
"""

from __future__ import annotations

import csv
import filecmp
import io
import json
import os
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field

from azgo.engine.atomic import atomic_copy, atomic_target, atomic_write, remove_orphans

from .children import run_child
from .selfplay import SelfPlayConfig
from .workers import BEST_NET, archive_games, run_selfplay


@dataclass(frozen=True)
class LoopConfig:
    """Loop settings; self-play settings live in ``selfplay``. ``workers``: local self-play processes,
    or with ``ray`` the Ray actors (0: one per CPU of the cluster)."""

    net: str = "b6c64"
    games_per_generation: int = 200
    workers: int = 2
    train_steps: int = 600
    batch_size: int = 256
    window: int = 4000
    lr: float = 0.02
    surprise_weight: float = 0.0            # azgo train --surprise-weight (policy surprise weighting, AZK)
    size_mix: str = ""                      # azgo train --size-mix ("19=0.6,13=0.4"; "": by positions)
    max_final_margin: float = 0.0           # azgo train --max-final-margin (0: keep every ownership target)
    train_threads: int = 2
    gate_games: int = 20
    gate_visits: int = 32
    gate_threshold: float = 0.55
    seed: int = 0
    init: str | None = None                 # generation 0 from this checkpoint instead of random weights
    extra_games: tuple[str, ...] = ()       # more SGF folders trained on with the archive (same window)
    device: str = "auto"                    # training and self-play: auto | cpu | cuda | cuda:N
    ray: str | None = None                  # self-play on Ray actors at this address (auto | local | ADDRESS)
    anchor: str | None = None               # an outside GTP engine every generation plays after its gate
    anchor_games: int = 4
    anchor_visits: int = 200
    anchor_gate: bool = True                # with anchor: a candidate must also not score worse against it
    anchor_margin: float = 0.0              # ... than the best network's smoothed score minus this
    calibration_games: int = 200            # with selfplay.precision "int8": the newest games calibrated on
    calibration_positions: int = 400        # ... and the positions drawn from them
    int8_keep_fp32: tuple[str, ...] = ()    # ... graph nodes each int8 copy leaves in fp32 (quantize --keep-fp32)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)


def _atomic_json(path: str, data: dict) -> None:
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True))


LADDER_FIELDS = ("generation", "opponent", "games", "win_rate", "elo", "promoted", "archive_games", "hours")


class Loop:
    """The state machine behind ``azgo loop`` (see the module docstring)."""

    STAGES = ("selfplay", "train", "export", "gate", "anchor")

    def __init__(self, folder: str, cfg: LoopConfig, log=None):
        self.dir = folder
        self.cfg = cfg
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        for sub in ("games", "nets", "checkpoints", "matches"):
            os.makedirs(os.path.join(folder, sub), exist_ok=True)
        self._ray_pool = None  # RaySelfPlay, made at the first self-play stage with cfg.ray
        self.state_path = os.path.join(folder, "state.json")
        if os.path.exists(self.state_path):
            with open(self.state_path) as f:
                self.state = json.load(f)
            if "ladder" not in self.state:  # a loop folder from before the ladder lived in state.json
                path = os.path.join(folder, "ladder.csv")
                self.state["ladder"] = list(csv.DictReader(open(path))) if os.path.exists(path) else []
        else:
            self.state = {"generation": 0, "stage": "init", "best": 0, "elo": {"0": 0.0}, "ladder": [],
                          "config": _jsonable(asdict(cfg)), "started": time.time(), "seconds": 0.0}

    # ----------------------------------------------------------------- paths
    def net_path(self, g: int) -> str:
        return os.path.join(self.dir, "nets", f"gen{g:04d}.onnx")

    def run_dir(self, g: int) -> str:
        """The training run folder of generation g (checkpoint.pt, train_log.csv, tb/)."""
        return os.path.join(self.dir, "checkpoints", f"gen{g:04d}")

    def ckpt_path(self, g: int) -> str:
        return os.path.join(self.run_dir(g), "checkpoint.pt")

    @property
    def games_dir(self) -> str:
        return os.path.join(self.dir, "games")

    def save(self) -> None:
        """Write state.json atomically, then the files derived from it (best.onnx, ladder.csv/png).

        Stages change only ``self.state``; everything else a reader sees follows from the saved state, so
        a kill between a stage's work and its save replays the stage without a doubled ladder row or a
        best.onnx that the state does not name.
        """
        _atomic_json(self.state_path, self.state)
        self.publish()

    def publish(self) -> None:
        """Make games/best.onnx, ladder.csv and ladder.png agree with the saved state (idempotent)."""
        if self.state["stage"] == "init":
            return
        best, dst = self.net_path(self.state["best"]), os.path.join(self.games_dir, BEST_NET)
        if self.cfg.selfplay.precision == "int8":  # the int8 copy first: a worker reloads when best.onnx changes
            from azgo.nets.quantize import int8_path_for
            best8, dst8 = int8_path_for(best), int8_path_for(dst)
            if not best8.exists():  # a loop begun in fp32 and resumed with --precision int8
                self.quantize(self.state["best"])
            if not dst8.exists() or not filecmp.cmp(best8, dst8, shallow=False):
                atomic_copy(str(best8), str(dst8))
        if not os.path.exists(dst) or not filecmp.cmp(best, dst, shallow=False):
            atomic_copy(best, dst)
        path = os.path.join(self.dir, "ladder.csv")
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=LADDER_FIELDS)
        w.writeheader()
        w.writerows(self.state["ladder"])
        atomic_write(path, buf.getvalue())
        plot_ladder(path, os.path.join(self.dir, "ladder.png"))

    # ----------------------------------------------------------------- stages
    def init(self) -> None:
        """Generation 0: a randomly initialised network (or ``cfg.init``), its checkpoint, and best.onnx."""
        import torch

        from .checkpoints import save_atomic
        from .export import export_checkpoint, export_onnx, write_card
        from .model import build_model
        cfg = self.cfg
        os.makedirs(self.run_dir(0), exist_ok=True)
        if cfg.init:
            src = torch.load(cfg.init, map_location="cpu", weights_only=True)
            model = None
            ckpt = {"net": src["net"], "model": src["model"], "step": 0,
                    "training": f"generation 0 of azgo loop: the checkpoint {cfg.init} "
                                f"(trained as: {src.get('training', 'not recorded')})"}
        else:
            model = build_model(cfg.net, seed=cfg.seed).eval()
            ckpt = {"net": cfg.net, "model": model.state_dict(), "step": 0,
                    "training": f"generation 0 of azgo loop: random initialisation (seed {cfg.seed})"}
        save_atomic(ckpt, self.ckpt_path(0))
        if model is None:
            export_checkpoint(self.ckpt_path(0), self.net_path(0))
        else:
            export_onnx(model, self.net_path(0), net_name=cfg.net,
                        provenance={"tool": "azgo loop", "generation": 0, "method": "random initialisation",
                                    "seed": cfg.seed})
            write_card(self.net_path(0), model, training="UNTRAINED: azgo loop generation 0 (random initialisation)",
                       strength="untrained")
        self.quantize(0)
        self.state.update(generation=1, stage="selfplay", best=0)
        self._ladder_row(0, None, 0, None, 0.0, True)
        self.save()

    def selfplay(self, g: int) -> None:
        cfg = self.cfg
        target = g * cfg.games_per_generation
        have = len(archive_games(self.games_dir))
        self.log(f"[gen {g}] self-play: {have} -> {target} games with gen {self.state['best']}")
        sp = cfg.selfplay
        if cfg.ray:
            if self._ray_pool is None:
                from .ray_selfplay import RaySelfPlay
                self._ray_pool = RaySelfPlay(cfg.ray, sp, workers=cfg.workers or None, device=cfg.device,
                                             log=self.log)
            self._ray_pool.play(self.games_dir, target, archive=self.games_dir, seed=cfg.seed * 1000 + g,
                                show_progress=True)
            return
        run_selfplay(self.games_dir, target, cfg.workers, sp, net=None, archive=self.games_dir,
                     seed=cfg.seed * 1000 + g, show_progress=True, device=cfg.device)

    def train(self, g: int) -> None:
        cfg = self.cfg
        out = self.run_dir(g)
        cmd = [sys.executable, "-m", "azgo.gtp.cli", "train", self.games_dir, *cfg.extra_games, "--out", out,
               "--steps", str(cfg.train_steps), "--batch-size", str(cfg.batch_size), "--window", str(cfg.window),
               "--lr", str(cfg.lr), "--threads", str(cfg.train_threads), "--seed", str(cfg.seed * 1000 + g),
               "--device", cfg.device, "--no-progress"]
        if cfg.surprise_weight > 0:
            cmd += ["--surprise-weight", str(cfg.surprise_weight)]
        if cfg.size_mix:
            cmd += ["--size-mix", cfg.size_mix]
        if cfg.max_final_margin > 0:
            cmd += ["--max-final-margin", str(cfg.max_final_margin)]
        if os.path.exists(self.ckpt_path(g)):
            cmd.append("--resume")
        else:
            cmd += ["--init", self.ckpt_path(self.state["best"])]
        self.log(f"[gen {g}] train: {' '.join(shlex.quote(c) for c in cmd[3:])}")
        run_child(cmd)

    def export(self, g: int) -> None:
        cmd = [sys.executable, "-m", "azgo.gtp.cli", "export", self.ckpt_path(g), "--out", self.net_path(g)]
        self.log(f"[gen {g}] export -> {self.net_path(g)}")
        run_child(cmd)
        self.quantize(g)

    def quantize(self, g: int) -> None:
        """With ``--precision int8``: write generation g's int8 copy beside its network (replayed whole by a
        resumed loop, and written by rename, so no reader sees half a file)."""
        cfg = self.cfg
        if cfg.selfplay.precision != "int8":
            return
        from azgo.nets.quantize import compare_int8, quantize_int8
        from .calibration import games_of_size, random_positions, sample_positions
        size = cfg.selfplay.size
        files = archive_games(self.games_dir)
        for d in cfg.extra_games:
            files += archive_games(d)
        games = games_of_size(sorted(files, key=os.path.basename)[-4 * cfg.calibration_games:], size)
        games = games[-cfg.calibration_games:]
        seed = cfg.seed * 1000 + g
        planes = sample_positions(games, cfg.calibration_positions, seed=seed)
        if len(planes) == 0:
            planes, note = random_positions(size, cfg.calibration_positions, seed=seed), "random legal positions"
        else:
            note = f"{len(planes)} positions of the newest {len(games)} {size}x{size} games of azgo loop's window"
        out = quantize_int8(self.net_path(g), planes, calibration_note=note, keep_fp32=cfg.int8_keep_fp32)
        report = compare_int8(self.net_path(g), out, planes[-256:])
        self.log(f"[gen {g}] int8 -> {out} (calibration: {note}; top-1 agreement "
                 f"{report['top1_agreement']:.3f}, value MAE {report['value_mae']:.4f})")

    def gate(self, g: int) -> None:
        from azgo.gtp.match import run_match
        cfg = self.cfg
        best = self.state["best"]
        sp = cfg.selfplay

        engine = self._engine
        folder = os.path.join(self.dir, "matches", f"gen{g:04d}")
        shutil.rmtree(folder, ignore_errors=True)  # a killed match is replayed whole
        summary = run_match(engine(self.net_path(g), cfg.gate_visits), engine(self.net_path(best), cfg.gate_visits),
                            cfg.gate_games, sp.size,
                            sp.komi, sgf_dir=folder, log=self.log, name_a=f"gen{g}", name_b=f"gen{best}")
        for line in summary.lines():
            self.log(f"[gen {g}] {line}")
        from azgo.gtp.match import elo
        rating = self.state["elo"][str(best)] + elo(_smoothed(summary))
        passed = summary.rate >= cfg.gate_threshold
        self.state["elo"][str(g)] = rating
        if self._anchor_gates():  # the anchor stage decides; the gate's verdict waits in the state
            self.state["gate"] = {"generation": g, "best": best, "passed": passed}
            self._ladder_row(g, best, summary.games, summary.rate, rating, False)
            self.log(f"[gen {g}] gate {'passed' if passed else 'failed'}: Elo {rating:+.0f}"
                     + ("; the anchor decides" if passed else "; rejected"))
            return
        if passed:  # best.onnx follows once the state is saved (see save)
            self.state["best"] = g
        self._ladder_row(g, best, summary.games, summary.rate, rating, passed)
        self.log(f"[gen {g}] {'promoted' if passed else 'rejected'}: Elo {rating:+.0f}")

    def _anchor_gates(self) -> bool:
        return bool(self.cfg.anchor) and self.cfg.anchor_gate

    def _engine(self, net: str, visits: int) -> str:
        """The command line of an azgo engine playing ``net`` at ``visits`` a move (on the CPU)."""
        precision = "int8" if self.cfg.selfplay.precision == "int8" else "fp32"
        return (f"{shlex.quote(sys.executable)} -m azgo.gtp.cli gtp --net {shlex.quote(net)} "
                f"--visits {visits} --resign-threshold 0.02 --precision {precision} --device cpu")

    def anchor(self, g: int) -> None:
        """With ``--anchor``: generation g against the outside engine, a ladder row of its own; with the
        anchor gating (the default), the promotion of a candidate that passed its gate is decided here."""
        cfg = self.cfg
        if not cfg.anchor:
            return
        pending = self.state.get("gate") if self._anchor_gates() else None
        if pending and pending["generation"] == g and pending["passed"]:
            best = pending["best"]
            if str(best) not in self.state.setdefault("anchor", {}):
                self._anchor_match(best)  # the best network's own anchor games, played once
            mine, theirs = self._anchor_match(g), self.state["anchor"][str(best)]
            promoted = mine["score"] >= theirs["score"] - cfg.anchor_margin
            self.log(f"[gen {g}] anchor score {mine['score']:.3f} against the best's (gen {best}) "
                     f"{theirs['score']:.3f} - margin {cfg.anchor_margin:g}: {'promoted' if promoted else 'rejected'}")
            if promoted:  # best.onnx follows once the state is saved (see save)
                self.state["best"] = g
                for r in self.state["ladder"]:  # the gate's and the anchor's rows record the final verdict
                    if str(r["generation"]) == str(g):
                        r["promoted"] = "1"
        else:
            self._anchor_match(g)

    def _anchor_match(self, g: int) -> dict:
        """Generation g's games against the anchor (resumed from the games written); its ladder row and
        its result in ``state["anchor"]`` (games, wins, smoothed score)."""
        from azgo.gtp.match import elo, run_match
        cfg = self.cfg
        folder = os.path.join(self.dir, "matches", f"gen{g:04d}-anchor")
        summary = run_match(self._engine(self.net_path(g), cfg.anchor_visits), cfg.anchor, cfg.anchor_games,
                            cfg.selfplay.size, cfg.selfplay.komi, sgf_dir=folder, log=self.log, name_a=f"gen{g}",
                            name_b="anchor", resume=True)
        for line in summary.lines():
            self.log(f"[gen {g}] {line}")
        score = _smoothed(summary)
        result = {"games": summary.games, "wins": summary.a_wins + 0.5 * summary.draws, "score": round(score, 6)}
        self.state.setdefault("anchor", {})[str(g)] = result
        self._ladder_row(g, "anchor", summary.games, summary.rate, elo(score), self.state["best"] == g)
        return result

    # ----------------------------------------------------------------- ladder
    def _ladder_row(self, g, opponent, games, rate, rating, promoted) -> None:
        """Add generation g's row to the ladder in the state (written out by :meth:`save`)."""
        row = [g, "" if opponent is None else opponent, games, "" if rate is None else f"{rate:.3f}",
               f"{rating:.1f}", int(promoted), len(archive_games(self.games_dir)),
               f"{self.state.get('seconds', 0) / 3600:.3f}"]
        anchor = opponent == "anchor"  # one row per generation and kind (gate or anchor)
        self.state["ladder"] = [r for r in self.state["ladder"]
                                if str(r["generation"]) != str(g) or (r["opponent"] == "anchor") != anchor]
        self.state["ladder"].append({k: str(v) for k, v in zip(LADDER_FIELDS, row)})

    # ----------------------------------------------------------------- driver
    def run(self, generations: int | None = None, hours: float | None = None) -> None:
        """Run (or resume) until ``generations`` generations exist or ``hours`` of loop time passed."""
        t_start = time.time()
        base = self.state.get("seconds", 0.0)
        try:
            self._run(t_start, base, generations, hours)
        finally:
            if self._ray_pool is not None:
                self._ray_pool.close()
                self._ray_pool = None

    def _run(self, t_start: float, base: float, generations: int | None, hours: float | None) -> None:
        if self.state["stage"] == "init":
            self.init()
        for folder, _, _ in os.walk(self.dir):  # a loop killed mid-write left temporary files
            remove_orphans(folder)
        self.publish()  # a loop killed between a save and its derived files
        while True:
            g = self.state["generation"]
            stage = self.state["stage"]
            elapsed = base + time.time() - t_start
            if stage == "selfplay":
                if generations is not None and g > generations:
                    break
                if hours is not None and elapsed >= hours * 3600:
                    self.log(f"time budget of {hours} h used: stopping before generation {g}")
                    break
            getattr(self, stage)(g)
            nxt = self.STAGES.index(stage) + 1
            if nxt == len(self.STAGES):
                self.state.update(generation=g + 1, stage="selfplay")
            else:
                self.state["stage"] = self.STAGES[nxt]
            self.state["seconds"] = base + time.time() - t_start
            self.save()


def _smoothed(summary) -> float:
    """A match's score with half a win added on each side, so a clean sweep gives a finite Elo step."""
    return (summary.a_wins + 0.5 * summary.draws + 0.5) / (summary.games + 1)


def _jsonable(d):
    if isinstance(d, dict):
        return {k: _jsonable(v) for k, v in d.items()}
    return d


def plot_ladder(csv_path: str, png_path: str) -> bool:
    """Plot Elo by generation as a PNG (needs matplotlib, the optional ``plot`` extra)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = list(csv.DictReader(open(csv_path)))
    anchored = [r for r in rows if r["opponent"] == "anchor"]
    rows = [r for r in rows if r["opponent"] != "anchor"]
    if not rows:
        return False
    gens = [int(r["generation"]) for r in rows]
    elos = [float(r["elo"]) for r in rows]
    from matplotlib.ticker import MaxNLocator
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(gens, elos, marker="o", color="tab:blue", label="candidate")
    best = [(x, y) for r, x, y in zip(rows, gens, elos) if r["promoted"] == "1"]
    ax.plot([x for x, _ in best], [y for _, y in best], "o", color="green", label="promoted to best")
    if anchored:
        ax.plot([int(r["generation"]) for r in anchored], [float(r["elo"]) for r in anchored], marker="s",
                linestyle="--", color="tab:red", label="against the anchor")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="lower right")
    ax.set_xlabel("generation")
    ax.set_ylabel("Elo (generation 0 = 0; anchor rows: against it)")
    ax.set_title("azgo loop: Elo ladder")
    ax.grid(True, alpha=0.3)
    with atomic_target(png_path, keep_suffix=True) as tmp:
        fig.savefig(tmp, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return True
