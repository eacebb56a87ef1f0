"""A recipe's ``[stop]``: the loop stops by itself after generations in a row that moved nothing."""

import json
from pathlib import Path

import pytest

from azgo.training.recipe import RecipeError, load_recipe
from azgo.training.recipe_stop import moved, still_generations, stop_reason

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "recipes" / "smoke.toml"


def _row(g, line, wins, losses, draws=0):
    return {"generation": g, "line": line, "wins": wins, "losses": losses, "draws": draws,
            "games": wins + losses + draws}


def test_a_generation_moves_the_lineage_by_packaging_or_a_new_best_line():
    gens = {"1": {"packaged_files": []}, "2": {"packaged_files": ["large9.onnx"]}, "3": {"packaged_files": []},
            "4": {"packaged_files": []}, "5": {"packaged_files": []}}
    ladder = [_row(1, "pachi9", 40, 10), _row(2, "pachi9", 38, 12), _row(3, "pachi9", 40, 9, 1),
              _row(4, "pachi9", 40, 10), _row(4, "gate", 15, 5), _row(5, "gnugo9", 40, 0)]
    assert moved(1, gens, ladder, ("pachi9",)) is True      # the first line of its name
    assert moved(2, gens, ladder, ("pachi9",)) is True      # packaged, below the best line
    assert moved(3, gens, ladder, ("pachi9",)) is True      # 40.5 points above 40: a draw counts half
    assert moved(4, gens, ladder, ("pachi9",)) is False     # 40 equals an earlier line: not above it
    assert moved(4, gens, ladder, ()) is False              # no lines named: packaging alone
    assert moved(5, gens, ladder, ("pachi9",)) is False     # pachi9 not played (the gate failed, say)
    assert moved(6, gens, ladder, ("pachi9",)) is None      # no record
    assert still_generations(5, gens, ladder, ("pachi9",)) == 2
    assert still_generations(5, gens, ladder, ()) == 3      # without the line, 3 and 4 moved nothing either
    assert stop_reason(5, 0, gens, ladder, ("pachi9",)) is None   # patience 0: never
    assert stop_reason(5, 3, gens, ladder, ("pachi9",)) is None
    why = stop_reason(5, 2, gens, ladder, ("pachi9",))
    assert why.startswith("generations 4-5 replaced no registry file and set no new best on pachi9")
    gaps = {"4": gens["4"], "5": gens["5"]}                 # generation 3 unrecorded: the count ends there
    assert still_generations(5, gaps, ladder, ()) == 2


def test_campaign9p_stops_after_generation_11_by_its_own_ladder():
    """The rule the sessions applied by hand to campaign9p (go on while one of the last two generations was
    packaged or beat the lineage's best pachi9 line) is ``patience = 2, lines = ["pachi9"]`` over its published
    lineage: generations 10 (41.5 points, not packaged) and 11 (38) stop it; after 9 (packaged) it goes on."""
    lin = json.loads((ROOT / "docs" / "runs" / "campaign9p" / "lineage.json").read_text())
    gens, ladder = lin["generations"], lin["ladder"]
    assert stop_reason(9, 2, gens, ladder, ("pachi9",)) is None
    assert stop_reason(10, 2, gens, ladder, ("pachi9",)) is None
    assert stop_reason(11, 2, gens, ladder, ("pachi9",)).startswith("generations 10-11")


def _with_stop(tmp_path, stop: str) -> Path:
    text = SMOKE.read_text()
    path = tmp_path / "stop.toml"
    path.write_text(text.replace("[start]", f'root = "{ROOT}"\n\n{stop}\n\n[start]', 1))
    return path


@pytest.mark.parametrize("stop,message", [
    ("[stop]\npatience = -1", "stop.patience: must be >= 0"),
    ('[stop]\npatience = 2\nlines = ["pachi9"]', "stop.lines: 'pachi9' is not an anchor line"),
    ("[stop]\npatient = 2", "stop.patient: unknown field"),
])
def test_a_bad_stop_fails_naming_the_field(tmp_path, stop, message):
    with pytest.raises(RecipeError, match=message):
        load_recipe(_with_stop(tmp_path, stop))


@pytest.mark.parametrize("patience,runs", [(2, False), (3, True), (0, True)])
def test_the_loop_stops_before_a_generation_when_the_rule_holds(tmp_path, patience, runs):
    """Generations 1 and 2 finished without packaging: with patience 2 the loop returns before generation 3's
    self-play (which never starts) and logs why; with 3 (or none) it goes on into it."""
    from azgo.training.recipe_run import RecipeRun
    logged = []
    run = RecipeRun(load_recipe(_with_stop(tmp_path, f"[stop]\npatience = {patience}")), str(tmp_path / "r"),
                    log=logged.append)
    run.state = {"recipe": run.r.name, "generation": 3, "stage": "selfplay", "core_hours": 1.0,
                 "generations": {"1": {"packaged_files": []}, "2": {"packaged_files": []}}, "ladder": []}
    run.save()
    started = []

    def stage(g):
        started.append(g)
        raise KeyboardInterrupt  # the test ends here: generation 3 began
    run.stage_selfplay = stage
    if runs:
        with pytest.raises(KeyboardInterrupt):
            run._run_stages(None)
        assert started == [3]
    else:
        run._run_stages(None)
        assert started == []
        assert any("stopped by the recipe's [stop]: generations 1-2 replaced no registry file" in m
                   and "raise stop.patience" in m for m in logged), logged
