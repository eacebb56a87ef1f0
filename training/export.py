"""Export an `AzNet` to ONNX with azgo metadata, check ORT/torch parity, and write the net card.

The ONNX file has one input ``planes`` ``[batch, 26, height, width]`` (float32, dynamic batch,
height and width) and the outputs ``policy`` ``[batch, height*width+1]`` (logits, pass last),
``value`` ``[batch]``, ``ownership`` ``[batch, height*width]`` and ``score`` ``[batch]``, all from the
side to move's perspective (see :mod:`azgo.training.model`). Its ``metadata_props`` hold:

======================  ===============================================================
``azgo_format``         ``"1"``
``azgo_feature_version``  the :data:`azgo.engine.planes.FEATURE_VERSION` it was built for
``azgo_net``            size name, e.g. ``"b6c64"``
``azgo_heads``          ``"policy,value,ownership,score"``
``azgo_min_size``       ``"7"``
``azgo_max_size``       ``"19"``
``azgo_provenance``     JSON: how the file was made (tool, seed, torch version, exporter...)
======================  ===============================================================

The net card ``<name>.json`` next to ``<name>.onnx`` describes the architecture, feature version,
parameter count, file size and sha256, how it was trained, and its measured strength (or
``"untrained"``).

Command line (makes the packaged random network)::

    python -m azgo.training.export --random --net b6c64 --seed 0 --out nets/default.onnx
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import onnx
import torch

from azgo.engine import planes as P
from azgo.nets.registry import card_path
from azgo.training.model import (
    NET_SIZES,
    OUTPUT_NAMES,
    AzNet,
    build_model,
    count_parameters,
)

AZGO_FORMAT = "1"
DEFAULT_OPSET = 17
MIN_SIZE = 7
MAX_SIZE = 19
HEADS = ",".join(OUTPUT_NAMES)
UNTRAINED = "untrained"


class ExportError(RuntimeError):
    """The exported ONNX file does not match the torch model (parity failure) or cannot be written."""


def random_planes(batch: int, n: int, rng: np.random.Generator, komi: float = 7.5) -> np.ndarray:
    """Plausible random input planes ``[batch, 26, n, n]`` float32 (not real positions).

    Own/opponent stones are disjoint random 0/1 planes (history planes are random too), the
    black-to-move plane is constant per position, the liberty planes are random 0/1, the ko plane
    has at most one point, the on-board plane is all ones and the komi plane holds ``+-komi/15``.
    """
    x = np.zeros((batch, P.NUM_PLANES, n, n), dtype=np.float32)
    for h in range(P.HISTORY):
        cell = rng.integers(0, 3, size=(batch, n, n))
        x[:, P.OWN_STONES + h] = cell == 1
        x[:, P.OPP_STONES + h] = cell == 2
    black = rng.integers(0, 2, size=batch).astype(np.float32)
    x[:, P.BLACK_TO_MOVE] = black[:, None, None]
    own, opp = x[:, P.OWN_STONES] > 0, x[:, P.OPP_STONES] > 0
    libs = rng.integers(0, 3, size=(batch, n, n))
    for i in range(3):
        x[:, P.OWN_LIBERTIES + i] = own & (libs == i)
        x[:, P.OPP_LIBERTIES + i] = opp & (libs == i)
    has_ko = rng.random(batch) < 0.2
    for b in np.flatnonzero(has_ko):
        x[b, P.KO_PLANE, rng.integers(n), rng.integers(n)] = 1.0
    x[:, P.ON_BOARD_PLANE] = 1.0
    sign = np.where(black > 0, -1.0, 1.0).astype(np.float32)
    x[:, P.KOMI_PLANE] = (sign * komi / P.KOMI_SCALE)[:, None, None]
    return x


def export_onnx(
    model: AzNet,
    path: str | os.PathLike,
    *,
    net_name: str | None = None,
    provenance: dict[str, Any] | None = None,
    opset: int = DEFAULT_OPSET,
    min_size: int = MIN_SIZE,
    max_size: int = MAX_SIZE,
) -> Path:
    """Write ``model`` (put in eval mode) to ``path`` as ONNX with the azgo metadata; returns the path.

    Uses the legacy TorchScript exporter (``dynamo=False``) with dynamic batch/height/width axes.
    ``provenance`` is stored as JSON in ``azgo_provenance`` (the exporter, opset and torch version
    are added to it).
    """
    if opset < 17:
        raise ValueError(f"opset must be >= 17, got {opset}")
    path = Path(path)
    net_name = net_name or model.size_name
    if not net_name:
        raise ValueError("net_name is required for a model whose size is not in NET_SIZES")
    model.eval()
    dummy = torch.from_numpy(random_planes(1, 9, np.random.default_rng(0)))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.onnx")
        torch.onnx.export(
            model,
            (dummy,),
            buf,
            dynamo=False,
            opset_version=opset,
            input_names=["planes"],
            output_names=list(OUTPUT_NAMES),
            dynamic_axes={
                "planes": {0: "batch", 2: "height", 3: "width"},
                "policy": {0: "batch", 1: "moves"},
                "value": {0: "batch"},
                "ownership": {0: "batch", 1: "points"},
                "score": {0: "batch"},
            },
            do_constant_folding=True,
        )
    proto = onnx.load_from_string(buf.getvalue())
    prov = dict(provenance or {})
    prov.setdefault("tool", "azgo.training.export")
    prov["exporter"] = "torch.onnx.export(dynamo=False)"
    prov["opset"] = opset
    prov["torch"] = torch.__version__
    meta = {
        "azgo_format": AZGO_FORMAT,
        "azgo_feature_version": str(P.FEATURE_VERSION),
        "azgo_net": net_name,
        "azgo_heads": HEADS,
        "azgo_min_size": str(min_size),
        "azgo_max_size": str(max_size),
        "azgo_provenance": json.dumps(prov, sort_keys=True),
    }
    set_metadata(proto, meta)
    proto.producer_name = "azgo"
    onnx.checker.check_model(proto)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(path))
    return path


def set_metadata(proto: onnx.ModelProto, meta: dict[str, str]) -> None:
    """Set (replace) entries of ``proto.metadata_props`` in place."""
    keep = [p for p in proto.metadata_props if p.key not in meta]
    del proto.metadata_props[:]
    for p in keep:
        proto.metadata_props.add(key=p.key, value=p.value)
    for k, v in meta.items():
        proto.metadata_props.add(key=k, value=str(v))


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The ``metadata_props`` of an ONNX file as a dict (read with the ``onnx`` package)."""
    proto = onnx.load(str(path), load_external_data=False)
    return {p.key: p.value for p in proto.metadata_props}


