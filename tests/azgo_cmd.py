"""How tests start azgo as a program."""

import shutil
import sys
from pathlib import Path


def azgo_program(*args: str) -> list[str]:
    """``azgo ARGS...`` through the installed console script (next to this Python, else on PATH)."""
    exe = Path(sys.executable).with_name("azgo")
    if exe.exists():
        return [str(exe), *args]
    found = shutil.which("azgo")
    if found:
        return [found, *args]
    return [sys.executable, "-m", "azgo.gtp.cli", *args]


def azgo_command(*args: str) -> list[str]:
    """``azgo gtp ...`` (see `azgo_program`)."""
    return azgo_program("gtp", *args)
