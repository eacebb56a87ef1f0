"""Training recipes and ``azgo loop --recipe``: checked before any work, run end to end, killed and resumed,
continued from a published lineage."""

import glob
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from azgo.training.recipe import RecipeError, load_recipe, parse_recipe
from azgo.training.recipe_run import relative_paths, sprt_bounds, sprt_llr
from azgo.training.recipe_util import sha256

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "recipes" / "smoke.toml"
AZGO = [sys.executable, "-m", "azgo.gtp.cli"]


def _variant(tmp_path, old: str, new: str, name="bad.toml") -> Path:
    """The smoke recipe with one text replaced, written beside the real recipes (same root)."""
    text = SMOKE.read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new).replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    return path


@pytest.mark.parametrize("old,new,field", [
    ("full_visits = 8", "full_visit = 8", "selfplay.full_visit: unknown field"),
    ("stdev = 3.0", "stdev = -1.0", "selfplay.komi.stdev: must be >= 0"),
    ('rule = "threshold"', 'rule = "coin"', "gate.rule: threshold or sprt"),
    ("recency = 0.5", "recency = 0.5\n[[window.sources]]\npath = \"data/sp19y\"\nshare = 0.5",
     "window: the shares of the 7x7 draws sum to 1.5"),
    ("version = 1", "version = 2", "version: this azgo reads recipe version 1"),
    ("games = 6", 'games = "six"', "selfplay.games: expected an integer"),
    ("stones = [2, 4]", "stones = [1, 4]", "selfplay.handicap.stones"),
    ("stones = [2, 4]", 'stones = [2, 4]\nresign = "no"', "selfplay.handicap.resign: expected true or false"),
    ("percentiles = [0, 99.999]", "percentile = 20.0", "quantize.percentile: 0 for MinMax ranges, or a percentile"),
    ("percentiles = [0, 99.999]", "percentiles = [0, 20.0]", "quantize.percentiles: numbers: 0 for MinMax"),
    ("percentiles = [0, 99.999]", "percentiles = [0, 99.999]\npercentile = 99.9", "quantize.percentiles: set either"),
    ("vnni_percentiles = [99.999]", "vnni_percentiles = [101]", "quantize.vnni_percentiles: numbers: 0 for MinMax"),
    ("vnni_percentiles = [99.999]", "vnni_percentiles = [0, 0]", "quantize.vnni_percentiles: each rule once"),
    ("vnni_percentiles = [99.999]", "vnni_percentiles = []\nvnni_keep_fp32 = [\"/stem/conv/Conv\"]",
     "quantize.vnni_keep_fp32: applies to the 8-bit copies"),
    ("bn_sizes = [7]", "bn_sizes = [9]", "gate.size: no network is exported for 7x7"),
    ("fair = { 7 = 9.0 }", "fair = { 9 = 7.0 }", "selfplay.komi.fair: no fair komi for board size 7"),
    ("handicap_weight = 2.0", "handicap_weight = -1.0", "training.handicap_weight: must be in [0, 100]"),
    ("[window]\n", "[selfplay.opponent]\nfraction = 0.2\n\n[window]\n",
     "selfplay.opponent.engine: games against an opponent"),
    ("[window]\n", '[selfplay.opponent]\nengine = "gnugo"\nfraction = 1.5\n\n[window]\n',
     "selfplay.opponent.fraction: must be in"),
    ("[window]\n", '[selfplay.opponent]\nengine = "pachi"\nplayouts = 0\nfraction = 0.1\n\n[window]\n',
     "selfplay.opponent.playouts: must be in"),
    ("[training]\n", '[training]\nnet = "b7x"\n', "training.net: unknown network size 'b7x'"),
    ('entries = { 7 = "smoke7.onnx" }', 'entries = { 7 = "smoke7.onnx" }\nlines = ["gnugo7"]',
     "promotion.lines: 'gnugo7' is not an anchor line"),
    ('entries = { 7 = "smoke7.onnx" }', 'entries = { 7 = "smoke7.onnx" }\nlines = ["g7"]\n\n[[anchors]]\n'
     'name = "g7"\nopponent = "gnugo"\nsize = 7\nevery = 2', "promotion.lines: 'g7' plays every 2 generations"),
    ("threshold = 0.0", "threshold = 0.0\nnet_size = 9", "gate.net_size: no network is exported for 9x9"),
    ("threshold = 0.0", 'threshold = 0.0\nearly_stop = "never"', "gate.early_stop: always, banked or empty"),
    ("threshold = 0.0", "threshold = 0.0\nplayed_out = true", "gate.played_out: only for anchor lines"),
    ("[window]\n", "[selfplay.by_size.9]\nfull_visits = 12\n\n[window]\n",
     "selfplay.by_size.9: board size 9 is not in [sizes]"),
    ("[window]\n", "[selfplay.by_size.7]\ngames = 3\n\n[window]\n",
     "selfplay.by_size.7.games: the same for every board size"),
    ("[window]\n", "[selfplay.by_size.7.komi]\nstdev = -1.0\n\n[window]\n",
     "selfplay.by_size.7.komi.stdev: must be >= 0"),
    ("[window]\n", "[selfplay.by_size.7]\nfull_visit = 12\n\n[window]\n",
     "selfplay.by_size.7.full_visit: unknown field"),
    ("max_moves = 40", 'max_moves = 40\nnets = "newest"', "selfplay.nets: best or packaged, got 'newest'"),
])
def test_a_bad_field_fails_naming_the_field(tmp_path, old, new, field):
    bad = _variant(tmp_path, old, new)
    with pytest.raises(RecipeError, match=field.replace("[", r"\[").replace("(", r"\(")):
        load_recipe(bad)


