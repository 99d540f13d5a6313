"""The XLA settings applied on import (jaxsim_like._xla), checked in fresh interpreters."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from jaxsim_like._xla import CPU_FLAGS, YNN_FLAG

PROBE = (
    "import json, os, jaxsim_like\n"
    "from jax._src import xla_bridge\n"
    "print(json.dumps({'flags': os.environ.get('XLA_FLAGS', ''), 'async': xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value}))\n"
)

# The compiled text of a batched product of small matrices, as the narrow phases make.
BATCHED_DOT = (
    "import json, jaxsim_like, jax, jax.numpy as jnp\n"
    "f = jax.jit(lambda a, b: jnp.einsum('kij,kpj->kpi', a, b) * 2.0 + 1.0)\n"
    "print(json.dumps(f.lower(jnp.ones((152, 3, 3)), jnp.ones((152, 8, 3))).compile().as_text()))\n"
)


# The page faults of a 64 MiB block malloc'ed, written and freed a second time.
REFAULTS = (
    "import ctypes, json, resource, jaxsim_like\n"
    "libc = ctypes.CDLL('libc.so.6')\n"
    "libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]\n"
    "def block():\n"
    "    p = libc.malloc(64 << 20)\n"
    "    ctypes.memset(p, 1, 64 << 20)\n"
    "    libc.free(p)\n"
    "block()\n"
    "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
    "block()\n"
    "print(json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before))\n"
)


def probe(script: str = PROBE, **environment: str):
    env = {key: value for key, value in os.environ.items() if key not in ("XLA_FLAGS", "JAXSIM_LIKE_KEEP_XLA_FLAGS")}
    env.update(environment)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_appends_the_flags_and_makes_dispatch_synchronous():
    settings = probe()
    for name, value in CPU_FLAGS.items():
        assert f"{name}={value}" in settings["flags"].split()
    assert settings["async"] is False


def test_flags_the_user_set_are_kept():
    settings = probe(XLA_FLAGS="--xla_cpu_use_fusion_emitters=true")
    assert "--xla_cpu_use_fusion_emitters=true" in settings["flags"].split()
    assert "--xla_cpu_use_fusion_emitters=false" not in settings["flags"]


@pytest.mark.skipif(YNN_FLAG not in CPU_FLAGS, reason="this jaxlib hands no fusion to YNNPACK")
def test_no_fusion_is_handed_to_ynnpack():
    assert "ynn" in probe(BATCHED_DOT, JAXSIM_LIKE_KEEP_XLA_FLAGS="1")
    assert "ynn" not in probe(BATCHED_DOT)


def test_opting_out_leaves_everything_as_it_was():
    settings = probe(JAXSIM_LIKE_KEEP_XLA_FLAGS="1")
    assert settings == {"flags": "", "async": True}


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_freed_blocks_stay_in_the_heap():
    """A large block freed and allocated again is not page-faulted anew (glibc's default maps it
    afresh: one fault per 4 KiB page, 16384 for 64 MiB, unless the kernel gives huge pages)."""
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        if name in os.environ:
            pytest.skip(f"{name} is set")
    assert probe(REFAULTS) < 256
