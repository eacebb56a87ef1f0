"""GTP clock commands: ``time_settings``, ``kgs-time_settings``, ``kata-list_time_settings``,
``kata-time_settings`` and ``time_left``, all read by one grammar (`azgo.engine.timecontrol`) into the
engine's `Clock`. A mixin of `azgo.gtp.engine.GtpEngine` (it uses ``self.clock``, ``_nargs`` and ``_color``).
"""

from __future__ import annotations

from azgo.engine.timecontrol import KGS_KINDS, TimeSettings, parse_time_settings

from .protocol import GtpError, float_arg as _float_arg, int_arg as _int_arg


class ClockCommands:
    """The clock commands of `GtpEngine`."""

    def cmd_time_settings(self, args) -> str:
        self._nargs(args, 3, "time_settings MAIN BYO_YOMI_TIME BYO_YOMI_STONES")
        main, byo = _float_arg(args[0]), _float_arg(args[1])
        stones = _int_arg(args[2])
        if main < 0 or byo < 0:
            raise GtpError("syntax error: times must be >= 0")
        self.clock.reset(TimeSettings.from_gtp(main, byo, stones))
        return ""

    def cmd_kgs__time_settings(self, args) -> str:
        try:
            settings = parse_time_settings(args, KGS_KINDS)
        except ValueError as e:
            raise GtpError(f"syntax error: usage kgs-time_settings {e}") from None
        self.clock.reset(settings)
        return ""

    def cmd_kata__list_time_settings(self, args) -> str:
        """The time controls ``kata-time_settings`` takes (gtp2ogs sends Fischer clocks to engines that list
        ``fischer-capped`` here)."""
        return "none absolute byoyomi canadian fischer fischer-capped"

    def cmd_kata__time_settings(self, args) -> str:
        """KataGo's ``kata-time_settings``: the ``kgs-time_settings`` forms plus ``fischer MAIN INC`` and
        ``fischer-capped MAIN INC MAIN_LIMIT MAX_PER_MOVE`` (-1: no cap)."""
        try:
            settings = parse_time_settings(args)
        except ValueError as e:
            raise GtpError(f"syntax error: usage kata-time_settings {e}") from None
        self.clock.reset(settings)
        return ""

    def cmd_time_left(self, args) -> str:
        self._nargs(args, 3, "time_left COLOR TIME STONES")
        color = self._color(args[0])
        t = _float_arg(args[1])
        stones = _int_arg(args[2])
        try:
            self.clock.time_left(color, t, stones)
        except ValueError as e:
            raise GtpError(f"syntax error: {e}") from None
        return ""
