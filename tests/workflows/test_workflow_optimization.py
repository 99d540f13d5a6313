"""The optimisation loop (jaxsim_like.optimization): torque bounds, the optax loop, and the
rematerialised rollout cost (its value, and the memory its gradient keeps)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxsim_like as js
from jaxsim_like import optimization


def test_bounded_stays_within_limits_and_inverts():
    limit = jnp.array([2.0, 0.5])
    z = jnp.linspace(-50, 50, 101)[:, None] * jnp.ones(2)
    u = optimization.bounded(z, limit)
    assert jnp.all(jnp.abs(u) <= limit)
    inside = jnp.array([[1.5, -0.25], [-1.999, 0.0]])
    np.testing.assert_allclose(optimization.bounded(optimization.unbounded(inside, limit), limit), inside, atol=1e-9)
    np.testing.assert_array_equal(optimization.clip_to_limits(jnp.array([3.0, -1.0]), limit), [2.0, -0.5])


def test_piecewise_constant_holds_each_knot():
    knots = jnp.arange(6.0).reshape(3, 2)
    values = optimization.piecewise_constant(knots, 7)
    assert values.shape == (7, 2)
    np.testing.assert_array_equal(values[:, 0], [0, 0, 0, 2, 2, 4, 4])


def quadratic(x):
    return jnp.sum((x["a"] - jnp.array([1.0, -2.0])) ** 2) + (x["b"] - 3.0) ** 2


def test_adam_converges_and_stops_at_the_target():
    start = {"a": jnp.zeros(2), "b": jnp.zeros(())}
    result = optimization.optimize(quadratic, start, optax.adam(0.1), iterations=2000, target_loss=1e-8)
    assert result.converged and not result.diverged
    assert len(result.losses) < 2000
    assert result.best_loss <= 1e-8
    np.testing.assert_allclose(result.best_params["a"], [1.0, -2.0], atol=1e-3)
    assert np.all(np.diff(result.losses[:20]) < 0)


def test_lbfgs_with_line_search():
    start = {"a": jnp.zeros(2), "b": jnp.zeros(())}
    result = optimization.optimize(quadratic, start, optax.lbfgs(), iterations=20, target_loss=1e-20)
    assert result.converged and len(result.losses) <= 5
    np.testing.assert_allclose(result.params["b"], 3.0, atol=1e-9)


def test_lbfgs_update_is_traced_by_the_first_iteration_only():
    """optax.lbfgs starts with a weakly typed counter that its update returns strongly typed: the
    loop gives the initial state the update's types, or the second iteration compiles again."""
    traces = []

    def counted(x):
        traces.append(1)
        return quadratic(x)

    def traced(iterations):
        traces.clear()
        optimization.optimize(counted, {"a": jnp.zeros(2), "b": jnp.zeros(())}, optax.lbfgs(), iterations=iterations)
        return len(traces)

    assert traced(1) == traced(4)


def test_projection_keeps_the_iterates_within_limits():
    limit = jnp.array([0.5, 0.5])
    seen = []
    result = optimization.optimize(
        lambda u: jnp.sum((u - jnp.array([2.0, -0.2])) ** 2),
        jnp.zeros(2),
        optax.sgd(0.1),
        iterations=100,
        project=lambda u: optimization.clip_to_limits(u, limit),
        callback=lambda k, value, u: seen.append(np.asarray(u)),
    )
    assert np.all(np.abs(np.asarray(seen)) <= 0.5)
    np.testing.assert_allclose(result.params, [0.5, -0.2], atol=1e-6)


def test_a_loss_that_is_not_finite_stops_the_loop():
    result = optimization.optimize(lambda x: jnp.log(x), jnp.array(1.0), optax.sgd(2.0), iterations=10)
    assert result.diverged and not result.converged
    assert not np.isfinite(result.losses[-1])
    assert result.best_params == 1.0 and result.best_loss == 0.0


def test_iterations_must_be_positive():
    with pytest.raises(ValueError, match="iterations"):
        optimization.optimize(quadratic, {"a": jnp.zeros(2), "b": 0.0}, optax.adam(0.1), iterations=0)


