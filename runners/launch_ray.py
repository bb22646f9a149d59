"""What ``kml-run`` adds to hydra-ray-launcher (``hydra/launcher=ray``).

The plugin leaves two mistakes to Ray, which handles them badly for a sweep:

- ``RAY_ADDRESS`` naming no cluster (a typo, a head not started): ``ray.init``
  retried the connection for minutes, logging "Failed to connect to GCS" every few
  seconds, and never gave up. :func:`address_problem` tries the address first (one
  TCP connection, a few seconds), and ``runners.callbacks.ConfigCheck`` stops the
  sweep before any job, naming it.
- A relative ``KML_RESULTS`` or ``KML_OUTPUTS``: each worker resolved it in the
  folder its ``ray start`` ran in, so with a head started elsewhere the records went
  there while the sweep reported them ok and ``kml-report`` found nothing.
  ``conf/hydra/launcher/ray.yaml`` hands them to the workers through
  ``${kml_abspath:...}`` (:func:`absolute_path`), made absolute against the folder
  ``kml-run`` runs in.

Hydra instantiates launchers from the ``hydra_plugins`` package only, so these are
a resolver and a check around the plugin's launcher, not a subclass of it.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from omegaconf import OmegaConf

RESOLVER = "kml_abspath"
#: Seconds to wait for the head to accept a connection.
CONNECT_TIMEOUT = 5.0


def address_problem(address: object, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why no Ray head answers at ``address``, or None (it does, or Ray finds it).

    Only ``HOST:PORT`` (and ``ray://HOST:PORT``) is tried: ``auto``, ``local`` and
    an unset address are Ray's to resolve, and fail fast there when nothing runs.

    Parameters
    ----------
    address : object
        ``hydra.launcher.ray.init.address`` as resolved (``RAY_ADDRESS`` by default).
    timeout : float
        Seconds to wait for the connection.

    Returns
    -------
    str or None
        One paragraph naming the address and how to fix it, or None.
    """
    text = str(address or "").strip()
    host, sep, port = text.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__  # a timeout has no strerror
    return (
        f"no Ray cluster answers at {text} ({why}; the address is "
        "hydra.launcher.ray.init.address, from RAY_ADDRESS). Start the head "
        "(`ray start --head --port=6379`) or set RAY_ADDRESS to its HOST:PORT "
        "(`ray status` on the head prints it)."
    )


def absolute_path(path: object) -> str:
    """``path`` made absolute against the current folder (``${kml_abspath:...}``).

    Ray resolves ``runtime_env`` in the sweep's process and a worker resolves a
    relative path in its own working folder (where its ``ray start`` ran), not in
    the sweep's: absolute, every worker writes where this machine's ``kml-report``
    looks. An empty value stays empty.
    """
    text = str(path or "")
    return os.path.abspath(Path(text)) if text else text


def register() -> None:
    """Make ``${kml_abspath:path}`` available to configs."""
    OmegaConf.register_new_resolver(RESOLVER, absolute_path, replace=True)
