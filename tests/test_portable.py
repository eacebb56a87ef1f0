"""Records without machine paths (azgo.training.portable): strings, checkpoints, network metadata."""

import hashlib
import json
import os

import pytest

from azgo.training.portable import (portable_checkpoint, portable_onnx, portable_paths,
                                    write_portable_checkpoint)


def test_paths_in_text_become_relative_or_bare_names():
    root, run = "/srv/clone", "/srv/clone/runs/c19"
    home = os.path.expanduser("~")
    text = ("azgo train --data /srv/clone/runs/c19/gen0003/selfplay/19 --init /srv/clone/docs/best.pt "
            "--out /scratch/x/train --opponent /usr/games/gnugo, see /srv/clone/README.md.")
    got = portable_paths(text, root, run)
    assert got == ("azgo train --data <run>/gen0003/selfplay/19 --init docs/best.pt "
                   "--out train --opponent gnugo, see README.md.")
    assert portable_paths({"/srv/clone/a": ["/srv/clone/b", 3, None]}, root) == {"a": ["b", 3, None]}
    assert portable_paths("/srv/clone2/x", root) == "x"  # a sibling folder is not under the root
    assert portable_paths("--source-share /srv/clone/data/sp9g=1@0.2", root) == "--source-share data/sp9g=1@0.2"
    # not paths: ratios, numbers, URLs' paths stay
    assert portable_paths("1/2 of 3.5/4, https://x.org/a/b", root) == "1/2 of 3.5/4, https://x.org/a/b"
    if home not in ("/", "~"):
        assert portable_paths(f"{home}/.cache/azgo/pachi", root) == "~/.cache/azgo/pachi"


def test_portable_checkpoint_keeps_weights_and_rewrites_records(tmp_path):
    torch = pytest.importorskip("torch")
    root = str(tmp_path)
    ckpt = {"model": {"w": torch.arange(4.0)}, "step": 7,
            "training": {"commands": [f"azgo train --data {root}/runs/sp --out {root}/runs/t"],
                         "lineage": [{"checkpoint": f"{root}/docs/start.pt"}]},
            "args": {"data": [f"{root}/runs/sp"]}, "data_files": [f"{root}/runs/sp/a.sgf"]}
    out = portable_checkpoint(ckpt, root)
    assert out["model"] is ckpt["model"] and out["step"] == 7
    assert out["training"]["commands"] == ["azgo train --data runs/sp --out runs/t"]
    assert out["training"]["lineage"][0]["checkpoint"] == "docs/start.pt"
    assert out["args"] == {"data": ["runs/sp"]} and out["data_files"] == ["runs/sp/a.sgf"]
    src = tmp_path / "checkpoint.pt"
    torch.save(ckpt, src)
    dst = tmp_path / "pub" / "best.pt"
    assert write_portable_checkpoint(src, dst, root) is True
    first = dst.read_bytes()
    assert root.encode() not in first
    assert write_portable_checkpoint(src, dst, root) is False and dst.read_bytes() == first  # same bytes: untouched
    back = torch.load(dst, weights_only=False)
    assert torch.equal(back["model"]["w"], ckpt["model"]["w"])


def test_portable_onnx_rewrites_metadata_and_int8_source_hash(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    def model(meta):
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        m = helper.make_model(g)
        for k, v in meta.items():
            m.metadata_props.add(key=k, value=v)
        return m

    root = str(tmp_path)
    prov = json.dumps({"batchnorm": f"drawn from 5 games in {root}/runs/c/gen2/selfplay/13"})
    fp32, int8 = tmp_path / "n.onnx", tmp_path / "n.int8.onnx"
    onnx.save(model({"azgo_net": "b1c8", "azgo_provenance": prov}), str(fp32))
    old = hashlib.sha256(fp32.read_bytes()).hexdigest()
    calibration = {"fp32_sha256": old, "n": 1, "note": "500 positions of 13x13 games in sp13"}
    onnx.save(model({"azgo_provenance": prov, "azgo_calibration": json.dumps(calibration)}), str(int8))
    assert portable_onnx(fp32, root) is True
    new = hashlib.sha256(fp32.read_bytes()).hexdigest()
    assert new != old and portable_onnx(fp32, root) is False  # a second pass changes nothing
    assert portable_onnx(int8, root, {old: new}) is True
    for path in (fp32, int8):
        meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
        assert json.loads(meta["azgo_provenance"]) == {"batchnorm": "drawn from 5 games in runs/c/gen2/selfplay/13"}
        assert root not in json.dumps(meta)
    meta = {p.key: p.value for p in onnx.load(str(int8)).metadata_props}
    assert json.loads(meta["azgo_calibration"]) == {"fp32_sha256": new, "n": 1,
                                                    "note": "500 positions of 13x13 games in sp13"}


def test_no_tracked_file_names_a_machine_path():
    """The training issue's rule: no tracked file (networks and checkpoints included) names this machine's
    checkout, root's home or scratch folders (scripts/portable_paths.py rewrites old ones)."""
    import subprocess
    from pathlib import Path

    from azgo.training.portable import MACHINE_FOLDERS
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.decode()
    needles = [f"/{name}/".encode() for name in MACHINE_FOLDERS] + [str(root).encode() + b"/"]
    found = []
    for name in filter(None, files.split("\0")):
        path = root / name
        if path.is_file():
            data = path.read_bytes()
            found += [f"{name}: {n.decode()}" for n in needles if n in data]
    assert found == []
