"""SGF records: loading, round trips, private properties, and clear errors for bad input."""

import random
import time

import pytest

from azgo.engine.board import BLACK, WHITE
from azgo.engine.coords import gtp_to_move, move_to_gtp
from azgo.engine.game import Game
from azgo.engine.sgf import (
    SgfError, decode_visits, encode_visits, load_sgf, parse_result, parse_sgf, record_from_game, root_node,
    write_sgf,
)


def random_game(size: int, moves: int, seed: int) -> Game:
    rng = random.Random(seed)
    g = Game(size, komi=6.5)
    for _ in range(moves):
        legal = g.board.legal_moves()
        g.play(rng.choice(legal[:-1]) if len(legal) > 1 and rng.random() > 0.05 else size * size)
    return g


@pytest.mark.parametrize("size", [7, 9, 19, 25])
def test_round_trip_random_games(size):
    g = random_game(size, size * 6, seed=size)
    props = [{"AZN": str(i), "AZT": str(i % 2)} for i in range(len(g.moves))]
    rec = record_from_game(g, black="azgo-a", white="GNU Go", result="B+R",
                           root_props={"AZF": "1", "AZS": "42"}, move_props=props)
    data = write_sgf(rec)
    back = parse_sgf(data)
    assert (back.size, back.komi, back.black, back.white, back.result) == (size, 6.5, "azgo-a", "GNU Go", "B+R")
    assert back.root_props == {"AZF": "1", "AZS": "42"}
    assert back.moves == g.moves
    assert [n.props for n in back.nodes] == props
    g2 = back.to_game()
    assert g2.board.hash == g.board.hash and g2.to_move == g.to_move
    assert write_sgf(back) == data


def test_passes_both_forms_and_move_number():
    rec = parse_sgf(b"(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[];B[tt];W[cc])")
    g = rec.to_game()
    assert [move_to_gtp(m, 9) for _, m in g.moves] == ["E5", "pass", "pass", "C7"]
    assert rec.to_game(move_number=2).move_number == 2
    assert rec.to_game(move_number=0).board.hash == 0


def test_setup_handicap_and_main_line():
    data = (b"(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]RU[Japanese]PB[Kim]PW[Lee]RE[W+2.5]AB[cg][gc]"
            b"(;W[ee];B[dd]AW[aa];W[ff])(;W[aa]))")
    rec = parse_sgf(data)
    assert rec.handicap == 2 and rec.komi == 0.5 and rec.rules == "Japanese"
    g = rec.to_game()
    assert g.handicap == 2
    assert [(c, move_to_gtp(m, 9)) for c, m in rec.moves] == [(WHITE, "E5"), (BLACK, "D6"), (WHITE, "F4")]
    assert g.board.color_at(gtp_to_move("A9", 9)) == WHITE  # mid-game AW setup kept
    assert g.board.color_at(gtp_to_move("C3", 9)) == BLACK
    assert not g.rules.superko  # Japanese rules: no superko
    # written back, the main line and the setup survive
    again = parse_sgf(write_sgf(record_from_game(g)))
    assert again.to_game().board.hash == g.board.hash


def test_visits_encoding():
    v = {0: 300, 80: 7, 81: 2}
    text = encode_visits(v, 9)
    assert text == "aa:300 ii:7 pass:2"
    assert decode_visits(text, 9) == v
    with pytest.raises(SgfError):
        decode_visits("aa:3 zz:1", 9)
    with pytest.raises(SgfError):
        decode_visits("aa", 9)


@pytest.mark.parametrize("data, words", [
    (b"(;SZ[9];B[ee]", "unexpected end"),
    (b"hello", "no SGF data"),
    (b"", "no SGF data"),
    (b"(;SZ[9]KM[nan])", "komi"),
    (b"(;SZ[9]KM[abc])", "komi"),
    (b"(;SZ[30])", "size"),
    (b"(;SZ[1])", "board size 1"),
    (b"(;GM[2]SZ[9])", "not a game of Go"),
    (b"(;SZ[9];B[zz])", "node 1"),
    (b"(;SZ[9];B[ee];W[ee])", "move 2 (W E5)"),
    (b"(;SZ[9]AB[aa][ba][ab]AW[bb][ca][ac])", "without liberties"),
    (b"(;SZ[9]HA[x])", "handicap"),
    (b"(;SZ[9:13])", "SZ"),
    (bytes(range(256)) * 4, ""),
])
def test_malformed_input_names_the_problem(data, words):
    with pytest.raises(SgfError) as e:
        parse_sgf(data).to_game()
    assert words in str(e.value)


def test_oversized_and_missing_file(tmp_path):
    with pytest.raises(SgfError, match="more than"):
        parse_sgf(b"(;SZ[9]" + b"C[x]" * 1000 + b")", max_bytes=1000)
    with pytest.raises(SgfError, match="cannot read"):
        load_sgf(str(tmp_path / "missing.sgf"))
    big = tmp_path / "big.sgf"
    big.write_bytes(b"(;SZ[19]" + b";B[aa];W[]" * 200_000 + b")")
    t = time.perf_counter()
    with pytest.raises(SgfError):
        load_sgf(str(big), max_bytes=1_000_000)
    assert time.perf_counter() - t < 2


def test_random_corruption_never_escapes_as_other_errors():
    g = random_game(9, 60, seed=3)
    data = write_sgf(record_from_game(g, result="B+1"))
    rng = random.Random(0)
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            i = rng.randrange(len(b))
            if op < 0.4:
                b[i] = rng.randrange(256)
            elif op < 0.7:
                del b[i: i + rng.randint(1, 20)]
            else:
                b[i:i] = bytes(rng.choice(b"[]();\\BWabz") for _ in range(rng.randint(1, 5)))
        try:
            parse_sgf(bytes(b)).to_game()
        except SgfError:
            pass


@pytest.mark.parametrize("text, outcome", [
    ("B+R", 1.0), ("b+3.5", 1.0), ("W+T", -1.0), (" W+0.5 ", -1.0),
    ("0", 0.0), ("Draw", 0.0), ("jigo", 0.0), ("D", 0.0), ("B+0", 0.0), ("W+0", 0.0),
    ("Void", None), ("?", None), ("", None), ("B", None),
])
def test_parse_result_reads_every_re_form_the_strength_tools_meet(text, outcome):
    # one reader for RE: training targets, match resumption, the ladder and the colour split
    assert parse_result(text) == outcome


def test_root_node_reads_the_header_alone():
    """root_node cuts the first node out (no moves parsed); a comment holding ; ( ) and an escaped ] stays whole."""
    data = b"\n(;FF[4]C[a;b(c)\\]d]SZ[9]HA[3]KM[0.5]AB[cc][gg][gc];W[ee];B[dd](;W[ff])(;W[fe]))"
    head = root_node(data)
    assert head == b"(;FF[4]C[a;b(c)\\]d]SZ[9]HA[3]KM[0.5]AB[cc][gg][gc])"
    rec = parse_sgf(head)
    assert rec.handicap == 3 and rec.komi == 0.5 and rec.nodes == [] and len(rec.setup[0]) == 3
    assert root_node(b"") == b"(;)" and root_node(b"(;SZ[9]") == b"(;SZ[9])"
