"""Responses of KataGo's JSON analysis protocol, built from one azgo search tree.

The search keeps every statistic from the side to move at the root (see :mod:`azgo.engine.mcts`);
`analysis_response` reports them from the query's perspective: ``SIDETOMOVE`` (azgo's default),
``BLACK`` or ``WHITE``, as KataGo's ``reportAnalysisWinratesAs``. ``winrate`` and ``lcb`` are in
[0, 1]; ``scoreLead`` in points; ``utility`` is ``2 * winrate - 1`` (azgo's search maximises
winrate only); ``ownership`` is row-major from the top-left point (A19 on 19x19), +1 owned by the
reported player. ``scoreStdev`` is the spread of the score leads the search backed up (not a
network head), and ``scoreSelfplay``/``scoreMean`` equal ``scoreLead``.
"""

from __future__ import annotations

import math

import numpy as np

from azgo.engine.board import BLACK
from azgo.engine.coords import move_to_gtp
from azgo.engine.search import Searcher

from .kata_query import AnalysisQuery


def _sign(perspective: str, to_move: int) -> int:
    if perspective == "SIDETOMOVE":
        return 1
    return 1 if (perspective == "BLACK") == (to_move == BLACK) else -1


def _r(x: float, digits: int = 6) -> float:
    """A finite float, rounded (JSON has no NaN)."""
    x = float(x)
    return round(x, digits) if math.isfinite(x) else 0.0


def _winrate(w: float, sign: int) -> float:
    return _r(w if sign > 0 else 1.0 - w)


def no_results(query_id: str, turn: int) -> dict:
    """The final answer of a position terminated before any evaluation."""
    return {"id": query_id, "isDuringSearch": False, "noResults": True, "turnNumber": turn}


def analysis_response(q: AnalysisQuery, turn: int, searcher: Searcher, during: bool) -> dict:
    """The response for position ``turn`` of query ``q`` from ``searcher``'s tree (root expanded)."""
    root = searcher.root
    board = root.board
    size = board.size
    sign = _sign(q.perspective, board.to_move)
    cands = searcher.candidates()  # most visits first, as azgo's kata-analyze lists them
    index = {int(m): i for i, m in enumerate(root.moves)}
    infos = []
    for order, c in enumerate(cands):
        i = index[c.move]
        n = float(root.N[i])
        lead = root.S[i] / n
        stdev = math.sqrt(max(root.S2[i] / n - lead * lead, 0.0))
        info = {
            "move": move_to_gtp(c.move, size), "visits": c.visits, "edgeVisits": c.visits,
            "winrate": _winrate(c.winrate, sign), "scoreLead": _r(sign * lead), "scoreMean": _r(sign * lead),
            "scoreSelfplay": _r(sign * lead), "scoreStdev": _r(stdev), "prior": _r(c.prior),
            "utility": _r(sign * (2 * c.winrate - 1)), "lcb": _winrate(c.lcb, sign),
            "utilityLcb": _r(sign * (2 * c.lcb - 1)), "order": order,
        }
        pv, pv_visits = Searcher.pv_with_visits(root, i)
        info["pv"] = [move_to_gtp(m, size) for m in pv]
        if q.include_pv_visits:
            info["pvVisits"] = pv_visits
        if q.include_moves_ownership:
            child = root.children.get(c.move)
            own = child.ownership if child is not None and child.expanded else None
            if own is not None:  # the child's values are for the opponent: negate to the root's view
                info["ownership"] = [_r(-sign * x, 4) for x in own.tolist()]
        infos.append(info)

    visited = float(root.N.sum())
    total = 1.0 + visited
    lead = (root.score + float(root.S.sum())) / total
    lead2 = (root.score ** 2 + float(root.S2.sum())) / total
    winrate = (root.q() + 1) / 2
    root_info = {
        "visits": int(root.visits), "winrate": _winrate(winrate, sign), "scoreLead": _r(sign * lead),
        "scoreSelfplay": _r(sign * lead), "scoreStdev": _r(math.sqrt(max(lead2 - lead * lead, 0.0))),
        "utility": _r(sign * (2 * winrate - 1)), "rawWinrate": _winrate((root.value + 1) / 2, sign),
        "rawLead": _r(sign * root.score), "currentPlayer": "B" if board.to_move == BLACK else "W",
        "thisHash": f"{hash((board.hash, board.to_move, board.ko_move)) & (2 ** 64 - 1):016X}",
    }
    out = {"id": q.id, "isDuringSearch": during, "turnNumber": turn, "moveInfos": infos, "rootInfo": root_info}
    if q.include_ownership and root.ownership is not None:
        out["ownership"] = [_r(sign * x, 4) for x in np.asarray(root.ownership).tolist()]
    if q.include_policy:
        policy = np.full(size * size + 1, -1.0)
        policy[root.moves] = root.raw_prior
        out["policy"] = [_r(x, 6) if x >= 0 else -1 for x in policy.tolist()]
    return out
