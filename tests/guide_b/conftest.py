"""Guide B's job: the tests' root, and the servers of tests/python/serving.py (nginx,
``recuo serve``), shared with the Python suite."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))
