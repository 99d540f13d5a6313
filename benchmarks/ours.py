"""jaxsim_like measured through its public API, the same way as the jaxsim peer (mixed representation)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import states as st
from benchmarks import timing

DYNAMICS_FUNCTIONS = ("forward_kinematics", "inverse_dynamics", "mass_matrix", "forward_dynamics")


def _modules() -> tuple[ModuleType, ModuleType]:
    return importlib.import_module("jaxsim_like"), importlib.import_module("jaxsim_like.dynamics")


def unavailable() -> str | None:
    """Why jaxsim_like cannot be benchmarked yet, or None when its API is complete."""
    try:
        package, dynamics = _modules()
    except ImportError as error:
        return f"import jaxsim_like failed: {error}"
    missing = [f"jaxsim_like.{name}" for name in ("load_model", "State") if not hasattr(package, name)]
    missing += [f"jaxsim_like.dynamics.{name}" for name in DYNAMICS_FUNCTIONS if not hasattr(dynamics, name)]
    if missing:
        return "jaxsim_like does not provide " + ", ".join(missing)
    return None


def load(urdf_path: str) -> Any:
    """The model, floating base, from `jaxsim_like.load_model`."""
    package, _ = _modules()
    return package.load_model(str(urdf_path))


def joint_names(model: Any) -> list[str]:
    """Joint names in DoF order (`model.joint_names`)."""
    return list(model.joint_names)


def build_state(model: Any, state: dict) -> Any:
    """jaxsim_like state for one state of benchmarks.states (mixed representation); vmap-able."""
    package, _ = _modules()
    return package.State.build(
        model,
        base_position=state["base_position"],
        base_quaternion=state["base_quaternion"],
        base_velocity=state["base_velocity"],
        joint_positions=state["joint_positions"],
        joint_velocities=state["joint_velocities"],
        velocity_representation="mixed",
    )


def _inputs(state: dict) -> dict:
    keys = ("joint_torques", "base_acceleration", "joint_accelerations")
    return {key: jnp.asarray(state[key]) for key in keys}


def functions() -> dict[str, Callable]:
    """The four algorithms as `fn(model, state, inputs)`; inputs holds torques and accelerations."""
    _, dynamics = _modules()
    return {
        "FK": lambda model, state, inputs: dynamics.forward_kinematics(model, state),
        "RNEA": lambda model, state, inputs: dynamics.inverse_dynamics(
            model,
            state,
            base_acceleration=inputs["base_acceleration"],
            joint_accelerations=inputs["joint_accelerations"],
        ),
        "CRBA": lambda model, state, inputs: dynamics.mass_matrix(model, state),
        "ABA": lambda model, state, inputs: dynamics.forward_dynamics(
            model, state, joint_torques=inputs["joint_torques"]
        ),
    }


def aba(model: Any, state: dict) -> tuple[np.ndarray, np.ndarray]:
    """Forward dynamics of one state: (mixed base acceleration (6,), joint accelerations)."""
    base, joints = jax.jit(functions()["ABA"])(model, build_state(model, state), _inputs(state))
    return np.asarray(base), np.asarray(joints)


def timings(
    urdf_path: str,
    dofs: int,
    num_states: int = 64,
    sizes: Sequence[int] = timing.BATCH_SIZES,
    quick: bool = False,
    seed: int = 0,
) -> list[dict]:
    """Compile, dispatched, in-graph and vmapped timings of FK, RNEA, CRBA, ABA for a model with `dofs` joints."""
    model = load(urdf_path)
    states = st.random_states(dofs, num_states, seed)
    return timing.time_algorithms(
        "jaxsim_like", model, states, build_state, _inputs, functions(), sizes=sizes, quick=quick,
        vectorizers={"chunked": _chunked},
    )


def _chunked(fn: Callable) -> Callable:
    """``fn(model, state, inputs)`` over a batch of states and inputs through
    ``jaxsim_like.batching.chunked_vmap`` (chunks of 8 on the CPU), the batched entry point the
    package recommends there."""
    batching = importlib.import_module("jaxsim_like.batching")
    return lambda model, states, inputs: batching.chunked_vmap(lambda s, i: fn(model, s, i))(states, inputs)


def load_time(urdf_path: str, repeats: int = 5) -> dict:
    """Seconds of `jaxsim_like.load_model`: first load and median of `repeats` more."""
    return timing.first_and_median(lambda: load(urdf_path), repeats)