@pytest.fixture(scope="module")
def pendulum():
    """The pendulum, stepped explicitly: what these tests check is the rollout cost's (its sum,
    its rematerialisation), whatever the step inside, and the explicit step traces and compiles
    in less time than the implicit one."""
    model = js.load_model(js.models.path("pendulum"))
    params = js.SimulationParams.build(model, dt=0.01, integrator="semi_implicit_euler")
    state = js.State.build(model, joint_positions=[0.3])
    return model, params, state


def energy_cost(state, output, k):
    return state.joint_velocities[0] ** 2 + 0.001 * k


def test_rollout_cost_equals_the_sum_over_a_rollout(pendulum):
    model, params, state = pendulum
    torques = jnp.sin(jnp.arange(40.0) / 5)[:, None]
    _, (states, _) = jax.jit(lambda u: js.rollout(model, state, u, params=params))(torques)
    expected = jnp.sum(states.joint_velocities[:, 0] ** 2 + 0.001 * jnp.arange(40)) + states.joint_positions[-1, 0]

    @jax.jit
    def costs(u):
        def run(segment):
            return optimization.rollout_cost(
                model, state, u, params=params, stage_cost=energy_cost,
                final_cost=lambda s: s.joint_positions[0], segment_length=segment,
            )[0]

        return run(None), run(8), run(7), run("auto")

    for cost in costs(torques):  # one checkpoint per step; segments that divide 40, that do not, sqrt(40)
        np.testing.assert_allclose(cost, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="segment_length"):
        optimization.rollout_cost(model, state, torques, params=params, stage_cost=energy_cost, segment_length=0)


def residual_bytes(loss, x) -> int:
    """Bytes of the residuals that ``jax.vjp(loss, x)`` keeps for the backward pass (shapes only: nothing runs)."""
    shapes = jax.eval_shape(lambda y: jax.vjp(loss, y)[1], x)
    return sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree.leaves(shapes))


def test_rematerialised_gradient_memory_stays_flat(pendulum, workflow_figures):
    model, params, state = pendulum

    def plain(steps):
        def loss(u):
            _, (states, _) = js.rollout(model, state, u, params=params)
            return jnp.sum(states.joint_velocities**2)

        return loss

    def remat(steps, segment=None):
        def loss(u):
            return optimization.rollout_cost(model, state, u, params=params, stage_cost=energy_cost, segment_length=segment)[0]

        return loss

    sizes = {}
    for steps in (100, 400):  # the residuals grow linearly with the horizon: compare the slopes
        u = jnp.zeros((steps, 1))
        sizes["plain", steps] = residual_bytes(plain(steps), u)
        sizes["remat", steps] = residual_bytes(remat(steps), u)
        sizes["segments", steps] = residual_bytes(remat(steps, 20), u)
    per_step = {kind: (sizes[kind, 400] - sizes[kind, 100]) / 300 for kind in ("plain", "remat", "segments")}
    state_bytes = sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree.leaves(state))
    for kind, value in per_step.items():
        workflow_figures(f"optimization: gradient residuals per step, {kind} [bytes]", value)
    # A plain rollout keeps every intermediate of every step; rematerialised, about one state
    # (and the step's torque) per step; with segments of 20 steps, one state per segment.
    assert per_step["plain"] > 10 * per_step["remat"]
    assert per_step["remat"] <= 1.2 * state_bytes + 16
    assert per_step["segments"] <= 1.2 * state_bytes / 20 + 16


def test_gradient_temporaries_grow_as_the_square_root_of_the_horizon(pendulum, workflow_figures):
    """XLA's own account of the compiled gradient's temporary buffers (compiled, not run). The
    growth is the rematerialisation scheme's, whatever the step inside."""
    model, params, state = pendulum

    def temporaries(steps, segment_length):
        loss = lambda u: optimization.rollout_cost(  # noqa: E731
            model, state, u, params=params, stage_cost=energy_cost, segment_length=segment_length
        )[0]
        compiled = jax.jit(jax.grad(loss)).lower(jnp.zeros((steps, 1))).compile()
        return compiled.memory_analysis().temp_size_in_bytes

    growth = {kind: temporaries(6400, kind) / temporaries(400, kind) for kind in (None, "auto")}
    for kind, value in growth.items():
        workflow_figures(f"optimization: gradient temporaries, 6400 / 400 steps, segments {kind}", value)
    assert growth[None] > 10  # one state per step: linear (16x the horizon)
    assert growth["auto"] < 5  # sqrt(16) = 4
