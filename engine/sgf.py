"""SGF game records (read and written with sgfmill), with azgo's private search properties.

Reading takes the main line of the game tree (the first variation at every branch): the root's
SZ, KM, HA, RU, PB, PW, RE and AB/AW/AE setup, then each node's move (``B[]`` and ``B[tt]`` on boards up
to 19x19 are passes) and any AB/AW/AE setup in later nodes. Every problem raises ``SgfError`` with a
message that names it: malformed or truncated data, oversized input, a board size azgo does not
play (2..25), a bad komi, a point off the board, an illegal move (with its move number).

Private properties (values are plain text; sgfmill and every SGF viewer keep unknown properties):

=========  ========  ==================================================================================
property   where     meaning
=========  ========  ==================================================================================
``AZF``    root      azgo archive format version (``1``)
``AZM``    root      network id that played (self-play), or ``PB``/``PW`` carry per-colour ids
``AZR``    root      resignation threshold in force (a value in [-1, 1]) or ``off``
``AZS``    root      random seed of the game
``AZE``    root      a game against an outside opponent: its colour and name (``W:GNU Go 10``); its moves carry
                     ``AZT[0]``. Absent in self-play
``AZO``    root      forked start: the number of opening moves played from a given game without search
                     (they carry only ``AZT[0]``); absent when the game began with a search
``AZP``    move      raw root visit counts of the search that chose this move, before any pruning:
                     space-separated ``point:count`` with SGF points and ``pass`` for a pass,
                     e.g. ``cc:312 dc:40 pass:3`` (see ``encode_visits`` / ``decode_visits``)
``AZX``    move      the policy training target: the visit counts after KataGo's forced-playout pruning
                     (same encoding as ``AZP``); absent when no pruning applied (then use ``AZP``)
``AZN``    move      total visits of the root's children in that search (the sum of ``AZP``)
``AZT``    move      ``1`` for a full (recorded, trainable) search, ``0`` for a cheap one (or no search)
``AZQ``    move      root value after the search, side to move's view, in [-1, 1]
``AZV``    move      raw network value of the root position, side to move's view, in [-1, 1]
``AZK``    move      full searches only: the policy surprise, KL(target || prior) in nats, of the policy
                     target (``AZX``, else ``AZP``) against the network's own policy at the root (before
                     ladder reading, root temperature and noise); training can weight positions by it
=========  ========  ==================================================================================

The side to move's view in ``AZQ``/``AZV`` is the player who makes the move in that node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sgfmill import sgf

from .board import BLACK, WHITE, IllegalMove, Rules
from .coords import MAX_SIZE, MIN_SIZE, CoordinateError, move_to_gtp, sgf_to_move, move_to_sgf
from .game import Game

FORMAT_VERSION = 1
MAX_SGF_BYTES = 8 * 1024 * 1024
_COLOR_OF = {"b": BLACK, "w": WHITE}
_LETTER_OF = {BLACK: "b", WHITE: "w"}


class SgfError(ValueError):
    """An SGF record azgo cannot use; the message names the problem."""


@dataclass
class SgfNode:
    """One node of the main line after the root: a move and/or setup, plus azgo's private properties.

    ``color``/``move``: the move (move index, pass = N*N) or None. ``setup``: (AB, AW, AE) lists of move
    indices or None. ``props``: private ``AZ*`` properties as text.
    """

    color: int | None = None
    move: int | None = None
    setup: tuple[list[int], list[int], list[int]] | None = None
    props: dict[str, str] = field(default_factory=dict)


@dataclass
class GameRecord:
    """A game record: root information, root setup, and the main line of nodes."""

    size: int = 19
    komi: float = 7.5
    handicap: int = 0
    rules: str = "Chinese"
    black: str = ""
    white: str = ""
    result: str = ""
    setup: tuple[list[int], list[int], list[int]] = ((), (), ())  # type: ignore[assignment]
    first_player: int | None = None  # PL at the root, if given
    root_props: dict[str, str] = field(default_factory=dict)
    nodes: list[SgfNode] = field(default_factory=list)

    @property
    def moves(self) -> list[tuple[int, int]]:
        """The (colour, move index) of every move node, in order."""
        return [(n.color, n.move) for n in self.nodes if n.move is not None]

    def game_rules(self) -> Rules:
        """Rules implied by RU: suicide for Tromp-Taylor/New Zealand, no superko for Japanese/Korean."""
        ru = self.rules.lower()
        suicide = "tromp" in ru or ru in ("nz", "new zealand")
        superko = not ("japan" in ru or "korea" in ru)
        return Rules(suicide=suicide, superko=superko)

    def to_game(self, move_number: int | None = None, rules: Rules | None = None) -> Game:
        """Replay the record into a Game, stopping after ``move_number`` moves (None: all).

        Raises SgfError naming the first move that cannot be played.
        """
        if move_number is not None and move_number < 0:
            raise SgfError(f"move number must be >= 0, got {move_number}")
        game = Game(self.size, self.komi, rules or self.game_rules())
        ab, aw, ae = self.setup
        try:
            if ab or aw or ae:
                game.setup(ab, aw, ae)
            if self.first_player is not None:
                game.board.to_move = self.first_player
            elif ab and not aw and self.handicap:
                game.board.to_move = WHITE
            game.handicap = self.handicap
            played = 0
            for node in self.nodes:
                if node.setup is not None:
                    game.setup(*node.setup)
                if node.move is None:
                    continue
                if move_number is not None and played >= move_number:
                    break
                try:
                    game.play(node.move, node.color)
                except IllegalMove as e:
                    name = "B" if node.color == BLACK else "W"
                    raise SgfError(
                        f"move {played + 1} ({name} {move_to_gtp(node.move, self.size)}) is an {e}") from None
                played += 1
        except ValueError as e:
            if isinstance(e, SgfError):
                raise
            raise SgfError(f"bad setup: {e}") from None
        return game


def encode_visits(visits: dict[int, int], size: int) -> str:
    """``{move index: count}`` -> ``AZP`` text (``cc:312 dc:40 pass:3``), counts > 0 only, most first."""
    items = sorted(((c, m) for m, c in visits.items() if c > 0), key=lambda t: (-t[0], t[1]))
    return " ".join(f"{move_to_sgf(m, size) or 'pass'}:{c}" for c, m in items)


def decode_visits(text: str, size: int) -> dict[int, int]:
    """``AZP`` text -> ``{move index: count}``; SgfError on a malformed entry."""
    out: dict[int, int] = {}
    for item in text.split():
        point, sep, count = item.partition(":")
        try:
            if not sep or not count.isdigit():
                raise ValueError
            move = size * size if point == "pass" else sgf_to_move(point, size)
        except (ValueError, CoordinateError):
            raise SgfError(f"bad AZP entry {item!r}") from None
        out[move] = out.get(move, 0) + int(count)
    return out


def _points(sgf_points, size: int) -> list[int]:
    return [(size - 1 - r) * size + c for r, c in sgf_points]


def _private(node) -> dict[str, str]:
    props = {}
    for ident in node.properties():
        if ident.startswith("AZ"):
            props[ident] = node.get_raw(ident).decode("utf-8", "replace")
    return props


def parse_sgf(data: bytes | str, max_bytes: int = MAX_SGF_BYTES) -> GameRecord:
    """Parse SGF data into a GameRecord (main line only). SgfError names any problem."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if len(data) > max_bytes:
        raise SgfError(f"SGF data is {len(data)} bytes, more than the {max_bytes} allowed")
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as e:
        raise SgfError(f"malformed SGF: {e or 'unreadable data'}") from None
    root = game.get_root()
    try:
        gm = root.get("GM") if root.has_property("GM") else 1
    except ValueError:
        gm = None
    if gm != 1:
        raise SgfError(f"not a game of Go (GM[{root.get_raw('GM').decode(errors='replace')}])")
    size = game.get_size()
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise SgfError(f"board size {size} is not supported (azgo plays {MIN_SIZE}x{MIN_SIZE} to {MAX_SIZE}x{MAX_SIZE})")
    rec = GameRecord(size=size)
    try:
        komi = game.get_komi()
    except ValueError:
        komi = math.nan
    if not math.isfinite(komi) or abs(komi) > 1000:
        raise SgfError(f"bad komi KM[{root.get_raw('KM').decode(errors='replace')}]")
    rec.komi = komi
    try:
        rec.handicap = game.get_handicap() or 0
    except ValueError:
        raise SgfError(f"bad handicap HA[{root.get_raw('HA').decode(errors='replace')}]") from None
    for ident, attr in (("RU", "rules"), ("PB", "black"), ("PW", "white"), ("RE", "result")):
        if root.has_property(ident):
            try:
                setattr(rec, attr, str(root.get(ident)))
            except ValueError:
                raise SgfError(f"bad {ident} property") from None
    if not root.has_property("RU"):
        rec.rules = ""
    if root.has_property("PL"):
        try:
            rec.first_player = _COLOR_OF[root.get("PL")]
        except (ValueError, KeyError):
            raise SgfError("bad PL property") from None
    rec.root_props = _private(root)
    i = 0
    try:
        if root.has_setup_stones():
            ab, aw, ae = root.get_setup_stones()
            rec.setup = (_points(ab, size), _points(aw, size), _points(ae, size))
        for i, node in enumerate(game.get_main_sequence()[1:], start=1):
            entry = SgfNode(props=_private(node))
            if node.has_setup_stones():
                ab, aw, ae = node.get_setup_stones()
                entry.setup = (_points(ab, size), _points(aw, size), _points(ae, size))
            colour, point = node.get_move()
            if colour is not None:
                entry.color = _COLOR_OF[colour]
                entry.move = size * size if point is None else (size - 1 - point[0]) * size + point[1]
            rec.nodes.append(entry)
    except ValueError as e:
        raise SgfError(f"bad property in node {i}: {e}" if str(e) else f"bad move or setup point in node {i}") from None
    return rec


