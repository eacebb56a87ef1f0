"""GTP analysis commands: ``lz-analyze``, ``kata-analyze`` (a search that streams ``info`` lines until the
next input line) and ``lz-genmove_analyze``, ``kata-genmove_analyze`` (a move, with ``info`` lines while it
is chosen). Output goes through the command loop's `Channel`; the line formats are `azgo.gtp.analysis`.
A mixin of `azgo.gtp.engine.GtpEngine` (it uses ``self.game``, ``searcher``, ``size``, ``_set_to_move``,
``think``, ``_play_own`` and ``_note_cap``).
"""

from __future__ import annotations

import threading

import numpy as np

from azgo.engine.search import Limits, MoveInfo

from . import analysis as A
from .protocol import Channel, Command, GtpError, log

ANALYSIS_COMMANDS = ("lz-analyze", "kata-analyze")
GENMOVE_ANALYZE = ("lz-genmove_analyze", "kata-genmove_analyze")


class AnalysisCommands:
    """The streaming analysis commands of `GtpEngine`."""

    def _analysis_setup(self, cmd: Command):
        kata = cmd.name.startswith("kata")
        aa = A.parse_analyze_args(cmd.args, self.size, kata)
        color = aa.color if aa.color is not None else self.game.to_move
        exclude = set(aa.avoid.get(color, set()))
        if color in aa.allow:
            allowed = aa.allow[color] | {self.game.board.pass_move}
            exclude |= set(range(self.size * self.size)) - allowed
        return kata, aa, color, exclude

    def _emit(self, channel: Channel, kata: bool, aa: A.AnalyzeArgs, cands: list[MoveInfo],
              ownership) -> None:
        if aa.maxmoves:
            cands = cands[: aa.maxmoves]
        extra = []
        if aa.minmoves and len(cands) < aa.minmoves and self.searcher.root is not None \
                and self.searcher.root.expanded:
            root = self.searcher.root
            shown = {c.move for c in cands}
            for i in np.argsort(-root.raw_prior).tolist():
                if len(cands) + len(extra) >= aa.minmoves:
                    break
                m = int(root.moves[i])
                if m in shown or (self.searcher.blocked is not None and self.searcher.blocked[i]):
                    continue
                extra.append(MoveInfo(move=m, visits=0, winrate=(root.q() + 1) / 2,
                                      prior=float(root.raw_prior[i]), lcb=0.0, pv=[m], score_lead=None))
        if not cands and not extra:
            return
        own = ownership if (kata and aa.ownership) else None
        channel.write(A.info_line(cands, self.size, kata, own, extra) + "\n")

    def _analyze(self, cmd: Command, channel: Channel) -> None:
        kata, aa, color, exclude = self._analysis_setup(cmd)
        self._set_to_move(color)
        stop = threading.Event()
        cid = "" if cmd.id is None else str(cmd.id)
        channel.write(f"={cid}\n")

        def callback(cands):
            root = self.searcher.root
            own = root.ownership if root is not None else None
            self._emit(channel, kata, aa, cands, own)

        interval = aa.interval if aa.interval > 0 else 1e9

        def analyse():
            result = self.searcher.search(self.game, Limits(visits=10 ** 7), stop=stop,
                                          callback=callback if aa.interval > 0 else None, interval=interval,
                                          exclude=exclude or None)
            self._note_cap(result.memory_capped)
            # at the memory cap the tree is kept as it is and reported until the next command
            while result.memory_capped and aa.interval > 0 and not stop.wait(interval):
                callback(result.candidates)

        worker = threading.Thread(target=analyse, daemon=True, name="azgo-analyze")
        worker.start()
        channel.wait_for_input()
        stop.set()
        worker.join()
        channel.write("\n")

    def _genmove_analyze(self, cmd: Command, channel: Channel) -> None:
        kata, aa, color, exclude = self._analysis_setup(cmd)
        if aa.color is None:
            raise GtpError("syntax error: usage " + cmd.name + " COLOR [INTERVAL]")
        cid = "" if cmd.id is None else str(cmd.id)

        def callback(cands):
            root = self.searcher.root
            self._emit(channel, kata, aa, cands, root.ownership if root is not None else None)

        channel.write(f"={cid}\n")
        try:
            result, move = self.think(color, exclude=exclude or None,
                                       callback=callback if aa.interval > 0 else None,
                                       interval=aa.interval if aa.interval > 0 else 1e9)
            reply = self._play_own(color, move, result.seconds)
        except GtpError as e:  # pragma: no cover - header already sent
            reply = "resign"
            log(f"azgo: {cmd.name} failed: {e}")
        channel.write(f"play {reply}\n\n")
