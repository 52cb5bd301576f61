"""Make the shared helpers of the Allo ports (``peers_util.py`` beside this file) importable.

pytest may import these tests as ``tests.peers.*`` without putting this folder
on sys.path, so the helper module is added explicitly.
"""
import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
