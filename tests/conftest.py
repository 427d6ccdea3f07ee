import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
# Ray (tests/test_cluster.py): a local Ray's processes address each other over loopback only
# (read when ray is first imported), so no test reaches an address but 127.0.0.1
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

# Tests write only to temporary folders. Hypothesis keeps its example database in a folder of
# its own for this run (not .hypothesis/ in the checkout), removed at exit.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="longpuzzle-hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
try:
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # pragma: no cover - hypothesis is in the dev extra
    pass
else:
    set_hypothesis_home_dir(_HYPOTHESIS_HOME)

CHECKOUT = Path(__file__).resolve().parents[1]
_SKIPPED = {".git", "__pycache__"}


def _checkout_files() -> set[str]:
    """Every file and folder of the checkout (git's own and bytecode caches aside)."""
    found = set()
    for root, dirs, files in os.walk(CHECKOUT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        rel = Path(root).relative_to(CHECKOUT)
        found.update(str(rel / name) for name in dirs + files)
    return found


def pytest_sessionstart(session):
    session.config._checkout_before = _checkout_files()


def pytest_sessionfinish(session, exitstatus):
    """The run fails if a test left anything in the checkout (results/eval-<time>/, .hypothesis/,
    ...): tests write to tmp_path and other temporary folders only."""
    before = getattr(session.config, "_checkout_before", None)
    if before is None:
        return
    left = sorted(_checkout_files() - before)
    if left:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = f"tests left files in the checkout {CHECKOUT}: {', '.join(left[:20])}" + (" ..." if len(left) > 20 else "")
        if tr is not None:
            tr.write("\n")
            tr.write_line(f"ERROR: {msg}", red=True)
        session.exitstatus = 1
