"""A game: the sequence of positions from the start (setup and handicap included), with undo.

Every position is kept as its own Board (copies are cheap), so undo is a pop and the last positions
needed by the input features are at hand.
"""

from __future__ import annotations

from .board import BLACK, WHITE, Board, Rules
from .handicap import fixed_handicap
from .scoring import area_score


class Game:
    """Positions ``boards[0..k]`` and the moves ``moves[i] = (colour, move index)`` between them
    (``move`` None for a mid-game setup position).

    ``komi`` is added to White's area. Black moves first unless setup or handicap says otherwise.
    """

    def __init__(self, size: int = 19, komi: float = 7.5, rules: Rules = Rules()):
        self.size = size
        self.komi = komi
        self.rules = rules
        self.handicap = 0
        self.boards: list[Board] = [Board(size, rules)]
        self.moves: list[tuple[int, int]] = []

    @property
    def board(self) -> Board:
        """The current position."""
        return self.boards[-1]

    @property
    def to_move(self) -> int:
        return self.board.to_move

    @property
    def move_number(self) -> int:
        """Moves played (passes included) since the start position."""
        return len(self.moves)

    @property
    def over(self) -> bool:
        """Two consecutive passes have been played."""
        return self.board.game_over

    def play(self, move: int, color: int | None = None) -> None:
        """Play a move (default colour: side to move); IllegalMove leaves the game unchanged."""
        if color is None:
            color = self.board.to_move
        nxt = self.board.copy()
        nxt.play(move, color)
        self.boards.append(nxt)
        self.moves.append((color, move))

    def undo(self) -> None:
        """Take back the last move; IndexError('cannot undo') at the start position."""
        if not self.moves:
            raise IndexError("cannot undo")
        self.boards.pop()
        self.moves.pop()

    def setup(self, black=(), white=(), empty=(), to_move: int | None = None) -> None:
        """Change the current position by setup stones (SGF AB/AW/AE); history restarts there.

        At the start of the game this replaces the start position; later (SGF setup in mid-game) it
        becomes a new position that undo can take back like a move.
        """
        b = self.board.copy()
        b.setup(black, white, empty, to_move)
        if self.moves:
            self.boards.append(b)
            self.moves.append((b.to_move, None))
        else:
            self.boards[0] = b

    def place_fixed_handicap(self, stones: int) -> list[int]:
        """Put ``stones`` fixed handicap stones on an empty board (White then moves). Returns the points."""
        if self.moves or self.board.counts[BLACK] or self.board.counts[WHITE]:
            raise ValueError("board not empty")
        points = fixed_handicap(self.size, stones)
        self.set_handicap(points)
        return points

    def set_handicap(self, points: list[int]) -> None:
        """Free handicap: Black stones at ``points`` on the empty start position, White to move."""
        if self.moves or self.board.counts[BLACK] or self.board.counts[WHITE]:
            raise ValueError("board not empty")
        self.setup(black=points, to_move=WHITE)
        self.handicap = len(points)

    @property
    def handicap_stones(self) -> int:
        """Black's handicap: the stones placed as handicap, else the run of two or more Black moves that opens
        the game with no White move between them (how gtp2ogs and some GUIs send handicap stones: as
        consecutive ``play black``), else 0."""
        if self.handicap:
            return self.handicap
        run = 0
        for colour, move in self.moves:
            if colour != BLACK or move is None or move == self.board.pass_move:
                break
            run += 1
        return run if run >= 2 else 0

    def recent_boards(self, k: int = 8) -> list[Board]:
        """The current position and up to ``k - 1`` before it, most recent first."""
        return self.boards[: -k - 1: -1]

    def score(self) -> float:
        """Area score of the current position, Black minus White minus komi."""
        return area_score(self.board, self.komi)


class SearchView:
    """The parts of a game a search reads (``boards``, ``moves``, ``board``, ``komi``), copied so that later
    moves do not reach it (pondering), optionally with another ``komi`` (dynamic komi)."""

    def __init__(self, game, komi: float | None = None) -> None:
        self.boards = list(game.boards)
        self.moves = list(game.moves)
        self.board = self.boards[-1]
        self.komi = game.komi if komi is None else komi
