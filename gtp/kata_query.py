"""Queries of KataGo's JSON analysis protocol, read into azgo's terms (pure functions, no search).

One line of input is one JSON object: an analysis query (``id``, ``moves``, ``rules``, ...) or an
action (``{"id": .., "action": "terminate" | "terminate_all" | "query_version" | "clear_cache"}``).
`parse_request` turns it into an `AnalysisQuery` (with one `Turn` per position to analyse) or an
`Action`, or raises `QueryError` naming the field, so that the server can answer
``{"id": .., "error": .., "field": ..}`` and carry on. Problems that do not stop the analysis (rules
azgo does not play exactly, unknown settings) become ``warnings``: ``(field, message)`` pairs.

Coordinates are GTP vertices (``"Q16"``, ``"pass"``) or KataGo's ``"(x,y)"`` with x the column and
y the row from the top. azgo plays square boards only, scores by area and uses positional superko.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from azgo.engine.board import BLACK, WHITE, IllegalMove, Rules
from azgo.engine.coords import CoordinateError, gtp_to_move
from azgo.engine.game import Game

PERSPECTIVES = ("SIDETOMOVE", "BLACK", "WHITE")
ACTIONS = ("terminate", "terminate_all", "query_version", "clear_cache")

#: KataGo's rule presets as (ko rule, scoring, suicide allowed, white handicap bonus).
RULE_PRESETS = {
    "tromp-taylor": ("POSITIONAL", "AREA", True, "0"),
    "chinese": ("SIMPLE", "AREA", False, "N"),
    "chinese-ogs": ("POSITIONAL", "AREA", False, "N"),
    "chinese-kgs": ("POSITIONAL", "AREA", False, "N"),
    "japanese": ("SIMPLE", "TERRITORY", False, "0"),
    "korean": ("SIMPLE", "TERRITORY", False, "0"),
    "stone-scoring": ("SIMPLE", "AREA", False, "0"),
    "aga": ("SITUATIONAL", "AREA", False, "N-1"),
    "bga": ("SITUATIONAL", "AREA", False, "N-1"),
    "aga-button": ("SITUATIONAL", "AREA", False, "N-1"),
    "new-zealand": ("SITUATIONAL", "AREA", True, "0"),
}
_RULE_ALIASES = {"tt": "tromp-taylor", "cn": "chinese", "jp": "japanese", "ko": "korean",
                 "nz": "new-zealand", "stone_scoring": "stone-scoring"}

#: Known ``overrideSettings`` keys; others are accepted with a warning.
OVERRIDES = ("maxTime", "maxVisits", "reportAnalysisWinratesAs", "wideRootNoise", "rootPolicyTemperature",
             "rootFpuReductionMax", "cpuctExploration")

_QUERY_FIELDS = {
    "id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
    "analyzeTurns", "maxVisits", "includeOwnership", "includeMovesOwnership", "includePolicy",
    "includePVVisits", "avoidMoves", "allowMoves", "priority", "priorities", "reportDuringSearchEvery",
    "overrideSettings", "rootPolicyTemperature", "rootFpuReductionMax", "whiteHandicapBonus",
}
MAX_MOVES_PER_POINT = 4  # a longer move list than 4 moves per point is refused (hostile input)


class QueryError(ValueError):
    """A query the server cannot run: ``message``, the offending ``field`` (or None) and the query's
    ``id`` when it could be read."""

    def __init__(self, message: str, field: str | None = None, query_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.query_id = query_id

    def response(self) -> dict:
        out: dict = {}
        if self.query_id is not None:
            out["id"] = self.query_id
        out["error"] = self.message
        if self.field is not None:
            out["field"] = self.field
        return out


@dataclass(frozen=True)
class Defaults:
    """Server-wide settings a query may override: visits, seconds (None = no limit), perspective."""

    max_visits: int = 500
    max_time: float | None = None
    perspective: str = "SIDETOMOVE"


@dataclass(frozen=True)
class Turn:
    """One position to analyse: ``turn`` moves into the game (0 = the start position)."""

    turn: int
    game: Game
    priority: int


@dataclass(frozen=True)
class AnalysisQuery:
    """A validated analysis query. ``exclude``: root moves kept out of the search for the side to
    move (``avoidMoves``/``allowMoves``, by colour); values are reported from ``perspective``."""

    id: str
    size: int
    komi: float
    turns: tuple[Turn, ...]
    max_visits: int
    max_time: float | None
    include_ownership: bool = False
    include_moves_ownership: bool = False
    include_policy: bool = False
    include_pv_visits: bool = False
    report_every: float | None = None
    perspective: str = "SIDETOMOVE"
    root_policy_temperature: float = 1.0
    root_fpu_reduction: float | None = None
    c_puct: float | None = None
    exclude: dict = field(default_factory=dict)
    warnings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Action:
    """A special action: ``name`` in `ACTIONS`; ``request`` is the query object to echo back."""

    id: str
    name: str
    request: dict
    terminate_id: str | None = None
    turn_numbers: frozenset[int] | None = None


# ---------------------------------------------------------------------------------------------- parsing
def parse_request(line: str | bytes, defaults: Defaults, min_size: int = 7, max_size: int = 19):
    """One input line -> `AnalysisQuery` or `Action`; raises `QueryError` (never anything else)."""
    try:
        text = line.decode("utf-8") if isinstance(line, (bytes, bytearray)) else line
        obj = json.loads(text)
    except UnicodeDecodeError:
        raise QueryError("could not parse query: not UTF-8 text") from None
    except (ValueError, RecursionError) as e:
        raise QueryError(f"could not parse query as JSON: {str(e)[:200]}") from None
    if not isinstance(obj, dict):
        raise QueryError("query is not a JSON object")
    qid = obj.get("id")
    if not isinstance(qid, str):
        raise QueryError("'id' is required and must be a string", "id",
                         qid if isinstance(qid, str) else None)
    try:
        if "action" in obj:
            return _parse_action(obj, qid)
        return _parse_query(obj, qid, defaults, min_size, max_size)
    except QueryError as e:
        e.query_id = qid
        raise


def _parse_action(obj: dict, qid: str) -> Action:
    name = obj["action"]
    if name not in ACTIONS:
        raise QueryError(f"unknown action {str(name)[:40]!r} (known: {', '.join(ACTIONS)})", "action")
    if name != "terminate":
        return Action(qid, name, obj)
    tid = obj.get("terminateId")
    if not isinstance(tid, str):
        raise QueryError("'terminateId' is required and must be a string", "terminateId")
    turns = None
    if "turnNumbers" in obj:
        raw = obj["turnNumbers"]
        if not isinstance(raw, list) or not all(_is_int(t) for t in raw):
            raise QueryError("'turnNumbers' must be a list of integers", "turnNumbers")
        turns = frozenset(int(t) for t in raw)
    return Action(qid, name, obj, tid, turns)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _number(obj: dict, key: str, lo: float, hi: float, integer: bool = False):
    x = obj[key]
    ok = _is_int(x) if integer else (isinstance(x, (int, float)) and not isinstance(x, bool))
    if not ok or not math.isfinite(x) or not lo <= x <= hi:
        kind = "an integer" if integer else "a number"
        raise QueryError(f"'{key}' must be {kind} in [{lo:g}, {hi:g}]", key)
    return x


def _bool(obj: dict, key: str) -> bool:
    x = obj.get(key, False)
    if not isinstance(x, bool):
        raise QueryError(f"'{key}' must be true or false", key)
    return x


def _player(x, key: str) -> int:
    if isinstance(x, str) and x.upper() in ("B", "BLACK", "W", "WHITE"):
        return BLACK if x.upper().startswith("B") else WHITE
    raise QueryError(f"'{key}': player must be \"B\" or \"W\", got {str(x)[:20]!r}", key)


def parse_location(text, size: int, key: str) -> int:
    """A GTP vertex, ``pass`` or KataGo's ``(x,y)`` (x column, y row from the top) -> move index."""
    if not isinstance(text, str):
        raise QueryError(f"'{key}': location must be a string, got {type(text).__name__}", key)
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        parts = t[1:-1].split(",")
        try:
            x, y = (int(p) for p in parts)
        except ValueError:
            raise QueryError(f"'{key}': bad location {t[:20]!r}", key) from None
        if not (0 <= x < size and 0 <= y < size):
            raise QueryError(f"'{key}': location {t!r} is off the {size}x{size} board", key)
        return y * size + x
    try:
        return gtp_to_move(t, size)
    except CoordinateError as e:
        raise QueryError(f"'{key}': {e}", key) from None


