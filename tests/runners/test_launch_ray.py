"""What kml-run adds to the Ray launcher, checked without a Ray cluster.

A RAY_ADDRESS that no head answers is named at once (``ray.init`` retried it for
minutes). The sweep through ``kml-run`` on a dead address is in
tests/cluster/test_cluster_ray.py (it needs the plugin).
"""

from __future__ import annotations

import socket

import pytest

from runners.launch_ray import address_problem


def _dead_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_dead_address_is_named_with_the_fix(scheme):
    address = f"{scheme}127.0.0.1:{_dead_port()}"
    problem = address_problem(address, timeout=2)
    assert problem is not None
    assert problem.startswith(f"no Ray cluster answers at {address} (")
    assert "RAY_ADDRESS" in problem and "ray start --head" in problem
    assert "\n" not in problem


def test_a_listening_head_passes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert address_problem(f"127.0.0.1:{s.getsockname()[1]}", timeout=2) is None


@pytest.mark.parametrize("address", ["auto", "local", "", None, "HEAD_HOST"])
def test_addresses_ray_resolves_itself_are_not_tried(address):
    assert address_problem(address, timeout=0.01) is None
