"""Pendulum swing-up by trajectory optimisation through a differentiable rollout.

The shipped pendulum (1 kg bob on a 1 m massless rod, hanging at q = 0) gets a torque limit of
6 N m, below the m g l = 9.81 N m needed to lift it straight up, so it has to pump energy. The
torques are piecewise constant over K knots and parameterised as u = effort * tanh(z), so any z
respects the limit; Adam minimises a terminal cost 10 (1 + cos q_T) + 0.5 q_dot_T^2 plus a small
effort term, through a rollout whose steps are rematerialised in the backward pass
(jaxsim_like.optimization.rollout_cost). The initial guess is a gentle sinusoid at the natural
frequency (from rest at the bottom, zero torque is a stationary point of the cost).

    python examples/pendulum_swing_up.py [--quick] [--plot DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

try:
    import jaxsim_like as js
except ImportError:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import jaxsim_like as js
from jaxsim_like import optimization
from jaxsim_like.plots import require_matplotlib

EFFORT = 6.0  # [N m]


def settings(quick: bool) -> dict:
    """Step [s], steps, integrator, torque knots, Adam iterations and learning rate."""
    if quick:
        return {"dt": 0.02, "steps": 125, "integrator": "semi_implicit_euler", "knots": 25, "iterations": 120, "learning_rate": 0.2}
    return {"dt": 0.01, "steps": 250, "integrator": "implicit_euler", "knots": 50, "iterations": 500, "learning_rate": 0.2}


def upright_error(q: float) -> float:
    """Distance [rad] of the pendulum angle ``q`` from the nearest upright position (q = pi mod 2 pi)."""
    return float(abs(np.arctan2(np.sin(q - np.pi), np.cos(q - np.pi))))


def run(quick: bool = False, plot: str | None = None, verbose: bool = True) -> dict:
    """Optimise the swing-up; returns the figures reached (and writes plots to the folder ``plot``)."""
    if plot is not None:
        require_matplotlib()  # now, not after the run
    config = settings(quick)
    dt, steps, knots = config["dt"], config["steps"], config["knots"]
    model = js.load_model(js.models.path("pendulum"))
    model = model.replace(effort_limit=jnp.full(model.dofs, EFFORT))
    params = js.SimulationParams.build(model, dt=dt, integrator=config["integrator"])
    start = js.State.build(model)
    effort = model.effort_limit

    def torques(z):
        return optimization.piecewise_constant(optimization.bounded(z, effort), steps)

    def final_cost(state):
        q, v = state.joint_positions[0], state.joint_velocities[0]
        return 10.0 * (1.0 + jnp.cos(q)) + 0.5 * v**2

    def loss(z):
        u = torques(z)
        cost, _ = optimization.rollout_cost(
            model, start, u, params=params, stage_cost=lambda state, output, k: 0.0, final_cost=final_cost
        )
        return cost + 1e-4 * jnp.sum(u**2) * dt

    knot_times = np.arange(knots) * steps * dt / knots
    initial = jnp.asarray(0.5 * np.sin(np.sqrt(9.81) * knot_times))[:, None]
    began = time.perf_counter()
    result = optimization.optimize(loss, initial, optax.adam(config["learning_rate"]), iterations=config["iterations"])
    seconds = time.perf_counter() - began

    final, (states, outputs) = jax.jit(lambda z: js.rollout(model, start, torques(z), params=params))(result.best_params)
    q_T, v_T = float(final.joint_positions[0]), float(final.joint_velocities[0])
    figures = {
        "final_angle_error_rad": upright_error(q_T),
        "final_velocity_rad_s": abs(v_T),
        "max_torque_Nm": float(jnp.max(jnp.abs(torques(result.best_params)))),
        "effort_limit_Nm": EFFORT,
        "initial_loss": float(result.losses[0]),
        "final_loss": result.best_loss,
        "iterations": len(result.losses),
        "seconds": seconds,
    }
    if plot:
        from jaxsim_like.plots import plot_losses, plot_recording
        from jaxsim_like.recording import Recording

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        plot_losses(result.losses, folder / "pendulum_swing_up_losses.png", title="pendulum swing-up")
        plot_recording(Recording.from_rollout(model, states, outputs, dt), folder / "pendulum_swing_up_trajectory.png")
        figures["plots"] = str(folder)
    if verbose:
        for name, value in figures.items():
            print(f"{name:24s} {value:.6g}" if isinstance(value, float) else f"{name:24s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="coarser explicit steps and fewer iterations (seconds)")
    parser.add_argument("--plot", metavar="DIR", help="save the loss curve and the trajectory as PNGs in DIR (needs matplotlib)")
    args = parser.parse_args(argv)
    figures = run(quick=args.quick, plot=args.plot)
    return 0 if figures["final_angle_error_rad"] < 0.05 and figures["final_velocity_rad_s"] < 0.2 else 1


if __name__ == "__main__":
    sys.exit(main())
