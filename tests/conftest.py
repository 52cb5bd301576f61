"""Every HLS project the suite emits is linted as it is generated (streamdsl/backend/hls/lint.py): the HLS
builds lint their project when STREAMDSL_LINT is set, here (and so in the CLI subprocesses the tests start), to
every rule but the ones tests/emitted.py lists as pending.  A developer can set STREAMDSL_LINT=1 to see them all."""
import os

from tests.emitted import lint_env

os.environ.setdefault("STREAMDSL_LINT", lint_env())