def parse_result(result: str) -> float | None:
    """Black's outcome from an SGF ``RE``: +1 (Black won), -1 (White won), 0 (draw), None (unknown/void).

    ``B+...``/``W+...`` are wins (``B+0``/``W+0`` draws), ``0``, ``D``, ``Draw`` and ``Jigo`` are draws
    (case-insensitive); anything else (``Void``, ``?``, empty) is None.
    """
    text = (result or "").strip().upper()
    if text in ("0", "DRAW", "D", "JIGO", "B+0", "W+0"):
        return 0.0
    if text.startswith("B+"):
        return 1.0
    if text.startswith("W+"):
        return -1.0
    return None


def load_sgf(path: str, max_bytes: int = MAX_SGF_BYTES) -> GameRecord:
    """Read and parse an SGF file; SgfError for unreadable or bad files."""
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise SgfError(f"cannot read {path}: {e.strerror or e}") from None
    return parse_sgf(data, max_bytes)


def root_node(data: bytes) -> bytes:
    """The first node of an SGF collection's first game, as a one-node game (``(;...)``), without reading
    the moves after it: a cheap read of header properties (komi, handicap, result) of a long game. The bytes
    are cut at the first ``;``, ``(`` or ``)`` outside a property value (``\\]`` escapes respected)."""
    start = data.find(b"(")
    if start < 0:
        return b"(;)"
    i = data.find(b";", start)
    if i < 0:
        return b"(;)"
    j, inside = i + 1, False
    while j < len(data):
        c = data[j:j + 1]
        if inside:
            if c == b"\\":
                j += 1
            elif c == b"]":
                inside = False
        elif c == b"[":
            inside = True
        elif c in (b";", b"(", b")"):
            break
        j += 1
    return b"(" + data[i:j] + b")"


