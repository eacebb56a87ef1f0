"""`OnnxEvaluator`: run an azgo ONNX network with onnxruntime (numpy + onnxruntime only, no torch).

``evaluate(planes [B, 26, N, N] float32, legal [B, N*N+1] bool, keys=None)`` returns an `Evaluation`:
``policy`` probabilities ``[B, N*N+1]`` (index ``row*N + col``, pass last; illegal moves exactly 0,
the rest renormalised; softmax in numpy), ``value`` ``[B]`` in [-1, 1] from the side to move's
perspective (+1 = side to move wins), ``ownership`` ``[B, N*N]`` (+1 = side to move owns the point)
and ``score`` ``[B]`` (expected score margin of the side to move, points) when the network has
those heads, else None.

Symmetries (:mod:`azgo.engine.symmetry`): ``"none"``; ``"random"`` (one of the 8 per position,
outputs mapped back); ``"average"`` (all 8, the mean of the 8 masked policies and of
value/ownership/score). Cache: a bounded LRU keyed by the caller's position hash (``keys``) and the
board size; an entry is reused only when the legal mask is identical, so a hit returns exactly the
numbers computed before (with ``"random"``, the symmetry drawn then).

Threads - measured on the project machine (2 vCPU AMD EPYC Zen 4, idle; ORT 1.31.1; the random
b6c64 ``nets/default.onnx``; positions/s, median of 5 interleaved 0.3 s trials, spinning off/on):

=============  ==========  ==========  ==========  ==========
board, batch   1 thr off   1 thr on    2 thr off   2 thr on
=============  ==========  ==========  ==========  ==========
9x9, b=1       1147        1157        1097        1576
9x9, b=16      1269        1299        2157        2254
19x19, b=1     286         289         437         492
19x19, b=16    301         311         552         576
=============  ==========  ==========  ==========  ==========

Two threads without spinning gain nothing for single 9x9 evaluations and 1.5-1.8x for 19x19 or
batches, *if* the second core is free; with spinning on, a second busy process makes two threads
about 2x slower than one (project measurements, 2 threads spinning vs 1: 672 vs 1399 pos/s).
The project runs one process per core (self-play workers, or GTP next to an opponent engine), so
the default is ``threads=1`` with spinning off; a lone GTP process on 19x19 may use ``threads=2``.

Device (``EvalConfig.device``): "cpu" (the default), "cuda" / "cuda:N" or "auto". The execution
providers come from :func:`choose_providers`, a pure function of the device and
``onnxruntime.get_available_providers()``: CUDA is ``[("CUDAExecutionProvider", {"device_id": N}),
"CPUExecutionProvider"]`` (onnxruntime puts any node CUDA cannot run on the CPU); "auto" takes CUDA
when this onnxruntime has the provider (the ``onnxruntime-gpu`` build, ``pip install "azgo[gpu]"``),
else the CPU; an explicit "cuda" without the provider, or a session that could not start it (no GPU,
no CUDA/cuDNN libraries), raises `NetError` saying so. Unless the device is "cpu", the provider that
runs is said once per process on stderr when the network loads. Not measured on a GPU here (the
project machines have none).
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import onnxruntime as ort

from azgo.engine import symmetry as sym
from azgo.engine.planes import FEATURE_VERSION, NUM_PLANES
from azgo.nets.card import file_sha256
from azgo.nets.registry import NetError

__all__ = ["EvalConfig", "Evaluation", "NetError", "OnnxEvaluator", "choose_providers", "masked_softmax",
           "parse_device"]

SYMMETRY_MODES = ("none", "random", "average")
PRECISIONS = ("fp32", "int8", "auto", "vnni")
SUPPORTED_FORMAT = "1"
INT8_SUFFIX = ".int8.onnx"
INT8_VNNI_SUFFIX = ".int8-vnni.onnx"


def int8_sibling(path: str | os.PathLike) -> Path:
    """The int8 copy's file beside an fp32 network: ``net.onnx`` -> ``net.int8.onnx`` (the one naming rule).
    Its weights are 7-bit, so it runs in int8 on every CPU."""
    p = Path(path)
    return p.with_name(p.stem + INT8_SUFFIX)


def int8_vnni_sibling(path: str | os.PathLike) -> Path:
    """The optional second int8 copy beside an fp32 network: ``net.onnx`` -> ``net.int8-vnni.onnx``, with
    8-bit weights. It is closer to fp32 (winrate, score lead) at the same speed, but only on a CPU with VNNI
    (see `int8_saturates`); precision "vnni" (``azgo analysis``'s default) uses it there in place of
    ``net.int8.onnx``. Play keeps the 7-bit copy: in 40 games on 13x13 the 8-bit copy was not shown as strong."""
    p = Path(path)
    return p.with_name(p.stem + INT8_VNNI_SUFFIX)


CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
GPU_EXTRA_HINT = ('install onnxruntime-gpu in place of onnxruntime: python3 -m pip install "azgo[gpu]" '
                  "(if onnxruntime.get_available_providers() still lacks CUDAExecutionProvider: "
                  "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu)")


def parse_device(spec: str) -> tuple[str, int | None]:
    """``("auto" | "cpu" | "cuda", GPU index or None)`` from "auto", "cpu", "cuda" or "cuda:N".

    Raises ValueError for anything else.
    """
    kind, sep, index = str(spec).strip().lower().partition(":")
    if kind in ("auto", "cpu", "cuda") and not sep:
        return kind, None
    if kind == "cuda" and index.isdigit():
        return "cuda", int(index)
    raise ValueError(f"unknown device {spec!r}: use auto, cpu, cuda or cuda:N")


def choose_providers(device: str, available: Sequence[str]) -> list:
    """The onnxruntime ``providers`` list for ``device`` when ``available`` providers exist.

    cpu -> ``["CPUExecutionProvider"]``; cuda[:N] -> ``[("CUDAExecutionProvider", {"device_id": N}),
    "CPUExecutionProvider"]`` (N = 0 when not given), `NetError` when ``available`` has no
    CUDAExecutionProvider; auto -> the CUDA list when it is available, else the CPU one.
    """
    kind, index = parse_device(device)
    if kind != "cpu" and CUDA_PROVIDER in available:
        return [(CUDA_PROVIDER, {"device_id": index or 0}), CPU_PROVIDER]
    if kind == "cuda":
        raise NetError(f"device {device!r}: this onnxruntime has no {CUDA_PROVIDER} "
                       f"(available: {', '.join(available) or 'none'}); {GPU_EXTRA_HINT}; "
                       "or use --device cpu / auto")
    return [CPU_PROVIDER]


_ANNOUNCED: set[tuple[str, str]] = set()

VNNI_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


def int8_saturates(cpuinfo: str | None = None) -> bool:
    """Whether onnxruntime's int8 kernel on this CPU saturates with full-range int8 weights: an x86 CPU
    without VNNI (its uint8 x int8 products are summed in pairs in 16 bits, ``vpmaddubsw``). False where
    it cannot tell (no ``/proc/cpuinfo``) and on other architectures. ``cpuinfo``: that file's text."""
    import platform
    if cpuinfo is None:
        if platform.machine().lower() not in ("x86_64", "amd64", "i686", "x86"):
            return False
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return False
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), None)
    return flags is not None and not any(f in flags for f in VNNI_FLAGS)