def _stone_list(obj: dict, key: str, size: int) -> list[tuple[int, int]]:
    raw = obj.get(key, [])
    if not isinstance(raw, list):
        raise QueryError(f"'{key}' must be a list of [player, location] pairs", key)
    if len(raw) > MAX_MOVES_PER_POINT * size * size:
        raise QueryError(f"'{key}' has {len(raw)} entries, more than azgo accepts on {size}x{size}", key)
    out = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2):
            raise QueryError(f"'{key}' must be a list of [player, location] pairs", key)
        out.append((_player(item[0], key), parse_location(item[1], size, key)))
    return out


def parse_rules(rules, komi_given: bool) -> tuple[Rules, list[str]]:
    """KataGo rules (a preset name or a JSON object) -> azgo Rules and warnings where azgo differs."""
    if isinstance(rules, str):
        name = rules.strip().lower().replace(" ", "-")
        name = _RULE_ALIASES.get(name, name)
        if name not in RULE_PRESETS:
            raise QueryError(f"unknown rules {rules[:40]!r} (known: {', '.join(RULE_PRESETS)})", "rules")
        ko, scoring, suicide, bonus = RULE_PRESETS[name]
    elif isinstance(rules, dict):
        ko = str(rules.get("ko", "POSITIONAL")).upper()
        scoring = str(rules.get("scoring", "AREA")).upper()
        suicide = rules.get("suicide", False)
        bonus = str(rules.get("whiteHandicapBonus", "0"))
        if ko not in ("SIMPLE", "POSITIONAL", "SITUATIONAL") or scoring not in ("AREA", "TERRITORY") \
                or not isinstance(suicide, bool) or bonus not in ("0", "N", "N-1"):
            raise QueryError("rules object: ko SIMPLE|POSITIONAL|SITUATIONAL, scoring AREA|TERRITORY, "
                             "suicide true|false, whiteHandicapBonus 0|N|N-1", "rules")
    else:
        raise QueryError("'rules' must be a rule name or a rules object", "rules")
    warnings = []
    if scoring == "TERRITORY":
        warnings.append("azgo scores by area (stones plus surrounded points) with the komi given; "
                        "territory scoring is not played" + ("" if komi_given else "; komi defaults to 7.5"))
    if ko != "POSITIONAL":
        warnings.append(f"azgo uses positional superko, not the {ko.lower()} ko rule")
    if bonus != "0":
        warnings.append(f"azgo gives White no handicap bonus ({bonus}); add it to komi if wanted")
    return Rules(suicide=bool(suicide), superko=True), warnings


