"""The line gtp2ogs posts in an OGS game's chat after each of azgo's moves (``azgo gtp --ogs-chat``).

gtp2ogs (online-go/gtp2ogs, ``Bot.ts``) reads the bot's stderr line by line and posts every line that
contains ``MALKOVICH:`` (or ``DISCUSSION:``) in the game's chat, the text after the colon as the message:
``malkovich`` is the log that opponents see only after the game, observers at once. Newer gtp2ogs do it
by default (``send_chats``), older ones with ``--aichat``. KataGo's ``ogsChatToStderr`` serves the same
readers; this line says the same things in words: the move played, its visits, the winrate and score
lead for the side that played it (azgo), and the principal variation that starts with the move.
"""

from __future__ import annotations

from azgo.engine.board import BLACK
from azgo.engine.coords import move_to_gtp

PREFIX = "MALKOVICH:"
PV_MOVES = 10  # moves of the principal variation in the line (KataGo's analysisPVLen is 13 by default)


def chat_line(result, move: int | None, color: int, size: int, pv_moves: int = PV_MOVES) -> str:
    """The chat line for a search ``result`` (``azgo.engine.search.SearchResult``) after which azgo,
    playing ``color``, played ``move`` (None: it resigned). Winrate and lead are azgo's (the side to move at
    the search's root), the lead in points; the PV is the chosen move's, at most ``pv_moves`` moves."""
    side = "Black" if color == BLACK else "White"
    played = "resigns" if move is None else move_to_gtp(move, size)
    text = f"{PREFIX}azgo ({side}) {played}: winrate {100 * result.winrate:.1f}%"
    if result.score_lead is not None:
        text += f", score lead {result.score_lead:+.1f}"
    text += f", {result.visits} visits"
    cand = next((c for c in result.candidates if c.move == move), None) if move is not None else None
    if cand is not None and cand.pv:
        text += ", PV " + " ".join(move_to_gtp(m, size) for m in cand.pv[:pv_moves])
    return text
