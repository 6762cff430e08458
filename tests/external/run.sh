#!/usr/bin/env bash
# The real-engine tests (pytest marker `external`), each engine in a virtualenv of its own.
#
#   bash tests/external/run.sh           # every engine
#   bash tests/external/run.sh vllm      # vLLM only (extra arguments go to pytest)
#   bash tests/external/run.sh vllm-releases   # the last five vLLM releases, each under every policy (minutes)
#   bash tests/external/run.sh vllm-independent  # vLLM through an adapter written from the docs alone
#   bash tests/external/run.sh nanovllm  # nano-vllm only
#   bash tests/external/run.sh sglang    # SGLang only
#
# Each engine's function makes its virtualenv when it is missing, then runs that engine's tests in it.
# docs/engines.md says what each install holds and why.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# --- vLLM ------------------------------------------------------------------------------------------
# vLLM 0.33.0 without its declared dependencies (they pull torch 2.14.0 with CUDA, several GB): only the
# packages the import chain of vllm.v1.core.sched.scheduler and of VllmConfig needs, each pinned, installed
# with --no-deps. torch is the CPU build of 2.13.0 (vLLM declares 2.14.0; its scheduler runs on 2.13).
VLLM_VENV=${SCHEDCHECK_VLLM_VENV:-$HOME/.cache/schedcheck/vllm-venv}
VLLM_WHEEL=${SCHEDCHECK_VLLM_WHEEL:-vllm==0.33.0}  # or the path of a downloaded vllm-0.33.0 wheel
TORCH_CPU_INDEX=${SCHEDCHECK_TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
VLLM_TORCH=(torch==2.13.0+cpu filelock==4.3.1 typing_extensions==4.16.0 setuptools==84.2.1 sympy==1.14.0
            mpmath==1.3.0 networkx==3.6.1 Jinja2==3.1.6 MarkupSafe==3.0.4 fsspec==2026.9.0)
VLLM_DEPS=(aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 annotated-doc==0.0.7 annotated-types==0.8.0
           anyio==4.16.0 apache-tvm-ffi==0.1.11 attrs==26.1.0 cachetools==8.0.2 cbor2==6.3.0
           certifi==2026.10.19.post1 charset-normalizer==3.5.3 cloudpickle==3.1.3 einops==0.8.2 fastapi==0.136.3
           frozenlist==1.8.0 h11==0.16.0 httpcore2==2.16.2 httpx2==2.16.2 huggingface_hub==2.4.0 idna==3.20
           jiter==0.19.0 llguidance==1.7.6 msgspec==0.23.0 multidict==7.2.1 numpy==2.4.6 openai==3.57.0
           oss-harmony==0.0.11 packaging==26.4 partial-json-parser==0.2.1.1.post7 pillow==13.0.0
           prometheus_client==0.26.0 propcache==0.5.4 psutil==7.2.2 py-cpuinfo==9.0.0 pybase64==1.5.1
           pydantic==2.14.4 pydantic_core==2.50.5 PyYAML==6.0.4 pyzmq==27.3.0 regex==2026.11.19 requests==2.34.2
           safetensors==0.8.0 sniffio==1.3.1 starlette==1.10.0 tokenizers==0.23.3 tqdm==4.70.1
           transformers==5.20.2 truststore==0.10.5 typing-inspection==0.4.5 urllib3==2.8.0 uvloop==0.23.0
           xgrammar==0.2.8 yarl==1.25.1)
SCHEDCHECK_TEST=(hypothesis==6.155.2 z3-solver==5.4.1.0 crosshair-tool==0.0.113 pytest==9.0.3)

# make_light_venv VENV WHEEL HINT DEPS...: a virtualenv at VENV holding WHEEL without its declared dependencies, the
# CPU torch, DEPS (each --no-deps), the test tools and this project; HINT says how to give a wheel by path.
make_light_venv() {
    local venv=$1 wheel=$2 hint=$3
    shift 3
    rm -rf "$venv" && "${SCHEDCHECK_PYTHON:-python3.11}" -m venv "$venv" || return 1
    local pip=("$venv/bin/python" -m pip install --quiet --no-deps)
    "${pip[@]}" "$wheel" || { echo "could not install $wheel: $hint" >&2; return 1; }
    "${pip[@]}" "${VLLM_TORCH[@]}" 2>/dev/null || "${pip[@]}" --extra-index-url "$TORCH_CPU_INDEX" "${VLLM_TORCH[@]}" \
        || { echo "could not install ${VLLM_TORCH[0]}: the CPU build of torch is on PyTorch's own index," \
                  "$TORCH_CPU_INDEX, not on PyPI; set SCHEDCHECK_TORCH_CPU_INDEX to a mirror of it you can reach," \
                  "or install that wheel into $venv yourself and run this again" >&2; return 1; }
    "${pip[@]}" "$@" || return 1
    "$venv/bin/python" -m pip install --quiet "${SCHEDCHECK_TEST[@]}" || return 1
    "${pip[@]}" -e "$ROOT" || return 1
}

make_vllm_venv() {
    if "$VLLM_VENV/bin/python" -c "import vllm.v1.core.sched.scheduler, conformance, pytest" 2>/dev/null; then
        return 0
    fi
    echo "making the vLLM virtualenv at $VLLM_VENV (about 2.2 GB)" >&2
    make_light_venv "$VLLM_VENV" "$VLLM_WHEEL" \
        "set SCHEDCHECK_VLLM_WHEEL to the path of a downloaded vllm wheel (pip download vllm==0.33.0 --no-deps)" \
        "${VLLM_DEPS[@]}"
}

run_vllm() {
    make_vllm_venv || { echo "could not make the vLLM virtualenv at $VLLM_VENV" >&2; return 1; }
    (cd "$ROOT" && "$VLLM_VENV/bin/python" -m pytest -q -m external tests/external/test_vllm.py "$@")
}

run_vllm_independent() {
    make_vllm_venv || { echo "could not make the vLLM virtualenv at $VLLM_VENV" >&2; return 1; }
    (cd "$ROOT" && "$VLLM_VENV/bin/python" -m pytest -q -m external tests/external/test_vllm_independent.py "$@")
}

# --- vLLM releases ---------------------------------------------------------------------------------
# The last five minor releases, each in a virtualenv of its own made as above (0.33.0's is the one above), then
# each checked under every policy (tests/external/vllm_releases.py writes the table in docs/engines.md).
VLLM_RELEASES=(0.30.0 0.31.0 0.32.0 0.33.0 0.34.0)

run_vllm_releases() {
    local release
    for release in "${VLLM_RELEASES[@]}"; do
        if [[ $release != 0.33.0 ]]; then
            VLLM_VENV=${SCHEDCHECK_CACHE:-$HOME/.cache/schedcheck}/vllm-$release-venv VLLM_WHEEL=vllm==$release \
                make_vllm_venv || { echo "could not make the virtualenv of vllm $release" >&2; return 1; }
        else
            make_vllm_venv || { echo "could not make the vLLM virtualenv at $VLLM_VENV" >&2; return 1; }
        fi
    done
    (cd "$ROOT" && "$VLLM_VENV/bin/python" -m tests.external.vllm_releases --measure "$@" \
        && "$VLLM_VENV/bin/python" -m pytest -q -m external tests/external/test_vllm_releases.py)
}

# --- nano-vllm -------------------------------------------------------------------------------------
# nano-vllm's scheduler from a source checkout at the commit conformance/engines/nanovllm.py was checked at,
# cloned when ${SCHEDCHECK_NANOVLLM:-~/.cache/schedcheck/nano-vllm} holds none (an existing checkout is used
# as it is). Its scheduler modules need numpy and xxhash only: no torch, no transformers (docs/engines.md).
NANOVLLM_COMMIT=bb823b3e06983d71485a8e1f23715ebd87d98ef8
NANOVLLM_DIR=${SCHEDCHECK_NANOVLLM:-$HOME/.cache/schedcheck/nano-vllm}
NANOVLLM_REPO=${SCHEDCHECK_NANOVLLM_REPO:-https://github.com/GeeeekExplorer/nano-vllm}
NANOVLLM_VENV=${SCHEDCHECK_NANOVLLM_VENV:-$HOME/.cache/schedcheck/nanovllm-venv}
NANOVLLM_DEPS=(numpy==2.4.6 xxhash==4.1.0)

make_nanovllm_venv() {
    if "$NANOVLLM_VENV/bin/python" -c "import numpy, xxhash, conformance, pytest" 2>/dev/null; then
        return 0
    fi
    echo "making the nano-vllm virtualenv at $NANOVLLM_VENV" >&2
    rm -rf "$NANOVLLM_VENV" && "${SCHEDCHECK_PYTHON:-python3.11}" -m venv "$NANOVLLM_VENV" || return 1
    "$NANOVLLM_VENV/bin/python" -m pip install --quiet "${NANOVLLM_DEPS[@]}" "${SCHEDCHECK_TEST[@]}" || return 1
    "$NANOVLLM_VENV/bin/python" -m pip install --quiet --no-deps -e "$ROOT" || return 1
}

run_nanovllm() {
    if [[ ! -f "$NANOVLLM_DIR/nanovllm/engine/scheduler.py" ]]; then
        echo "no nano-vllm checkout at $NANOVLLM_DIR: cloning $NANOVLLM_REPO" >&2
        mkdir -p "$(dirname "$NANOVLLM_DIR")" && git clone --quiet "$NANOVLLM_REPO" "$NANOVLLM_DIR" \
            && git -C "$NANOVLLM_DIR" -c advice.detachedHead=false checkout --quiet "$NANOVLLM_COMMIT" \
            || { echo "could not clone nano-vllm into $NANOVLLM_DIR; without network, point SCHEDCHECK_NANOVLLM at" \
                      "an existing checkout (or an unpacked source archive) of commit $NANOVLLM_COMMIT: the folder" \
                      "that holds nanovllm/engine/scheduler.py" >&2; return 1; }
    fi
    local head
    head=$(git -C "$NANOVLLM_DIR" rev-parse HEAD 2>/dev/null || echo unknown)
    [[ $head == "$NANOVLLM_COMMIT" ]] || echo "note: $NANOVLLM_DIR is at $head; the adapter was checked at $NANOVLLM_COMMIT" >&2
    make_nanovllm_venv || { echo "could not make the nano-vllm virtualenv at $NANOVLLM_VENV" >&2; return 1; }
    (cd "$ROOT" && SCHEDCHECK_NANOVLLM="$NANOVLLM_DIR" "$NANOVLLM_VENV/bin/python" -m pytest -q -m external \
        tests/external/test_nanovllm.py "$@")
}

# --- SGLang ----------------------------------------------------------------------------------------
# sglang 0.5.23 without its declared dependencies (they pull CUDA torch and kernels): only the packages the import
# chain of sglang.srt.managers.scheduler needs, each pinned, installed with --no-deps; torch is the same CPU build
# as vLLM's. torchvision and tvm_ffi are stand-ins of the adapter (conformance/engines/sglang.py, docs/engines.md).
SGLANG_VENV=${SCHEDCHECK_SGLANG_VENV:-$HOME/.cache/schedcheck/sglang-venv}
SGLANG_WHEEL=${SCHEDCHECK_SGLANG_WHEEL:-sglang==0.5.23}  # or the path of a downloaded sglang-0.5.23 wheel
SGLANG_DEPS=(aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 annotated-doc==0.0.7 annotated-types==0.8.0
             anyio==4.16.0 attrs==26.1.0 certifi==2026.10.19.post1 click==8.5.1 compressed-tensors==0.18.0 dill==0.4.1
             distro==1.9.0 einops==0.8.2 fastapi==0.165.0 frozendict==2.5.1 frozenlist==1.8.0 gguf==0.19.0 h11==0.16.0
             httpcore==1.0.9 httpcore2==2.17.0 httpx==0.29.0 httpx2==2.17.0 huggingface_hub==2.4.0 idna==3.21
             ipython==9.18.1 jiter==0.19.0 loguru==0.7.3 msgspec==0.23.0 multidict==7.2.1 numpy==2.4.6 openai==2.8.0
             opentelemetry-api==1.45.3 orjson==3.13.0 packaging==26.4 partial-json-parser==0.2.1.1.post7 pillow==13.0.0
             propcache==0.5.4 psutil==7.2.2 pybase64==1.5.1 pydantic==2.14.4 pydantic_core==2.50.5 Pygments==2.21.0
             PyYAML==6.0.4 pyzmq==27.3.0 regex==2026.12.2 requests==2.34.2 safetensors==0.8.0 sentencepiece==0.2.1
             setproctitle==1.3.8 sniffio==1.3.1 starlette==1.10.0 tokenizers==0.23.3 tqdm==4.70.1 traitlets==5.16.1
             transformers==5.25.0 triton==3.9.0 truststore==0.10.5 typing-inspection==0.4.5 urllib3==2.8.0
             uvicorn==0.55.0 xxhash==4.1.0 yarl==1.25.1)

make_sglang_venv() {
    if "$SGLANG_VENV/bin/python" -c "import sglang, conformance, pytest" 2>/dev/null; then
        return 0
    fi
    echo "making the SGLang virtualenv at $SGLANG_VENV (about 2.4 GB)" >&2
    make_light_venv "$SGLANG_VENV" "$SGLANG_WHEEL" \
        "set SCHEDCHECK_SGLANG_WHEEL to the path of a downloaded sglang wheel (pip download sglang==0.5.23 --no-deps)" \
        "${SGLANG_DEPS[@]}"
}

run_sglang() {
    make_sglang_venv || { echo "could not make the SGLang virtualenv at $SGLANG_VENV" >&2; return 1; }
    (cd "$ROOT" && "$SGLANG_VENV/bin/python" -m pytest -q -m external tests/external/test_sglang.py "$@")
}

# --- dispatch: one function per engine; `all` runs every one ------------------------------------------
engine=${1:-all}
[[ $# -gt 0 ]] && shift
status=0
case "$engine" in
    all) run_vllm || status=1; run_nanovllm || status=1; run_sglang || status=1 ;;
    nanovllm) run_nanovllm "$@" || status=1 ;;
    sglang) run_sglang "$@" || status=1 ;;
    vllm) run_vllm "$@" || status=1 ;;
    vllm-releases) run_vllm_releases "$@" || status=1 ;;
    vllm-independent) run_vllm_independent "$@" || status=1 ;;
    *) echo "unknown engine '$engine'; give vllm, vllm-releases, vllm-independent, nanovllm or sglang, or nothing for every engine" >&2
       exit 2 ;;
esac
exit $status