def _exclusions(obj: dict, size: int, warnings: list) -> dict:
    """``avoidMoves``/``allowMoves`` -> {colour: ("avoid"|"allow", set of moves)} at the root."""
    out: dict = {}
    for key in ("avoidMoves", "allowMoves"):
        if key not in obj:
            continue
        raw = obj[key]
        if not isinstance(raw, list) or (key == "allowMoves" and len(raw) > 1):
            raise QueryError(f"'{key}' must be a list of {{player, moves, untilDepth}} objects"
                             + (" (at most one)" if key == "allowMoves" else ""), key)
        for spec in raw:
            if not isinstance(spec, dict) or not isinstance(spec.get("moves"), list):
                raise QueryError(f"'{key}' entries need 'player', 'moves' and 'untilDepth'", key)
            colour = _player(spec.get("player"), key)
            depth = spec.get("untilDepth", 1)
            if not _is_int(depth) or depth < 1:
                raise QueryError(f"'{key}': untilDepth must be a positive integer", key)
            if depth > 1:
                warnings.append((key, "azgo applies avoidMoves/allowMoves at the root only (untilDepth 1)"))
            if len(spec["moves"]) > size * size + 1:
                raise QueryError(f"'{key}': too many moves", key)
            moves = {parse_location(m, size, key) for m in spec["moves"]}
            kind = "allow" if key == "allowMoves" else "avoid"
            prev = out.get(colour)
            if prev is not None and prev[0] == kind == "avoid":
                moves |= prev[1]
            out[colour] = (kind, moves)
    return out


