"""What an install holds: pyproject.toml lists the packages by hand (the repository's top
level is the distribution), so a new subpackage folder left out of the list would be
missing from every wheel and non-editable install while the tests, run from the checkout,
still pass."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_SHIPPED = {"tests", "benchmarks", "build", "dist"}


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
