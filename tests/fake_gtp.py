"""A fake GTP engine for tests: ``python fake_gtp.py MARKER MODE``, answering every command with ``=`` and every
``genmove`` as its MODE says:

- ``pass``: passes;
- ``crash``: dies at its first genmove (once: the file MARKER records that it has), then passes;
- ``slow``: takes 1.5 s over its first genmove (once, as ``crash``), then passes;
- ``die``: dies at every genmove;
- ``junk``: answers every genmove with a vertex off any board (``Z99``);
- ``hang``: writes its process id into MARKER at its first genmove and never answers it.

``name`` answers passer, crasher, slowpoke, dier, junker or hanger.
"""

import os
import sys
import time

PATH = os.path.abspath(__file__)  # for the tests: the command line is ``python PATH MARKER MODE``


def main() -> None:
    marker, mode = sys.argv[1], sys.argv[2]
    names = {"pass": "passer", "crash": "crasher", "slow": "slowpoke", "die": "dier", "junk": "junker", "hang": "hanger"}
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "quit":
            print("=\n", flush=True)
            break
        if cmd[0] == "name":
            print(f"= {names[mode]}\n", flush=True)
        elif cmd[0] == "genmove":
            if mode == "die":
                os._exit(3)
            if mode == "hang":
                with open(marker + ".tmp", "w") as fh:
                    fh.write(str(os.getpid()))
                os.replace(marker + ".tmp", marker)
                time.sleep(3600)
            if mode in ("crash", "slow") and not os.path.exists(marker):
                open(marker, "w").close()
                if mode == "crash":
                    os._exit(11)
                time.sleep(1.5)
            print("= " + ("Z99" if mode == "junk" else "pass") + "\n", flush=True)
        else:
            print("=\n", flush=True)


if __name__ == "__main__":
    main()
