"""Coordinates: GTP vertices, SGF points and azgo move indices, both ways.

azgo's **move index** for a board of size N is ``row * N + col`` for a point and ``N * N`` for a pass,
with row 0 the *top* row (SGF row ``a``; GTP row ``N``) and col 0 the left column (GTP ``A``, SGF ``a``).
The same index addresses the network's policy vector ``[N*N + 1]``.

GTP vertices: a column letter ``A``..``Z`` without ``I`` and a row number 1..N counted from the bottom,
case-insensitive on input, upper-case on output, or ``pass``. SGF points: two letters column, row from
the top-left ``aa``; ``""`` (and ``tt`` on boards up to 19x19) is a pass.
"""

from __future__ import annotations

MIN_SIZE = 2
MAX_SIZE = 25
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # 25 letters: 'I' is skipped
SGF_LETTERS = "abcdefghijklmnopqrstuvwxy"


class CoordinateError(ValueError):
    """A vertex or point that does not name a point of the board (or a pass)."""


def check_size(size: int) -> int:
    """Return ``size`` if it is a supported square board size (2..25), else raise ValueError."""
    if not isinstance(size, int) or isinstance(size, bool) or not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {size!r}")
    return size


def pass_move(size: int) -> int:
    """The move index of a pass on a ``size`` x ``size`` board."""
    return size * size


def gtp_to_move(vertex: str, size: int) -> int:
    """Parse a GTP vertex (``D4``, ``q16``, ``pass``) into a move index; CoordinateError if bad."""
    text = vertex.strip()
    if not text:
        raise CoordinateError("empty vertex")
    low = text.lower()
    if low == "pass":
        return size * size
    col_char = low[0].upper()
    if col_char == "I" or col_char not in GTP_COLUMNS:
        raise CoordinateError(f"bad vertex {vertex!r}: column letter must be A-Z without I")
    col = GTP_COLUMNS.index(col_char)
    digits = low[1:]
    if not digits.isdigit() or not digits.isascii() or len(digits) > 2:
        raise CoordinateError(f"bad vertex {vertex!r}: expected a row number after the column letter")
    number = int(digits)
    if col >= size or not 1 <= number <= size:
        raise CoordinateError(f"vertex {vertex!r} is off the {size}x{size} board")
    return (size - number) * size + col


def move_to_gtp(move: int, size: int) -> str:
    """Format a move index as an upper-case GTP vertex or ``pass``."""
    if move == size * size:
        return "pass"
    if not 0 <= move < size * size:
        raise CoordinateError(f"move index {move} is off the {size}x{size} board")
    row, col = divmod(move, size)
    return f"{GTP_COLUMNS[col]}{size - row}"


def sgf_to_move(point: str, size: int) -> int:
    """Parse an SGF point (``cd``; ``""`` or ``tt`` on boards <= 19 = pass) into a move index."""
    text = point.strip()
    if text == "" or (text == "tt" and size <= 19):
        return size * size
    if len(text) != 2 or text[0] not in SGF_LETTERS or text[1] not in SGF_LETTERS:
        raise CoordinateError(f"bad SGF point {point!r}")
    col = SGF_LETTERS.index(text[0])
    row = SGF_LETTERS.index(text[1])
    if col >= size or row >= size:
        raise CoordinateError(f"SGF point {point!r} is off the {size}x{size} board")
    return row * size + col


def move_to_sgf(move: int, size: int) -> str:
    """Format a move index as an SGF point; a pass is ``""`` (the FF[4] form)."""
    if move == size * size:
        return ""
    if not 0 <= move < size * size:
        raise CoordinateError(f"move index {move} is off the {size}x{size} board")
    row, col = divmod(move, size)
    return SGF_LETTERS[col] + SGF_LETTERS[row]
