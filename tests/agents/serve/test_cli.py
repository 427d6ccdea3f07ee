"""``longpuzzle serve`` as a user runs it: the URL it prints answers, and a port it cannot
listen on is one ``error:`` line with exit status 2."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import urllib.request

from click.testing import CliRunner

from longpuzzle.cli import cli


def test_a_port_in_use_is_one_error_line(greedy_run):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = CliRunner().invoke(cli, ["serve", str(greedy_run), "--port", str(port)])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot listen on 127.0.0.1:{port}")


def test_the_printed_url_serves_the_runs(greedy_run):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "longpuzzle", "serve", str(greedy_run), "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line + p.stderr.read() if p.poll() is not None else line
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))     # never a proxy: 127.0.0.1 only
        with direct.open(url.group(0) + "api/runs", timeout=60) as resp:
            assert resp.status == 200
            assert b'"agent":"greedy"' in resp.read()
    finally:
        p.terminate()
        p.wait(30)