def exclusion_set(exclude: dict, colour: int, size: int) -> set[int]:
    """The root moves excluded for ``colour`` (an allow list keeps pass allowed, as KataGo does not
    require it but a search always needs a legal move)."""
    spec = exclude.get(colour)
    if spec is None:
        return set()
    kind, moves = spec
    if kind == "avoid":
        return set(moves)
    return set(range(size * size)) - moves


def _overrides(obj: dict, warnings: list) -> dict:
    raw = obj.get("overrideSettings", {})
    if not isinstance(raw, dict):
        raise QueryError("'overrideSettings' must be an object", "overrideSettings")
    out = {}
    for key, value in raw.items():
        if key not in OVERRIDES:
            warnings.append(("overrideSettings", f"unknown or unsupported setting {str(key)[:40]!r} ignored"))
            continue
        if key == "reportAnalysisWinratesAs":
            if not isinstance(value, str) or value.upper() not in PERSPECTIVES:
                raise QueryError(f"reportAnalysisWinratesAs must be one of {', '.join(PERSPECTIVES)}",
                                 "overrideSettings")
            out[key] = value.upper()
            continue
        hi = {"maxVisits": 10 ** 9, "maxTime": 1e7}.get(key, 1e3)
        lo = {"maxVisits": 1, "rootPolicyTemperature": 0.01}.get(key, 0.0)
        try:
            out[key] = _number(raw, key, lo, hi, integer=(key == "maxVisits"))
        except QueryError as e:
            raise QueryError(f"overrideSettings: {e.message}", "overrideSettings") from None
        if key == "maxTime" and value <= 0:
            raise QueryError("overrideSettings: 'maxTime' must be > 0", "overrideSettings")
    return out


def _query_game(obj: dict, size: int, komi: float, rules) -> tuple[Game, int]:
    """The query's game: ``initialStones`` set up, ``initialPlayer`` to move, then ``moves`` played;
    returns it and the number of moves."""
    if "moves" not in obj:
        raise QueryError("'moves' is required (an empty list for no moves)", "moves")
    moves = _stone_list(obj, "moves", size)
    stones = _stone_list(obj, "initialStones", size)
    first = None
    if "initialPlayer" in obj:
        first = _player(obj["initialPlayer"], "initialPlayer")
    elif moves:
        first = moves[0][0]
    game = Game(size, komi, rules)
    black = [m for c, m in stones if c == BLACK and m != size * size]
    white = [m for c, m in stones if c == WHITE and m != size * size]
    if len(set(black) | set(white)) != len(black) + len(white):
        raise QueryError("initialStones puts two stones on one point", "initialStones")
    try:
        game.setup(black=black, white=white, to_move=first or BLACK)
    except (ValueError, IllegalMove) as e:
        raise QueryError(f"initialStones: {e}", "initialStones") from None
    for k, (colour, move) in enumerate(moves):
        try:
            game.play(move, colour)
        except IllegalMove as e:
            raise QueryError(f"Illegal move {k}: {obj['moves'][k][1]} ({e.reason})", "moves") from None
    return game, len(moves)


def _query_turns(obj: dict, n_moves: int) -> tuple[list[int], list[int]]:
    """``analyzeTurns`` (default: the last position) and one priority each (``priority``/``priorities``)."""
    turns = obj.get("analyzeTurns", [n_moves])
    if not isinstance(turns, list) or not turns or not all(_is_int(t) for t in turns):
        raise QueryError("'analyzeTurns' must be a non-empty list of integers", "analyzeTurns")
    if len(turns) > n_moves + 1 or any(not 0 <= t <= n_moves for t in turns):
        raise QueryError(f"'analyzeTurns' must name turns 0..{n_moves}, each once", "analyzeTurns")
    if len(set(turns)) != len(turns):
        raise QueryError("'analyzeTurns' names a turn twice", "analyzeTurns")
    priority = _number(obj, "priority", -2 ** 31, 2 ** 31, integer=True) if "priority" in obj else 0
    priorities = [priority] * len(turns)
    if "priorities" in obj:
        raw = obj["priorities"]
        if not isinstance(raw, list) or len(raw) != len(turns) or not all(_is_int(p) for p in raw):
            raise QueryError("'priorities' must be a list of integers, one per analyzeTurns entry", "priorities")
        priorities = list(raw)
    return turns, priorities