def check_parity(
    model: AzNet,
    onnx_path: str | os.PathLike,
    sizes: Sequence[int] = (9, 13, 19),
    batch: int = 3,
    atol: float = 1e-4,
    seed: int = 0,
) -> dict[str, float]:
    """Compare onnxruntime with torch (eval mode) on random planes; raise `ExportError` beyond ``atol``.

    For each board size, ``batch`` random positions (valid on-board and komi planes) go through both;
    returns ``{"<size>/<output>": max_abs_diff}`` for every size and output. Policy logits are
    compared on the board points and pass (no padding at these sizes).
    """
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    model.eval()
    rng = np.random.default_rng(seed)
    report: dict[str, float] = {}
    bad = []
    for n in sizes:
        x = random_planes(batch, n, rng)
        with torch.inference_mode():
            ref = [t.numpy() for t in model(torch.from_numpy(x))]
        got = sess.run(list(OUTPUT_NAMES), {"planes": x})
        for name, r, g in zip(OUTPUT_NAMES, ref, got):
            if r.shape != g.shape:
                raise ExportError(f"{n}x{n} {name}: ONNX shape {g.shape} != torch shape {r.shape}")
            diff = float(np.max(np.abs(r.astype(np.float64) - g)))
            report[f"{n}/{name}"] = diff
            if not diff <= atol:
                bad.append(f"{n}x{n} {name}: max |diff| {diff:.3g} > {atol:g}")
    if bad:
        raise ExportError("ONNX/torch parity failed: " + "; ".join(bad))
    return report


