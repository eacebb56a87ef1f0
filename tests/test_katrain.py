"""KaTrain 1.20.0 drives ``azgo analysis`` with its own engine class, headless.

KaTrain's "custom engine" (``altcommand`` in its engine settings) starts a command line and speaks
KataGo's JSON analysis protocol to it. Here KaTrain's own ``KataGoEngine`` (katrain/core/engine.py)
starts ``azgo analysis``, and KaTrain's own ``GameNode`` (katrain/core/game_node.py) asks for and
parses the analysis of a real game's positions (a game of azgo against GNU Go from docs/strength):
normal analysis, pondering that is stopped, a terminated query and "find alternatives" (avoidMoves).
KaTrain's imports need Kivy's event module but no window: ``.ci/run`` installs ``katrain`` (without
its GUI dependencies), ``kivy`` and ``pysgf``; the test is skipped with the reason when they are
missing.
"""

from __future__ import annotations

import os
import shlex
import tempfile
import time
from pathlib import Path

import pytest

from azgo_cmd import azgo_program

os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")
# one home per pytest-xdist worker: every worker imports kivy while collecting, and two kivy imports creating the
# same home at once fail with FileExistsError (kivy checks, then mkdirs)
os.environ.setdefault("KIVY_HOME", os.path.join(tempfile.gettempdir(),
                                                f"azgo-kivy-home-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"))

engine_mod = pytest.importorskip("katrain.core.engine", reason="KaTrain 1.20 is not installed "
                                 "(pip install --no-deps katrain==1.20.0 kivy pysgf)")
game_mod = pytest.importorskip("katrain.core.game")
from katrain.core.constants import OUTPUT_ERROR  # noqa: E402

GAME = Path(__file__).resolve().parent.parent / "docs" / "strength" / "gnugo9" / "game0001.sgf"


class FakeKaTrain:
    """What KataGoEngine needs of the KaTrain app: ``log``, popups (``__call__``), ``update_state``."""

    def __init__(self):
        self.errors: list[str] = []
        self.popups: list[tuple] = []
        self.messages: list[str] = []

    def log(self, message, level=0):
        self.messages.append(str(message))
        if level == OUTPUT_ERROR:
            self.errors.append(str(message))

    def __call__(self, *args, **kwargs):
        self.popups.append(args)

    def update_state(self):
        pass


def wait(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def katrain_engine():
    app = FakeKaTrain()
    command = " ".join(shlex.quote(x) for x in azgo_program("analysis", "--analysis-threads", "4", "--seed", "3"))
    config = {"altcommand": command, "max_visits": 40, "fast_visits": 10, "wide_root_noise": 0.04,
              "max_time": 8.0, "_enable_ownership": True}
    engine = engine_mod.KataGoEngine(app, config)
    assert engine_mod.resolve_engine_backend(config) == "custom"
    yield app, engine
    engine.shutdown(finish=False)


def mainline(root, count):
    nodes = [root]
    while nodes[-1].children and len(nodes) < count:
        nodes.append(nodes[-1].children[0])
    return nodes


def test_katrain_analyses_a_real_game(katrain_engine):
    app, engine = katrain_engine
    root = game_mod.KaTrainSGF.parse_file(str(GAME))
    nodes = mainline(root, 14)
    assert len(nodes) == 14 and root.board_size == (9, 9)
    for k, node in enumerate(nodes):
        node.analyze(engine, priority=-k)
    assert wait(lambda: all(n.analysis_complete for n in nodes), 120), app.messages[-5:]
    assert app.errors == [] and app.popups == []
    for node in nodes:
        assert node.root_visits >= 40
        assert 0 <= node.winrate <= 1 and node.score is not None
        assert node.format_score() and node.format_winrate()
        cands = node.candidate_moves  # KaTrain's own derived fields: pointsLost, winrateLost, order
        assert cands and all("pointsLost" in c and "winrateLost" in c for c in cands)
        assert cands[0]["order"] == 0
        assert len(node.ownership) == 81 and len(node.policy) == 82
        ranking = node.policy_ranking
        assert ranking and abs(sum(p for p, _ in ranking if p > 0) - 1) < 1e-3
    # KaTrain's mistake detection compares a move's score with its parent's: a real number each
    assert all(isinstance(n.points_lost, float) for n in nodes[1:])


def test_katrain_pondering_stops_and_terminate(katrain_engine):
    app, engine = katrain_engine
    root = game_mod.KaTrainSGF.parse_file(str(GAME))
    nodes = mainline(root, 30)
    node = nodes[-1]
    node.analyze(engine, ponder=True)
    assert wait(lambda: node.analysis_exists, 60)  # partial results while pondering (10M visits asked)
    assert not node.analysis_complete
    first = node.root_visits
    assert wait(lambda: node.root_visits > first, 30)
    engine.stop_pondering()  # KaTrain sends terminate and keeps listening for the final answer
    assert wait(lambda: node.analysis_complete, 30)
    assert wait(engine.is_idle, 30)

    other = nodes[10]
    other.analyze(engine, visits=10 ** 6)
    time.sleep(0.5)
    engine.terminate_queries(only_for_node=other)
    assert wait(engine.is_idle, 30)

    alt = nodes[5]
    alt.analyze(engine)
    assert wait(lambda: alt.analysis_complete, 60)
    before = set(alt.analysis["moves"])
    alt.analyze(engine, find_alternatives=True)  # avoidMoves: the moves already analysed
    assert wait(engine.is_idle, 60)
    assert set(alt.analysis["moves"]) - before  # new candidate moves were added
    assert app.errors == [] and app.popups == []
