"""Training speed on the CPU: samples/s of one SGD step (forward, backward, update) in float32 against
bfloat16 autocast, for the campaign's network size on 9x9 and 19x19 batches.

Usage::

    python benchmarks/train_speed.py            # b6c64, batch 256, 9x9 and 19x19 (~3 min on 2 cores)
    python benchmarks/train_speed.py --quick    # batch 64 (< 1 min)

Each mode runs the same steps (random planes, targets and a loss of the same shape as training's: policy
cross-entropy, value and score squared error, ownership squared error) on a model built from one seed; the
modes alternate within every trial so that background load hits them alike, and each figure is the median
over trials. bfloat16 autocast (``torch.autocast("cpu", torch.bfloat16)``) runs the convolutions and matrix
products in bfloat16 where the CPU has the instructions (AVX-512 BF16, AMX), the loss in float32. Ends with
``RESULT train_samples_per_s_fp32_19x19``, ``RESULT train_samples_per_s_bf16_19x19`` and
``RESULT train_bf16_speedup_19x19`` (and the same for 9x9).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see nn_throughput.py: spin-waiting threads stall beside other work

import torch  # noqa: E402

from azgo.engine.planes import NUM_PLANES, ON_BOARD_PLANE  # noqa: E402
from azgo.training.model import build_model  # noqa: E402


def step_fn(model, optimizer, planes, targets, bf16: bool):
    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            policy, value, ownership, score = model(planes)
        policy, value, ownership, score = policy.float(), value.float(), ownership.float(), score.float()
        loss = (torch.nn.functional.cross_entropy(policy, targets["policy"])
                + ((value - targets["value"]) ** 2).mean() + ((ownership - targets["ownership"]) ** 2).mean()
                + 0.01 * ((score - targets["score"]) ** 2).mean())
        loss.backward()
        optimizer.step()
    return step


def measure(size: int, batch: int, trials: int, trial_s: float, threads: int) -> dict[str, float]:
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(size)
    planes = (torch.rand(batch, NUM_PLANES, size, size, generator=g) < 0.3).float()
    planes[:, ON_BOARD_PLANE] = 1.0  # every point on the board
    targets = {"policy": torch.randint(0, size * size + 1, (batch,), generator=g),
               "value": torch.rand(batch, generator=g) * 2 - 1,
               "ownership": torch.rand(batch, size * size, generator=g) * 2 - 1,
               "score": torch.randn(batch, generator=g) * 10}
    steps = {}
    for mode in ("fp32", "bf16"):
        model = build_model("b6c64", seed=0).train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        steps[mode] = step_fn(model, opt, planes, targets, mode == "bf16")
        steps[mode]()  # warm-up (oneDNN picks its kernels)
    rates: dict[str, list[float]] = {m: [] for m in steps}
    for _ in range(trials):
        for mode, step in steps.items():
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < trial_s:
                step()
                n += batch
            rates[mode].append(n / (time.perf_counter() - t0))
    return {m: statistics.median(r) for m, r in rates.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    batch, trials, trial_s = (64, 3, 2.0) if args.quick else (256, 5, 6.0)
    results = {}
    for size in (9, 19):
        r = measure(size, batch, trials, trial_s, args.threads)
        key = f"{size}x{size}"
        print(f"{key} b6c64 batch {batch}, {args.threads} threads: fp32 {r['fp32']:.1f} samples/s, "
              f"bf16 autocast {r['bf16']:.1f} samples/s ({r['bf16'] / r['fp32']:.2f}x)", flush=True)
        results[f"train_samples_per_s_fp32_{key}"] = f"{r['fp32']:.1f}"
        results[f"train_samples_per_s_bf16_{key}"] = f"{r['bf16']:.1f}"
        results[f"train_bf16_speedup_{key}"] = f"{r['bf16'] / r['fp32']:.3f}"
    for k, v in results.items():
        print(f"RESULT {k} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
