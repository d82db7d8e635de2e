"""Who may call our local HTTP servers (``buildbench view``, ``dreamhouse serve``).

A server on 127.0.0.1 is still reachable from any web page the user opens: the page can
send requests (a ``text/plain`` form POST needs no permission) and, through DNS rebinding
(a name of the attacker's that starts resolving to 127.0.0.1), read the answers. Two checks
close both, whatever the framework:

- the ``Host`` header must name this server: ``localhost``, the name it was told to bind
  (``--host``) or an IP address (a rebinding page always sends its own DNS name), with the
  port it listens on;
- a browser's ``Origin`` header, when there is one, must be this same host and port.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["host_allowed", "is_loopback", "origin_allowed"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or name) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split(netloc: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a ``Host`` header or URL authority; None when malformed."""
    try:
        parts = urlsplit(f"//{netloc}")
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def host_allowed(header: str | None, bind_host: str, port: int) -> bool:
    """Whether a request's ``Host`` header names this server (see the module docstring)."""
    if not header:
        return False
    split = _split(header.strip())
    if split is None:
        return False
    name, given_port = split
    if given_port not in (port, None) or (given_port is None and port != 80):
        return False
    return name in ("localhost", bind_host.lower().strip("[]")) or _is_ip(name)


def origin_allowed(origin: str | None, host_header: str | None) -> bool:
    """Whether a request's ``Origin`` (absent for non-browser clients) is the server's own."""
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not host_header:
        return False  # includes the opaque origin "null" of sandboxed frames and file: pages
    return _split(parts.netloc) == _split(host_header.strip())
