"""The ``azgo`` command line (click). Later verbs: gtp, genmove, selfplay, train, export, match."""

from __future__ import annotations

import sys

import click

from azgo.engine.board import BLACK, WHITE, IllegalMove
from azgo.engine.coords import CoordinateError, gtp_to_move, move_to_gtp
from azgo.engine.game import Game


def parse_move_list(text: str, size: int) -> list[tuple[int, int]]:
    """``"B D4 W Q16 B pass"`` (or ``"D4 Q16"``, colours alternating from Black) -> [(colour, move)].

    Raises click.BadParameter naming the bad token.
    """
    tokens = text.replace(",", " ").split()
    out: list[tuple[int, int]] = []
    colour = None
    for tok in tokens:
        low = tok.lower()
        if low in ("b", "black", "w", "white"):
            if colour is not None:
                raise click.BadParameter(f"colour {tok!r} is not followed by a vertex")
            colour = BLACK if low.startswith("b") else WHITE
            continue
        try:
            move = gtp_to_move(tok, size)
        except CoordinateError as e:
            raise click.BadParameter(str(e)) from None
        if colour is None:
            colour = (3 - out[-1][0]) if out else BLACK
        out.append((colour, move))
        colour = None
    if colour is not None:
        raise click.BadParameter("the move list ends with a colour and no vertex")
    return out


def load_position(sgf_path: str | None, moves: str | None, size: int, komi: float | None,
                  move_number: int | None) -> Game:
    """A Game from an SGF file (up to ``move_number`` moves) or a move list on an empty board."""
    if sgf_path:
        from azgo.engine.sgf import SgfError, load_sgf
        try:
            game = load_sgf(sgf_path).to_game(move_number)
        except SgfError as e:
            raise click.ClickException(f"{sgf_path}: {e}") from None
        if komi is not None:
            game.komi = komi
    else:
        game = Game(size, 7.5 if komi is None else komi)
    for colour, move in parse_move_list(moves or "", game.size):
        try:
            game.play(move, colour)
        except IllegalMove as e:
            who = "B" if colour == BLACK else "W"
            raise click.ClickException(f"{who} {move_to_gtp(move, game.size)}: {e}") from None
    return game


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="azgo", prog_name="azgo")
def main() -> None:
    """azgo: a Go engine in the AlphaGo Zero style (ONNX network + PUCT search, GTP)."""


@main.command("board")
@click.option("--sgf", "sgf_path", type=click.Path(dir_okay=False), help="Read the position from an SGF file.")
@click.option("--move", "move_number", type=click.IntRange(min=0), help="Stop the SGF after this many moves.")
@click.option("--moves", default="", help='Moves to play, e.g. "B D4 W Q16 B pass" or "D4 Q16".')
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25), help="Board size.")
@click.option("--komi", type=float, help="Komi (default 7.5, or the SGF's KM).")
def board_cmd(sgf_path, move_number, moves, size, komi):
    """Show a position, the side to move and its area (Tromp-Taylor) score."""
    from azgo.engine.scoring import area_score, result_string
    game = load_position(sgf_path, moves, size, komi, move_number)
    b = game.board
    click.echo(str(b))
    side = "Black" if b.to_move == BLACK else "White"
    score = area_score(b, game.komi)
    legal = int(b.legal_mask().sum()) - 1
    click.echo(f"move {game.move_number}, {side} to move, {legal} legal points, "
               f"captures B {b.prisoners[BLACK]} W {b.prisoners[WHITE]}, komi {game.komi:g}, "
               f"area score {result_string(score)}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
