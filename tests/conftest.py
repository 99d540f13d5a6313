"""Test-wide settings: float64, so that the dynamics can be compared with Pinocchio at 1e-9,
subprocesses that import this checkout's package, whether or where it is installed, and JAX's
persistent compilation cache in a folder of this run.

Compilation is most of the suite's cost. The two pytest-xdist workers (and the tests of one
worker that jit the same function anew) build many identical executables: with the cache, the
second one is read from the folder instead of compiled. The folder is made by the controlling
process, shared with its workers and removed at the end, so every run starts from an empty cache
(as a clean checkout does) and no run depends on an earlier one. Subprocesses do not inherit it
(the cache is set through ``jax.config``, not the environment) unless a test passes it on (the
docs snippets do).

The workers (``--dist loadgroup``, see pyproject.toml) take whole groups of tests: a test file,
except that the dynamics tests of one model case (every file's, sharing the one program the
``lab`` fixture compiles per case, and the modules that name the case they read, ``LAB_CASE``)
form one group, so each case compiles on one worker only.
The files that take longest are handed out first, so that both workers finish together.
"""

import gc
import os
import shutil
import tempfile
from pathlib import Path

# Most of the suite's programs run a few steps: XLA's backend optimisation level 0 compiles them in
# about half the time and runs them slower (nothing is timed; results change by rounding only). A
# program that runs thousands of steps asks for level 3 again (``compiler_options``). Read when
# JAX starts its backend, so set before any test runs; subprocesses inherit it.
os.environ["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS"), "--xla_backend_optimization_level=0"]))

import jax  # noqa: E402
import pytest  # noqa: E402

# Tracing allocates millions of short-lived Python objects, and at the default thresholds (700, 10,
# 10) the collector keeps scanning the workers' large heaps of live ones (traced programs, caches);
# at these, the full collections (which scan every live object) are rare (measured: docs/changelog.md,
# issue 34). Reference counting frees the objects as before; only cycles wait longer.
gc.set_threshold(50_000, 20, 10)

jax.config.update("jax_enable_x64", True)

REPOSITORY = Path(__file__).resolve().parents[1]
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))

CACHE_KEY = "jaxsim_like_test_cache"
# Executables that compile faster than this are not written (reading one back costs about as much).
# JAX compresses the entries with zstandard where it is installed (the test extra), otherwise with
# zlib, many times slower on executables of megabytes (measured: docs/changelog.md, suite time).
CACHE_MIN_COMPILE_SECONDS = 0.2


def pytest_configure(config: pytest.Config) -> None:
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        folder = worker[CACHE_KEY]
    else:
        folder = tempfile.mkdtemp(prefix="jaxsim_like-test-cache-")
        config.stash[_FOLDER] = folder
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", CACHE_MIN_COMPILE_SECONDS)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist: every worker uses the controller's folder."""
    node.workerinput[CACHE_KEY] = node.config.stash[_FOLDER]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _FOLDER in config.stash:
        shutil.rmtree(config.stash[_FOLDER], ignore_errors=True)


_FOLDER = pytest.StashKey[str]()

