"""A hop through soft contacts: optimise a leg's push-off to raise the apex of its body.

The model (examples/assets/hopper.urdf) is a 4 kg body on a passive vertical rail with a
2-link leg (hip and knee, 25 N m each) whose foot is a 3 cm sphere. It starts crouched, foot on
the ground. The hip and knee torques are piecewise constant over the push-off window (the first
0.2 s) and zero afterwards, parameterised as u = effort * tanh(z); Adam maximises a smooth
maximum (log-sum-exp, 1 cm temperature) of the body height over the whole rollout, contacts,
take-off and flight included, differentiated through a rematerialised rollout. The initial
guess holds the crouch (the static torques that carry the weight through the foot).

The simulated joint limits are spring-dampers; this example raises their frequency 2.5x over
the default (``limit_frequency = 0.5 / dt``: 6.25x stiffer) because the push-off slams the knee
into full extension; the overshoot past the limits is reported.

    python examples/hop.py [--quick] [--plot DIR]
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
from jaxsim_like import dynamics, optimization
from jaxsim_like.plots import require_matplotlib
from jaxsim_like.simulation.step import contact_point_positions

HOPPER = Path(__file__).resolve().parent / "assets" / "hopper.urdf"
CROUCH = (0.6, -1.2)  # hip, knee [rad]


def settings(quick: bool) -> dict:
    """Step [s], steps, push-off steps, torque knots, Adam iterations and learning rate."""
    if quick:
        return {"dt": 0.002, "steps": 250, "push_steps": 100, "knots": 10, "iterations": 20, "learning_rate": 0.1}
    return {"dt": 0.002, "steps": 300, "push_steps": 100, "knots": 20, "iterations": 120, "learning_rate": 0.1}


def crouched_state(model: js.Model) -> js.State:
    """The crouch with the lowest point of the foot on the ground (z = 0)."""
    state = js.State.build(model, joint_positions=[0.0, *CROUCH])
    lowest = jnp.min(contact_point_positions(model, state)[:, 2])
    return state.replace(joint_positions=state.joint_positions.at[0].add(-lowest))


def holding_torques(model: js.Model, state: js.State) -> jax.Array:
    """Hip and knee torques that hold ``state`` still with the body's weight on the foot.

    The ground pushes up on the foot with ``f``; the rail joint (passive) balances when
    ``f dz_foot/dq_rail = g_rail``; the actuated joints then need ``g - f dz_foot/dq``.
    """
    gravity = dynamics.gravity_forces(model, state)

    def foot_height(q):
        return jnp.min(contact_point_positions(model, state.replace(joint_positions=q))[:, 2])

    dz_dq = jax.grad(foot_height)(state.joint_positions)
    force = gravity[0] / dz_dq[0]
    return (gravity - force * dz_dq)[1:]


def run(quick: bool = False, plot: str | None = None, verbose: bool = True) -> dict:
    """Optimise the push-off; returns the figures reached (and writes plots to the folder ``plot``)."""
    if plot is not None:
        require_matplotlib()  # now, not after the run
    config = settings(quick)
    dt, steps, push, knots = config["dt"], config["steps"], config["push_steps"], config["knots"]
    model = js.load_model(HOPPER)
    params = js.SimulationParams.build(model, dt=dt, limit_frequency=0.5 / dt)
    start = jax.jit(crouched_state)(model)  # jitted: run eagerly, each operation would compile on its own
    effort = model.effort_limit[1:]

    def torques(z):
        actuated = optimization.piecewise_constant(optimization.bounded(z, effort), push)
        actuated = jnp.concatenate([actuated, jnp.zeros((steps - push, 2), actuated.dtype)])
        return jnp.concatenate([jnp.zeros((steps, 1), actuated.dtype), actuated], axis=1)

    def simulate(z):
        return js.rollout(model, start, torques(z), params=params, checkpoint=True)

    def loss(z):
        _, (states, _) = simulate(z)
        height = states.joint_positions[:, 0]
        return -0.01 * jax.nn.logsumexp(height / 0.01)

    initial = jnp.broadcast_to(optimization.unbounded(jax.jit(holding_torques)(model, start), effort), (knots, 2))
    began = time.perf_counter()
    result = optimization.optimize(loss, initial, optax.adam(config["learning_rate"]), iterations=config["iterations"])
    seconds = time.perf_counter() - began

    simulate = jax.jit(simulate)
    _, (guess_states, _) = simulate(initial)
    _, (states, outputs) = simulate(result.best_params)
    guess_apex = float(jnp.max(guess_states.joint_positions[:, 0]))
    height = np.asarray(states.joint_positions[:, 0])
    q = np.asarray(states.joint_positions[:, 1:])
    lower, upper = np.asarray(model.position_limit_lower[1:]), np.asarray(model.position_limit_upper[1:])
    apex = int(height.argmax())
    touching = np.flatnonzero(np.asarray(outputs.in_contact).any(axis=1)[:apex])
    figures = {
        "initial_height_m": float(start.joint_positions[0]),
        "guess_apex_m": guess_apex,
        "apex_m": float(height.max()),
        "apex_gain_m": float(height.max()) - guess_apex,
        "apex_time_s": (apex + 1) * dt,
        "take_off_time_s": (touching[-1] + 2) * dt if touching.size else float("nan"),
        "max_limit_overshoot_rad": float(np.max(np.maximum(q - upper, 0) + np.maximum(lower - q, 0))),
        "max_commanded_torque_Nm": float(jnp.max(jnp.abs(torques(result.best_params)))),
        "iterations": len(result.losses),
        "seconds": seconds,
    }
    if plot:
        from jaxsim_like.plots import plot_losses, plot_recording
        from jaxsim_like.recording import Recording

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        plot_losses(-result.losses, folder / "hop_apex.png", title="hop: smooth apex height [m] (maximised)")
        plot_recording(Recording.from_rollout(model, states, outputs, dt), folder / "hop_trajectory.png")
        figures["plots"] = str(folder)
    if verbose:
        for name, value in figures.items():
            print(f"{name:24s} {value:.6g}" if isinstance(value, float) else f"{name:24s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer knots and iterations (seconds)")
    parser.add_argument("--plot", metavar="DIR", help="save the apex curve and the trajectory as PNGs in DIR (needs matplotlib)")
    args = parser.parse_args(argv)
    figures = run(quick=args.quick, plot=args.plot)
    return 0 if figures["apex_gain_m"] > 0.2 else 1


if __name__ == "__main__":
    sys.exit(main())
