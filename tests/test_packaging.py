"""What an install holds: pyproject.toml lists the packages by hand (the repository's top
level is the distribution), so a new subpackage folder left out of the list would be
missing from every wheel and non-editable install while the tests, run from the checkout,
still pass."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_SHIPPED = {"tests", "benchmarks", "build", "dist", "examples", "docs"}   # examples: packages of their own


def test_every_subpackage_folder_is_a_listed_package_and_every_listed_package_exists():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"longpuzzle"}
    for init in ROOT.rglob("__init__.py"):
        parts = init.parent.relative_to(ROOT).parts
        if parts and not (parts[0] in NOT_SHIPPED or any(p.startswith(".") or p == "__pycache__" for p in parts)):
            found.add(".".join(("longpuzzle",) + parts))
    assert "longpuzzle.render.frame" in found
    assert not found - listed, f"folders not listed in pyproject.toml's packages: {sorted(found - listed)}"
    assert not listed - found, f"packages listed without a folder: {sorted(listed - found)}"



def _requirements(requirements):
    """Every requirement these requirements bring, recursively, with the extras each asks for
    (as pip resolves them from the installed distributions' metadata)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo, seen, found = [Requirement(r) for r in requirements], set(), []
    while todo:
        req = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        found.append(req)
        try:
            deps = [Requirement(r) for r in requires(req.name) or []]
        except PackageNotFoundError:
            continue
        todo += [d for d in deps if d.marker is None
                 or any(d.marker.evaluate({"extra": e}) for e in {""} | set(req.extras))]
    return found


def _closure(requirements) -> set[str]:
    """The distributions these requirements bring, as normalised names."""
    from packaging.utils import canonicalize_name
    return {canonicalize_name(r.name) for r in _requirements(requirements)}


def test_the_dev_extra_neither_brings_torch_nor_pins_gymnasium():
    """`pip install -e ".[dev]"` is predictable on any machine: no torch (a plain install on
    Linux pulls CUDA libraries of several GB) and no pin of gymnasium (RLlib's == pin would
    downgrade it); RLlib stays in its own extra, which CI adds after a CPU torch."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = _requirements(project["dependencies"] + project["optional-dependencies"]["dev"])
    names = {r.name.lower() for r in reqs}
    assert "pytest" in names and "ray" in names
    assert "torch" not in names and not any(n.startswith("nvidia-") for n in names)
    pins = [str(r) for r in reqs if r.name.lower() == "gymnasium" and any(s.operator in ("==", "<", "<=", "~=", "===")
                                                                          for s in r.specifier)]
    assert not pins, pins
    assert "ray[rllib]" in " ".join(project["optional-dependencies"]["rllib"])


def test_the_default_dataset_job_runs_on_the_base_install(tmp_path):
    """`longpuzzle dataset` with its default format runs on the README's install: in a process
    where every module of a distribution that only the extras bring (pyarrow, ray, torch, ...)
    cannot be imported, as if it were not installed."""
    import json
    import os
    import subprocess
    import sys
    from importlib.metadata import packages_distributions

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = _closure(project["dependencies"])
    extras = set().union(*(_closure(reqs) for reqs in project["optional-dependencies"].values())) - base
    from packaging.utils import canonicalize_name
    blocked = sorted(m for m, dists in packages_distributions().items()
                     if all(canonicalize_name(d) in extras for d in dists))
    assert "ray" in blocked and "pytest" in blocked
    code = ("import sys, importlib.abc\n"
            "class Absent(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name.split('.')[0] in {blocked!r}:\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Absent())\n"
            "from longpuzzle.cli import main\n"
            f"main(['dataset', '--objective', 'maze_paint/easy', '--episodes', '1', '--out', {str(tmp_path / 'd')!r}])")
    import longpuzzle
    env = dict(os.environ, PYTHONPATH=str(Path(longpuzzle.__file__).parents[1]))     # this checkout
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert json.loads((tmp_path / "d" / "manifest.json").read_text())["counts"]["rows"] > 0