# The longest groups, longest first (measured: each test's process CPU, its subprocesses' included,
# in a whole run, summed per group); the rest, each under about 5 s, follow in collection order. xdist hands the groups out
# in this order only with --no-loadscope-reorder (pyproject.toml): by default it sorts them by
# their number of tests, which puts the long groups of few tests last.
LONGEST = (
    "tests/simulation/test_bodies_touching.py",
    "tests/simulation/test_self_collision.py",
    "tests/simulation/test_world_contacts.py",
    "tests/workflows/test_workflow_tasks.py",
    "tests/simulation/test_sim_implicit.py",
    "tests/test_docs_snippets.py",
    "tests/simulation/test_hulls.py",
    "tests/simulation/test_ellipsoid_pairs.py",
    "tests/simulation/test_world_step.py",
    "tests/api/test_gazebo_behaviour.py",
    "tests/simulation/test_sim_loops.py",
    "tests/workflows/test_workflow_cli.py",
    "tests/simulation/test_sim_gradients.py",
    "tests/simulation/test_float32_with_x64.py",
    "tests/workflows/test_workflow_batching.py",
    "tests/simulation/test_pair_rest.py",
    "tests/workflows/test_workflow_examples.py",
    "tests/simulation/test_sim_couplings.py",
    "tests/simulation/test_pile.py",
    "tests/simulation/test_ellipsoid_terrain.py",
    "tests/simulation/test_sim_sdf_joint_closures.py",
    "tests/workflows/test_workflow_optimization.py",
    "tests/workflows/test_workflow_distributed.py",
    "tests/api/test_contacts.py",
    "tests/api/test_joints.py",
    "tests/simulation/test_file_surfaces.py",
    "tests/simulation/test_spinning_throws.py",
    "tests/simulation/test_box_on_cap.py",
    "tests/workflows/test_workflow_cli_runs.py",
    "tests/dynamics/test_mjcf.py",
    "tests/dynamics/test_gradients.py",
    "tests/simulation/test_sim_world_closures.py",
    "tests/workflows/test_workflow_recording_plots.py",
    "tests/simulation/test_sim_ball_cones.py",
    "tests/simulation/test_mjcf_contact_rules.py",
    "tests/simulation/test_contact_slots.py",
    "tests/dynamics/test_robot_packages.py",
    "tests/simulation/test_sim_tendons.py",
    "tests/api/test_compile.py",
    "tests/simulation/test_swept_points.py",
    "tests/simulation/test_sim_spatial_tendons.py",
    "tests/simulation/test_collision_geometry.py",
    "tests/api/test_links.py",
    "tests/simulation/test_mjcf_geom_surfaces.py",
    "tests/simulation/test_collision_world.py",
    "tests/simulation/test_sim_ball_joints.py",
    "tests/simulation/test_sim_batching.py",
    "tests/simulation/test_sim_joint_limits.py",
    "dynamics-humanoid-floating",
    "tests/simulation/test_sim_analytic.py",
    "tests/api/test_ball_joints.py",
    "tests/api/test_scenario_contract.py",
    "tests/simulation/test_sim_fluid.py",
    "dynamics-icub-floating",
    "tests/simulation/test_rolling_friction.py",
    "tests/simulation/test_sim_sdf_loops.py",
    "tests/simulation/test_sim_equality_solimp.py",
    "tests/simulation/test_sim_mocap.py",
    "tests/simulation/test_sim_terrain.py",
    "tests/dynamics/test_ball_joints.py",
    "tests/tasks/test_tasks_adapters.py",
    "tests/dynamics/test_screw_joints.py",
    "tests/simulation/test_pair_load.py",
    "tests/simulation/test_rolling_contacts.py",
    "tests/dynamics/test_spatial.py",
    "tests/simulation/test_sim_joint_limit_budget.py",
    "dynamics-icub-fixed",
    "tests/workflows/test_workflow_object_api.py",
    "tests/simulation/test_sim_fluid_ellipsoid.py",
    "tests/simulation/test_sim_humanoid.py",
    "tests/test_xla_settings.py",
    "tests/simulation/test_sim_mocap_contacts.py",
    "tests/tasks/test_tasks_batch.py",
    "tests/simulation/test_pile_budget.py",
    "tests/api/test_pair_budget.py",
    "dynamics-humanoid-fixed",
    "tests/tasks/test_tasks_quadruped.py",
    "dynamics-double_pendulum-floating",
    "tests/simulation/test_sim_wrenches.py",
    "dynamics-quadruped-floating",
)


def _group(item: pytest.Item) -> str:
    """The test's file, or ``dynamics-<case>`` for a dynamics test of one model case: its
    ``case`` parameter, else its module's ``LAB_CASE`` (the case whose compiled program it reads)."""
    path = item.nodeid.split("::")[0]
    params = getattr(getattr(item, "callspec", None), "params", {})
    case = params.get("case", params.get("asset_case", getattr(getattr(item, "module", None), "LAB_CASE", None)))
    if path.startswith("tests/dynamics/") and case is not None:
        return f"dynamics-{case}"
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = {id(item): _group(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))
    rank = {name: k for k, name in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(groups[id(item)], len(LONGEST)))
