"""The elementwise products of spatial algebra against numpy, for the sizes the algorithms use
and the edge sizes (empty, one entry, odd and even lengths), fused and as XLA dots."""

import numpy as np
import pytest

from jaxsim_like.dynamics import spatial

SIZES = (0, 1, 2, 3, 4, 5, 6, 7)


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("k", SIZES)
def test_sum_last_equals_the_numpy_sum(rng, k):
    x = rng.standard_normal((2, 5, k))
    np.testing.assert_allclose(spatial.sum_last(x), x.sum(axis=-1), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("fused", (True, False))
@pytest.mark.parametrize("k", SIZES)
def test_dot_matvec_matmul_equal_numpy(rng, k, fused):
    a, b = rng.standard_normal((4, k)), rng.standard_normal((4, k))
    A, B = rng.standard_normal((4, 3, k)), rng.standard_normal((4, k, 2))
    np.testing.assert_allclose(spatial.dot(a, b, fused=fused), np.einsum("ni,ni->n", a, b), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(spatial.matvec(A, a, fused=fused), np.einsum("nij,nj->ni", A, a), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(spatial.matmul(A, B, fused=fused), A @ B, rtol=1e-12, atol=1e-14)


def test_products_broadcast_over_leading_axes(rng):
    R = rng.standard_normal((3, 3))
    v = rng.standard_normal((7, 3))
    np.testing.assert_allclose(spatial.rotate(R, v), v @ R.T, rtol=1e-12)
    np.testing.assert_allclose(spatial.congruence(R, np.eye(3)), R @ R.T, rtol=1e-12)
