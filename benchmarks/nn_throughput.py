"""Network throughput on the CPU: onnxruntime vs torch eager, 1 vs 2 threads, int8 QDQ vs fp32.

Usage::

    python benchmarks/nn_throughput.py            # full grid (~5 min on 2 cores)
    python benchmarks/nn_throughput.py --quick    # b6c64 only, batches 1 and 16 (< 1 min)

For each named net size (b6c64, b10c128) and board size (9x9, 19x19) it builds a random-weight
`AzNet` (batch-norm statistics randomised), exports it with the project's export code and
measures positions/s for batch sizes 1, 8, 16, 32, 64 and 1 or 2 intra-op threads:

* ``ort``   onnxruntime ``session.run`` on the fp32 model (spinning off, as `OnnxEvaluator` runs it);
* ``torch`` torch eager, ``torch.inference_mode()``, ``torch.set_num_threads`` = same thread count;
  ``OMP_WAIT_POLICY=PASSIVE`` is set before torch is imported (unless already set), the counterpart
  of ORT's spinning off: with torch's default spin-waiting OpenMP threads, 2 torch threads on this
  2-core machine dropped to 2-40 positions/s whenever another process or ORT's threads held a core;
* ``int8``  onnxruntime on the static QDQ int8 model (1 thread; calibrated on random planes, which is
  fine for speed but not for accuracy);
* ``eval``  the full `OnnxEvaluator.evaluate` (fp32, 1 thread, masked softmax in numpy), to show the
  Python-side overhead.

Each cell is the median of several trials, each trial repeating the call for at least ``--trial-s``
seconds after a warm-up; all modes of one (net, board, batch) are interleaved within every trial
so that background load hits them alike. The run ends with exactly three ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="b6c64 only, batches 1 and 16, short trials")
    ap.add_argument("--trials", type=int, default=None, help="trials per cell (default 5, quick 3)")
    ap.add_argument("--trial-s", type=float, default=None, help="seconds per trial (default 0.3, quick 0.2)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    import os

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede the torch import
    import onnxruntime as ort
    import torch

    from azgo.nets.evaluator import EvalConfig, OnnxEvaluator
    from azgo.nets.quantize import quantize_int8
    from azgo.training.export import export_onnx, random_planes
    from azgo.training.model import build_model, count_parameters, randomize_batchnorm

    quick = args.quick
    nets = ["b6c64"] if quick else ["b6c64", "b10c128"]
    boards = [9, 19]
    batches = [1, 16] if quick else [1, 8, 16, 32, 64]
    threads = [1, 2]
    trials = args.trials or (3 if quick else 5)
    trial_s = args.trial_s or (0.2 if quick else 0.3)
    int8_nets = {"b6c64"} if quick else set(nets)

    print(f"# nn_throughput {'--quick ' if quick else ''}| onnxruntime {ort.__version__} | torch {torch.__version__} "
          f"| numpy {np.__version__} | cpus {os.cpu_count()} | trials {trials} x {trial_s}s, medians "
          f"| OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} | load avg at start {os.getloadavg()[0]:.2f}")
    rng = np.random.default_rng(0)
    results: dict[tuple, float] = {}
    tmpdir = tempfile.TemporaryDirectory(prefix="azgo-bench-")
    tmp = Path(tmpdir.name)

    def session(path, nthreads):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = nthreads
        so.inter_op_num_threads = 1
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.log_severity_level = 3
        return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])

    def timed(fn, batch):
        t0 = time.perf_counter()
        calls = 0
        while True:
            fn()
            calls += 1
            el = time.perf_counter() - t0
            if el >= trial_s:
                return calls * batch / el

    for net in nets:
        model = build_model(net, seed=0)
        randomize_batchnorm(model, seed=1)
        model.eval()
        fp32 = export_onnx(model, tmp / f"{net}.onnx", net_name=net, provenance={"method": "benchmark"})
        int8 = None
        if net in int8_nets:
            calib = [random_planes(32, n, rng) for n in boards]
            int8 = quantize_int8(fp32, calib, tmp / f"{net}.int8.onnx", calibration_note="random planes (benchmark)")
        sessions = {t: session(fp32, t) for t in threads}
        s8 = session(int8, 1) if int8 else None
        evaluator = OnnxEvaluator(fp32, EvalConfig(threads=1))
        print(f"\n## {net}: {count_parameters(model) / 1e6:.2f} M params, fp32 {fp32.stat().st_size / 1e6:.2f} MB"
              + (f", int8 {int8.stat().st_size / 1e6:.2f} MB" if int8 else ""))
        for n in boards:
            for b in batches:
                x = random_planes(b, n, rng)
                xt = torch.from_numpy(x)
                legal = np.ones((b, n * n + 1), bool)
                modes = {}
                for t in threads:
                    modes[("ort", t)] = (lambda s=sessions[t]: s.run(None, {"planes": x}), None)

                    def run_torch(t=t):
                        with torch.inference_mode():
                            model(xt)
                    modes[("torch", t)] = (run_torch, t)
                if s8 is not None:
                    modes[("int8", 1)] = (lambda: s8.run(None, {"planes": x}), None)
                modes[("eval", 1)] = (lambda: evaluator.evaluate(x, legal), None)
                samples = {m: [] for m in modes}
                for fn, tt in modes.values():  # warm-up
                    torch.set_num_threads(tt or 1)
                    fn()
                for _ in range(trials):
                    for m, (fn, tt) in modes.items():
                        torch.set_num_threads(tt or 1)
                        samples[m].append(timed(fn, b))
                for (mode, t), vals in samples.items():
                    results[(net, n, b, mode, t)] = statistics.median(vals)
            print_table(results, net, n, batches)

    # headline figures: b6c64, 9x9, 1 thread
    r = results
    best_ort = max(r[("b6c64", 9, b, "ort", 1)] for b in batches)
    best_torch = max(r[("b6c64", 9, b, "torch", 1)] for b in batches)
    ratio_b1 = r[("b6c64", 9, 1, "ort", 1)] / r[("b6c64", 9, 1, "torch", 1)]
    int8_b1 = r[("b6c64", 9, 1, "int8", 1)] / r[("b6c64", 9, 1, "ort", 1)]
    best_int8 = max(r[("b6c64", 9, b, "int8", 1)] for b in batches)
    print(f"\n# load avg at end {os.getloadavg()[0]:.2f} (above ~0.5 before the run, 2-thread figures are disturbed)")
    print(f"# ort_vs_torch is ORT/torch eager at batch 1 (b6c64 9x9, 1 thread); best batch vs best batch: "
          f"{best_ort / best_torch:.2f}x")
    print(f"# int8_speedup is int8/fp32 at batch 1 (b6c64 9x9, 1 thread); best vs best: {best_int8 / best_ort:.2f}x")
    print(f"RESULT ort_pos_per_s_9x9 {best_ort:.0f}")
    print(f"RESULT ort_vs_torch {ratio_b1:.2f}")
    print(f"RESULT int8_speedup {int8_b1:.2f}")
    sys.stdout.flush()
    tmpdir.cleanup()
    return 0


def print_table(results, net, n, batches):
    rows = sorted({(m, t) for (nn, bb, b, m, t) in results if nn == net and bb == n},
                  key=lambda mt: (["ort", "torch", "int8", "eval"].index(mt[0]), mt[1]))
    print(f"\n{net} {n}x{n} positions/s | " + " | ".join(f"b={b:>3}" for b in batches))
    for m, t in rows:
        cells = " | ".join(f"{results[(net, n, b, m, t)]:7.0f}" for b in batches)
        print(f"  {m:>5} {t} thr           | {cells}")
    for t in sorted({t for m, t in rows if m == "torch"}):
        ratio = " | ".join(f"{results[(net, n, b, 'ort', t)] / results[(net, n, b, 'torch', t)]:7.2f}"
                           for b in batches)
        print(f"  ort/torch {t} thr       | {ratio}")
    if ("int8", 1) in rows:
        ratio = " | ".join(f"{results[(net, n, b, 'int8', 1)] / results[(net, n, b, 'ort', 1)]:7.2f}"
                           for b in batches)
        print(f"  int8/fp32 1 thr       | {ratio}")


if __name__ == "__main__":
    raise SystemExit(main())
