"""Analysis commands: parsing ``lz-analyze`` / ``kata-analyze`` arguments and formatting ``info`` lines.

Formats (shared/research/gtp.md sections 3.2, 4.2, 5.1, 5.2):

* ``lz-analyze``: all candidates of one update on one line, each
  ``info move Q16 visits 80 winrate 4405 prior 1828 lcb 4379 order 0 pv Q16 D4 ...`` with winrate,
  prior and lcb as integers in ten-thousandths (Lizzie parses them with ``Integer.parseInt``), ``pv``
  last.
* ``kata-analyze``: the same with floats in [0, 1], plus ``scoreLead``/``scoreMean`` when the network
  has a score head, and ``ownership`` (N*N floats, row-major from the top-left, side to move's view)
  at the end of the line when asked for.

Winrates are from the side to move's perspective.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from azgo.engine.coords import CoordinateError, gtp_to_move, move_to_gtp

from .protocol import GtpError


@dataclass
class AnalyzeArgs:
    """Parsed analysis arguments. ``interval`` in seconds (0 = print only at the end)."""

    color: int | None = None
    interval: float = 0.0
    minmoves: int = 0
    maxmoves: int = 0
    avoid: dict = field(default_factory=dict)  # colour -> set of moves
    allow: dict = field(default_factory=dict)  # colour -> set of moves
    ownership: bool = False


def parse_color(token: str) -> int:
    low = token.lower()
    if low in ("b", "black"):
        return 1
    if low in ("w", "white"):
        return 2
    raise GtpError(f"syntax error: bad colour {token!r}")


def _moves(spec: str, size: int) -> set[int]:
    out: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if part.lower() == "resign":
            continue
        if ":" in part:
            a, b = part.split(":", 1)
            m1, m2 = gtp_to_move(a, size), gtp_to_move(b, size)
            if m1 == size * size or m2 == size * size:
                raise CoordinateError("a rectangle needs two points")
            r1, c1 = divmod(m1, size)
            r2, c2 = divmod(m2, size)
            for r in range(min(r1, r2), max(r1, r2) + 1):
                for c in range(min(c1, c2), max(c1, c2) + 1):
                    out.add(r * size + c)
        else:
            out.add(gtp_to_move(part, size))
    return out


def parse_analyze_args(args: tuple[str, ...], size: int, kata: bool) -> AnalyzeArgs:
    """Parse ``[color] [interval] [interval N] [minmoves N] [maxmoves N] [avoid C MOVES UNTIL]
    [allow C MOVES UNTIL] [ownership true|false]`` in any order (interval in centiseconds)."""
    out = AnalyzeArgs()
    toks = list(args)
    i = 0
    try:
        while i < len(toks):
            t = toks[i]
            low = t.lower()
            if low in ("b", "w", "black", "white"):
                out.color = parse_color(t)
                i += 1
            elif t[:1].isdigit() or (t[:1] == "." and t[1:2].isdigit()):
                out.interval = _centiseconds(t)
                i += 1
            elif low == "interval":
                out.interval = _centiseconds(toks[i + 1])
                i += 2
            elif low in ("minmoves", "maxmoves"):
                n = int(toks[i + 1])
                if n < 0:
                    raise ValueError
                setattr(out, low, n)
                i += 2
            elif low in ("avoid", "allow"):
                color = parse_color(toks[i + 1])
                moves = _moves(toks[i + 2], size)
                until = int(toks[i + 3])
                if until < 1:
                    raise ValueError
                getattr(out, low).setdefault(color, set()).update(moves)
                i += 4
            elif kata and low in ("ownership", "ownershipstdev", "movesownership", "rootinfo", "pvvisits",
                                  "pvedgevisits", "movesownershipstdev", "noresultvalue"):
                val = toks[i + 1].lower()
                if val not in ("true", "false"):
                    raise ValueError
                if low == "ownership":
                    out.ownership = val == "true"
                i += 2
            else:
                raise ValueError
    except (IndexError, ValueError, CoordinateError, GtpError):
        raise GtpError("cannot parse analyze arguments") from None
    for color in out.allow:
        if any(m != size * size for m in out.avoid.get(color, ())):
            raise GtpError("cannot parse analyze arguments")
    return out


def _centiseconds(tok: str) -> float:
    v = float(tok)
    if not (0 <= v < 1e9):
        raise ValueError
    return v / 100.0


def _pv(moves: list[int], size: int) -> str:
    return " ".join(move_to_gtp(m, size) for m in moves)


def info_line(candidates, size: int, kata: bool, ownership=None, extra_zero=None) -> str:
    """One update: every candidate on one line (``pv`` last in each), optionally ownership at the end."""
    parts = []
    order = 0
    for c in list(candidates) + list(extra_zero or []):
        if kata:
            lead = c.score_lead if c.score_lead is not None else 0.0
            fields = (f"info move {move_to_gtp(c.move, size)} visits {c.visits} edgeVisits {c.visits} "
                      f"utility {2 * c.winrate - 1:.6f} winrate {c.winrate:.6f} scoreMean {lead:.6f} "
                      f"scoreStdev 0.0 scoreLead {lead:.6f} scoreSelfplay {lead:.6f} prior {c.prior:.6f} "
                      f"lcb {c.lcb:.6f} utilityLcb {2 * c.lcb - 1:.6f} weight {float(c.visits):.6f} "
                      f"order {order} pv {_pv(c.pv, size)}")
        else:
            fields = (f"info move {move_to_gtp(c.move, size)} visits {c.visits} "
                      f"winrate {int(c.winrate * 10000)} prior {int(c.prior * 10000)} "
                      f"lcb {int(max(0.0, c.lcb) * 10000)} order {order} pv {_pv(c.pv, size)}")
        parts.append(fields)
        order += 1
    line = " ".join(parts)
    if kata and ownership is not None:
        line += " ownership " + " ".join(f"{x:.4f}" for x in ownership)
    return line
