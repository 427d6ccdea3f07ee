"""The ``serve`` command: the browser app over run folders (agents/serve)."""

from __future__ import annotations

import secrets
import socket

import click


@click.command("serve")
@click.argument("folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Any other than the loopback requires the access token (printed in the URL).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="0: any free port.")
@click.option("--token", "access_token", default=None, envvar="LONGPUZZLE_SERVE_TOKEN",
              help="The access token for a non-loopback --host [default: a random one] (or $LONGPUZZLE_SERVE_TOKEN).")
@click.option("--record", type=click.Path(file_okay=False), default=None,
              help="Record live play into this folder (made if missing, served too): Play and Branch here need it.")
def serve_cmd(folders, host, port, access_token, record):
    """Browse run folders (or episode folders) in a web browser: the runs and the leaderboard,
    the episode viewer (every step's frame with its action, P and the oracle's d(s)), and two
    episodes compared; with --record, live play of any level or objective, Branch here from any
    step, and the human baselines. Serves only the folders given, on 127.0.0.1 unless told
    otherwise."""
    import uvicorn

    from longpuzzle.agents.serve.app import NotServed, make_app
    from longpuzzle.agents.serve.security import is_loopback

    if is_loopback(host):
        access_token = None
    else:
        access_token = access_token or secrets.token_urlsafe(24)
    try:
        app = make_app(folders, host=host, access_token=access_token, record=record)
    except NotServed as e:
        raise click.UsageError(str(e)) from None
    sock = listen(host, port)
    port = sock.getsockname()[1]                       # (--port 0: the one the system chose)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={access_token}" if access_token else "")
    click.echo(f"serving {len(folders)} folder(s) on {url}  (Ctrl-C to stop)")
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, or one ``error:`` line (a port in use, an address this
    machine does not have) instead of the server's traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise click.UsageError(f"cannot listen on {host}:{port}: {e.strerror or e} (--port 0: any free port)") from None
    sock.listen(128)
    return sock


COMMANDS = [serve_cmd]