def read_handicap(path: str) -> int:
    """The handicap (``HA``) of the SGF file at ``path``, read from its root node alone; 0 when it has none
    or cannot be read (used to weight training games, where a bad file is reported when it is decoded)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64 * 1024)
        return sgf.Sgf_game.from_bytes(root_node(head)).get_handicap() or 0
    except (OSError, ValueError):
        return 0


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("azgo")
    except Exception:  # pragma: no cover - not installed
        return "unknown"


def record_from_game(game: Game, black: str = "", white: str = "", result: str = "",
                     root_props: dict[str, str] | None = None,
                     move_props: list[dict[str, str]] | None = None) -> GameRecord:
    """Make a GameRecord of a Game (start position as root setup); ``move_props[i]`` go on move i."""
    start = game.boards[0]
    rec = GameRecord(size=game.size, komi=game.komi, handicap=game.handicap, black=black, white=white,
                     result=result, root_props=dict(root_props or {}))
    rec.rules = "Chinese" if not game.rules.suicide else "Tromp-Taylor"
    rec.setup = (start.stones(BLACK), start.stones(WHITE), [])
    if rec.setup[0] or rec.setup[1]:
        rec.first_player = start.to_move
    for i, (colour, move) in enumerate(game.moves):
        if move is None:  # a mid-game setup: record the position difference
            before, after = game.boards[i], game.boards[i + 1]
            ab = [m for m in after.stones(BLACK) if before.color_at(m) != BLACK]
            aw = [m for m in after.stones(WHITE) if before.color_at(m) != WHITE]
            ae = [m for m in range(game.size ** 2) if after.color_at(m) == 0 and before.color_at(m) != 0]
            rec.nodes.append(SgfNode(setup=(ab, aw, ae)))
            continue
        props = dict(move_props[i]) if move_props and i < len(move_props) and move_props[i] else {}
        rec.nodes.append(SgfNode(color=colour, move=move, props=props))
    return rec


def _sgf_points(moves, size):
    return [(size - 1 - m // size, m % size) for m in moves]


def write_sgf(rec: GameRecord) -> bytes:
    """Serialise a GameRecord to SGF bytes (FF[4], UTF-8, passes as ``B[]``)."""
    size = rec.size
    game = sgf.Sgf_game(size)
    root = game.get_root()
    root.set_raw("AP", b"azgo:" + _version().encode())
    root.set("KM", float(rec.komi))
    if rec.handicap:
        root.set("HA", rec.handicap)
    for ident, value in (("RU", rec.rules), ("PB", rec.black), ("PW", rec.white), ("RE", rec.result)):
        if value:
            root.set(ident, value)
    ab, aw, ae = rec.setup
    if ab or aw or ae:
        root.set_setup_stones(_sgf_points(ab, size), _sgf_points(aw, size), _sgf_points(ae, size))
    if rec.first_player is not None:
        root.set("PL", _LETTER_OF[rec.first_player])
    for k, v in rec.root_props.items():
        root.set(k, str(v))
    for node in rec.nodes:
        out = game.extend_main_sequence()
        if node.setup is not None:
            out.set_setup_stones(*(_sgf_points(p, size) for p in node.setup))
        if node.move is not None:
            if node.move == size * size:
                out.set_raw(_LETTER_OF[node.color].upper(), b"")  # FF[4] pass, any board size
            else:
                out.set_move(_LETTER_OF[node.color], _sgf_points([node.move], size)[0])
        for k, v in node.props.items():
            out.set(k, str(v))
    return game.serialise()
