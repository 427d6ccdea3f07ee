"""The package docstring of agents/diagnose lists every module of the lab with its one job."""

from __future__ import annotations

import re
from pathlib import Path

import longpuzzle.agents.diagnose as lab


def test_the_package_docstring_lists_every_module_and_no_other():
    listed = set(re.findall(r"^    (\w+\.py) ", lab.__doc__, re.M))
    present = {p.name for p in Path(lab.__file__).parent.glob("*.py")} - {"__init__.py"}
    assert listed == present
