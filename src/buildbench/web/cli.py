"""What ``buildbench view`` does: serve the runs, or write them as a static site."""

from __future__ import annotations

from pathlib import Path

import click

from buildbench.httpguard import is_loopback

from .data import ViewerData
from .runs import ViewerInputError, open_runs
from .server import STATIC_ROOT, ViewerServer, bundle_ready
from .static_export import write_static


def serve(run_dirs: list[Path], host: str, port: int) -> None:
    """Serve ``run_dirs`` until interrupted (Ctrl-C).

    Raises:
        ViewerInputError: A folder holds no run, the bundle is missing, or the port is taken.
    """
    if not bundle_ready(STATIC_ROOT):
        raise ViewerInputError(f"the viewer bundle is missing from {STATIC_ROOT}; run `make web`")
    data = ViewerData(open_runs(list(run_dirs)))
    try:
        server = ViewerServer(data, host, port)
    except OSError as exc:
        raise ViewerInputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    if not is_loopback(host):
        click.echo(f"warning: serving on {host}, reachable from other machines; the viewer has no login",
                   err=True)
    click.echo(f"buildbench view: {len(data.runs)} run(s) at {server.url} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def write_static_site(run_dirs: list[Path], out: Path) -> None:
    """Write the static viewer of ``run_dirs`` into ``out`` and say what was written."""
    data = ViewerData(open_runs(list(run_dirs)))
    counts = write_static(data, out)
    click.echo(f"wrote the viewer of {counts['runs']} run(s), {counts['episodes']} episode(s), "
               f"{counts['images']} image(s) to {out}; open {out / 'index.html'}")
