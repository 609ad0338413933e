"""Shared helpers: the repository root and the cross-language vectors in tests/vectors/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"


def vectors(name: str) -> Any:
    """The parsed JSON of tests/vectors/<name>."""
    with open(VECTORS / name, encoding="utf-8") as f:
        return json.load(f)
