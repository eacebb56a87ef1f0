"""Shared pytest fixtures and hooks."""

# ============================================================================ GNU Go (tests/gnugo.py)
# Fixtures for the differential tests against GNU Go 3.8 (tests/test_gnugo_diff.py). A test that
# takes ``gnugo`` is skipped with a clear reason when the binary is missing. Keep this section
# self-contained; other fixtures go in their own sections below.
import pytest

import gnugo as _gnugo_helper


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of the GNU Go binary; skips the test when GNU Go is not installed."""
    return _gnugo_helper.require_gnugo()


@pytest.fixture(scope="module")
def gnugo(gnugo_path):
    """One ``gnugo --mode gtp --chinese-rules --seed 1`` process shared by a test module."""
    engine = _gnugo_helper.GnuGo(seed=1, binary=gnugo_path)
    try:
        yield engine
    finally:
        engine.close()


def pytest_sessionfinish(session):
    """Under pytest-xdist (``-n 2``) each worker hands its GNU Go counts to the controller, which prints them."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["gnugo_summary"] = list(_gnugo_helper.SUMMARY)


class _WorkerSummaries:
    """The controller's side of ``pytest_sessionfinish`` above (an xdist hook: registered only with xdist)."""

    def pytest_testnodedown(self, node, error):
        _gnugo_helper.SUMMARY.extend(getattr(node, "workeroutput", {}).get("gnugo_summary", []))


def pytest_configure(config):
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_WorkerSummaries(), "azgo-gnugo-summaries")


def pytest_terminal_summary(terminalreporter):
    """Print the counts the GNU Go differential tests collected (games, moves, exclusions...)."""
    if _gnugo_helper.SUMMARY:
        terminalreporter.section("GNU Go differential test summary")
        for line in _gnugo_helper.SUMMARY:
            terminalreporter.write_line(line)
# ======================================================================== end of GNU Go section