def write_card(
    onnx_path: str | os.PathLike,
    model: AzNet,
    *,
    training: str | dict[str, Any],
    strength: str | dict[str, Any] = UNTRAINED,
    parity: dict[str, float] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write the net card JSON next to ``onnx_path`` and return its path.

    ``training`` says how the net was trained (for a random net, a string saying it is untrained);
    ``strength`` is the measured strength (e.g. ``{"vs": "gnugo level 10", "winrate": ...}``) or
    ``"untrained"``. File size and sha256 are measured from the written ONNX file.
    """
    onnx_path = Path(onnx_path)
    data = onnx_path.read_bytes()
    meta = read_metadata(onnx_path)
    card: dict[str, Any] = {
        "name": onnx_path.stem,
        "file": onnx_path.name,
        "azgo_format": meta.get("azgo_format"),
        "net": meta.get("azgo_net"),
        "architecture": {
            "type": "AzNet residual tower with KataGo-style global pooling blocks",
            **model.size.as_dict(),
            "input": f"planes [batch, {model.num_planes}, height, width]",
            "outputs": {
                "policy": "[batch, H*W+1] logits, index row*W+col, pass last (side to move)",
                "value": "[batch] tanh, +1 = side to move wins",
                "ownership": "[batch, H*W] tanh, +1 = owned by side to move",
                "score": "[batch] expected final score margin for the side to move, points",
            },
        },
        "feature_version": int(meta.get("azgo_feature_version", P.FEATURE_VERSION)),
        "num_planes": model.num_planes,
        "board_sizes": [int(meta.get("azgo_min_size", MIN_SIZE)), int(meta.get("azgo_max_size", MAX_SIZE))],
        "params": count_parameters(model),
        "file_size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "provenance": json.loads(meta.get("azgo_provenance", "{}")),
        "training": training,
        "strength": strength,
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if parity is not None:
        card["onnx_parity_max_abs_diff"] = max(parity.values()) if parity else 0.0
    if extra:
        card.update(extra)
    out = card_path(onnx_path)
    out.write_text(json.dumps(card, indent=2, sort_keys=False) + "\n")
    return out


def export_random(net: str, seed: int, out: str | os.PathLike, *, check: bool = True) -> tuple[Path, Path]:
    """Make a randomly initialised ``net``, export it to ``out``, check parity, write its card.

    Returns ``(onnx_path, card_path)``. The card says plainly that the network is untrained.
    """
    if net not in NET_SIZES:
        raise ValueError(f"unknown net size {net!r}; known: {', '.join(NET_SIZES)}")
    model = build_model(net, seed=seed).eval()
    prov = {
        "tool": "azgo.training.export",
        "method": "random initialisation (AzNet.reset_parameters), no training",
        "seed": seed,
        "net": net,
    }
    onnx_path = export_onnx(model, out, net_name=net, provenance=prov)
    parity = check_parity(model, onnx_path) if check else None
    card = write_card(
        onnx_path,
        model,
        training=f"UNTRAINED: random initialisation with seed {seed}; this network has never been "
        "trained and plays no better than chance guided by its random priors.",
        strength=UNTRAINED,
        parity=parity,
    )
    return onnx_path, card


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m azgo.training.export", description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--random", action="store_true", help="export a randomly initialised network")
    src.add_argument("--checkpoint", help="torch checkpoint with a 'model' state dict and 'net' size name")
    ap.add_argument("--net", default="b6c64", choices=sorted(NET_SIZES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="output .onnx path; the card goes next to it")
    ap.add_argument("--no-parity", action="store_true", help="skip the ORT/torch parity check")
    args = ap.parse_args(argv)
    if args.random:
        onnx_path, card = export_random(args.net, args.seed, args.out, check=not args.no_parity)
    else:
        onnx_path, card = export_checkpoint(args.checkpoint, args.out, check=not args.no_parity)
    size = onnx_path.stat().st_size
    print(f"wrote {onnx_path} ({size / 1e6:.2f} MB) and {card}")
    return 0


def recalibrate_batchnorm(model: AzNet, positions, batches: int = 64, batch_size: int = 128,
                          seed: int = 0) -> int:
    """Replace every batch norm's running statistics by their exact average over ``batches`` random
    batches of ``positions`` (a :class:`azgo.training.dataset.PositionSet`, e.g. of one board size),
    forward passes in training mode without gradients; the weights are untouched. Returns the
    positions seen.

    Why: training draws one board size per batch, and the running statistics are an exponential
    average of the last few dozen batches, most of them of the most common size; a network exported
    so evaluates other sizes with statistics their activations do not have. On 19x19 this showed as
    a value biased against the side to move, growing with the stones on the board (-0.39 at 300 stones
    on a mixed-size network's own training games); statistics taken on 19x19 positions remove it.
    """
    rng = np.random.default_rng(seed)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    saved = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
    model.train()
    seen = 0
    try:
        with torch.no_grad():
            for k in range(batches):
                for m in norms:
                    m.momentum = 1.0 / (k + 1)  # a cumulative mean over the batches so far
                b = positions.sample(rng, batch_size)
                model(torch.from_numpy(b["planes"]))
                seen += len(b["planes"])
    finally:
        for m, mom in zip(norms, saved):
            m.momentum = mom
        model.eval()
    return seen


def export_checkpoint(checkpoint: str | os.PathLike, out: str | os.PathLike, *, check: bool = True,
                      bn_data: Sequence[str] | None = None, bn_size: int | None = None,
                      bn_batches: int = 64, log=None, name_source=None) -> tuple[Path, Path]:
    """Export a training checkpoint (a dict with ``net`` (size name), ``model`` (state dict) and
    optional ``training``/``strength`` descriptions) to ONNX + card.

    ``bn_data`` (SGF sources) with ``bn_size``: first recalibrate the batch-norm statistics on positions
    of that board size (:func:`recalibrate_batchnorm`); the card records it. ``name_source(path)`` writes a
    source as the network file and its card name it (a recipe run: ``<run>/gen0002/selfplay/13``, so that no
    path of the machine travels inside a shipped network); default: as given."""
    ckpt = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
    net = ckpt["net"]
    model = AzNet(net)
    model.load_state_dict(ckpt["model"])
    model.eval()
    prov = {"tool": "azgo.training.export", "method": "trained checkpoint",
            "checkpoint": os.path.basename(str(checkpoint)), "net": net}
    extra = None
    if bn_data:
        from .dataset import PositionSet, find_sgf_files, load_games
        if bn_size is None:
            raise ExportError("batch-norm recalibration needs a board size (--bn-size)")
        files = find_sgf_files(bn_data)
        games = [g for g in load_games(files, workers=1) if g is not None and g.size == bn_size]
        positions = PositionSet(games)
        if len(positions) == 0:
            raise ExportError(f"no {bn_size}x{bn_size} positions in {' '.join(bn_data)} to recalibrate on")
        seen = recalibrate_batchnorm(model, positions, batches=bn_batches)
        named = [name_source(p) if name_source else p for p in bn_data]
        note = (f"batch-norm statistics recalibrated on {seen} positions ({bn_batches} batches) drawn from "
                f"{len(positions)} positions of {positions.games} {bn_size}x{bn_size} games in {', '.join(named)}")
        prov["batchnorm"] = note
        extra = {"batchnorm": {"board_size": bn_size, "positions_seen": seen, "batches": bn_batches,
                               "from_positions": len(positions), "games": positions.games,
                               "sources": named}}
        if log:
            log(note)
    onnx_path = export_onnx(model, out, net_name=net, provenance=prov)
    parity = check_parity(model, onnx_path) if check else None
    card = write_card(onnx_path, model, training=ckpt.get("training", "trained (no details recorded)"),
                      strength=ckpt.get("strength", []), parity=parity, extra=extra)
    return onnx_path, card


if __name__ == "__main__":
    raise SystemExit(main())