def _parse_query(obj: dict, qid: str, defaults: Defaults, min_size: int, max_size: int) -> AnalysisQuery:
    warnings: list[tuple[str, str]] = []
    for key in obj:
        if key not in _QUERY_FIELDS:
            warnings.append((str(key)[:60], "unexpected or unused field"))
    for key in ("boardXSize", "boardYSize"):
        if key not in obj:
            raise QueryError(f"'{key}' is required", key)
        _number(obj, key, 1, 1000, integer=True)
    size = obj["boardXSize"]
    if obj["boardYSize"] != size:
        raise QueryError(f"azgo plays square boards only (got {size}x{obj['boardYSize']})", "boardYSize")
    if not min_size <= size <= max_size:
        raise QueryError(f"board size {size}x{size} is not supported (azgo plays {min_size}x{min_size} "
                         f"to {max_size}x{max_size})", "boardXSize")
    if "rules" not in obj:
        raise QueryError("'rules' is required", "rules")
    komi_given = "komi" in obj
    komi = float(_number(obj, "komi", -150, 150)) if komi_given else 7.5
    if komi_given and komi * 2 != int(komi * 2):
        raise QueryError("'komi' must be an integer or half-integer", "komi")
    rules, rule_warnings = parse_rules(obj["rules"], komi_given)
    warnings += [("rules", w) for w in rule_warnings]
    game, n_moves = _query_game(obj, size, komi, rules)
    turns, priorities = _query_turns(obj, n_moves)
    overrides = _overrides(obj, warnings)
    max_visits = defaults.max_visits
    if "maxVisits" in overrides:
        max_visits = overrides["maxVisits"]
    if "maxVisits" in obj:
        max_visits = _number(obj, "maxVisits", 1, 10 ** 9, integer=True)
    report = None
    if "reportDuringSearchEvery" in obj:
        report = float(_number(obj, "reportDuringSearchEvery", 0.001, 1e7))
    temperature = float(overrides.get("rootPolicyTemperature", 1.0))
    if "rootPolicyTemperature" in obj:
        temperature = float(_number(obj, "rootPolicyTemperature", 0.01, 100))
    if overrides.get("wideRootNoise"):
        # azgo widens the root through the policy temperature (KataGo adds noise to the root's values)
        temperature *= 1.0 + 10.0 * overrides["wideRootNoise"]
    fpu = overrides.get("rootFpuReductionMax")
    if "rootFpuReductionMax" in obj:
        fpu = float(_number(obj, "rootFpuReductionMax", 0, 10))
    return AnalysisQuery(
        id=qid, size=size, komi=komi,
        turns=tuple(Turn(t, game_prefix(game, t), p) for t, p in zip(turns, priorities)),
        max_visits=int(max_visits), max_time=overrides.get("maxTime", defaults.max_time),
        include_ownership=_bool(obj, "includeOwnership"),
        include_moves_ownership=_bool(obj, "includeMovesOwnership"),
        include_policy=_bool(obj, "includePolicy"), include_pv_visits=_bool(obj, "includePVVisits"),
        report_every=report, perspective=overrides.get("reportAnalysisWinratesAs", defaults.perspective),
        root_policy_temperature=temperature, root_fpu_reduction=fpu, c_puct=overrides.get("cpuctExploration"),
        exclude=_exclusions(obj, size, warnings), warnings=tuple(warnings))


def game_prefix(game: Game, turn: int) -> Game:
    """The game as it stood after its first ``turn`` moves (boards are shared, never changed)."""
    g = Game(game.size, game.komi, game.rules)
    g.handicap = game.handicap
    g.boards = game.boards[: turn + 1]
    g.moves = game.moves[:turn]
    return g
