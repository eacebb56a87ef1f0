"""The 8 dihedral symmetries of the square board, for input planes and policy vectors (numpy only).

Symmetry ``k`` (0..7) acts on the last two axes ``[row, col]`` of an array:

* ``k`` in 0..3: rotate by ``k`` quarter turns (``np.rot90(x, k, axes=(-2, -1))``);
* ``k`` in 4..7: first mirror left-right (``np.flip(x, -1)``), then rotate by ``k - 4`` quarter turns.

``k = 0`` is the identity. The four rotations form a cyclic group (inverse of ``k`` is ``(4 - k) % 4``)
and the four reflections are their own inverses, so ``invert(k)`` is exact.

Policy vectors have ``N*N + 1`` entries: index ``row*N + col`` for a board point and the last entry
for pass. ``apply_policy`` moves the entry of point ``(r, c)`` exactly where ``apply_planes`` moves a
plane feature at ``(r, c)``; pass stays pass. A typical use with a network::

    out = net(apply_planes(planes, k))                   # policy on the transformed board
    policy = apply_policy(out.policy, invert(k), n)       # back to the original orientation
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

NUM_SYMMETRIES = 8
IDENTITY = 0


def _check_k(k: int) -> int:
    k = int(k)
    if not 0 <= k < NUM_SYMMETRIES:
        raise ValueError(f"symmetry index must be in 0..7, got {k}")
    return k


def invert(k: int) -> int:
    """Index of the inverse symmetry: ``apply_planes(apply_planes(x, k), invert(k))`` equals ``x``."""
    k = _check_k(k)
    return (4 - k) % 4 if k < 4 else k


def compose(a: int, b: int) -> int:
    """Index ``c`` of the symmetry "first ``a``, then ``b``": ``apply(apply(x, a), b) == apply(x, c)``."""
    a, b = _check_k(a), _check_k(b)
    return _compose_table()[a][b]


def apply_planes(planes: np.ndarray, k: int) -> np.ndarray:
    """Apply symmetry ``k`` to the last two axes of ``planes`` (``[..., C, N, N]`` or ``[..., N, N]``).

    Returns a new C-contiguous array of the same shape and dtype (the input is not modified).
    The last two axes must be equal (square board).
    """
    k = _check_k(k)
    planes = np.asarray(planes)
    if planes.ndim < 2 or planes.shape[-1] != planes.shape[-2]:
        raise ValueError(f"apply_planes needs [..., N, N] arrays, got shape {planes.shape}")
    out = planes
    if k >= 4:
        out = np.flip(out, axis=-1)
    out = np.rot90(out, k % 4, axes=(-2, -1))
    return np.ascontiguousarray(out)


def policy_permutation(k: int, n: int) -> np.ndarray:
    """Index array ``perm`` (int64, length ``n*n + 1``) with ``apply_policy(v, k, n) == v[..., perm]``.

    ``perm[n*n] == n*n`` (pass stays pass). Cached per ``(k, n)``; the returned array is read-only.
    """
    return _policy_permutation(_check_k(k), int(n))


@lru_cache(maxsize=None)
def _policy_permutation(k: int, n: int) -> np.ndarray:
    if n < 1:
        raise ValueError(f"board size must be positive, got {n}")
    idx = np.arange(n * n, dtype=np.int64).reshape(n, n)
    perm = np.concatenate([apply_planes(idx, k).reshape(-1), np.array([n * n], dtype=np.int64)])
    perm.setflags(write=False)
    return perm


def apply_policy(vec: np.ndarray, k: int, n: int) -> np.ndarray:
    """Apply symmetry ``k`` to policy-like vectors ``[..., n*n + 1]`` (point ``row*n + col``, then pass).

    The entry for point ``(r, c)`` goes where ``apply_planes`` sends a feature at ``(r, c)``; the pass
    entry stays last. Returns a new array.
    """
    vec = np.asarray(vec)
    if vec.shape[-1] != n * n + 1:
        raise ValueError(f"policy vectors for a {n}x{n} board need {n * n + 1} entries, got shape {vec.shape}")
    return vec[..., policy_permutation(k, n)]


def apply_points(vec: np.ndarray, k: int, n: int) -> np.ndarray:
    """Apply symmetry ``k`` to per-point vectors ``[..., n*n]`` (no pass entry, e.g. ownership)."""
    vec = np.asarray(vec)
    if vec.shape[-1] != n * n:
        raise ValueError(f"point vectors for a {n}x{n} board need {n * n} entries, got shape {vec.shape}")
    return vec[..., policy_permutation(k, n)[:-1]]


def apply_point(row: int, col: int, k: int, n: int) -> tuple[int, int]:
    """Where symmetry ``k`` sends the point ``(row, col)`` of an ``n x n`` board."""
    perm = policy_permutation(k, n)
    # perm[new] = old, so search for the new index holding the old one.
    new = int(np.flatnonzero(perm == row * n + col)[0])
    return divmod(new, n)


@lru_cache(maxsize=1)
def _compose_table() -> tuple[tuple[int, ...], ...]:
    probe = np.arange(9).reshape(3, 3)
    images = [apply_planes(probe, k) for k in range(NUM_SYMMETRIES)]
    table = []
    for a in range(NUM_SYMMETRIES):
        row = []
        for b in range(NUM_SYMMETRIES):
            ab = apply_planes(images[a], b)
            row.append(next(c for c in range(NUM_SYMMETRIES) if np.array_equal(images[c], ab)))
        table.append(tuple(row))
    return tuple(table)