@pytest.mark.parametrize("old,new,field", [
    ("full_visits = 8", "full_visit = 8", "selfplay.full_visit: unknown field"),
    ("bn_sizes = [7]", "bn_sizes = [9]", "gate.size: no network is exported for 7x7"),
])
@pytest.mark.slow
def test_azgo_loop_with_a_bad_field_fails_before_any_work_naming_it(tmp_path, old, new, field):
    """``azgo loop`` reads the recipe (``load_recipe``, every field's check above) before it starts anything."""
    bad = _variant(tmp_path, old, new)
    run = tmp_path / "run"
    out = subprocess.run(AZGO + ["loop", "--recipe", str(bad), "--run-dir", str(run), "--generations", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and field.split(":")[0] in out.stderr, out.stderr
    assert not run.exists()  # nothing was started


def test_loop_options_are_the_recipes_and_plan_says_where_it_starts(tmp_path):
    out = subprocess.run(AZGO + ["loop", "--recipe", str(SMOKE), "--run-dir", str(tmp_path / "r"), "--size", "9"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--size is the recipe's" in out.stderr
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(SMOKE), "--run-dir", str(tmp_path / "r"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0, plan.stderr
    assert "generation 0 is a random b2c16 network" in plan.stdout
    assert "next: generation 1, from stage selfplay" in plan.stdout
    assert "0.34 handicap games of 2-4 stones at komi 0.5" in plan.stdout and "handicap games x2" in plan.stdout
    assert "keeps the closest of MinMax / percentile 99.999" in plan.stdout
    assert "an 8-bit copy for VNNI CPUs (percentile 99.999), kept if closer" in plan.stdout
    assert "resignation below winrate" in plan.stdout and " of games played out" in plan.stdout
    assert not (tmp_path / "r").exists()


def test_the_int8_copy_kept_is_the_closest_within_the_value_bar():
    from azgo.training.recipe_data import _closest

    def t(p, mae, lead=None):
        return (p, f"try{p}", [], {"value_mae": mae, **({"lead_median_abs": lead} if lead is not None else {})})
    assert _closest([t(0, 0.02, 0.38), t(99.999, 0.02, 0.29)], 0.05) == 1
    assert _closest([t(0, 0.02, 0.38), t(99.999, 0.09, 0.29)], 0.05) == 0  # outside the value bar
    assert _closest([t(0, 0.09, 0.38), t(99.999, 0.08, 0.41)], 0.05) == 0  # none within: the closer lead
    assert _closest([t(0, 0.03), t(99.99, 0.02)], 0.05) == 1  # no score head: the value MAE decides
    assert _closest([t(0, 0.02, 0.3), t(99.9, 0.02, 0.3)], 0.05) == 0  # a tie: the earlier listed


def test_handicap_games_played_out_reach_the_selfplay_config(tmp_path):
    from azgo.training.recipe_run import RecipeRun
    assert RecipeRun(load_recipe(SMOKE), str(tmp_path / "a")).selfplay_config(7).handicap_resign
    recipe = load_recipe(_variant(tmp_path, "stones = [2, 4]", "stones = [2, 4]\nresign = false"))
    assert recipe.selfplay.handicap.resign is False
    assert not RecipeRun(recipe, str(tmp_path / "b")).selfplay_config(7).handicap_resign
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(_variant(tmp_path, "stones = [2, 4]",
                                                                   "stones = [2, 4]\nresign = false")),
                                  "--run-dir", str(tmp_path / "c"), "--plan"], capture_output=True, text=True,
                          timeout=120)
    assert plan.returncode == 0 and "2-4 stones at komi 0.5, played out" in plan.stdout, plan.stderr


def test_a_board_sizes_own_selfplay_settings_reach_its_games_and_the_plan(tmp_path):
    """[selfplay.by_size.N] merges into [selfplay] key by key for size N's games only (what a 19x19 lineage's
    9x9 games need: forked starts and handicap written for 19x19 are not 9x9's)."""
    from azgo.training.recipe_run import RecipeRun
    path = _variant(tmp_path, "[window]\n", "[selfplay.by_size.7]\nfull_visits = 12\n\n[selfplay.by_size.7.komi]\n"
                    "stdev = 0.5\n\n[selfplay.by_size.7.handicap]\nfraction = 0.0\n\n[window]\n")
    recipe = load_recipe(path)
    assert recipe.selfplay.handicap.fraction == 0.34 and recipe.selfplay.full_visits == 8
    own = recipe.selfplay_at(7)
    assert (own.full_visits, own.komi.stdev, own.handicap.fraction) == (12, 0.5, 0.0)
    assert own.handicap.stones == recipe.selfplay.handicap.stones and own.komi.fair == {7: 9.0}  # the rest kept
    assert recipe.selfplay_at(9) is recipe.selfplay
    cfg = RecipeRun(recipe, str(tmp_path / "b")).selfplay_config(7)
    assert (cfg.full_visits, cfg.komi_stdev, cfg.handicap_fraction) == (12, 0.5, 0.0)
    base = RecipeRun(load_recipe(SMOKE), str(tmp_path / "a")).selfplay_config(7)
    assert (base.full_visits, base.komi_stdev, base.handicap_fraction) == (8, 3.0, 0.34)
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(path), "--run-dir", str(tmp_path / "c"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0, plan.stderr
    assert "7x7 games differ ([selfplay.by_size.7]): full_visits 12, komi.stdev 0.5, handicap.fraction 0" in plan.stdout
    # an entry of [[from_generation]] can add one from its generation on
    entry = load_recipe(_variant(tmp_path, "[window]\n", "[window]\n", name="plain.toml")).base
    entry = dict(entry, from_generation=[{"generation": 3, "selfplay": {"by_size": {"7": {"cheap_visits": 2}}}}])
    later = parse_recipe(entry, str(path))
    assert later.at_generation(2).selfplay_at(7).cheap_visits == 4
    assert later.at_generation(3).selfplay_at(7).cheap_visits == 2 and later.at_generation(3).selfplay.cheap_visits == 4


def test_a_board_size_can_train_on_fewer_of_the_lineages_generations(tmp_path):
    """window.size_generations: a size whose older games should leave the window (campaign19's generation 14
    9x9 games) keeps only its newest generations; the other sizes keep window.generations."""
    from azgo.training.recipe_run import RecipeRun
    path = _variant(tmp_path, "recency = 0.5\n", "recency = 0.5\nsize_generations = { 7 = 1 }\n")
    run = RecipeRun(load_recipe(path), str(tmp_path / "run"))
    run.state = {"selfplay": [{"generation": k, "size": 7, "path": f"/g{k}/7"} for k in (1, 2)],
                 "generations": {"3": {"selfplay": [{"generation": 3, "size": 7, "path": "/g3/7"}]}}}
    sources, shares, _ = run.window(3)
    assert sources == ["/g3/7"] and shares == [["/g3/7", 1.0]]
    plain = RecipeRun(load_recipe(SMOKE), str(tmp_path / "plain"))
    plain.state = run.state
    sources, shares, _ = plain.window(3)  # generations = 2, recency 0.5: generation 3 twice generation 2's share
    assert sources == ["/g2/7", "/g3/7"] and [round(x[1], 4) for x in shares] == [0.3333, 0.6667]
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(path), "--run-dir", str(tmp_path / "c"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0 and "7x7 games of the newest 1 only" in plan.stdout, plan.stderr
    with pytest.raises(RecipeError, match="window.size_generations.7: expected a whole number"):
        load_recipe(_variant(tmp_path, "recency = 0.5\n", "recency = 0.5\nsize_generations = { 7 = 1.5 }\n",
                             name="half.toml"))
    with pytest.raises(RecipeError, match="window.size_generations.7: must be >= 1"):
        load_recipe(_variant(tmp_path, "recency = 0.5\n", "recency = 0.5\nsize_generations = { 7 = 0 }\n",
                             name="none.toml"))


def test_games_against_gnugo_reach_the_selfplay_config_and_the_plan(tmp_path):
    from azgo.training.recipe_run import RecipeRun
    assert RecipeRun(load_recipe(SMOKE), str(tmp_path / "a")).selfplay_config(7).opponent_fraction == 0
    path = _variant(tmp_path, "[window]\n", '[selfplay.opponent]\nengine = "gnugo"\nlevel = 5\nfraction = 0.25\n\n'
                    '[window]\n')
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(path), "--run-dir", str(tmp_path / "c"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0 and "0.25 of games against GNU Go level 5" in plan.stdout, plan.stderr
    from gnugo import require_gnugo
    require_gnugo()
    cfg = RecipeRun(load_recipe(path), str(tmp_path / "b")).selfplay_config(7)
    assert cfg.opponent_fraction == 0.25 and cfg.opponent_name == "GNU Go 5"
    assert "--level 5" in cfg.opponent and "--capture-all-dead" in cfg.opponent


def test_games_against_pachi_reach_the_selfplay_config_and_the_plan(tmp_path):
    """engine = "pachi": one thread, a fixed number of playouts a move (self-play has no clock)."""
    from azgo.training.recipe_run import RecipeRun
    path = _variant(tmp_path, "[window]\n", '[selfplay.opponent]\nengine = "pachi"\nplayouts = 3000\n'
                    'fraction = 0.1\n\n[window]\n')
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(path), "--run-dir", str(tmp_path / "c"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0 and "0.1 of games against Pachi at 3000 playouts a move" in plan.stdout, plan.stderr
    from azgo.gtp.opponents import OpponentMissing, pachi_binary
    try:
        pachi_binary()
    except OpponentMissing as e:
        pytest.skip(str(e))
    cfg = RecipeRun(load_recipe(path), str(tmp_path / "b")).selfplay_config(7)
    assert cfg.opponent_fraction == 0.1 and cfg.opponent_name == "Pachi 3000"
    assert cfg.opponent.endswith("threads=1,pondering=0,pass_all_alive -t =3000")


def test_plan_starts_a_published_generation_where_the_run_will(tmp_path):
    """A generation published in progress resumes at its stage, or at train where no trained checkpoint
    was published: --plan says the same."""
    from azgo.training.recipe import load_recipe
    from azgo.training.recipe_run import RecipeRun
    run = RecipeRun(load_recipe(SMOKE), str(tmp_path / "r"))
    pub = {"generation": 1, "best": {"generation": 1, "checkpoint_sha256": "0" * 64, "nets": {}},
           "in_progress": {"generation": 2, "stage": "gate", "selfplay": [],
                           "candidate_checkpoint_sha256": "1" * 64}}
    run.published = lambda: pub
    run.lineage_file = lambda: str(tmp_path / "lineage.json")
    assert "next: generation 2, from stage gate" in run.plan()
    del pub["in_progress"]["candidate_checkpoint_sha256"]
    assert "next: generation 2, from stage train" in run.plan()
    pub["in_progress"]["stage"] = "selfplay"
    assert "next: generation 2, from stage selfplay" in run.plan()


def test_plan_names_the_lines_that_decide_each_file_of_the_next_generations_promotion(tmp_path):
    """Started from a published lineage (no run folder), --plan shows the next generation's ``[promotion]`` as
    its ``[[from_generation]]`` entries make it: a file added to the entries there is decided by the line on its
    board sizes (campaign19's generation 13 said "large13.onnx ... decided by )" before this was fixed)."""
    from azgo.training.recipe_run import RecipeRun
    text = SMOKE.read_text().replace(
        'entries = { 7 = "smoke7.onnx" }',
        'entries = { 7 = "smoke7.onnx" }\nlines = ["line7", "line9"]\n\n'
        '[[anchors]]\nname = "line7"\nopponent = "gnugo"\nsize = 7\n\n'
        '[[anchors]]\nname = "line9"\nopponent = "gnugo"\nsize = 9\nnet_size = 7')
    text += '\n[[from_generation]]\ngeneration = 3\npromotion = { entries = { 7 = ["smoke7.onnx", "smoke9.onnx"] } }\n'
    path = tmp_path / "split.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    run = RecipeRun(load_recipe(path), str(tmp_path / "r"))
    reg = Path(run.dir, "registry")
    reg.mkdir(parents=True)
    (reg / "registry.json").write_text(json.dumps({"networks": [
        {"file": "smoke7.onnx", "sizes": [7, 8], "card": "smoke7.json"},
        {"file": "smoke9.onnx", "sizes": [9, 9], "card": "smoke9.json"}]}))
    pub = {"generation": 2, "best": {"generation": 2, "checkpoint_sha256": "0" * 64, "nets": {}}}
    run.published = lambda: pub
    run.lineage_file = lambda: str(tmp_path / "lineage.json")
    promote = [ln for ln in run.plan().splitlines() if ln.strip().startswith("promote:")][0]
    assert "smoke7.onnx (7x7-8x8; decided by line7)" in promote, promote
    assert "smoke9.onnx (9x9-9x9; decided by line9)" in promote, promote


def test_training_init_latest_carries_on_from_a_generation_its_gate_did_not_promote(tmp_path, monkeypatch):
    """training.init = "latest": generation 3 trains from generation 2's checkpoint although generation 2 was not
    promoted (generation 1 stays the best, for self-play and the gate); the lineage publishes that checkpoint
    (latest.pt) and a new run folder (a fresh clone) takes it up; the default (best) starts from the best."""
    from azgo.training.checkpoints import save_atomic
    from azgo.training.model import build_model
    from azgo.training import recipe_data
    from azgo.training.recipe_run import RecipeRun
    lin = tmp_path / "lineage"
    text = SMOKE.read_text().replace('dir = "<run>/lineage"\ndata = "<run>/data"',
                                     f'dir = "{lin}"\ndata = "{tmp_path / "data"}"')
    (tmp_path / "latest.toml").write_text(text.replace("[training]\n", '[training]\ninit = "latest"\n')
                                          .replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    (tmp_path / "best.toml").write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    recipe = load_recipe(tmp_path / "latest.toml")
    assert recipe.training.init == "latest" and load_recipe(tmp_path / "best.toml").training.init == "best"

    def checkpoint(path, seed):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_atomic({"net": "b2c16", "model": build_model("b2c16", seed=seed).state_dict(), "step": 8,
                     "training": "test"}, path)

    def state_at_generation_2_promote(run):
        best = os.path.join(run.gen_dir(1), "train", "checkpoint.pt")
        checkpoint(best, 1)
        net = os.path.join(run.gen_dir(1), "net7.onnx")
        Path(net).write_bytes(b"the best 7x7 network")
        checkpoint(os.path.join(run.gen_dir(2), "train", "checkpoint.pt"), 2)
        run.state = {"recipe": run.r.name, "generation": 2, "stage": "promote", "ladder": [], "selfplay": [],
                     "core_hours": 0.0, "generations": {"1": {"train": {}}, "2": {"train": {}}},
                     "best": {"generation": 1, "checkpoint": best, "nets": {"7": net}}}
        run.stage_promote(2)  # no gate record: not passed
        assert run.state["best"]["generation"] == 1
        run.state.update(generation=3, stage="selfplay")

    run = RecipeRun(recipe, str(tmp_path / "a"))
    state_at_generation_2_promote(run)
    second = os.path.join(run.gen_dir(2), "train", "checkpoint.pt")
    assert run.init_checkpoint(3) == {"generation": 2, "checkpoint": second}
    commands = []
    monkeypatch.setattr(recipe_data, "run_child", lambda cmd: commands.append(cmd))
    run.window = lambda g: ([str(tmp_path / "games")], [], [])
    run.stage_train(3)
    assert commands[0][commands[0].index("--init") + 1] == second
    assert run.state["generations"]["3"]["train"]["init_generation"] == 2
    assert "train: from generation 2's checkpoint (the latest trained)" in run.plan()
    # published while generation 3 is in progress, by a run folder from before the state recorded it
    del run.state["latest"]
    run.publish()
    assert json.loads((lin / "lineage.json").read_text())["latest"]["generation"] == 2
    # published, and taken up by a new run folder
    run.publish(done=2)
    pub = json.loads((lin / "lineage.json").read_text())
    assert pub["best"]["generation"] == 1 and pub["latest"]["generation"] == 2
    assert sha256(lin / "latest.pt") == pub["latest"]["checkpoint_sha256"]
    assert "train: from generation 2's checkpoint (the latest trained)" in RecipeRun(recipe, str(tmp_path / "b")).plan()
    fresh = RecipeRun(recipe, str(tmp_path / "c"))
    fresh.init()
    init = fresh.init_checkpoint(3)
    assert init["generation"] == 2 and init["checkpoint"].startswith(str(tmp_path / "c"))
    assert sha256(init["checkpoint"]) == sha256(lin / "latest.pt")
    # the default: from the best; and nothing latest is published
    default = RecipeRun(load_recipe(tmp_path / "best.toml"), str(tmp_path / "d"))
    state_at_generation_2_promote(default)
    assert default.init_checkpoint(3)["generation"] == 1
    default.publish(done=2)
    assert "latest" not in json.loads((lin / "lineage.json").read_text()) and not (lin / "latest.pt").exists()


def test_a_stage_stopped_by_sigterm_keeps_its_time(tmp_path):
    """SIGTERM in the middle of a stage: the loop stops with KeyboardInterrupt, and the state on disk keeps
    the stage where it was, with the seconds it ran counted (a generation resumed across sessions reports
    all its hours); what the stage held unsaved in memory is not written."""
    from azgo.training.recipe_run import RecipeRun, terminate_as_interrupt
    run = RecipeRun(load_recipe(SMOKE), str(tmp_path / "r"))
    run.state = {"recipe": run.r.name, "generation": 1, "stage": "selfplay", "core_hours": 1.0,
                 "generations": {"1": {"seconds": {"selfplay": 100.0}}}}
    run.save()

    def stage(g):
        run.state["stage"] = "half-written"  # in memory only: must not reach the disk
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler interrupts this
        raise AssertionError("SIGTERM did not stop the stage")
    run.stage_selfplay = stage
    old = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), terminate_as_interrupt():
        run._run_stages(None)
    assert signal.getsignal(signal.SIGTERM) == old
    saved = json.loads((tmp_path / "r" / "state.json").read_text())
    assert saved["stage"] == "selfplay" and saved["generation"] == 1
    assert 100.3 <= saved["generations"]["1"]["seconds"]["selfplay"] < 104
    assert saved["core_hours"] > 1.0


def test_recipe_helpers():
    assert sprt_llr([], 0, 35) == 0
    lo, hi = sprt_bounds(0.05, 0.05)
    assert lo < 0 < hi and sprt_llr([1.0] * 3, 0, 35) < hi  # three wins decide nothing
    assert sprt_llr([1.0] * 60, 0, 35) > hi and sprt_llr([0.0] * 60, 0, 35) < lo
    assert relative_paths({"/r/x/a": ["/r/x/b", "/run/q/c", 3]}, "/r/x", "/run/q") == {"a": ["b", "<run>/c", 3]}
    r = load_recipe(SMOKE)
    assert r.games_per_size() == {7: 6} and r.main_size == 7
    with pytest.raises(RecipeError, match="name: required"):
        parse_recipe({"version": 1}, str(SMOKE))


def _wait(pred, proc, timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.2)
    return False


def _killpg(proc, sig):
    """Signal the process group of ``proc`` (started with ``start_new_session``); nothing if all of it has ended."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


@pytest.mark.slow
def test_smoke_recipe_two_generations_killed_twice_and_resumed(tmp_path):
    """recipes/smoke.toml: 2 generations end to end (self-play with komi and handicap, train, export, int8,
    gate, promotion into the run's registry, publication), killed with SIGKILL in generation 1's training and in
    generation 2's self-play, then finished by the same command; nothing half-written is left."""
    run = tmp_path / "run"
    cmd = AZGO + ["loop", "--recipe", str(SMOKE), "--run-dir", str(run), "--generations", "2"]
    t0 = time.time()
    for k, ready in enumerate((lambda: (run / "gen0001" / "train").exists(),
                               lambda: len(glob.glob(str(run / "gen0002" / "selfplay" / "7" / "*.sgf"))) >= 1)):
        err = tmp_path / f"loop{k}.stderr"
        with open(err, "wb") as f:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=f, start_new_session=True)
        reached = _wait(ready, proc, 120)
        ended = proc.poll()  # None: still running (at the point, or after 120 s)
        _killpg(proc, signal.SIGKILL)
        proc.wait()
        # a kill from outside before that point (the kernel's OOM killer on a loaded CI machine) is what this test
        # plays anyway: the next run resumes; an exit of its own or a hang is a failure, shown with its stderr
        assert reached or ended == -signal.SIGKILL, (
            f"run {k + 1}: the loop ended (exit {proc.returncode}) or ran 120 s before the point where the test "
            f"kills it:\n{err.read_text()[-3000:]}")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.time() - t0 < 180
    state = json.loads((run / "state.json").read_text())
    assert state["generation"] == 3 and state["stage"] == "selfplay"
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # the same command once more
    assert again.returncode == 0 and "nothing to do: --generations 2 counts from generation 1" in again.stderr
    assert "--generations 3 runs generation 3" in again.stderr
    for g in (1, 2):
        games = glob.glob(str(run / f"gen000{g}" / "selfplay" / "7" / "*.sgf"))
        assert len(games) >= 6
        info = state["generations"][str(g)]
        assert info["gate"]["games"] == 2 and info["promoted"] is True
        assert set(info["seconds"]) >= {"selfplay", "train", "export", "quantize", "gate", "promote", "publish"}
    # the recipe's [[from_generation]] entry took effect at generation 2, also in the process resumed there
    assert "--steps 8 " in state["generations"]["1"]["train"]["command"]
    assert "--steps 10 " in state["generations"]["2"]["train"]["command"]
    assert not glob.glob(str(run / "**" / ".*.tmp"), recursive=True)
    lineage = json.loads((run / "lineage" / "lineage.json").read_text())
    assert lineage["generation"] == 2 and lineage["best"]["generation"] == 2
    assert [s["data"] for s in lineage["selfplay"]] == ["<run>/data/smoke-g0001-7", "<run>/data/smoke-g0002-7"]
    ladder = (run / "lineage" / "ladder.csv").read_text().splitlines()
    assert ladder[0].startswith("generation,line") and [r.split(",")[0] for r in ladder[1:]] == ["0", "1", "2"]
    assert (run / "lineage" / "ladder.png").exists()
    import torch  # the published checkpoint names its files relative to the repository, the run as <run>/
    best = torch.load(run / "lineage" / "best.pt", map_location="cpu", weights_only=False)
    records = json.dumps({k: best.get(k) for k in ("training", "args", "data_files")}, default=str)
    assert "<run>/" in records and str(tmp_path) not in records and str(ROOT) not in records
    assert lineage["best"]["checkpoint_sha256"] == sha256(run / "lineage" / "best.pt")
    card = json.loads((run / "registry" / "smoke7.json").read_text())
    from azgo.nets.card import validate_card
    assert validate_card(card) == []  # the schema of the shipped cards, no machine path
    assert card["recipe"]["generation"] == 2 and card["strength"][0]["line"] == "gate"
    # the gate's games go with the lineage (a clone has no run folder): the card points at them there
    gate_games = card["strength"][0]["games_folder"]
    assert gate_games == "<run>/lineage/games/gen0002-gate"
    assert len(list((run / "lineage" / "games" / "gen0002-gate").rglob("*.sgf"))) == 2
    for g in ("1", "2"):  # every finished generation's gate games, promoted or not, and lineage.json points there
        assert lineage["generations"][g]["gate"]["games_folder"] == f"<run>/lineage/games/gen000{g}-gate"
        assert len(list((run / "lineage" / "games" / f"gen000{g}-gate").rglob("*.sgf"))) == 2
        # with azgo's search lines of the games' engine log (what lost_leads.py --from-log reads), nothing else
        kept_log = list((run / "lineage" / "games" / f"gen000{g}-gate").rglob("engines.stderr.log.gz"))
        assert kept_log
        lines = [line for f in kept_log for line in gzip.decompress(f.read_bytes()).decode().splitlines()]
        assert lines and all(line.startswith("azgo: ") and " winrate " in line for line in lines)
    # both activation-range rules were tried on held-out positions; the copy closer to fp32 was kept
    q = card["int8"]
    assert [t["percentile"] for t in q["tried"]] == [0, 99.999] and q["measured_on"].endswith("held-out positions")
    kept = min(q["tried"], key=lambda t: t["lead_median_abs"])
    assert q["lead_median_abs"] == kept["lead_median_abs"] and q.get("percentile", 0) == kept["percentile"]
    assert q["value_mae"] <= 0.5
    assert not glob.glob(str(run / "**" / "*.try*.onnx"), recursive=True)
    # the 8-bit copy for VNNI CPUs was tried too; it ships (in the registry, on the card) only if it was closer
    vnni = state["generations"]["2"]["quantize"]["7"]["vnni"]
    assert [t["percentile"] for t in vnni["tried"]] == [99.999] and "vnni" not in q
    assert vnni["kept"] == (vnni["tried"][0]["lead_median_abs"] < q["lead_median_abs"]
                            and vnni["tried"][0]["value_mae"] <= 0.5)
    assert (run / "registry" / "smoke7.int8-vnni.onnx").exists() == vnni["kept"] == ("int8_vnni" in card)
    if vnni["kept"]:
        assert card["int8_vnni"]["sha256"] == sha256(run / "registry" / "smoke7.int8-vnni.onnx")
    text = json.dumps(card)
    home = os.path.expanduser("~")
    assert str(tmp_path) not in text and str(ROOT) not in text and (home == "/" or home not in text)  # no machine path
    from azgo.training.export import read_metadata  # nor inside the network files that ship
    for f in ("smoke7.onnx", "smoke7.int8.onnx"):
        meta = json.dumps(read_metadata(run / "registry" / f))
        assert "<run>/gen0002/selfplay/7" in meta and str(tmp_path) not in meta and str(ROOT) not in meta
    registry = json.loads((run / "registry" / "registry.json").read_text())
    assert registry["networks"] == [{"file": "smoke7.onnx", "sizes": [7, 7], "card": "smoke7.json"}]
    # training.komi_inputs reached the checkpoint and the exported graph (the komi added to the score)
    import onnx
    import torch
    best = torch.load(run / "gen0002" / "train" / "checkpoint.pt", weights_only=False)
    assert float(best["model"]["komi_inputs"]) == 1.0
    assert best["args"]["handicap_weight"] == 2.0 and "--handicap-weight 2" in state["generations"]["2"]["train"]["command"]
    assert "value_komi" in {i.name for i in onnx.load(str(run / "registry" / "smoke7.onnx")).graph.initializer}
    # komi and handicap reached the self-play archive
    from azgo.engine.sgf import load_sgf
    recs = [load_sgf(f) for f in glob.glob(str(run / "gen000*" / "selfplay" / "7" / "*.sgf"))]
    assert any(r.handicap for r in recs) and len({r.komi for r in recs if not r.handicap}) > 1


@pytest.mark.slow
def test_a_fresh_clone_resumes_past_quantize_with_the_candidates_networks(tmp_path):
    """A session ends in generation 1's gate (past its export and int8 copies): the lineage carries the candidate's
    networks, so a new run folder plays its gate with the very files, without exporting again. A lineage published
    before it carried them (the networks' record removed) is exported and quantized again from the candidate's
    checkpoint, at the same stage."""
    lin = tmp_path / "lineage"
    slow = _variant(tmp_path, 'dir = "<run>/lineage"\ndata = "<run>/data"',
                    f'dir = "{lin}"\ndata = "{tmp_path / "data"}"', name="pub.toml")
    slow.write_text(slow.read_text().replace("games = 2\nsize = 7", "games = 400\nsize = 7"))  # a gate to stop in
    loop = AZGO + ["loop", "--recipe", str(slow), "--generations", "1", "--run-dir"]
    proc = subprocess.Popen(loop + [str(tmp_path / "b")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)

    def in_gate():
        try:
            todo = json.loads((lin / "lineage.json").read_text()).get("in_progress") or {}
        except (OSError, ValueError):
            return False
        return todo.get("generation") == 1 and todo.get("stage") == "gate"
    first_game = tmp_path / "b" / "gen0001" / "gate" / "game0000.sgf"
    reached = _wait(in_gate, proc, 240) and _wait(first_game.exists, proc, 240)
    _killpg(proc, signal.SIGKILL)
    proc.wait()
    assert reached
    # the session's end: the lineage published from the run folder, with the gate's games so far
    pub = subprocess.run(AZGO + ["loop", "--recipe", str(slow), "--run-dir", str(tmp_path / "b"), "--publish"],
                         capture_output=True, text=True, timeout=120)
    assert pub.returncode == 0, pub.stderr[-3000:]
    todo = json.loads((lin / "lineage.json").read_text())["in_progress"]
    assert list(todo["lines_started"]) == ["gate"] and todo["lines_started"]["gate"].endswith("lineage/games/gen0001-gate")
    kept = lin / "games" / "gen0001-gate" / "game0000.sgf"
    assert kept.read_bytes() == first_game.read_bytes()
    assert set(todo["candidate_nets_sha256"]) == {"7"}
    assert todo["candidate_nets_sha256"]["7"] == sha256(lin / "candidate7.onnx") == sha256(tmp_path / "b" / "gen0001" / "net7.onnx")
    assert (lin / "candidate7.int8.onnx").exists() and (lin / "candidate7.json").exists()
    from azgo.nets.card import absolute_paths
    assert absolute_paths(json.loads((lin / "candidate7.json").read_text())) == []  # committed: no machine's path
    shutil.copytree(lin, tmp_path / "lineage-before")
    slow.write_text(slow.read_text().replace("games = 400\nsize = 7", "games = 2\nsize = 7"))
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(slow), "--run-dir", str(tmp_path / "c"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert re.search(r"its gate line resumes from its [1-9]\d* games in \S*gen0001-gate", plan.stdout), plan.stdout
    shutil.rmtree(tmp_path / "b")
    third = subprocess.run(loop + [str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr[-3000:]
    assert "generation 1 in progress: resumed at stage gate" in third.stderr
    assert "generation 1's gate:" in third.stderr and "taken up from" in third.stderr
    assert "export done" not in third.stderr and "exported and quantized again" not in third.stderr
    state = json.loads((tmp_path / "c" / "state.json").read_text())
    assert state["generation"] == 2 and state["generations"]["1"]["gate"]["games"] == 2
    # the gate's first game is the one played in run folder b (its clock record included), not played again
    assert (tmp_path / "c" / "gen0001" / "gate" / "game0000.sgf").read_bytes() == (
        tmp_path / "lineage-before" / "games" / "gen0001-gate" / "game0000.sgf").read_bytes()
    assert sha256(tmp_path / "c" / "gen0001" / "net7.onnx") == todo["candidate_nets_sha256"]["7"]
    assert (tmp_path / "c" / "gen0001" / "net7.json").read_bytes() == (tmp_path / "lineage-before" / "candidate7.json").read_bytes()
    assert not list(lin.glob("candidate*"))  # the generation is done: its candidate files leave the lineage
    # the same lineage as published before the networks were: made again, at the same stage
    shutil.rmtree(lin)
    shutil.copytree(tmp_path / "lineage-before", lin)
    pub = json.loads((lin / "lineage.json").read_text())
    del pub["in_progress"]["candidate_nets_sha256"]
    (lin / "lineage.json").write_text(json.dumps(pub))
    for f in lin.glob("candidate7*.onnx"):
        f.unlink()
    fourth = subprocess.run(loop + [str(tmp_path / "d")], capture_output=True, text=True, timeout=300)
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert "generation 1's networks were not published: exported and quantized again" in fourth.stderr
    assert "resumed at stage gate" in fourth.stderr and "export done" not in fourth.stderr
    assert (tmp_path / "d" / "gen0001" / "net7.int8.onnx").exists()
    assert json.loads((tmp_path / "d" / "state.json").read_text())["generations"]["1"]["gate"]["games"] == 2


@pytest.mark.slow
def test_a_fresh_clone_goes_on_with_a_training_stopped_part_way(tmp_path):
    """A session ends in generation 1's training: --publish keeps the training's last checkpoint in the lineage
    (``training.pt``, by hash), and a new run folder resumes the training from it instead of from step 0."""
    lin = tmp_path / "lineage"
    recipe = _variant(tmp_path, 'dir = "<run>/lineage"\ndata = "<run>/data"',
                      f'dir = "{lin}"\ndata = "{tmp_path / "data"}"', name="pub.toml")
    recipe.write_text(recipe.read_text().replace("steps = 8\n", "steps = 1200\n").replace("lr_steps = [6]", "lr_steps = [1000]"))
    loop = AZGO + ["loop", "--recipe", str(recipe), "--generations", "1", "--run-dir"]
    proc = subprocess.Popen(loop + [str(tmp_path / "b")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    saved = tmp_path / "b" / "gen0001" / "train" / "checkpoint.pt"  # written every 300 steps
    reached = _wait(saved.exists, proc, 300)
    _killpg(proc, signal.SIGTERM)
    proc.wait(timeout=120)
    assert reached
    pub = subprocess.run(AZGO + ["loop", "--recipe", str(recipe), "--run-dir", str(tmp_path / "b"), "--publish"],
                         capture_output=True, text=True, timeout=120)
    assert pub.returncode == 0, pub.stderr[-3000:]
    todo = json.loads((lin / "lineage.json").read_text())["in_progress"]
    assert todo["stage"] == "train" and todo["training_checkpoint_sha256"] == sha256(lin / "training.pt")
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(recipe), "--run-dir", str(tmp_path / "c"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert "its training goes on from training.pt" in plan.stdout, plan.stdout
    shutil.rmtree(tmp_path / "b")
    recipe.write_text(recipe.read_text().replace("steps = 1200\n", "steps = 320\n").replace("lr_steps = [1000]", "lr_steps = [310]"))
    again = subprocess.run(loop + [str(tmp_path / "c")], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "generation 1's training goes on from its published checkpoint" in again.stderr
    started = re.findall(r"from step (\d+) to", again.stderr)
    assert started and int(started[0]) >= 300, again.stderr[-3000:]  # not from step 0
    pub = json.loads((lin / "lineage.json").read_text())
    assert pub["generation"] == 1 and not (lin / "training.pt").exists()  # done: the partial checkpoint leaves


@pytest.mark.slow
def test_a_new_run_folder_continues_the_published_lineage(tmp_path):
    """What a fresh clone does: the published lineage (best checkpoint, shards, ladder, and the generation in
    progress with its self-play so far) is the state a new run folder starts from; --plan says so; the window
    reads the earlier generation from its shards."""
    lin = tmp_path / "lineage"
    recipe = _variant(tmp_path, 'dir = "<run>/lineage"\ndata = "<run>/data"',
                      f'dir = "{lin}"\ndata = "{tmp_path / "data"}"', name="pub.toml")
    loop = AZGO + ["loop", "--recipe", str(recipe), "--generations", "1", "--run-dir"]
    first = subprocess.run(loop + [str(tmp_path / "a")], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(recipe), "--run-dir", str(tmp_path / "b"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert "the published lineage" in plan.stdout and "generation 1 done" in plan.stdout
    assert "next: generation 2" in plan.stdout
    # generation 2 in run folder b, lost after its self-play (the end of a session)
    proc = subprocess.Popen(loop + [str(tmp_path / "b")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)

    def past_selfplay():
        try:
            todo = json.loads((lin / "lineage.json").read_text()).get("in_progress") or {}
        except (OSError, ValueError):
            return False
        return todo.get("generation") == 2 and todo.get("stage") != "selfplay"
    reached = _wait(past_selfplay, proc, 120)
    _killpg(proc, signal.SIGKILL)
    proc.wait()
    assert reached
    shutil.rmtree(tmp_path / "b")
    third = subprocess.run(loop + [str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr[-3000:]
    assert "from the published lineage" in third.stderr and "generation 2 in progress: resumed at stage" in third.stderr
    assert "selfplay done" not in third.stderr  # its games came from the shards
    state = json.loads((tmp_path / "c" / "state.json").read_text())
    assert state["generation"] == 3
    cmd = state["generations"]["2"]["train"]["command"]
    assert "smoke-g0001-7" in cmd and "gen0002/selfplay/7" in cmd  # generation 1's games, from their shards
    pub = json.loads((lin / "lineage.json").read_text())
    assert pub["generation"] == 2 and "in_progress" not in pub and not (lin / "candidate.pt").exists()
    assert set(pub["generations"]) == {"1", "2"}  # run folder c began at generation 2; generation 1's record stays
    assert [s["data"] for s in pub["selfplay"]] == [str(tmp_path / "data" / f"smoke-g000{g}-7") for g in (1, 2)]
    # the ladder's chained gate rating goes on from the published one (run folder c began after generation 1)
    from azgo.gtp.match import elo
    gates = {r["generation"]: r for r in pub["ladder"] if r["line"] == "gate"}
    g2 = gates[2]
    base = gates[1]["elo"] if pub["generations"]["1"].get("promoted") else 0.0
    step = elo((g2["wins"] + 0.5 * g2["draws"] + 0.5) / (g2["games"] + 1))
    assert g2["elo"] == pytest.approx(round(base + step, 1), abs=0.11)


def test_a_registry_entry_changed_after_publishing_stops_the_resume(tmp_path):
    """A fresh run folder takes the best network from the file the lineage names (the registry entry it promoted):
    if that file is no longer the one whose sha256 the lineage records (an entry set back by hand to an older
    network), the run stops with the reason instead of playing its self-play and gate with another network."""
    from azgo.training.recipe_run import RecipeRun
    recipe = load_recipe(_variant(tmp_path, "[start]", "[start]", name="reg.toml"))
    run = tmp_path / "run"
    lin, reg = run / "lineage", run / "registry"
    lin.mkdir(parents=True)
    reg.mkdir()
    (lin / "best.pt").write_bytes(b"the best checkpoint")
    (reg / "smoke7.onnx").write_bytes(b"generation 3's network")
    pub = {"recipe": "smoke", "generation": 3,
           "best": {"generation": 3, "checkpoint": "best.pt", "checkpoint_sha256": sha256(str(lin / "best.pt")),
                    "nets": {"7": "<run>/registry/smoke7.onnx"},
                    "nets_sha256": {"7": sha256(str(reg / "smoke7.onnx"))}},
           "selfplay": [], "ladder": [], "core_hours": 1.0, "generations": {}}
    (lin / "lineage.json").write_text(json.dumps(pub))
    ok = RecipeRun(recipe, str(run), log=lambda m: None)
    ok.init()
    assert ok.state["generation"] == 4
    assert Path(ok.state["best"]["nets"]["7"]).read_bytes() == b"generation 3's network"
    os.remove(run / "state.json")
    (reg / "smoke7.onnx").write_bytes(b"generation 2's network")  # set back by hand
    with pytest.raises(RecipeError, match=r"is not generation 3's 7x7 network .* changed after the lineage"):
        RecipeRun(recipe, str(run), log=lambda m: None).init()


def test_from_generation_entries_change_the_recipe_from_their_generation_on(tmp_path):
    """[[from_generation]]: sections (or parts of them) that replace the file's own from a generation on, merged
    table by table in generation order; checked whole when the file is read; plan says which apply."""
    text = SMOKE.read_text().split("[[from_generation]]")[0] + """
[[from_generation]]
generation = 3
sizes = { 7 = 0.5, 9 = 0.5 }
selfplay = { games = 10, komi = { fair = { 7 = 9.0, 9 = 7.0 } } }

[[from_generation]]
generation = 5
[from_generation.selfplay]
games = 12

[[from_generation]]
generation = 7
sizes = { 9 = 1.0 }
"""
    path = tmp_path / "sched.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    r = load_recipe(path)
    assert r.at_generation(1) is r and r.at_generation(2) is r and r.games_per_size() == {7: 6}
    g3 = r.at_generation(3)
    assert g3.games_per_size() == {7: 5, 9: 5} and g3.generation_changes == (3,)
    assert g3.selfplay.komi.fair == {7: 9.0, 9: 7.0} and g3.selfplay.komi.stdev == 3.0  # merged, not replaced
    assert g3.selfplay.full_visits == 8 and g3.training == r.training
    g6 = r.at_generation(6)
    assert g6.selfplay.games == 12 and g6.sizes == {7: 0.5, 9: 0.5} and g6.generation_changes == (3, 5)
    assert g6.at_generation(2).games_per_size() == {7: 6}  # any generation from any of them
    assert r.at_generation(7).sizes == {9: 1.0}  # shares over board sizes are replaced whole: 7x7 left out
    assert r.at_generation(7).selfplay.komi.fair == {7: 9.0, 9: 7.0}  # other tables still merge
    from azgo.training.recipe_run import RecipeRun
    run = RecipeRun(r, str(tmp_path / "run"))
    run.published = lambda: {"generation": 4, "best": {"generation": 4, "checkpoint_sha256": "0" * 64, "nets": {}}}
    run.lineage_file = lambda: str(tmp_path / "lineage.json")
    plan = run.plan()
    assert "next: generation 5, from stage selfplay" in plan and "selfplay: 6 7x7 games, 6 9x9 games" in plan
    assert "from generation 3: [sizes], [selfplay] (applies to this generation)" in plan
    logs = []
    run.log = logs.append
    run.use_generation(5)
    assert run.r.selfplay.games == 12 and logs == ["[gen 5] the recipe's changes from generation 3, 5 apply: "
                                                    "[selfplay], [sizes]"]


def test_a_recipe_edited_while_the_loop_runs_counts_from_the_next_generation(tmp_path):
    """The loop reads the file again when a generation starts in it: an entry added meanwhile applies from
    then on; an edit that does not read is logged and the recipe stays as it was (the run goes on)."""
    from azgo.training.recipe_run import RecipeRun
    path = tmp_path / "edit.toml"
    text = SMOKE.read_text().split("[[from_generation]]")[0].replace("[start]", f'root = "{ROOT}"\n\n[start]', 1)
    path.write_text(text)
    logs = []
    run = RecipeRun(load_recipe(path), str(tmp_path / "run"), log=logs.append)
    run.use_generation(1, reread=False)
    assert run.r.selfplay.games == 6 and logs == []
    path.write_text(text + "\n[[from_generation]]\ngeneration = 3\nselfplay = { games = 9 }\n")
    run.use_generation(2)  # the file read again: its new entry is not due yet
    assert run.r.selfplay.games == 6 and "the recipe file changed" in logs[0] and len(logs) == 1
    run.use_generation(3)
    assert run.r.selfplay.games == 9 and logs[1] == "[gen 3] the recipe's changes from generation 3 apply: [selfplay]"
    path.write_text(text.replace("games = 6", 'games = "six"'))
    run.use_generation(4)
    assert run.r.selfplay.games == 9 and "does not read" in logs[2] and "selfplay.games" in logs[2]
    path.write_text(text.replace('name = "smoke"', 'name = "other"'))
    run.use_generation(5)
    assert run.r.selfplay.games == 9 and "this run folder's is 'smoke'" in logs[3]


@pytest.mark.parametrize("entry,field", [
    ("generation = 0\nsizes = { 7 = 1.0 }", r"from_generation\[0\].generation: required, an integer >= 1"),
    ("generation = 2\nname = \"other\"", r"from_generation\[0\].name: a lineage keeps its name"),
    ("generation = 2", r"from_generation\[0\]: changes nothing"),
    ("generation = 2\nselfplay = { full_visit = 3 }",
     r"from_generation\[0\] \(generation 2\): selfplay.full_visit: unknown field"),
    ("generation = 2\nsizes = { 9 = 1.0 }",
     r"from_generation\[0\] \(generation 2\): selfplay.komi.fair: no fair komi for board size 9"),
    ("generation = 3\ngate = { games = 4 }\n[[from_generation]]\ngeneration = 2\ngate = { games = 6 }",
     r"from_generation\[1\].generation: entries in ascending order"),
])
def test_a_bad_from_generation_entry_fails_when_the_recipe_is_read(tmp_path, entry, field):
    path = _variant(tmp_path, "generation = 2                              # training runs 10 steps",
                    entry + "\n# training runs 10 steps")
    text = path.read_text().replace("training = { steps = 10, lr_steps = [8] }", "")
    path.write_text(text)
    with pytest.raises(RecipeError, match=field):
        load_recipe(path)


def test_ladder_ratings_carry_the_chained_gate_elo_of_a_published_ladder():
    from azgo.training.recipe_run import ladder_ratings
    ladder = [{"generation": 0, "line": "gate", "elo": 0.0}, {"generation": 1, "line": "gate", "elo": 67.0},
              {"generation": 1, "line": "gnugo10", "elo": 102.1}, {"generation": 2, "line": "gate", "elo": 169.1},
              {"generation": 3, "line": "gate", "elo": ""}]
    assert ladder_ratings(ladder) == {"0": 0.0, "1": 67.0, "2": 169.1}
    assert ladder_ratings([]) == {"0": 0.0}


def _random_games(folder: Path, games: int, moves: int, seed: int) -> None:
    """``games`` 7x7 SGF games of ``moves`` random legal moves each (sgfmill)."""
    import random

    from sgfmill import sgf

    from azgo.engine.game import Game
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for i in range(games):
        game, rec = Game(7, 9.0), sgf.Sgf_game(size=7)
        rec.root.set("KM", 9.0)
        for k in range(moves):
            move = rng.choice(game.board.legal_moves()[:-1])
            game.play(move)
            node = rec.extend_main_sequence()
            node.set_move("b" if k % 2 == 0 else "w", (move // 7, move % 7))
        (folder / f"g{i}.sgf").write_bytes(rec.serialise())


def test_int8_copy_of_a_generation_with_short_games_is_measured_on_held_out_positions(tmp_path):
    """A generation whose own games are too short for a calibration set and a held-out set (its network
    passed early) draws from the training window's games too, so its int8 copy is still compared with fp32
    on positions it was not calibrated on; with no window it says it measured on calibration positions."""
    pytest.importorskip("onnx")
    pytest.importorskip("torch")
    from azgo.training.export import export_random
    from azgo.training.recipe_run import RecipeRun
    net = tmp_path / "net.onnx"
    export_random("b2c16", 1, net, check=False)
    _random_games(tmp_path / "g1", 6, 30, seed=1)
    _random_games(tmp_path / "g2", 6, 4, seed=2)  # 24 positions: fewer than calibration_positions + 16
    own = {"generation": 2, "size": 7, "path": str(tmp_path / "g2"), "games": 6}
    for window, where in (([{"generation": 1, "size": 7, "path": str(tmp_path / "g1")}], "held-out"),
                          ([], "calibration")):
        run = RecipeRun(load_recipe(SMOKE), str(tmp_path / f"r{len(window)}"))
        run.state = {"recipe": run.r.name, "generation": 2, "stage": "quantize", "selfplay": window,
                     "generations": {"2": {"selfplay": [own]}}}
        run.log = lambda msg: None
        result = run._quantize_one(str(net), 7, run._size_folders(2, 7), 2)
        assert result["measured_on"].endswith(f" {where} positions"), result
        if window:
            # 24 + 180 positions in all: the recipe's 32 calibrate, the other 172 are held out
            assert result["measured_on"] == "172 held-out positions", result
            assert result["calibration"] == "32 positions of 7x7 games of generation 2's data and the training window's"


def test_training_net_grows_the_init_checkpoint_before_training(tmp_path, monkeypatch):
    """training.net = "b3c16" on a b2c16 lineage: the train stage first runs `azgo grow` on the best checkpoint
    (a real child: the grown file computes what the best computes) and trains from the grown file; the plan
    says so; a resumed training does not grow again."""
    torch = pytest.importorskip("torch")
    from azgo.training import recipe_data
    from azgo.training.checkpoints import load_checkpoint, save_atomic
    from azgo.training.grow import max_output_difference
    from azgo.training.model import build_model, randomize_batchnorm
    from azgo.training.recipe_run import RecipeRun
    path = tmp_path / "grow.toml"
    path.write_text(SMOKE.read_text().replace("[training]\n", '[training]\nnet = "b3c16"\n')
                    .replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    run = RecipeRun(load_recipe(path), str(tmp_path / "run"))
    best = os.path.join(run.gen_dir(1), "train", "checkpoint.pt")
    os.makedirs(os.path.dirname(best))
    model = build_model("b2c16", seed=1)
    randomize_batchnorm(model, seed=2)
    save_atomic({"net": "b2c16", "model": model.state_dict(), "step": 8, "training": "test"}, best)
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "train", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"train": {}}},
                 "best": {"generation": 1, "checkpoint": best, "nets": {}}}
    commands = []

    def child(cmd):
        commands.append(cmd)
        if "grow" in cmd:
            subprocess.run(cmd, check=True, capture_output=True)

    monkeypatch.setattr(recipe_data, "run_child", child)
    run.window = lambda g: ([str(tmp_path / "games")], [], [])
    run.stage_train(2)
    grown = os.path.join(run.gen_dir(2), "grown_init.pt")
    assert commands[0][commands[0].index("grow") + 1] == best and len(commands) == 2
    assert commands[1][commands[1].index("--init") + 1] == grown
    ck = load_checkpoint(grown)
    assert ck["net"] == "b3c16" and ck["grown_from"]["net"] == "b2c16"
    assert max_output_difference(load_checkpoint(best), ck) < 1e-5
    assert run.state["generations"]["2"]["train"]["net"] == "b3c16"
    assert "grown into a b3c16 network" in run.plan()
    # resumed: its own checkpoint, no second growth
    save_atomic(ck, os.path.join(run.gen_dir(2), "train", "checkpoint.pt"))
    commands.clear()
    run.stage_train(2)
    assert len(commands) == 1 and "--resume" in commands[0] and "grow" not in commands[0]
    del torch


def test_quantize_leaves_out_fp32_nodes_a_grown_network_does_not_have(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("torch")
    from azgo.training.export import export_random
    from azgo.training.recipe_run import RecipeRun
    net = tmp_path / "net.onnx"
    export_random("b2c16", 1, net, check=False)
    run = RecipeRun(load_recipe(SMOKE), str(tmp_path / "r"))
    logged = []
    run.log = logged.append
    assert run._nodes_in(str(net), ["/stem/conv/Conv", "/blocks.5/a/conv/Conv"], 3) == ["/stem/conv/Conv"]
    assert logged == ["[gen 3] int8: net.onnx has no node /blocks.5/a/conv/Conv; left out of keep_fp32"]


def test_promote_by_hand_makes_a_finished_generation_the_best_with_its_reason(tmp_path):
    """``azgo loop --recipe R --promote G --reason ...``: a generation its gate did not promote becomes the best
    (state, registry file and card, ladder row, published lineage), the reason and the self-play played before by
    the old best recorded; refused for the generation in progress, without a reason, and while a loop runs."""
    from azgo.training.checkpoints import save_atomic
    from azgo.training.model import build_model
    from azgo.training.recipe_run import RecipeRun
    lin = tmp_path / "lineage"
    text = SMOKE.read_text().replace('dir = "<run>/lineage"\ndata = "<run>/data"',
                                     f'dir = "{lin}"\ndata = "{tmp_path / "data"}"')
    recipe_file = tmp_path / "r.toml"
    recipe_file.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    run = RecipeRun(load_recipe(recipe_file), str(tmp_path / "run"))
    for g in (1, 2):
        ckpt = os.path.join(run.gen_dir(g), "train", "checkpoint.pt")
        os.makedirs(os.path.dirname(ckpt), exist_ok=True)
        save_atomic({"net": "b2c16", "model": build_model("b2c16", seed=g).state_dict(), "step": 8}, ckpt)
        Path(run.cand_net(g, 7)).write_bytes(f"generation {g}'s 7x7 network".encode())
        Path(run.cand_net(g, 7)).with_suffix(".json").write_text(json.dumps({"net": "b2c16", "generation": g}))
    games = Path(run.gen_dir(3), "selfplay", "7")
    games.mkdir(parents=True)
    for i in range(3):
        (games / f"game{i}.sgf").write_text("(;GM[1]SZ[7])")
    gate = {"line": "gate", "opponent": "best", "size": 7, "games": 20, "wins": 9, "losses": 11, "draws": 0,
            "score": 0.45, "passed": False}
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "promote", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"train": {}, "promoted": True}, "2": {"train": {}, "gate": gate}},
                 "best": {"generation": 1, "checkpoint": os.path.join(run.gen_dir(1), "train", "checkpoint.pt"),
                          "nets": {"7": run.cand_net(1, 7)}}}
    run.stage_promote(2)
    assert run.state["best"]["generation"] == 1 and run.state["ladder"][-1]["promoted"] == 0
    run.state.update(generation=3, stage="selfplay")
    run.save()
    with pytest.raises(RecipeError, match="generation 3 is not a finished generation"):
        run.promote_by_hand(3, "why not")
    with pytest.raises(RecipeError, match="needs a --reason"):
        run.promote_by_hand(2, "  ")
    with pytest.raises(RecipeError, match="already promoted"):
        run.promote_by_hand(1, "it is the best")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "run" / "loop.pid").write_text(f"{sleeper.pid}\n")
        with pytest.raises(RecipeError, match=f"a loop \\(pid {sleeper.pid}\\) is running"):
            run.promote_by_hand(2, "won 14 of 20 more games")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert run.state["best"]["generation"] == 1  # nothing was changed by the refusals
    out = subprocess.run(AZGO + ["loop", "--recipe", str(recipe_file), "--run-dir", str(tmp_path / "run"),
                                 "--promote", "2", "--reason", "won 14 of 20 more games (docs/x/rule.txt)"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["best"]["generation"] == 2 and state["best"]["nets"]["7"] == run.cand_net(2, 7)
    info = state["generations"]["2"]
    assert info["promoted"] and info["promoted_by_hand"]["reason"] == "won 14 of 20 more games (docs/x/rule.txt)"
    assert info["promoted_by_hand"]["replaces_generation"] == 1
    assert state["generations"]["3"]["best_changed_during_selfplay"][0]["games_before"] == {"7": 3}
    assert [r["promoted"] for r in state["ladder"] if int(r["generation"]) == 2 and r["line"] == "gate"] == [1]
    reg = tmp_path / "run" / "registry"
    assert sha256(reg / "smoke7.onnx") == sha256(run.cand_net(2, 7))
    card = json.loads((reg / "smoke7.json").read_text())
    assert card["recipe"]["generation"] == 2 and card["recipe"]["promoted_by_hand"]["reason"].startswith("won 14")
    assert card["generation"] == 2  # built on the candidate's own card
    pub = json.loads((lin / "lineage.json").read_text())
    assert pub["best"]["generation"] == 2 and pub["best"]["checkpoint_sha256"] == sha256(lin / "best.pt")
    assert pub["best"]["nets_sha256"]["7"] == sha256(run.cand_net(2, 7))
    assert RecipeRun(load_recipe(recipe_file), str(tmp_path / "run")).state["best"]["generation"] == 2
    again = subprocess.run(AZGO + ["loop", "--recipe", str(recipe_file), "--run-dir", str(tmp_path / "run"),
                                   "--promote", "2"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert again.returncode == 2 and "--promote needs --reason" in again.stderr


def _gnugo7_packaging_run(tmp_path, promotion_extra: str = ""):
    """(run, registry folder, recipe file): the smoke recipe with a 4-game 7x7 GNU Go line deciding packaging of
    ``smoke7.onnx`` (``promotion_extra``: more ``[promotion]`` fields), candidates of generations 1-3 on disk."""
    from azgo.training.recipe_run import RecipeRun
    text = SMOKE.read_text().replace('entries = { 7 = "smoke7.onnx" }', 'entries = { 7 = "smoke7.onnx" }\n'
                                     'lines = ["gnugo7"]\n' + promotion_extra + '\n[[anchors]]\nname = "gnugo7"\n'
                                     'opponent = "gnugo"\nlevel = 10\ngames = 4\nsize = 7\nkomi = 9.0\nseconds = 1.0\n'
                                     'same_clock = false')
    recipe_file = tmp_path / "r.toml"
    recipe_file.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    run = RecipeRun(load_recipe(recipe_file), str(tmp_path / "run"))
    for g in (1, 2, 3):
        Path(run.gen_dir(g), "train").mkdir(parents=True, exist_ok=True)
        Path(run.cand_net(g, 7)).write_bytes(f"generation {g}'s 7x7 network".encode())
    reg = tmp_path / "run" / "registry"
    reg.mkdir()
    (reg / "smoke7.onnx").write_bytes(b"the packaged network")
    return run, reg, recipe_file


def test_a_generation_its_gate_promotes_is_packaged_only_if_it_holds_the_packaged_cards_lines(tmp_path):
    """``[promotion] lines``: a generation that passed its gate becomes the best network (the lineage goes on from
    it) but replaces the registry file only if each named anchor line scores at least what the packaged network's
    card records on the same terms; a record on other terms (more games) does not count."""
    run, reg, _ = _gnugo7_packaging_run(tmp_path)

    def rec(line, opponent, wins, games, **kw):
        return {"line": line, "opponent": opponent, "size": 7, "komi": 9.0, "handicap": 0, "seconds": 1.0,
                "visits": None, "threads": 1, "games": games, "wins": wins, "losses": games - wins, "draws": 0,
                "command": "azgo match -a 'azgo gtp' -b 'gnugo --mode gtp --level 10'", "games_folder": "x"} | kw
    card = {"name": "smoke7", "strength": [rec("gnugo7", "GNU Go 3.8 level 10", 3, 4),
                                           rec("gnugo7", "GNU Go 3.8 level 10", 40, 40)]}  # other terms
    (reg / "smoke7.json").write_text(json.dumps(card))
    gate = {"line": "gate", "opponent": "best", "size": 7, "games": 2, "wins": 2, "losses": 0, "draws": 0,
            "score": 1.0, "passed": True}
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "promote", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"promoted": True},
                                                     "2": {"gate": gate, "anchors": {"gnugo7": rec("gnugo7", "gnugo", 2, 4)}}},
                 "best": {"generation": 1, "checkpoint": "", "nets": {"7": run.cand_net(1, 7)}}}
    logged = []
    run.log = logged.append
    run.stage_promote(2)
    info = run.state["generations"]["2"]
    assert run.state["best"]["generation"] == 2 and info["promoted"] and info["packaged"] is False
    assert (reg / "smoke7.onnx").read_bytes() == b"the packaged network"
    assert "gnugo7 2-2-0 of 4 against the packaged smoke7.onnx's 3-1-0 of 4" in info["packaging"][0]
    assert any(line.startswith("[gen 2] not packaged: gnugo7 2-2-0") for line in logged)
    # as many wins as the packaged network: it replaces the file, and its card records its own lines
    run.state["generations"]["3"] = {"gate": gate, "anchors": {"gnugo7": rec("gnugo7", "gnugo", 3, 4)}}
    run.stage_promote(3)
    assert run.state["generations"]["3"]["packaged"] is True
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 3's 7x7 network"
    assert [r["wins"] for r in json.loads((reg / "smoke7.json").read_text())["strength"] if r["line"] == "gnugo7"] == [3]
    # a card with no line on these terms holds nothing back
    run.state["generations"]["4"] = {"gate": gate, "anchors": {"gnugo7": rec("gnugo7", "gnugo", 0, 4)}}
    Path(run.gen_dir(4), "train").mkdir(parents=True)
    Path(run.cand_net(4, 7)).write_bytes(b"generation 4's 7x7 network")
    (reg / "smoke7.json").write_text(json.dumps({"strength": [rec("gnugo7", "gnugo", 4, 4, komi=7.5)]}))
    run.stage_promote(4)
    assert run.state["generations"]["4"]["packaged"] is True


def test_packaging_lines_are_played_only_while_they_can_decide_packaging(tmp_path):
    """``promotion.stop_early``: a line of ``promotion.lines`` is skipped after a failed gate and after an earlier
    such line held packaging back, and ends as soon as winning every game left would not reach the packaged card's
    score; a line that can still package plays all its games; other anchors always play in full."""
    from azgo.gtp.match import MatchSummary
    from azgo.training.recipe_run import RecipeRun

    def anchor(name, komi=9.0):
        return (f'\n\n[[anchors]]\nname = "{name}"\nopponent = "gnugo"\nlevel = 10\ngames = 4\nsize = 7\n'
                f'komi = {komi}\nseconds = 1.0\nsame_clock = false')

    def rec(line, wins, games=4, komi=9.0):
        return {"line": line, "opponent": "GNU Go 3.8 level 10", "size": 7, "komi": komi, "handicap": 0,
                "seconds": 1.0, "visits": None, "threads": 1, "games": games, "wins": wins, "losses": games - wins,
                "draws": 0, "command": "azgo match -a 'azgo gtp' -b 'gnugo --mode gtp --level 10'", "games_folder": "x"}

    def make_run(stop_early=True, played_out=False):
        text = SMOKE.read_text().replace(
            'entries = { 7 = "smoke7.onnx" }', 'entries = { 7 = "smoke7.onnx" }\nlines = ["first7", "second7"]\n'
            + ("" if stop_early else "stop_early = false\n") + anchor("ladder7")
            + anchor("first7") + ("\nplayed_out = true" if played_out else "") + anchor("second7", 7.5))
        name = f"{int(stop_early)}{int(played_out)}"
        recipe_file = tmp_path / f"r{name}.toml"
        recipe_file.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
        run = RecipeRun(load_recipe(recipe_file), str(tmp_path / f"run{name}"))
        reg = Path(run.dir, "registry")
        reg.mkdir(parents=True)
        # the packaged card: 3 of 4 on first7's terms (ladder7 plays on the same), 2 of 4 on second7's (komi 7.5)
        (reg / "smoke7.json").write_text(json.dumps({"strength": [rec("first7", 3), rec("second7", 2, komi=7.5)]}))
        return run

    outcomes = {}  # line -> A's results in the order played (1 won, 0 lost)
    played = {}

    def fake_line(g, m, folder, should_stop=None):  # run_match's loop: asks should_stop before every game
        s = MatchSummary(0, 0, 0, 0, "a", "b")
        for won in outcomes[m.name][:m.games]:
            if should_stop is not None and s.games and should_stop(s):
                break
            s.add(bool(won), True)
        played[m.name] = s.games
        return s

    def anchors_of(run, g, gate_passed, results):
        outcomes.clear(), outcomes.update(results), played.clear()
        run.state = {"generations": {str(g): {"gate": {"passed": gate_passed}}}}
        logged = []
        run.log, run._line = logged.append, fake_line
        run.stage_anchors(g)
        return run.state["generations"][str(g)]["anchors"], dict(played), logged

    run = make_run()
    assert [run.packaging_bar(a) for a in run.r.anchors[1:]] == [3.0, 2.0]
    all_won = {"ladder7": [1, 1, 1, 1], "first7": [1, 1, 1, 1], "second7": [1, 1, 1, 1]}
    # a failed gate: the packaging lines are not played at all, the ladder's anchor is
    lines, played_now, logged = anchors_of(run, 1, False, all_won)
    assert played_now == {"ladder7": 4} and set(lines) == {"ladder7"}
    assert any("first7: not played: the gate did not promote generation 1" in line for line in logged)
    # two losses in the first two games: 3 of 4 is out of reach, so first7 stops and second7 is not played
    lines, played_now, logged = anchors_of(run, 2, True, dict(all_won, first7=[0, 0, 1, 1]))
    assert played_now == {"ladder7": 4, "first7": 2}
    assert lines["first7"]["games"] == 2 and lines["first7"]["stopped"].startswith("after 2 of 4 games")
    assert any("second7: not played: its first7 line already holds packaging back" in line for line in logged)
    held = run.packaging_held_back({"anchors": lines})
    assert len(held) == 2 and "first7 0-2-0 of 2 (stopped after 2 of 4 games" in held[0] and "second7" in held[1]
    # a loss that still leaves the bar reachable: every game is played, and both lines hold the card
    lines, played_now, _ = anchors_of(run, 3, True, dict(all_won, first7=[0, 1, 1, 1], second7=[0, 1, 0, 1]))
    assert played_now == {"ladder7": 4, "first7": 4, "second7": 4} and "stopped" not in lines["first7"]
    assert run.packaging_held_back({"anchors": lines}) == []
    # a line lost only in its last game is played in full, not stopped, and still holds packaging back
    lines, played_now, _ = anchors_of(run, 4, True, dict(all_won, first7=[1, 1, 0, 0]))
    assert played_now == {"ladder7": 4, "first7": 4} and "stopped" not in lines["first7"]
    # stop_early = false: every line is played in full, whatever the gate said
    run = make_run(stop_early=False)
    lines, played_now, _ = anchors_of(run, 1, False, dict(all_won, first7=[0, 0, 0, 0]))
    assert played_now == {"ladder7": 4, "first7": 4, "second7": 4}
    # played_out: the line out of reach after two games plays its last two, holds packaging back all the same
    # (second7 not played), and is still skipped after a failed gate
    run = make_run(played_out=True)
    lines, played_now, logged = anchors_of(run, 2, True, dict(all_won, first7=[0, 0, 1, 1]))
    assert played_now == {"ladder7": 4, "first7": 4} and "stopped" not in lines["first7"]
    assert lines["first7"]["wins"] == 2 and len(run.packaging_held_back({"anchors": lines})) == 2
    assert any("second7: not played: its first7 line already holds packaging back" in line for line in logged)
    assert anchors_of(run, 1, False, all_won)[1] == {"ladder7": 4}
    run.state = None  # a run folder not yet started: the plan shows generation 1
    assert "first7: 4 games against gnugo on 7x7, komi 9, 1 s a move, played out" in run.plan()


def test_each_registry_file_is_packaged_on_the_lines_of_its_own_board_sizes(tmp_path):
    """``promotion.entries = { 7 = ["smoke7.onnx", "smoke9.onnx"] }``: one exported network, two registry files,
    each decided only by the packaging lines on the board sizes its ``registry.json`` range serves. A generation
    that holds the 7x7 card's line but not the 9x9 one replaces smoke7 and leaves smoke9; with ``stop_early``
    the 9x9 line is still played after the 7x7 one stopped (it decides another file). ``--package`` applies the
    rule as it stands now to the best generation after ``[promotion]`` changed (a file split in two)."""
    from azgo.gtp.match import MatchSummary
    from azgo.training.recipe_run import RecipeRun

    def anchor(name, size, net_size=0):
        return (f'\n\n[[anchors]]\nname = "{name}"\nopponent = "gnugo"\nlevel = 10\ngames = 4\nsize = {size}\n'
                f'komi = 9.0\nseconds = 1.0\nsame_clock = false\nnet_size = {net_size}')

    def rec(line, size, wins, games=4):
        return {"line": line, "opponent": "GNU Go 3.8 level 10", "size": size, "komi": 9.0, "handicap": 0,
                "seconds": 1.0, "visits": None, "threads": 1, "games": games, "wins": wins, "losses": games - wins,
                "draws": 0, "command": "azgo match -a 'azgo gtp' -b 'gnugo --mode gtp --level 10'", "games_folder": "x"}

    def recipe(entries, name):
        text = SMOKE.read_text().replace('entries = { 7 = "smoke7.onnx" }', f'entries = {entries}\n'
                                         'lines = ["line7", "line9"]' + anchor("line7", 7) + anchor("line9", 9, 7))
        path = tmp_path / name
        path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
        return load_recipe(path)

    one = recipe('{ 7 = "smoke7.onnx" }', "one.toml")
    two = recipe('{ 7 = ["smoke7.onnx", "smoke9.onnx"] }', "two.toml")
    assert two.promotion.files() == [(7, "smoke7.onnx"), (7, "smoke9.onnx")]
    with pytest.raises(RecipeError, match="named twice"):
        recipe('{ 7 = ["smoke7.onnx", "smoke7.onnx"] }', "bad.toml")
    run = RecipeRun(one, str(tmp_path / "run"))
    reg = Path(run.dir, "registry")
    reg.mkdir(parents=True)
    for g in (1, 2):
        Path(run.gen_dir(g), "train").mkdir(parents=True, exist_ok=True)
        Path(run.cand_net(g, 7)).write_bytes(f"generation {g}'s network".encode())
    (reg / "smoke7.onnx").write_bytes(b"generation 1's network")
    (reg / "smoke7.json").write_text(json.dumps({"strength": [rec("line7", 7, 3), rec("line9", 9, 3)]}))
    (reg / "registry.json").write_text(json.dumps({"networks": [{"file": "smoke7.onnx", "sizes": [7, 9],
                                                                 "card": "smoke7.json"}]}))
    gate = {"line": "gate", "opponent": "best", "size": 7, "games": 2, "wins": 2, "losses": 0, "draws": 0,
            "score": 1.0, "passed": True}
    lines = {"line7": rec("line7", 7, 4), "line9": rec("line9", 9, 1)}
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "promote", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"promoted": True}, "2": {"gate": gate, "anchors": lines}},
                 "best": {"generation": 1, "checkpoint": "", "nets": {"7": run.cand_net(1, 7)}}}
    run.log = lambda line: None
    # one file serving 7x7-9x9: the lost 9x9 line holds all of it back
    run.stage_promote(2)
    info = run.state["generations"]["2"]
    assert info["promoted"] and info["packaged"] is False and info["packaged_files"] == []
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 1's network"
    with pytest.raises(RecipeError, match="replaces no registry file with generation 2: line9 1-3-0 of 4"):
        run.package_by_hand(2, "the same rule")
    run.save()
    # the file split by board size (the 9x9 end keeps generation 1), and the recipe's entries with it
    shutil.copy(reg / "smoke7.onnx", reg / "smoke9.onnx")
    shutil.copy(reg / "smoke7.json", reg / "smoke9.json")
    (reg / "registry.json").write_text(json.dumps({"networks": [
        {"file": "smoke7.onnx", "sizes": [7, 8], "card": "smoke7.json"},
        {"file": "smoke9.onnx", "sizes": [9, 9], "card": "smoke9.json"}]}))
    run = RecipeRun(two, str(tmp_path / "run"))
    published = []
    run.log, run.publish = (lambda line: None), (lambda **kw: published.append(kw))  # publish: tested above
    assert [run.deciding_files(a) for a in run.r.anchors[-2:]] == [["smoke7.onnx"], ["smoke9.onnx"]]
    with pytest.raises(RecipeError, match="needs a --reason"):
        run.package_by_hand(2, " ")
    with pytest.raises(RecipeError, match="generation 1 is not the best"):
        run.package_by_hand(1, "older")
    assert run.package_by_hand(2, "entries split by board size (docs/x/rule.txt)") == ["smoke7.onnx"]
    assert published == [{}]
    info = run.state["generations"]["2"]
    assert info["packaged_files"] == ["smoke7.onnx"] and info["packaged"] is False
    assert "line9 1-3-0 of 4" in info["packaging"][0] and "smoke9.onnx stays" in info["packaging"][0]
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 2's network"
    assert (reg / "smoke9.onnx").read_bytes() == b"generation 1's network"
    card = json.loads((reg / "smoke7.json").read_text())
    assert card["recipe"]["packaged_by_hand"]["reason"] == "entries split by board size (docs/x/rule.txt)"
    assert json.loads((reg / "registry.json").read_text())["networks"][1]["sizes"] == [9, 9]
    with pytest.raises(RecipeError, match="generation 2: smoke7.onnx already holds it; line9 1-3-0"):
        run.package_by_hand(2, "again")
    # the next generation's promotion decides each file on its own lines
    Path(run.gen_dir(3), "train").mkdir(parents=True)
    Path(run.cand_net(3, 7)).write_bytes(b"generation 3's network")
    run.state["generations"]["3"] = {"gate": gate, "anchors": {"line7": rec("line7", 7, 1), "line9": rec("line9", 9, 4)}}
    run.stage_promote(3)
    assert run.state["generations"]["3"]["packaged_files"] == ["smoke9.onnx"]
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 2's network"
    assert (reg / "smoke9.onnx").read_bytes() == b"generation 3's network"
    # stop_early per file: line7 stops once out of reach of smoke7's card (generation 2's: 4 of 4), and line9
    # (smoke9, generation 3's card: 4 of 4 too) is still played
    played = {}

    def fake_line(g, m, folder, should_stop=None):
        s = MatchSummary(0, 0, 0, 0, "a", "b")
        for won in {"line7": [0, 0, 1, 1], "line9": [1, 1, 1, 1]}[m.name]:
            if should_stop is not None and s.games and should_stop(s):
                break
            s.add(bool(won), True)
        played[m.name] = s.games
        return s

    run.state["generations"]["4"] = {"gate": {"passed": True}}
    run._line = fake_line
    run.stage_anchors(4)
    assert played == {"line7": 1, "line9": 4}
    assert run.state["generations"]["4"]["anchors"]["line7"]["stopped"].startswith("after 1 of 4 games")


def test_a_network_per_board_size_goes_into_its_own_file_and_plays_its_own_selfplay(tmp_path):
    """``export.bn_sizes = [7, 9]`` with ``entries = { 7 = "smoke7.onnx", 9 = "smoke9.onnx" }`` (campaign19 from
    generation 13: a 19x19 and a 13x13 network, each with its own batch-norm statistics): a promoted generation puts
    each size's network into that size's file, each decided by the line played with it (``net_size``), and
    self-play plays each size with the best generation's network of that size (the main size's where the best has
    none and no checkpoint to make one from)."""
    from azgo.training.recipe_run import RecipeRun
    text = SMOKE.read_text().replace("bn_sizes = [7]", "bn_sizes = [7, 9]").replace(
        'entries = { 7 = "smoke7.onnx" }',
        'entries = { 7 = "smoke7.onnx", 9 = "smoke9.onnx" }\nlines = ["line7", "line9"]\n\n'
        '[[anchors]]\nname = "line7"\nopponent = "gnugo"\nlevel = 10\ngames = 4\nsize = 7\nkomi = 9.0\nseconds = 1.0\n\n'
        '[[anchors]]\nname = "line9"\nopponent = "gnugo"\nlevel = 10\ngames = 4\nsize = 9\nnet_size = 9\nkomi = 9.0\n'
        'seconds = 1.0')
    path = tmp_path / "two.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    run = RecipeRun(load_recipe(path), str(tmp_path / "run"))
    assert [run.deciding_files(a) for a in run.r.anchors] == [["smoke7.onnx"], ["smoke9.onnx"]]
    reg = Path(run.dir, "registry")
    reg.mkdir(parents=True)
    (reg / "registry.json").write_text(json.dumps({"networks": [
        {"file": "smoke7.onnx", "sizes": [7, 8], "card": "smoke7.json"},
        {"file": "smoke9.onnx", "sizes": [9, 9], "card": "smoke9.json"}]}))
    for g in (1, 2):
        Path(run.gen_dir(g), "train").mkdir(parents=True, exist_ok=True)
        for n in (7, 9):
            Path(run.cand_net(g, n)).write_bytes(f"generation {g}'s {n}x{n} network".encode())
    one = {"7": run.cand_net(1, 7)}
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "promote", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"promoted": True}, "2": {}},
                 "best": {"generation": 1, "checkpoint": "", "nets": one}}
    run.log = lambda line: None
    assert run.best_net(7) == run.best_net(9) == run.cand_net(1, 7)  # a best with one network plays every size
    rec = {"opponent": "GNU Go 3.8 level 10", "komi": 9.0, "handicap": 0, "seconds": 1.0, "visits": None,
           "threads": 1, "games": 4, "wins": 3, "losses": 1, "draws": 0,
           "command": "azgo match -a 'azgo gtp' -b 'gnugo --mode gtp --level 10'", "games_folder": "x"}
    run.state["generations"]["2"] = {"gate": {"line": "gate", "opponent": "best", "size": 7, "games": 2, "wins": 2,
                                              "losses": 0, "draws": 0, "score": 1.0, "passed": True},
                                     "anchors": {"line7": dict(rec, line="line7", size=7),
                                                 "line9": dict(rec, line="line9", size=9)}}
    run.stage_promote(2)
    assert run.state["generations"]["2"]["packaged_files"] == ["smoke7.onnx", "smoke9.onnx"]
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 2's 7x7 network"
    assert (reg / "smoke9.onnx").read_bytes() == b"generation 2's 9x9 network"
    assert run.best_net(7) == run.cand_net(2, 7) and run.best_net(9) == run.cand_net(2, 9)


def test_a_file_of_by_lines_alone_is_decided_by_its_lines_when_the_gate_fails(tmp_path):
    """``promotion.by_lines_alone = [9]`` with a 7x7 gate: a generation its gate did not promote still plays the
    line that decides the 9x9 file (not the 7x7 one) and replaces the 9x9 file when that line holds its card; the
    best network and the 7x7 file stay. A 9x9 line below the card, or one no card measures, replaces nothing."""
    from azgo.gtp.match import MatchSummary
    from azgo.training.recipe_run import RecipeRun

    def recipe(promotion, name):
        text = SMOKE.read_text().replace("bn_sizes = [7]", "bn_sizes = [7, 9]").replace(
            'entries = { 7 = "smoke7.onnx" }',
            'entries = { 7 = "smoke7.onnx", 9 = "smoke9.onnx" }\n' + promotion + '\n\n'
            '[[anchors]]\nname = "line7"\nopponent = "gnugo"\nlevel = 10\ngames = 4\nsize = 7\nkomi = 9.0\n'
            'seconds = 1.0\n\n[[anchors]]\nname = "line9"\nopponent = "gnugo"\nlevel = 10\ngames = 4\nsize = 9\n'
            'net_size = 9\nkomi = 9.0\nseconds = 1.0')
        path = tmp_path / name
        path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
        return load_recipe(path)

    with pytest.raises(RecipeError, match="by_lines_alone: board sizes of promotion.entries"):
        recipe('lines = ["line7", "line9"]\nby_lines_alone = [13]', "bad.toml")
    with pytest.raises(RecipeError, match="by_lines_alone: its files are decided by promotion.lines alone"):
        recipe("by_lines_alone = [9]", "nolines.toml")
    r = recipe('lines = ["line7", "line9"]\nby_lines_alone = [9]', "alone.toml")
    assert r.promotion.by_lines_alone == (9,) and r.promotion.gated("smoke7.onnx") and not r.promotion.gated("smoke9.onnx")
    run = RecipeRun(r, str(tmp_path / "run"))
    assert "smoke9.onnx (9x9-9x9; decided by line9, with or without the gate)" in run.plan()
    reg = Path(run.dir, "registry")
    reg.mkdir(parents=True)
    (reg / "registry.json").write_text(json.dumps({"networks": [
        {"file": "smoke7.onnx", "sizes": [7, 8], "card": "smoke7.json"},
        {"file": "smoke9.onnx", "sizes": [9, 9], "card": "smoke9.json"}]}))
    rec = {"opponent": "GNU Go 3.8 level 10", "komi": 9.0, "handicap": 0, "seconds": 1.0, "visits": None,
           "threads": 1, "games": 4, "wins": 3, "losses": 1, "draws": 0,
           "command": "azgo match -a 'azgo gtp' -b 'gnugo --mode gtp --level 10'", "games_folder": "x"}
    for n in (7, 9):
        (reg / f"smoke{n}.onnx").write_bytes(f"generation 1's {n}x{n} network".encode())
        (reg / f"smoke{n}.json").write_text(json.dumps({"strength": [dict(rec, line=f"line{n}", size=n)]}))
    for g in (1, 2, 3):
        Path(run.gen_dir(g), "train").mkdir(parents=True, exist_ok=True)
        for n in (7, 9):
            Path(run.cand_net(g, n)).write_bytes(f"generation {g}'s {n}x{n} network".encode())
    failed = {"line": "gate", "opponent": "best", "size": 7, "games": 2, "wins": 0, "losses": 2, "draws": 0,
              "score": 0.0, "passed": False}
    best = {"generation": 1, "checkpoint": "", "nets": {"7": run.cand_net(1, 7), "9": run.cand_net(1, 9)}}
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "anchors", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"promoted": True}, "2": {"gate": dict(failed)}},
                 "best": dict(best)}
    logged, played = [], {}

    def fake_line(g, m, folder, should_stop=None):
        s = MatchSummary(0, 0, 0, 0, "a", "b")
        for won in {"line7": [1, 1, 1, 1], "line9": [1, 1, 1, 0]}[m.name]:
            if should_stop is not None and s.games and should_stop(s):
                break
            s.add(bool(won), True)
        played[m.name] = s.games
        return s

    run.log, run._line = logged.append, fake_line
    run.stage_anchors(2)
    assert played == {"line9": 4}  # the 7x7 file waits for the gate; the 9x9 one does not
    assert any("line7: not played: the gate did not promote generation 2" in line for line in logged)
    assert any("line9: played though the gate did not promote" in line for line in logged)
    run.stage_promote(2)
    info = run.state["generations"]["2"]
    assert info["promoted"] is False and info["packaged_files"] == ["smoke9.onnx"] and info["packaged_without_gate"]
    assert run.state["best"]["generation"] == 1 and run.best_net(9) == run.cand_net(1, 9)
    assert (reg / "smoke9.onnx").read_bytes() == b"generation 2's 9x9 network"
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 1's 7x7 network"
    card = json.loads((reg / "smoke9.json").read_text())
    assert card["recipe"]["generation"] == 2 and card["recipe"]["packaged_without_gate"] is True
    # below the card (2 of 4 against generation 2's 3 of 4): nothing is replaced
    run.state["generations"]["3"] = {"gate": dict(failed),
                                     "anchors": {"line9": dict(rec, line="line9", size=9, wins=2, losses=2)}}
    run.stage_promote(3)
    assert "packaged_files" not in run.state["generations"]["3"]
    assert (reg / "smoke9.onnx").read_bytes() == b"generation 2's 9x9 network"
    # a card with no line on these terms: no game measured the file against it, so it stays
    (reg / "smoke9.json").write_text(json.dumps({"strength": [dict(rec, line="line9", size=9, komi=5.5)]}))
    run.state["generations"]["3"] = {"gate": dict(failed), "anchors": {"line9": dict(rec, line="line9", size=9)}}
    run.stage_promote(3)
    assert "packaged_files" not in run.state["generations"]["3"]
    assert (reg / "smoke9.onnx").read_bytes() == b"generation 2's 9x9 network"
    # without by_lines_alone a failed gate plays neither line and replaces nothing
    run = RecipeRun(recipe('lines = ["line7", "line9"]', "gated.toml"), str(tmp_path / "run2"))
    run.state = {"generations": {"4": {"gate": dict(failed)}}}
    played.clear()
    run.log, run._line = logged.append, fake_line
    run.stage_anchors(4)
    assert played == {}


def test_selfplay_nets_packaged_plays_each_size_with_its_registry_file(tmp_path):
    """``selfplay.nets = "packaged"`` (here for 9x9 only, ``[selfplay.by_size.9]``): 9x9 self-play is played by the
    registry file ``promotion.entries`` gives 9x9, as its lines last decided it (with ``by_lines_alone`` a newer or
    older generation than the best), 7x7 still by the best generation's network; a registry file not there yet
    falls back to the best. A size whose games would play a packaged network needs a registry entry."""
    from azgo.training.recipe_run import RecipeRun
    text = SMOKE.read_text().replace("bn_sizes = [7]", "bn_sizes = [7, 9]").replace(
        'entries = { 7 = "smoke7.onnx" }', 'entries = { 7 = "smoke7.onnx", 9 = "smoke9.onnx" }').replace(
        "[sizes]\n7 = 1.0", "[sizes]\n7 = 0.5\n9 = 0.5").replace(
        "fair = { 7 = 9.0 }", "fair = { 7 = 9.0, 9 = 7.0 }").replace(
        "[window]\n", '[selfplay.by_size.9]\nnets = "packaged"\n\n[window]\n', 1)
    path = tmp_path / "packaged.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    r = load_recipe(path)
    assert r.selfplay_at(9).nets == "packaged" and r.selfplay_at(7).nets == "best"
    run = RecipeRun(r, str(tmp_path / "run"))
    logged = []
    run.log = logged.append
    for n in (7, 9):
        Path(run.cand_net(1, n)).parent.mkdir(parents=True, exist_ok=True)
        Path(run.cand_net(1, n)).write_bytes(f"generation 1's {n}x{n} network".encode())
    run.state = {"recipe": r.name, "generation": 3, "stage": "selfplay", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {}},
                 "best": {"generation": 1, "checkpoint": "", "nets": {"7": run.cand_net(1, 7), "9": run.cand_net(1, 9)}}}
    net, who = run.selfplay_net(9)  # no registry file yet: the best plays, and the log says why
    assert net == run.cand_net(1, 9) and who == "generation 1" and "no packaged network" in logged[-1]
    reg = Path(run.dir, "registry")
    reg.mkdir(parents=True)
    (reg / "smoke9.onnx").write_bytes(b"generation 2's 9x9 network, packaged by its lines")
    net, who = run.selfplay_net(9)
    assert net == str(reg / "smoke9.onnx") and "selfplay.nets = packaged" in who
    assert run.selfplay_net(7) == (run.cand_net(1, 7), "generation 1")  # 7x7 keeps the best
    assert run.best_net(9) == run.cand_net(1, 9)  # the gate, lines and the forked starts' peaks: still the best's
    # 9x9 plays packaged but has no registry entry: the recipe fails, naming the field
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace('entries = { 7 = "smoke7.onnx", 9 = "smoke9.onnx" }',
                                            'entries = { 7 = "smoke7.onnx" }'))
    with pytest.raises(RecipeError, match=r"selfplay.by_size.9.nets: packaged: 9x9 games need a registry file"):
        load_recipe(bad)


def test_a_size_the_best_generation_has_no_network_of_gets_one_from_its_checkpoint(tmp_path):
    """A best generation trained before a size was exported (campaign19: generation 12 had only its 19x19
    network when generation 13 began to export 13x13 and 9x9 ones) must not play that size's self-play with the
    main size's batch-norm statistics: its checkpoint is exported with that size's statistics (from the window's
    games of the size) and quantized, once, and recorded among the best networks. A size not exported keeps
    playing the main size's network."""
    import onnx

    from azgo.nets.quantize import int8_path_for
    from azgo.training.checkpoints import save_atomic
    from azgo.training.model import build_model
    from azgo.training.recipe_run import RecipeRun
    text = SMOKE.read_text().replace("bn_sizes = [7]", "bn_sizes = [7, 9]") + (
        '\n[[window.sources]]\npath = "docs/strength/pachi9g12bn9/pachi9/part0"\nshare = 1.0\nsize = 9\n')
    path = tmp_path / "nine.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    run = RecipeRun(load_recipe(path), str(tmp_path / "run"))
    run.log = lambda line: None
    ckpt = os.path.join(run.gen_dir(1), "train", "checkpoint.pt")
    os.makedirs(os.path.dirname(ckpt), exist_ok=True)
    save_atomic({"net": "b2c16", "model": build_model("b2c16", seed=1).state_dict(), "step": 8, "training": "test"},
                ckpt)
    seven = os.path.join(run.gen_dir(1), "net7.onnx")
    Path(seven).write_bytes(b"the best 7x7 network")
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "selfplay", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {}},
                 "best": {"generation": 1, "checkpoint": ckpt, "nets": {"7": seven}}}
    nine = run.best_net(9)
    assert nine == os.path.join(run.gen_dir(1), "net9.onnx") and run.state["best"]["nets"]["9"] == nine
    meta = {p.key: p.value for p in onnx.load(nine).metadata_props}
    assert "9x9 games" in json.loads(meta["azgo_provenance"])["batchnorm"]
    assert int8_path_for(nine).exists()  # self-play plays int8
    made = os.path.getmtime(nine)
    assert run.best_net(9) == nine and os.path.getmtime(nine) == made  # made once
    assert json.loads(Path(run.state_path).read_text())["best"]["nets"]["9"] == nine  # saved with the state
    assert run.best_net(8) == seven  # not an exported size: the main size's network, as before


def test_a_line_can_keep_the_early_stop_its_ladder_was_measured_with(tmp_path):
    """``early_stop`` in a line passes ``--early-stop`` to azgo (so a ladder keeps its search when azgo's default
    changes, docs/strength/earlystop19); left out, azgo plays with its own default."""
    from azgo.training.recipe_run import RecipeRun
    text = SMOKE.read_text().replace("threshold = 0.0", 'threshold = 0.0\nearly_stop = "always"')
    path = tmp_path / "pinned.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n[start]', 1))
    pinned = load_recipe(path)
    assert pinned.gate.early_stop == "always" and load_recipe(SMOKE).gate.early_stop == ""
    run = RecipeRun(pinned, str(tmp_path / "r"))
    assert run._azgo("n.onnx", pinned.gate).endswith(" --early-stop always")
    assert "--early-stop" not in run._azgo("n.onnx", load_recipe(SMOKE).gate)
    plan = subprocess.run(AZGO + ["loop", "--recipe", str(path), "--run-dir", str(tmp_path / "p"), "--plan"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0 and ", --early-stop always; passes at" in plan.stdout, plan.stderr


def test_kept_search_log_holds_azgo_search_lines_only(tmp_path):
    """The published copy of a line's engine log keeps azgo's search lines (Pachi's megabytes left out), reads
    back through lost_leads.py's reader, and is written again only when the run's log changed."""
    from azgo.training.recipe_publish import keep_search_log
    src = tmp_path / "run" / "engines.stderr.log"
    src.parent.mkdir()
    src.write_text("azgo: network net9.int8.onnx (int8)\n"
                   "azgo: E4 winrate 58.2%, lead +0.3, 1385 visits (0 reused)\n"
                   "Pachi: [5000] best 52.1% xkomi 7.0 | seq E5 D4\n"
                   "azgo: D7 winrate 41.0%, lead -2.5, 982 visits (6 reused)\n")
    dst = tmp_path / "kept" / "part0" / "engines.stderr.log.gz"
    assert keep_search_log(src, dst)
    assert gzip.decompress(dst.read_bytes()).decode().splitlines() == [
        "azgo: E4 winrate 58.2%, lead +0.3, 1385 visits (0 reused)",
        "azgo: D7 winrate 41.0%, lead -2.5, 982 visits (6 reused)"]
    first = dst.read_bytes()
    assert not keep_search_log(src, dst)  # unchanged log: left as it is
    os.utime(src, (time.time() + 5, time.time() + 5))
    assert keep_search_log(src, dst) and dst.read_bytes() == first  # no time in the gzip header: the same bytes
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from lost_leads import logged_leads
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert logged_leads(str(dst.parent)) == [("E4", 0.3, pytest.approx(0.582)), ("D7", -2.5, pytest.approx(0.41))]


def test_promotion_margins_let_a_guard_line_score_a_little_below_its_card(tmp_path):
    """``[promotion] margins``: a line named there holds its card when it scores at most that many points below
    the card's record; lower it holds the file back (and says the margin), its out-of-reach bar moves with it,
    and a margin for a line that does not decide packaging fails the recipe check."""
    run, reg, recipe_file = _gnugo7_packaging_run(tmp_path, "margins = { gnugo7 = 1 }\n")

    def rec(wins, games=4):
        return {"line": "gnugo7", "opponent": "gnugo", "size": 7, "komi": 9.0, "handicap": 0, "seconds": 1.0,
                "visits": None, "threads": 1, "games": games, "wins": wins, "losses": games - wins, "draws": 0,
                "command": "azgo match -a 'azgo gtp' -b 'gnugo --mode gtp --level 10'", "games_folder": "x"}
    (reg / "smoke7.json").write_text(json.dumps({"name": "smoke7", "strength": [rec(3)]}))
    anchor = next(a for a in run.r.anchors if a.name == "gnugo7")
    assert run.packaging_bar(anchor) == 2.0  # the card's 3 of 4, less the margin of 1
    gate = {"line": "gate", "opponent": "best", "size": 7, "games": 2, "wins": 2, "losses": 0, "draws": 0,
            "score": 1.0, "passed": True}
    run.state = {"recipe": run.r.name, "generation": 2, "stage": "promote", "ladder": [], "selfplay": [],
                 "core_hours": 0.0, "generations": {"1": {"promoted": True},
                                                     "2": {"gate": gate, "anchors": {"gnugo7": rec(1)}}},
                 "best": {"generation": 1, "checkpoint": "", "nets": {"7": run.cand_net(1, 7)}}}
    run.log = lambda msg: None
    run.stage_promote(2)  # 1 of 4: two points below the card, one more than the margin
    info = run.state["generations"]["2"]
    assert info["packaged"] is False and "less a margin of 1 points (promotion.margins)" in info["packaging"][0]
    assert (reg / "smoke7.onnx").read_bytes() == b"the packaged network"
    run.state["generations"]["3"] = {"gate": gate, "anchors": {"gnugo7": rec(2)}}
    run.stage_promote(3)  # 2 of 4: one point below the card, within the margin
    assert run.state["generations"]["3"]["packaged"] is True
    assert (reg / "smoke7.onnx").read_bytes() == b"generation 3's 7x7 network"
    bad = tmp_path / "bad.toml"
    for margins in ("gnugo9 = 1", "gnugo7 = 4"):  # not a packaging line; as many points as the line has games
        bad.write_text(recipe_file.read_text().replace("margins = { gnugo7 = 1 }", f"margins = {{ {margins} }}"))
        with pytest.raises(RecipeError, match="promotion.margins"):
            load_recipe(bad)
