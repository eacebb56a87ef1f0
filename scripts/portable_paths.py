"""Take machine paths out of tracked files written before azgo's records became portable (the training
issue: "no machine path in any tracked file"). Since then the recipe writes them portable itself
(`azgo.training.portable`); this rewrites what is already committed:

- networks (``*.onnx``): the ``azgo_provenance`` metadata; an int8 copy's ``fp32_sha256`` follows its
  rewritten source. Weights are untouched. Each card gets the new ``sha256`` values and a
  ``metadata_rewritten`` record with the hashes before, so logs that name the old hash still lead to it;
- checkpoints (``*.pt``): their ``training``, ``args``, ``data_files`` and ``strength`` records;
- ``lineage.json`` files: the hashes of the files above, so a fresh clone still resumes from them;
- text files (logs, commands): absolute paths under this machine's scratch and home folders.

    python3 scripts/portable_paths.py --check           # list the tracked files that name a machine path
    python3 scripts/portable_paths.py                    # rewrite them
    python3 scripts/portable_paths.py --also runs/c19/gen0003   # also the run folder's copies of the same files

Files given with ``--skip`` (globs) are left alone (for example a lineage whose loop is running now).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from azgo.training.portable import MACHINE_FOLDERS, machine_path_re, portable_onnx, portable_paths
from azgo.training.portable import write_portable_checkpoint

ROOT = Path(__file__).resolve().parent.parent
BINARY = (".onnx", ".pt", ".gz", ".xz", ".png", ".npz")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode().split("\0") if p]


def names_machine_path(path: Path) -> bool:
    data = path.read_bytes()
    return any(f"/{name}/".encode() in data for name in MACHINE_FOLDERS) or str(ROOT).encode() in data


def offenders(skip: list[str]) -> list[Path]:
    """Tracked files that name a machine path, less those matching a ``skip`` glob."""
    return [p for p in tracked() if p.is_file() and names_machine_path(p)
            and not any(fnmatch.fnmatch(str(p.relative_to(ROOT)), g) for g in skip)]


def rewrite_text(path: Path) -> bool:
    """Absolute paths under the machine folders in a text file, made portable (see `portable_paths`)."""
    text = path.read_text()
    new = machine_path_re().sub(lambda m: portable_paths(m.group(0), str(ROOT)), text)
    if new != text:
        path.write_text(new)
    return new != text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only list the tracked files that name a machine path")
    ap.add_argument("--skip", action="append", default=[], help="leave files matching this glob alone")
    ap.add_argument("--also", action="append", default=[], help="a folder whose .onnx/.pt copies get the same rewrite")
    args = ap.parse_args(argv)
    files = offenders(args.skip)
    if args.check:
        for p in files:
            print(p.relative_to(ROOT))
        print(f"{len(files)} tracked files name a machine path", file=sys.stderr)
        return 1 if files else 0
    extra = [p for d in args.also for p in sorted(Path(d).rglob("*")) if p.suffix in (".onnx", ".pt")]
    new_hash: dict[str, str] = {}          # sha256 before -> after, of every rewritten binary file
    changed: list[Path] = []
    # fp32 networks first, then int8 copies (their fp32_sha256 follows), then checkpoints, then text
    order = sorted(set(files) | set(extra), key=lambda p: (p.suffix != ".onnx", ".int8" in p.name, p.suffix != ".pt"))
    for p in order:
        before = sha(p)
        if p.suffix == ".onnx":
            done = portable_onnx(p, str(ROOT), new_hash)
        elif p.suffix == ".pt":
            done = write_portable_checkpoint(p, p, str(ROOT))
        elif p.suffix in BINARY:
            print(f"left alone (binary): {p}", file=sys.stderr)
            continue
        else:
            done = rewrite_text(p)
        if done:
            changed.append(p)
            if p.suffix in (".onnx", ".pt"):
                new_hash[before] = sha(p)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for card_path in sorted((ROOT / "nets").glob("*.json")):             # cards: the new hashes, the old ones kept
        card = json.loads(card_path.read_text())
        before = {}
        for rec, key in ((card, "sha256"), (card.get("int8") or {}, "sha256"), (card.get("int8_vnni") or {}, "sha256")):
            if rec.get(key) in new_hash:
                before[rec.get("file", card.get("file"))] = rec[key]
                rec[key] = new_hash[rec[key]]
        if before:
            card["file_size_bytes"] = (ROOT / "nets" / card["file"]).stat().st_size
            card["metadata_rewritten"] = {"utc": stamp, "sha256_before": before,
                                          "why": "machine paths taken out of the provenance metadata "
                                                 "(scripts/portable_paths.py); weights unchanged"}
            card_path.write_text(json.dumps(card, indent=2) + "\n")
            changed.append(card_path)
    for lineage in sorted(ROOT.glob("docs/runs/*/lineage.json")):         # the resume state's hashes
        text = lineage.read_text()
        new = re.sub(r"\b[0-9a-f]{64}\b", lambda m: new_hash.get(m.group(0), m.group(0)), text)
        if new != text:
            lineage.write_text(new)
            changed.append(lineage)
    for p in changed:
        print(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
    left = offenders(args.skip)
    for p in left:
        print(f"still names a machine path: {p.relative_to(ROOT)}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main())
