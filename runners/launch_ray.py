"""What ``kml-run`` adds to hydra-ray-launcher (``hydra/launcher=ray``).

``RAY_ADDRESS`` naming no cluster (a typo, a head not started) was left to
``ray.init``, which retried the connection for minutes, logging "Failed to connect
to GCS" every few seconds, and never gave up. :func:`address_problem` tries the
address first (one TCP connection, a few seconds), and
``runners.callbacks.ConfigCheck`` stops the sweep before any job, naming it.
"""

from __future__ import annotations

import socket

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