def int8_full_range(metadata: dict[str, str]) -> bool:
    """Whether an int8 network's weights use the full int8 range (made before azgo quantized in 7 bits,
    see :mod:`azgo.nets.quantize`): such a file loses accuracy where `int8_saturates`."""
    return metadata.get("azgo_precision") == "int8" and "reduce_range" not in metadata.get("azgo_calibration", "")


def _made_from(session, fp32_path: Path) -> bool:
    """Whether the int8 model of ``session`` records ``fp32_path``'s sha256 as its source (its
    ``azgo_calibration`` metadata, written by :mod:`azgo.nets.quantize`)."""
    import json
    meta = session.get_modelmeta().custom_metadata_map
    try:
        source = json.loads(meta.get("azgo_calibration", "{}")).get("fp32_sha256")
    except ValueError:
        return False
    return source == file_sha256(fp32_path)


def _announce(device: str, provider: str, why: str) -> None:
    """Say once per process (per device and provider) which provider runs the network."""
    if (device, provider) not in _ANNOUNCED:
        _ANNOUNCED.add((device, provider))
        print(f"azgo: network on onnxruntime {provider} (--device {device}{why})", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class EvalConfig:
    """How an `OnnxEvaluator` runs its network.

    threads: onnxruntime intra-op threads (1 is the measured best for one process per core).
    allow_spinning: let idle ORT worker threads spin (faster only when the cores are otherwise idle).
    symmetry: "none" | "random" | "average" (all 8 symmetries, 8x the work).
    cache_size: LRU entries keyed by caller position hashes; 0 turns the cache off.
    precision: "fp32" | "int8" | "auto" | "vnni". With "int8" the evaluator loads the static QDQ int8
        model: the given file if it is one, else ``<name>.int8.onnx`` beside it (made by
        :mod:`azgo.nets.quantize`). "auto": int8 when that model is beside the network and the network runs
        on the CPU, else the file as it is (``precision`` and ``path`` of the evaluator say which). "vnni"
        (analysis): ``<name>.int8-vnni.onnx`` (8-bit weights, closer to fp32's winrate and score lead at the
        same speed) where it lies beside the network, was made from it and this CPU has VNNI; where it lies
        beside the network on a CPU without VNNI, the fp32 network; else (no such copy) as "auto".
    seed: seed of the generator that draws "random" symmetries (None = fresh entropy).
    device: "cpu" | "auto" | "cuda" | "cuda:N" (see the module docstring, :func:`choose_providers`).
    """

    threads: int = 1
    allow_spinning: bool = False
    symmetry: str = "none"
    cache_size: int = 0
    precision: str = "fp32"
    seed: int | None = None
    device: str = "cpu"

    def __post_init__(self) -> None:
        parse_device(self.device)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {self.threads}")
        if self.symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {self.symmetry!r}")
        if self.cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {self.cache_size}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Network outputs for a batch of B positions on an N x N board, all for the side to move.

    policy: float32 ``[B, N*N+1]`` probabilities (index row*N+col, pass last; illegal moves 0).
    value: float32 ``[B]`` in [-1, 1], +1 = the side to move wins.
    ownership: float32 ``[B, N*N]`` in [-1, 1] (+1 = owned by the side to move), or None.
    score: float32 ``[B]`` expected final score margin of the side to move in points, or None.
    """

    policy: np.ndarray
    value: np.ndarray
    ownership: np.ndarray | None
    score: np.ndarray | None

    def __len__(self) -> int:
        return len(self.value)


@dataclass(frozen=True, eq=False)
class _Entry:
    legal: np.ndarray
    policy: np.ndarray
    value: float
    ownership: np.ndarray | None
    score: float


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over the legal entries of each row (float32 ``[B, M]``); illegal entries are exactly 0.

    Every row needs at least one legal entry (pass always is in Go).
    """
    masked = np.where(legal, logits.astype(np.float32, copy=False), np.float32(-np.inf))
    masked -= masked.max(axis=1, keepdims=True)
    e = np.exp(masked)
    e /= e.sum(axis=1, keepdims=True)
    return e


class OnnxEvaluator:
    """Evaluates positions with an azgo ONNX network through onnxruntime (on the CPU, or CUDA).

    Construction checks the file: it must exist, be ONNX, carry azgo metadata, have the feature
    version this azgo builds (:data:`azgo.engine.planes.FEATURE_VERSION`) and the requested
    precision; otherwise `NetError` says which of these failed.
    """

    def __init__(self, path: str | os.PathLike, config: EvalConfig | None = None) -> None:
        self.config = config or EvalConfig()
        want = self.config.precision
        on_cpu = choose_providers(self.config.device, ort.get_available_providers())[0] == CPU_PROVIDER
        analysis_copy = (want == "vnni" and on_cpu and not Path(path).name.endswith((INT8_SUFFIX, INT8_VNNI_SUFFIX))
                         and int8_vnni_sibling(path).is_file())
        vnni = analysis_copy and not int8_saturates()
        # An analysis copy ships where the 7-bit copy's figures are not close enough to fp32's for analysis; on a
        # CPU without VNNI (where the 8-bit copy cannot run in int8) analysis then runs the fp32 network itself:
        # there the 7-bit copy is only 1.4-1.8x faster (nets/quantize.py), and an 8-bit copy with unsigned weights
        # and fp32 blocks, as close as the VNNI copy, was no faster than fp32 (docs/USING.md, int8 accuracy).
        exact = analysis_copy and not vnni
        if want in ("auto", "vnni"):  # int8 where it is beside the net and the net runs on the CPU
            want = "int8" if vnni or (on_cpu and int8_sibling(path).is_file() and not exact) else "any"
        self.path = int8_vnni_sibling(path) if vnni else self._choose_file(Path(path), want)
        self._want_precision = want
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = self.config.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        spin = "1" if self.config.allow_spinning else "0"
        so.add_session_config_entry("session.intra_op.allow_spinning", spin)
        so.add_session_config_entry("session.inter_op.allow_spinning", spin)
        so.log_severity_level = 3
        device = self.config.device
        providers = choose_providers(device, ort.get_available_providers())
        try:
            self._session = ort.InferenceSession(str(self.path), so, providers=providers)
        except Exception as exc:  # ORT raises several private exception types for bad files
            raise NetError(f"{self.path} is not a loadable ONNX model: {exc}") from exc
        if self.path == int8_vnni_sibling(path) and not _made_from(self._session, Path(path)):
            fallback = int8_sibling(path) if int8_sibling(path).is_file() else Path(path)
            print(f"azgo: {self.path.name} was not made from {Path(path).name} (another network's copy); "
                  f"playing {fallback.name}", file=sys.stderr, flush=True)
            self.path = fallback
            if fallback == Path(path):
                self._want_precision = "any"
            self._session = ort.InferenceSession(str(self.path), so, providers=providers)
        self.provider: str = self._session.get_providers()[0]
        """The execution provider that runs the network ("CPUExecutionProvider", "CUDAExecutionProvider")."""
        if providers[0] != CPU_PROVIDER and self.provider != CUDA_PROVIDER:
            # onnxruntime-gpu is installed but could not start CUDA (no GPU, driver, CUDA or cuDNN)
            if parse_device(device)[0] == "cuda":
                raise NetError(f"device {device!r}: onnxruntime has {CUDA_PROVIDER} but could not start it "
                               "(no usable NVIDIA GPU, driver, CUDA or cuDNN libraries); use --device cpu / auto")
            _announce(device, self.provider, ": CUDA could not start")
        elif device != "cpu":
            why = "" if self.provider == CUDA_PROVIDER else f": no {CUDA_PROVIDER} in this onnxruntime"
            gpu = f", GPU {providers[0][1]['device_id']}" if self.provider == CUDA_PROVIDER else ""
            _announce(device, self.provider, gpu + why)
        self.metadata: dict[str, str] = dict(self._session.get_modelmeta().custom_metadata_map)
        if int8_full_range(self.metadata) and int8_saturates():
            if self.config.precision == "auto" and self.path != Path(path):  # the fp32 network instead
                print(f"azgo: {self.path.name} has full-range int8 weights, which lose the network on this CPU "
                      f"(no VNNI); playing {Path(path).name} in fp32 (re-quantize with python -m "
                      "azgo.nets.quantize for int8 speed)", file=sys.stderr, flush=True)
                self.path, self._want_precision = Path(path), "any"
                self._session = ort.InferenceSession(str(self.path), so, providers=providers)
                self.metadata = dict(self._session.get_modelmeta().custom_metadata_map)
            else:
                print(f"azgo: warning: {self.path.name} has full-range int8 weights, which lose accuracy on this "
                      "CPU (no VNNI); re-quantize it with python -m azgo.nets.quantize", file=sys.stderr, flush=True)
        self._check_metadata()
        inputs = {i.name: i for i in self._session.get_inputs()}
        if "planes" not in inputs:
            raise NetError(f"{self.path}: network has no input named 'planes' (inputs: {sorted(inputs)})")
        outputs = [o.name for o in self._session.get_outputs()]
        for needed in ("policy", "value"):
            if needed not in outputs:
                raise NetError(f"{self.path}: network has no '{needed}' output (outputs: {outputs})")
        self._outputs = [n for n in ("policy", "value", "ownership", "score") if n in outputs]
        self._rng = np.random.default_rng(self.config.seed)
        self._cache: OrderedDict[tuple[int, int], _Entry] = OrderedDict()
        self.cache_hits = 0
        self.cache_misses = 0
        self.positions_evaluated = 0

    # ------------------------------------------------------------------ loading and checks

    @staticmethod
    def _choose_file(path: Path, precision: str) -> Path:
        if not path.exists():
            raise NetError(f"network file not found: {path}")
        if path.is_dir():
            raise NetError(f"network path is a directory, not an .onnx file: {path}")
        if precision == "int8" and not path.name.endswith((INT8_SUFFIX, INT8_VNNI_SUFFIX)):
            sibling = int8_sibling(path)
            if sibling.is_file():
                return sibling
            # the file itself may still be int8 under another name; checked after loading
        return path

    def _check_metadata(self) -> None:
        meta, path = self.metadata, self.path
        if "azgo_format" not in meta:
            raise NetError(f"{path} is not an azgo network (no azgo metadata in the ONNX file)")
        if meta["azgo_format"] != SUPPORTED_FORMAT:
            raise NetError(f"{path}: azgo_format {meta['azgo_format']!r} is not supported "
                           f"(this azgo reads format {SUPPORTED_FORMAT})")
        version = meta.get("azgo_feature_version")
        if version != str(FEATURE_VERSION):
            raise NetError(f"{path}: network was trained on feature version {version}, "
                           f"this azgo builds version {FEATURE_VERSION}")
        try:
            self.min_size = int(meta.get("azgo_min_size", "7"))
            self.max_size = int(meta.get("azgo_max_size", "19"))
        except ValueError as exc:
            raise NetError(f"{path}: bad azgo_min_size/azgo_max_size metadata: {exc}") from exc
        precision = meta.get("azgo_precision", "fp32")
        self.precision = precision
        """The precision of the network in use ("fp32" or "int8")."""
        want = self._want_precision
        if want != "any" and precision != want:
            if want == "int8":
                raise NetError(
                    f"{path} is a {precision} network and no int8 model was found beside it "
                    f"(expected {int8_sibling(path)}); make one with "
                    f"`python -m azgo.nets.quantize {path} --calibration planes.npy`")
            raise NetError(f"{path} is a {precision} network; use EvalConfig(precision={precision!r})")

    @property
    def on_gpu(self) -> bool:
        """Whether the network runs on CUDA (callers batch more leaves per call there)."""
        return self.provider == CUDA_PROVIDER

    @property
    def file_sha256(self) -> str:
        """The sha256 of the file that runs (the int8 copy when that is what runs): the hash its card gives
        (``sha256``, ``int8.sha256`` or ``int8_vnni.sha256``), so a log names the network exactly."""
        if getattr(self, "_file_sha256", None) is None:
            self._file_sha256 = file_sha256(self.path)
        return self._file_sha256

    def describe(self) -> str:
        """``large.int8.onnx (int8, sha256 bd48e773f185)``: the file, its precision and its hash's first 12 digits."""
        return f"{Path(self.path).name} ({getattr(self, 'precision', 'fp32')}, sha256 {self.file_sha256[:12]})"

    @property
    def net_name(self) -> str:
        """Size name from the metadata, e.g. "b6c64"."""
        return self.metadata.get("azgo_net", "?")

    @property
    def feature_version(self) -> int:
        return int(self.metadata["azgo_feature_version"])

    @property
    def heads(self) -> tuple[str, ...]:
        """Output heads this network has, in ("policy", "value", "ownership", "score") order."""
        return tuple(self._outputs)

    # ------------------------------------------------------------------ evaluation

    def evaluate(self, planes: np.ndarray, legal: np.ndarray, keys: Sequence[int] | None = None) -> Evaluation:
        """Evaluate B positions; see the module docstring for shapes and perspective.

        planes: float32 ``[B, 26, N, N]`` (other dtypes are converted); legal: bool ``[B, N*N+1]``
        with at least one legal move per row; keys: optional B ints (position hashes) for the cache.
        """
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        if planes.ndim != 4:
            raise NetError(f"planes must be [batch, {NUM_PLANES}, N, N], got shape {planes.shape}")
        b, c, h, w = planes.shape
        if c != NUM_PLANES:
            raise NetError(f"network expects {NUM_PLANES} input planes (feature version "
                           f"{FEATURE_VERSION}), got {c}")
        if h != w:
            raise NetError(f"board must be square, got {h}x{w} planes")
        n = h
        if not self.min_size <= n <= self.max_size:
            raise NetError(f"board size {n}x{n} is outside this network's range "
                           f"{self.min_size}x{self.min_size}..{self.max_size}x{self.max_size}")
        legal = np.asarray(legal)
        if legal.dtype != np.bool_:
            legal = legal.astype(bool)
        if legal.shape != (b, n * n + 1):
            raise ValueError(f"legal must have shape {(b, n * n + 1)}, got {legal.shape}")
        if b and not legal.any(axis=1).all():
            raise ValueError(f"positions {np.flatnonzero(~legal.any(axis=1)).tolist()} have no legal move")
        if keys is not None and len(keys) != b:
            raise ValueError(f"got {len(keys)} keys for {b} positions")

        has_own, has_score = "ownership" in self._outputs, "score" in self._outputs
        policy = np.empty((b, n * n + 1), np.float32)
        value = np.empty(b, np.float32)
        ownership = np.empty((b, n * n), np.float32) if has_own else None
        score = np.empty(b, np.float32) if has_score else None

        use_cache = self.config.cache_size > 0 and keys is not None
        todo = []
        if use_cache:
            for i, key in enumerate(keys):
                ck = (int(key), n)
                entry = self._cache.get(ck)
                if entry is not None and np.array_equal(entry.legal, legal[i]):
                    self._cache.move_to_end(ck)
                    self.cache_hits += 1
                    policy[i], value[i] = entry.policy, entry.value
                    if has_own:
                        ownership[i] = entry.ownership
                    if has_score:
                        score[i] = entry.score
                else:
                    todo.append(i)
            self.cache_misses += len(todo)
        else:
            todo = list(range(b))

        if todo:
            idx = np.asarray(todo)
            sub = planes if len(todo) == b else planes[idx]
            sub_legal = legal if len(todo) == b else legal[idx]
            p, v, o, s = self._compute(sub, sub_legal, n)
            policy[idx], value[idx] = p, v
            if has_own:
                ownership[idx] = o
            if has_score:
                score[idx] = s
            if use_cache:
                for j, i in enumerate(todo):
                    ck = (int(keys[i]), n)
                    self._cache[ck] = _Entry(
                        legal=legal[i].copy(), policy=p[j].copy(), value=float(v[j]),
                        ownership=None if o is None else o[j].copy(),
                        score=float(s[j]) if s is not None else 0.0)
                    self._cache.move_to_end(ck)
                while len(self._cache) > self.config.cache_size:
                    self._cache.popitem(last=False)
        return Evaluation(policy=policy, value=value, ownership=ownership, score=score)

    def _run(self, x: np.ndarray) -> dict[str, np.ndarray]:
        self.positions_evaluated += len(x)
        return dict(zip(self._outputs, self._session.run(self._outputs, {"planes": x})))

    def _compute(self, planes: np.ndarray, legal: np.ndarray, n: int):
        """Evaluate without the cache: (policy probs, value, ownership|None, score|None)."""
        mode = self.config.symmetry
        if mode == "none":
            out = self._run(planes)
            return (masked_softmax(out["policy"], legal), out["value"],
                    out.get("ownership"), out.get("score"))
        if mode == "random":
            ks = self._rng.integers(0, sym.NUM_SYMMETRIES, size=len(planes))
            x = np.empty_like(planes)
            for k in np.unique(ks):
                sel = ks == k
                x[sel] = sym.apply_planes(planes[sel], int(k))
            out = self._run(x)
            logits = np.empty_like(out["policy"])
            own = np.empty_like(out["ownership"]) if "ownership" in out else None
            for k in np.unique(ks):
                sel, inv = ks == k, sym.invert(int(k))
                logits[sel] = sym.apply_policy(out["policy"][sel], inv, n)
                if own is not None:
                    own[sel] = sym.apply_points(out["ownership"][sel], inv, n)
            return masked_softmax(logits, legal), out["value"], own, out.get("score")
        # average over all 8 symmetries, one batch of 8*B
        bsz = len(planes)
        x = np.concatenate([sym.apply_planes(planes, k) for k in range(sym.NUM_SYMMETRIES)])
        out = self._run(x)
        policy = np.zeros((bsz, n * n + 1), np.float64)
        own = np.zeros((bsz, n * n), np.float64) if "ownership" in out else None
        for k in range(sym.NUM_SYMMETRIES):
            rows, inv = slice(k * bsz, (k + 1) * bsz), sym.invert(k)
            policy += masked_softmax(sym.apply_policy(out["policy"][rows], inv, n), legal)
            if own is not None:
                own += sym.apply_points(out["ownership"][rows], inv, n)
        m = sym.NUM_SYMMETRIES
        value = out["value"].reshape(m, bsz).mean(axis=0, dtype=np.float64)
        score = out["score"].reshape(m, bsz).mean(axis=0, dtype=np.float64) if "score" in out else None
        return (
            (policy / m).astype(np.float32),
            value.astype(np.float32),
            None if own is None else (own / m).astype(np.float32),
            None if score is None else score.astype(np.float32),
        )

    # ------------------------------------------------------------------ cache

    def cache_info(self) -> dict[str, int]:
        """``{"hits", "misses", "size", "capacity"}`` of the position cache."""
        return {"hits": self.cache_hits, "misses": self.cache_misses,
                "size": len(self._cache), "capacity": self.config.cache_size}

    def is_cached(self, key: int, n: int) -> bool:
        """Whether the position hash ``key`` on an ``n x n`` board has a cache entry."""
        return (int(key), int(n)) in self._cache

    def clear_cache(self) -> None:
        """Drop every cached evaluation (counters are kept)."""
        self._cache.clear()

    def __repr__(self) -> str:
        return f"OnnxEvaluator({str(self.path)!r}, net={self.net_name}, {self.config})"
