"""Static int8 (QDQ) quantization of an azgo network, and an int8-vs-fp32 accuracy check.

Recipe (measured in the project's CPU notes: 3.1-3.9x faster than fp32 on the project's AVX-512 VNNI
CPU, dynamic int8 is ~3.5x *slower* and must not be used): ``quant_pre_process`` then
``quantize_static`` with ``QuantFormat.QDQ``, per-channel weights, ``QUInt8`` activations and
``QInt8`` weights in the reduced (7-bit) range, MinMax calibration on the planes of real positions.

Why 7-bit weights (``reduce_range=True``): on an x86 CPU without VNNI (AVX2 only, some AMD EPYCs)
onnxruntime multiplies uint8 activations by int8 weights with ``vpmaddubsw``, which adds pairs of
products into 16 bits and saturates when both are large. Full-range weights then lose the network: a
19x19 network agreed with its fp32 source on the top move in 0.680 of 256 real positions there (value
MAE 0.27) against 0.902 on a VNNI CPU. With 7-bit weights the pair sums cannot overflow: 0.891 (value
MAE 0.046) on the AVX2 CPU, at 1.8x fp32's speed there.

Needs the ``onnx`` package (``onnxruntime.quantization`` imports it), which is in the ``train`` and
``test`` extras but not a play-time dependency; nothing else in :mod:`azgo.nets` imports this
module. No torch: ``quant_pre_process`` is replaced by `_preprocess` because it would import torch
through ``onnxruntime.tools`` (tested in ``tests/test_no_torch.py``).

Command line::

    python -m azgo.nets.quantize nets/default.onnx --calibration positions.npy [--out nets/default.int8.onnx]

where ``positions.npy`` holds float32 planes ``[n, 26, N, N]`` of real positions.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from azgo.engine.atomic import atomic_target
from azgo.engine.planes import NUM_PLANES, ON_BOARD_PLANE
from azgo.nets.card import file_sha256
from azgo.nets.registry import NetError
from azgo.nets.evaluator import int8_sibling, int8_vnni_sibling


# 7-bit weights: exact on CPUs with and without VNNI (see the module docstring)
REDUCE_RANGE = True
# What quantize_int8's default makes int8: the matrix products (their inputs, weights and outputs). The
# element-wise nodes between them (board-mask products, residual additions) compute in fp32 and their
# outputs are not rounded to 8 bits again (35 roundings in the default network instead of 91).
MATRIX_OPS = ("Conv", "Gemm", "MatMul")
# --analysis copies: activation ranges at this percentile of the calibration values, with 8-bit weights
ANALYSIS_PERCENTILE = 99.999
SEVEN_BIT = " (7-bit, reduce_range)"  # in the method text of every file made this way (see evaluator.int8_full_range)
METHOD = ("onnxruntime.quantization.quantize_static QDQ, per-channel, QUInt8 act / QInt8 weights"
          + SEVEN_BIT + ", MinMax")


def int8_path_for(fp32_path: str | os.PathLike) -> Path:
    """Conventional location of the int8 model of ``<name>.onnx``: ``<name>.int8.onnx`` beside it."""
    return int8_sibling(fp32_path)


def int8_vnni_path_for(fp32_path: str | os.PathLike) -> Path:
    """Location of the optional 8-bit-weight copy (``--analysis``): ``<name>.int8-vnni.onnx`` beside it,
    which ``azgo analysis`` uses in place of ``<name>.int8.onnx`` on a CPU with VNNI (precision "vnni", see
    :func:`azgo.nets.evaluator.int8_vnni_sibling`); play keeps the 7-bit copy."""
    return int8_vnni_sibling(fp32_path)


def copy_int8_copies(src: str | os.PathLike, dst: str | os.PathLike) -> list[Path]:
    """Copy the int8 files beside the network ``src`` (``.int8.onnx``, ``.int8-vnni.onnx``) to the same names
    beside ``dst``, each atomically, and remove those beside ``dst`` that ``src`` lacks (they were made from
    another network). Returns the files written."""
    from azgo.engine.atomic import atomic_copy
    written = []
    for name in (int8_path_for, int8_vnni_path_for):
        a, b = name(src), name(dst)
        if a.is_file():
            atomic_copy(a, b)
            written.append(b)
        elif b.exists():
            b.unlink()
    return written


class _PlanesReader:
    """`CalibrationDataReader` over one or more plane arrays, in chunks of ``batch``."""

    def __init__(self, arrays: Sequence[np.ndarray], batch: int, equal: bool = False) -> None:
        """``equal``: every chunk of one length (the histogram calibrators stack them): the last chunk of
        each array ends at its last position and may overlap the one before."""
        if equal:
            self._chunks = [a[max(0, min(i, len(a) - batch)):][:batch] for a in arrays for i in range(0, len(a), batch)]
        else:
            self._chunks = [a[i:i + batch] for a in arrays for i in range(0, len(a), batch)]
        self._it = iter(self._chunks)

    def get_next(self):
        chunk = next(self._it, None)
        return None if chunk is None else {"planes": chunk}

    def rewind(self) -> None:
        self._it = iter(self._chunks)


def _as_plane_arrays(calibration: np.ndarray | Iterable[np.ndarray]) -> list[np.ndarray]:
    arrays = [calibration] if isinstance(calibration, np.ndarray) else list(calibration)
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.float32)
        if a.ndim != 4 or a.shape[1] != NUM_PLANES or a.shape[2] != a.shape[3] or len(a) == 0:
            raise ValueError(f"calibration planes must be non-empty [n, {NUM_PLANES}, N, N], got {a.shape}")
        if not np.all(a[:, ON_BOARD_PLANE].max(axis=(1, 2)) == 1.0):
            raise ValueError("calibration planes need the on-board plane (24) set")
        out.append(a)
    if not out:
        raise ValueError("no calibration planes given")
    return out


def _preprocess(src: Path, dst: Path) -> None:
    """What ``onnxruntime.quantization.quant_pre_process`` does, without its symbolic shape step.

    ``quant_pre_process`` imports ``onnxruntime.tools``, whose ``__init__`` imports torch whenever
    torch is installed, and nothing under ``azgo.nets`` may import torch. The graph has no shape
    that needs symbolic inference, so: onnxruntime's basic graph optimisations (constant folding,
    Conv+BN fusion), saved to ``dst``, then onnx's own shape inference.
    """
    import onnx
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(dst)
    so.log_severity_level = 3
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    from onnxruntime.quantization.quant_utils import add_pre_process_metadata

    model = onnx.shape_inference.infer_shapes(onnx.load(str(dst)))
    add_pre_process_metadata(model)  # marks it pre-processed (quantize_static checks for the mark)
    onnx.save(model, str(dst))


#: The outputs a review tool subtracts (winrate, score lead, ownership); see `default_fp32_nodes`.
ANALYSIS_OUTPUTS = ("value", "score", "ownership")


def default_fp32_nodes(graph) -> list[str]:
    """Names of the nodes of ``graph`` (an ONNX ``GraphProto``) that `quantize_int8` keeps in fp32 by default.

    Three kinds: the convolution that reads the input planes (the stem), every node that only the value,
    score and ownership outputs depend on (the value head after the trunk: its 1x1 convolution, pooling
    and MLP, and the ownership convolution), and every global-pooling matrix (``gpool_fc`` nodes, in the
    trunk and the policy head). Together they are about 4% of the network's multiply-adds, and the analysis
    figures depend on them most. Measured on the three packaged networks (500 real positions of each size
    from ``docs/strength``; calibrated on 500 positions of the network's own self-play), median
    |int8 - fp32| score lead of the files shipped before (every layer int8) against files made this way:
    9x9 0.43 -> 0.21, 13x13 0.96 -> 0.68, 19x19 0.74 -> 0.38 points; winrate 0.0120 -> 0.0090,
    0.0091 -> 0.0067, 0.0074 -> 0.0052. Per-channel bias correction, full-range weights, percentile or
    entropy calibration and more trunk blocks in fp32 either did not help or cost int8's speed.
    """
    producer = {o: n for n in graph.node for o in n.output}

    def ancestors(outputs) -> set[str]:
        seen: set[str] = set()
        stack = [o for o in outputs if o in producer]
        while stack:
            node = producer.get(stack.pop())
            if node is None or node.name in seen:
                continue
            seen.add(node.name)
            stack.extend(node.input)
        return seen

    outputs = {o.name for o in graph.output}
    inputs = {i.name for i in graph.input}
    keep = ancestors([o for o in ANALYSIS_OUTPUTS if o in outputs]) - ancestors(["policy"])
    keep |= {n.name for n in graph.node if "gpool_fc" in n.name}
    keep |= {n.name for n in graph.node if n.op_type == "Conv" and n.input and n.input[0] in inputs}
    return sorted(k for k in keep if k)


def _calibration_record(fp32_path: Path, arrays: list[np.ndarray], note: str, keep_fp32: list[str],
                        default_fp32: bool, full_range: bool = False, percentile: float | None = None) -> str:
    """The ``azgo_calibration`` metadata (JSON) of an int8 copy: how it was made and from what."""
    method = METHOD if REDUCE_RANGE and not full_range else METHOD.replace(SEVEN_BIT, "")
    if percentile is not None:
        method = method.replace("MinMax", f"Percentile {percentile:g}")
    return json.dumps({
        "method": method,
        "positions": int(sum(len(a) for a in arrays)),
        "board_sizes": sorted({int(a.shape[-1]) for a in arrays}),
        "fp32_sha256": file_sha256(fp32_path),
        "note": note,
        "default_fp32": default_fp32,
        "int8_ops": list(MATRIX_OPS) if default_fp32 else "all",
        **({"fp32_nodes": keep_fp32} if keep_fp32 else {}),
    }, sort_keys=True)


def quantize_int8(
    fp32_path: str | os.PathLike,
    calibration: np.ndarray | Iterable[np.ndarray],
    out_path: str | os.PathLike | None = None,
    *,
    batch: int = 16,
    calibration_note: str = "",
    keep_fp32: Sequence[str] = (),
    default_fp32: bool = True,
    full_range: bool = False,
    percentile: float | None = None,
) -> Path:
    """Write a static QDQ int8 copy of the azgo network at ``fp32_path``; returns its path.

    ``calibration`` is a float32 array ``[n, 26, N, N]`` of real positions' planes (or a sequence of
    such arrays, e.g. one per board size); use a few hundred positions from real games. The azgo
    metadata is copied and ``azgo_precision = "int8"`` plus ``azgo_calibration`` (JSON: counts, sizes,
    note, sha256 of the fp32 source, the nodes kept in fp32) are added. Default output:
    `int8_path_for(fp32_path)`.

    ``keep_fp32`` names graph nodes (e.g. ``/stem/conv/Conv``) left unquantized: with 7-bit weights the
    rounding error of every layer adds up, and for some networks a few layers carry most of the value
    head's drift (one 19x19 network: value MAE 0.109 quantized whole, 0.035 with the stem convolution, one
    global-pooling matrix and ``/value_fc/Gemm`` kept in fp32; full-range weights 0.026).

    ``default_fp32`` (on by default) also keeps `default_fp32_nodes` in fp32: the stem convolution, the
    value/score/ownership head and the global-pooling matrices, and quantizes only the matrix products
    (`MATRIX_OPS`): the board-mask products and residual additions between them compute in fp32. Both
    bring the analysis figures (winrate, score lead) closer to fp32 at a small cost in speed. Measured
    (500 real positions, calibration on 500 self-play positions, three calibration seeds): median
    |int8 - fp32| score lead on 13x13 0.45-0.65 points with only the layers kept, 0.35-0.47 with the
    element-wise nodes in fp32 too; on 19x19 (campaign19 generation 1) 0.47 -> 0.32-0.39; about 10% fewer
    evaluations a second (2.5x fp32's speed against 2.7-3.0x). ``default_fp32=False`` quantizes every node.

    Activation ranges are MinMax unless ``percentile`` (e.g. 99.999) is given. ``full_range`` makes 8-bit
    weights instead of 7-bit ones: such a file is played in fp32 on an x86 CPU without VNNI (see the module
    docstring). Together, on top of the default, they bring the score lead within the issue's 0.3 points
    (median |int8 - fp32| on 500 real positions: 9x9 0.10, 13x13 0.26, 19x19 0.22; 7-bit MinMax: 0.19,
    0.35-0.47, 0.32-0.39), at the same speed on a VNNI CPU. On the old every-layer int8, percentile and
    entropy calibration alone had left the error where it was. Percentile calibration takes the positions
    of one board size.
    """
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    fp32_path = Path(fp32_path)
    if not fp32_path.is_file():
        raise NetError(f"network file not found: {fp32_path}")
    out_path = Path(out_path) if out_path is not None else int8_path_for(fp32_path)
    arrays = _as_plane_arrays(calibration)
    src = onnx.load(str(fp32_path))
    meta = {p.key: p.value for p in src.metadata_props}
    if "azgo_format" not in meta:
        raise NetError(f"{fp32_path} is not an azgo network (no azgo metadata)")
    if meta.get("azgo_precision", "fp32") != "fp32":
        raise NetError(f"{fp32_path} is already quantized ({meta['azgo_precision']})")
    keep_fp32 = list(keep_fp32)
    if percentile is not None:
        if not 0 < percentile <= 100:
            raise NetError(f"percentile must be in (0, 100], got {percentile}")
        if len({a.shape[-1] for a in arrays}) > 1:
            raise NetError("percentile calibration takes the positions of one board size")
    unknown = sorted(set(keep_fp32) - {n.name for n in src.graph.node})
    if unknown:
        raise NetError(f"{fp32_path} has no node named {', '.join(unknown)} (keep_fp32)")
    with tempfile.TemporaryDirectory(prefix="azgo-quant-") as tmp:
        pre = Path(tmp) / "pre.onnx"
        raw = Path(tmp) / "int8.onnx"
        _preprocess(fp32_path, pre)
        exclude = sorted(set(keep_fp32) | set(default_fp32_nodes(onnx.load(str(pre)).graph) if default_fp32 else ()))
        ops = {"op_types_to_quantize": list(MATRIX_OPS)} if default_fp32 else {}
        if percentile is not None:
            ops["extra_options"] = {"CalibPercentile": float(percentile)}
        quantize_static(
            str(pre),
            str(raw),
            _PlanesReader(arrays, batch, equal=percentile is not None),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax if percentile is None else CalibrationMethod.Percentile,
            reduce_range=REDUCE_RANGE and not full_range,
            nodes_to_exclude=exclude,
            **ops,
        )
        model = onnx.load(str(raw))
    meta["azgo_precision"] = "int8"
    meta["azgo_calibration"] = _calibration_record(fp32_path, arrays, calibration_note, keep_fp32, default_fp32,
                                                   full_range, percentile)
    del model.metadata_props[:]
    for k, v in meta.items():
        model.metadata_props.add(key=k, value=v)
    with atomic_target(out_path) as tmp:  # a reader (a self-play worker, a killed loop) never sees half a file
        onnx.save(model, str(tmp))
    return out_path


def compare_int8(
    fp32_path: str | os.PathLike,
    int8_path: str | os.PathLike,
    planes: np.ndarray,
    legal: np.ndarray | None = None,
    emulate: bool = False,
) -> dict[str, float]:
    """Accuracy of the int8 network against its fp32 source on ``planes`` ``[n, 26, N, N]``.

    ``emulate``: run the int8 file's QDQ graph unfused (no graph optimisation), so that every quantized
    product is computed in fp32 from the dequantized 8-bit values: what a CPU whose int8 kernel is exact
    (VNNI) computes, up to float rounding, measured on any CPU (an 8-bit copy run fused on a CPU without VNNI
    saturates instead; see the module docstring). Checked against a VNNI CPU's own figures for the shipped
    9x9 and 19x19 copies: score lead median 0.148 and 0.230 emulated, 0.15 and 0.23 measured there.

    ``legal`` ``[n, N*N+1]`` bool (default: every move legal). Returns ``top1_agreement`` (fraction
    of positions where both pick the same highest-probability move), ``value_mae`` and
    ``value_max_abs`` (value from the side to move), ``winrate_mae``/``winrate_median_abs`` (the same on the
    0..1 winrate scale), ``lead_mae``/``lead_median_abs``/``lead_max_abs`` (score lead, points; with a score
    head), ``policy_max_abs`` (largest probability
    difference), ``policy_l1_mean`` (mean L1 distance between the two distributions) and
    ``positions``. Use real positions: random nets and random planes make top-1 fragile.
    """
    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator

    planes = np.ascontiguousarray(planes, dtype=np.float32)
    n = planes.shape[-1]
    if legal is None:
        legal = np.ones((len(planes), n * n + 1), dtype=bool)
    a = OnnxEvaluator(fp32_path, EvalConfig(precision="fp32"))
    b = OnnxEvaluator(int8_path, EvalConfig(precision="int8"))
    if emulate:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = 1
        so.log_severity_level = 3
        b._session = ort.InferenceSession(str(b.path), so, providers=["CPUExecutionProvider"])
    ea, eb = a.evaluate(planes, legal), b.evaluate(planes, legal)
    dv = np.abs(ea.value.astype(np.float64) - eb.value)
    dp = np.abs(ea.policy.astype(np.float64) - eb.policy)
    out = {
        "positions": float(len(planes)),
        "top1_agreement": float(np.mean(ea.policy.argmax(1) == eb.policy.argmax(1))),
        "value_mae": float(dv.mean()),
        "value_max_abs": float(dv.max()),
        "winrate_mae": float(dv.mean() / 2),  # winrate = (value + 1) / 2
        "winrate_median_abs": float(np.median(dv) / 2),
        "policy_max_abs": float(dp.max()),
        "policy_l1_mean": float(dp.sum(1).mean()),
    }
    if ea.score is not None and eb.score is not None:
        ds = np.abs(ea.score.astype(np.float64) - eb.score)
        out.update(lead_mae=float(ds.mean()), lead_median_abs=float(np.median(ds)), lead_max_abs=float(ds.max()))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m azgo.nets.quantize",
                                 description="Make a static QDQ int8 copy of an azgo network.")
    ap.add_argument("net", help="fp32 .onnx file")
    ap.add_argument("--calibration", required=True, nargs="+",
                    help=".npy files of float32 planes [n, 26, N, N] from real positions")
    ap.add_argument("--out", help="output path (default: <name>.int8.onnx beside the input; with --analysis "
                                  "<name>.int8-vnni.onnx)")
    ap.add_argument("--note", default="", help="free text stored in azgo_calibration")
    ap.add_argument("--keep-fp32", action="append", default=[], metavar="NODE",
                    help="a graph node left unquantized (repeatable), e.g. /stem/conv/Conv")
    ap.add_argument("--int8-everywhere", action="store_true",
                    help="quantize the stem, the value/score/ownership head and the global-pooling matrices too "
                         "(by default they stay fp32: see default_fp32_nodes)")
    ap.add_argument("--analysis", action="store_true",
                    help="8-bit weights and percentile (99.999) activation ranges: score leads within about 0.25 "
                         "points of fp32's; written as <name>.int8-vnni.onnx, which azgo analysis uses in place of "
                         "<name>.int8.onnx on a CPU with VNNI")
    args = ap.parse_args(argv)
    arrays = [np.load(f) for f in args.calibration]
    try:
        out = quantize_int8(args.net, arrays, args.out or (int8_vnni_path_for(args.net) if args.analysis else None),
                            calibration_note=args.note, keep_fp32=args.keep_fp32,
                            default_fp32=not args.int8_everywhere, full_range=args.analysis,
                            percentile=ANALYSIS_PERCENTILE if args.analysis else None)
    except NetError as e:
        ap.exit(2, f"error: {e}\n")
    holdout = arrays[0][-min(len(arrays[0]), 256):]
    report = compare_int8(args.net, out, holdout)
    print(f"wrote {out}; on {int(report['positions'])} calibration positions: "
          f"top-1 agreement {report['top1_agreement']:.3f}, value MAE {report['value_mae']:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
