"""The 8 dihedral symmetries: exact inverses, distinctness, plane/policy consistency."""

import itertools

import numpy as np
import pytest

from azgo.engine import symmetry as sym


def _asym(n, shape=()):
    return np.arange(np.prod(shape, dtype=int) * n * n, dtype=np.float32).reshape(*shape, n, n)


@pytest.mark.parametrize("shape", [(), (3,), (2, 26)])
@pytest.mark.parametrize("k", range(8))
def test_inverse_is_exact(k, shape):
    x = _asym(7, shape)
    y = sym.apply_planes(x, k)
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(sym.apply_planes(y, sym.invert(k)), x)
    np.testing.assert_array_equal(sym.apply_planes(sym.apply_planes(x, sym.invert(k)), k), x)


def test_identity_and_all_distinct():
    x = _asym(5)
    np.testing.assert_array_equal(sym.apply_planes(x, 0), x)
    images = {sym.apply_planes(x, k).tobytes() for k in range(8)}
    assert len(images) == 8
    assert [sym.invert(k) for k in range(8)] == [0, 3, 2, 1, 4, 5, 6, 7]


def test_known_images():
    x = np.array([[1, 2], [3, 4]])
    # k=1: rotate a quarter turn counter-clockwise (np.rot90); k=4: mirror left-right
    np.testing.assert_array_equal(sym.apply_planes(x, 1), [[2, 4], [1, 3]])
    np.testing.assert_array_equal(sym.apply_planes(x, 4), [[2, 1], [4, 3]])


@pytest.mark.parametrize("n", [7, 9, 19])
@pytest.mark.parametrize("k", range(8))
def test_point_feature_and_policy_entry_move_together(k, n):
    rng = np.random.default_rng(k * 100 + n)
    for r, c in [(0, 0), (0, n - 1), (n - 1, 0), tuple(rng.integers(0, n, 2))]:
        plane = np.zeros((n, n))
        plane[r, c] = 1
        r2, c2 = np.argwhere(sym.apply_planes(plane, k))[0]
        vec = np.zeros(n * n + 1)
        vec[r * n + c] = 1
        moved = sym.apply_policy(vec, k, n)
        assert np.flatnonzero(moved).tolist() == [r2 * n + c2]
        assert sym.apply_point(r, c, k, n) == (r2, c2)
        # ownership-style vectors (no pass) follow the same map
        assert np.flatnonzero(sym.apply_points(vec[:-1], k, n)).tolist() == [r2 * n + c2]


@pytest.mark.parametrize("k", range(8))
def test_policy_pass_stays_and_inverse_exact(k):
    n = 9
    vec = np.random.default_rng(k).random((4, n * n + 1))
    out = sym.apply_policy(vec, k, n)
    np.testing.assert_array_equal(out[:, -1], vec[:, -1])
    np.testing.assert_array_equal(sym.apply_policy(out, sym.invert(k), n), vec)
    perm = sym.policy_permutation(k, n)
    assert sorted(perm.tolist()) == list(range(n * n + 1))
    assert not perm.flags.writeable


def test_planes_and_policy_agree_on_whole_boards():
    n = 13
    board = np.random.default_rng(1).random((n, n))
    vec = np.append(board.reshape(-1), 0.5)
    for k in range(8):
        np.testing.assert_array_equal(
            sym.apply_policy(vec, k, n)[:-1], sym.apply_planes(board, k).reshape(-1))


def test_compose_matches_sequential_application():
    x = _asym(6)
    for a, b in itertools.product(range(8), repeat=2):
        c = sym.compose(a, b)
        np.testing.assert_array_equal(sym.apply_planes(sym.apply_planes(x, a), b), sym.apply_planes(x, c))
    assert all(sym.compose(k, sym.invert(k)) == 0 for k in range(8))


def test_bad_arguments():
    with pytest.raises(ValueError, match="0..7"):
        sym.apply_planes(np.zeros((3, 3)), 8)
    with pytest.raises(ValueError, match="N, N"):
        sym.apply_planes(np.zeros((3, 4)), 1)
    with pytest.raises(ValueError, match="82 entries"):
        sym.apply_policy(np.zeros(81), 1, 9)
