"""Make test_hf_parity.py (its model builders) importable from the other tests here.

pytest may import these tests as ``tests.library.*`` without putting this
folder on sys.path, so the helper module is added explicitly.
"""
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
