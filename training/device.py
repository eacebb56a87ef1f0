"""Where training runs: the ``--device`` setting resolved to a torch device, with a clear error."""

from __future__ import annotations

import torch

from .errors import TrainError


def parse_device(spec: str) -> tuple[str, int | None]:
    """``("auto"|"cpu"|"cuda", index or None)`` from "auto", "cpu", "cuda" or "cuda:N"; TrainError else."""
    from azgo.nets.evaluator import parse_device as parse
    try:
        return parse(spec)
    except ValueError as e:
        raise TrainError(str(e)) from None


def resolve_device(spec: str) -> torch.device:
    """The torch device for a ``--device`` setting ("auto": CUDA when torch sees a GPU, else the CPU).

    Raises TrainError with the reason when CUDA is asked for and torch cannot use it.
    """
    kind, index = parse_device(spec)
    if kind == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if kind == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = (f"this torch {torch.__version__} was built without CUDA" if torch.version.cuda is None
                 else f"torch {torch.__version__} (CUDA {torch.version.cuda}) finds no usable GPU or driver")
        raise TrainError(f"--device {spec}: torch sees no CUDA GPU ({build}). Use --device cpu (or auto), "
                         "or install a CUDA build of torch on a machine with an NVIDIA GPU")
    count = torch.cuda.device_count()
    if index is not None and index >= count:
        raise TrainError(f"--device {spec}: torch sees {count} CUDA device(s), numbered 0..{count - 1}")
    return torch.device("cuda", index if index is not None else torch.cuda.current_device())


def device_text(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)}, float16 autocast)"
    return f"the CPU ({torch.get_num_threads()} threads)"
