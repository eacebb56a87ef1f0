"""Fixed handicap placement as GTP v2 specifies it (section 4.1.1), generalised to other sizes as
GNU Go 3.8 does: stones on the 3rd line on boards up to 11x11 and on the 4th line above that
(checked against ``gnugo`` in tests/test_gnugo_diff.py); at most 9 stones on odd boards from 9x9,
at most 4 on even boards and 7x7, none below 7x7.
"""

from __future__ import annotations


class HandicapError(ValueError):
    """A handicap that cannot be placed (GTP: ``invalid number of stones``)."""


def max_fixed_handicap(size: int) -> int:
    """Largest fixed handicap on a ``size`` board (0 if fixed handicap is undefined there)."""
    if size < 7:
        return 0
    if size == 7 or size % 2 == 0:
        return 4
    return 9


def fixed_handicap(size: int, stones: int) -> list[int]:
    """Move indices (row 0 at the top) of the ``stones`` handicap points in the GTP order.

    Order on 19x19: 2 = D4 Q16; 3 = + D16; 4 = + Q4; 5 = 4 + K10; 6 = 4 + D10 Q10; 7 = 6 + K10;
    8 = 6 + K4 K16; 9 = 8 + K10.
    """
    top = max_fixed_handicap(size)
    if not 2 <= stones <= top:
        raise HandicapError(
            f"invalid number of stones: fixed handicap on {size}x{size} takes 2 to {top}" if top
            else f"invalid number of stones: no fixed handicap on {size}x{size}")
    edge = 3 if size <= 11 else 4
    low, high, mid = edge - 1, size - edge, size // 2

    def pt(col: int, line_from_bottom: int) -> int:
        return (size - 1 - line_from_bottom) * size + col

    corners = [pt(low, low), pt(high, high), pt(low, high), pt(high, low)]  # D4 Q16 D16 Q4
    sides_lr = [pt(low, mid), pt(high, mid)]  # D10 Q10
    sides_tb = [pt(mid, low), pt(mid, high)]  # K4 K16
    centre = [pt(mid, mid)]
    if stones <= 4:
        return corners[:stones]
    if stones == 5:
        return corners + centre
    if stones == 6:
        return corners + sides_lr
    if stones == 7:
        return corners + sides_lr + centre
    if stones == 8:
        return corners + sides_lr + sides_tb
    return corners + sides_lr + sides_tb + centre
