"""The host-side zero-configuration quantities (:mod:`jaxsim_like.dynamics.zero_pose`) against the
jitted dynamics they replace at build time: the mass matrix of :func:`.crba.mass_matrix` and the
links' inverse weights ``mean diag(J M^-1 J^T)`` from :func:`.jacobians.link_jacobians`."""

import jax
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import zero_pose
from jaxsim_like.dynamics.crba import mass_matrix
from jaxsim_like.dynamics.jacobians import link_jacobians

MODELS = ["humanoid", "quadruped", "cart_pole", "pendulum"]


@pytest.fixture(scope="module", params=MODELS)
def reference(request):
    """A shipped model, its jitted mass matrix and inverse weights at the zero configuration."""
    with jax.enable_x64(True):
        model = js.load_model(js.models.path(request.param))
        state = js.State.build(model)
        M = np.asarray(jax.jit(mass_matrix)(model, state))
        J = np.asarray(jax.jit(link_jacobians)(model, state))[:, :3, :]
    response = np.linalg.solve(M, np.swapaxes(J, 0, 2).reshape(M.shape[0], -1)).reshape(M.shape[0], 3, -1)
    return model, M, np.einsum("nij,jin->n", J, response) / 3


def test_the_host_mass_matrix_equals_the_composite_rigid_body_algorithm(reference):
    model, M, _ = reference
    host = zero_pose.mass_matrix(model)
    assert host.shape == M.shape
    np.testing.assert_allclose(host, M, rtol=0, atol=1e-12 * np.abs(M).max())


def test_the_host_inverse_weights_equal_those_of_the_jacobians(reference):
    model, _, weights = reference
    np.testing.assert_allclose(zero_pose.translational_inverse_weights(model), weights, rtol=0, atol=1e-12 * np.abs(weights).max())
