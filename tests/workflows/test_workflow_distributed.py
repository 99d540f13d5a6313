"""simulate_batch past one process: two processes joined by ``jax.distributed.initialize`` (a
coordinator on 127.0.0.1, 2 CPU devices each, cross-process collectives by Gloo) simulate the
batches of distributed_batch_check.py over the 4 global devices, and every result, gathered on
both, equals the one-process, one-device run of this process to rounding."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
TOLERANCE = 1e-12
PROCESSES = 2
TIMEOUT_S = 300


def load_check():
    """The module distributed_batch_check.py (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("jaxsim_like_distributed_batch_check", HERE / "distributed_batch_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(folder: Path) -> list[subprocess.Popen]:
    """The processes, each writing ``<id>.npz`` and its output to ``<id>.log`` in ``folder``."""
    port = free_port()
    processes = []
    for i in range(PROCESSES):
        command = [sys.executable, str(HERE / "distributed_batch_check.py"), str(port), str(i), str(PROCESSES), str(folder / f"{i}.npz")]
        with open(folder / f"{i}.log", "w") as log:
            processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
    return processes


def finish(processes: list[subprocess.Popen]) -> list[int]:
    """Each process's exit status; kills them all past ``TIMEOUT_S`` in all (and fails)."""
    deadline = time.monotonic() + TIMEOUT_S
    try:
        return [process.wait(timeout=max(1.0, deadline - time.monotonic())) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def distributed(tmp_path_factory):
    """``(reference, results)``: this process's one-device run, and each process's gathered run
    (dicts of host arrays, ``info`` a dict)."""
    folder = tmp_path_factory.mktemp("distributed")
    check = load_check()
    processes = launch(folder)
    try:
        # The one-process run, computed while the two processes run.
        reference = check.gathered(check.runs(jax.devices()[:1]))
    finally:
        done = finish(processes)
    for i, code in enumerate(done):
        assert code == 0, (folder / f"{i}.log").read_text()[-4000:]
    results = []
    for i in range(PROCESSES):
        with np.load(folder / f"{i}.npz") as data:
            result = {name: data[name] for name in data.files}
        result["info"] = json.loads(str(result["info"]))
        results.append(result)
    return reference, results


def scaled_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Largest absolute difference over ``max(1, largest magnitude of b)``; booleans as 0/1."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0)))


def test_two_processes_share_the_batch(distributed):
    _, results = distributed
    infos = [result["info"] for result in results]
    assert [info["process_count"] for info in infos] == [2, 2]
    assert [info["devices"] for info in infos] == [4, 4]
    assert [info["local_devices"] for info in infos] == [2, 2]
    # Each process holds its own half of the 8 pendulums.
    assert [info["own_rows"] for info in infos] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [info["local_rows"] for info in infos] == [[0, 4], [4, 8]]


def test_two_processes_equal_one_process(distributed, workflow_figures):
    reference, results = distributed
    worst = 0.0
    for result in results:
        assert sorted(set(result) - {"info"}) == sorted(reference)
        for name, expected in reference.items():
            assert expected.dtype == result[name].dtype, name
            difference = scaled_difference(result[name], expected)
            assert difference <= TOLERANCE, (name, difference)
            worst = max(worst, difference)
    workflow_figures("distributed: 2 processes vs 1 (max scaled difference)", worst)
    # Float64 throughout, and the padded boxes come back as 6 worlds that fell and bounced.
    positions = reference["boxes[1][0].base_position"]
    assert positions.dtype == np.float64 and positions.shape == (6, 60, 3)
    assert float(np.ptp(positions[:, :, 2])) > 0.05
