"""When a lineage stops by itself: the recipe's ``[stop]`` rule over its finished generations.

A generation *moved* the lineage when it replaced a registry file (its ``packaged_files``) or when one of the
recipe's ``stop.lines`` (anchor line names) scored more points (wins + draws / 2) than the same line of every
earlier generation of the lineage's ladder. ``stop.patience = N`` stops the loop once the last N finished
generations in a row did not move it. A generation the run state has no record of ends the count (it may have
moved the lineage). Pure functions over the run state's ``generations`` and ``ladder``; nothing here runs games.
"""

from __future__ import annotations

from .recipe_publish import line_score


def line_points(row: dict) -> float:
    """Points of a ladder row: wins + draws / 2 (`line_score` times its games)."""
    return line_score(row) * row["games"]


def moved(g: int, generations: dict, ladder: list, lines: tuple) -> bool | None:
    """Whether generation ``g`` moved the lineage (see the module docstring); None when ``generations`` has no
    record of ``g``. ``generations``: {str(generation): info with ``packaged_files``}; ``ladder``: rows with
    ``generation``, ``line``, ``wins``, ``draws``, ``games``."""
    info = generations.get(str(g))
    if info is None:
        return None
    if info.get("packaged_files"):
        return True
    for name in lines:
        mine = [line_points(r) for r in ladder if r.get("line") == name and int(r["generation"]) == g
                and r.get("games")]
        before = [line_points(r) for r in ladder if r.get("line") == name and int(r["generation"]) < g
                  and r.get("games")]
        if mine and max(mine) > max(before, default=float("-inf")):
            return True
    return False


def still_generations(g: int, generations: dict, ladder: list, lines: tuple) -> int:
    """How many finished generations in a row, counting back from ``g``, did not move the lineage."""
    n = 0
    while g >= 1 and moved(g, generations, ladder, lines) is False:
        n += 1
        g -= 1
    return n


def stop_reason(g: int, patience: int, generations: dict, ladder: list, lines: tuple) -> str | None:
    """Why the loop stops after finished generation ``g`` under ``stop.patience`` (0: never), or None."""
    if patience <= 0:
        return None
    n = still_generations(g, generations, ladder, lines)
    if n < patience:
        return None
    what = "replaced no registry file" + (f" and set no new best on {', '.join(lines)}" if lines else "")
    return (f"generations {g - n + 1}-{g}" if n > 1 else f"generation {g}") + f" {what} (stop.patience = {patience})"
