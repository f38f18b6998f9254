#!/usr/bin/env bash
# Builds llama.cpp (the copy vendored in the llama-cpp-python sdist from PyPI) as shared
# libraries into $LLAMA_PREFIX and writes $LLAMA_PREFIX/lib/pkgconfig/llama.pc.
# Does nothing when a llama.pc is already visible to pkg-config, or when the stamp matches.
#
# Env: PREFIX (install prefix), LLAMA_NATIVE=ON|OFF (GGML_NATIVE, default ON),
#      LLAMA_AMX=OFF|ON (default OFF: a native build on an AMX Xeon leaves ggml's AMX
#      kernels out, which SIGILL in the pinned source; see the OnDeviceModel article,
#      "CPUs and AMX", in Sources/HybridInference/HybridInference.docc),
#      LLAMA_BENCH=ON|OFF (also build llama-bench into $LLAMA_PREFIX/bin, default OFF:
#      it needs llama.cpp's common library, ~+3.5 min on 2 cores; added to an existing
#      cache like the server, its libraries left untouched),
#      LLAMA_SERVER=ON|OFF (also build llama-server into $LLAMA_PREFIX/bin, default ON: the
#      OpenAI-compatible backend's tests and benchmarks run against it; a cache made
#      before it existed gets it added on the next run, its libraries left untouched),
#      LLAMA_MTMD=ON|OFF (also build libmtmd, llama.cpp's multimodal library, default ON:
#      lib/libmtmd.so with include/mtmd.h and include/mtmd-helper.h, which the library
#      opens at run time for images, and bin/llama-mtmd-cli, the tests' reference; a
#      cache made before it existed gets it added, its libraries left untouched),
#      LLAMA_GPU=none|vulkan (default none: the CPU build. vulkan builds llama.cpp's Vulkan
#      backend beside the CPU one, both as modules ggml loads at run time (GGML_BACKEND_DL),
#      so one install serves machines with and without a GPU; into a prefix of its own,
#      $HI_CACHE/llama.cpp-<ver>-vulkan unless PREFIX is set, with llama-bench unless
#      LLAMA_BENCH=OFF. Needs
#      Debian's libvulkan-dev, glslc and spirv-headers; mesa-vulkan-drivers for a GPU-less
#      machine's lavapipe),
#      LLAMA_SDIST=/path/to/llama_cpp_python-<ver>.tar.gz (use a local copy, no download),
#      (with the server, scripts/build-chat-parse-reference.sh also builds the thought-parity
#      tests' reference, bin/chat-parse-reference, from the same source: one compile, ~5 s),
#      HI_PYPI_URL (default https://pypi.org), JOBS (parallel build jobs).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LLAMA_NATIVE="${LLAMA_NATIVE:-ON}"
# (LLAMA_GPU is read by common.sh, which chose the prefix from it; a GPU build has llama-bench
# unless told otherwise, the reference of its benchmark.)
if [ "$LLAMA_GPU" = none ]; then LLAMA_BENCH="${LLAMA_BENCH:-OFF}"; else LLAMA_BENCH="${LLAMA_BENCH:-ON}"; fi
LLAMA_SERVER="${LLAMA_SERVER:-ON}"
LLAMA_MTMD="${LLAMA_MTMD:-ON}"
LLAMA_AMX="${LLAMA_AMX:-OFF}"
HI_PYPI_URL="${HI_PYPI_URL:-https://pypi.org}"

# 1. A llama.cpp already visible to pkg-config (other than our own prefix) wins, unless a
#    GPU build was asked for by name: then only our own GPU prefix will do.
if [ "$LLAMA_GPU" = none ] && command -v pkg-config >/dev/null 2>&1; then
    own="$LLAMA_PREFIX/lib/pkgconfig"
    filtered=""
    IFS=: read -r -a _pcdirs <<< "${PKG_CONFIG_PATH:-}"
    for d in "${_pcdirs[@]:-}"; do
        [ -z "$d" ] && continue
        [ "${d%/}" = "$own" ] && continue
        filtered="${filtered:+$filtered:}$d"
    done
    if PKG_CONFIG_PATH="$filtered" pkg-config --exists llama 2>/dev/null; then
        exit 0
    fi
fi

# 2. Our own build, if it is complete and was made with the same settings.
STAMP="$LLAMA_PREFIX/.stamp"
# (llama-bench is not part of the stamp: a build that has it also satisfies LLAMA_BENCH=OFF.)
STAMP_WANT="llama-cpp-python=$LLAMA_CPP_PYTHON_VERSION sha256=$LLAMA_CPP_PYTHON_SHA256 native=$LLAMA_NATIVE amx=$LLAMA_AMX shared=ON type=Release"
[ "$LLAMA_GPU" = none ] || STAMP_WANT="$STAMP_WANT gpu=$LLAMA_GPU backend-dl=ON"
# llama-server has a stamp of its own, so a library cache made before the server was
# part of the set-up only gets the server added: the libraries, which other processes
# may be using, are neither rebuilt nor replaced.
# So has llama-bench: `make bench` after `make setup` adds it, and nothing else is rebuilt.
SERVER_STAMP="$LLAMA_PREFIX/.stamp-server"
BENCH_STAMP="$LLAMA_PREFIX/.stamp-bench"
# So has libmtmd (with llama-mtmd-cli): added to a cache made before it, nothing else rebuilt.
MTMD_STAMP="$LLAMA_PREFIX/.stamp-mtmd"
need_libs=1
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_WANT" ] \
   && [ -f "$LLAMA_PREFIX/lib/pkgconfig/llama.pc" ] && [ -e "$LLAMA_PREFIX/lib/libllama.so" ]; then
    need_libs=0
fi
# needs_tool <ON|OFF> <binary> <stamp>: true when the tool is wanted and not built from these libraries.
needs_tool() {
    [ "$1" = "ON" ] && { [ "$need_libs" = 1 ] || [ ! -x "$LLAMA_PREFIX/bin/$2" ] \
        || [ "$(cat "$3" 2>/dev/null)" != "$STAMP_WANT" ]; }
}
need_server=0; needs_tool "$LLAMA_SERVER" llama-server "$SERVER_STAMP" && need_server=1
need_bench=0; needs_tool "$LLAMA_BENCH" llama-bench "$BENCH_STAMP" && need_bench=1
need_mtmd=0; needs_tool "$LLAMA_MTMD" llama-mtmd-cli "$MTMD_STAMP" && need_mtmd=1
if [ "$LLAMA_MTMD" = ON ] && { [ ! -e "$LLAMA_PREFIX/lib/libmtmd.so" ] || [ ! -f "$LLAMA_PREFIX/include/mtmd.h" ] \
        || [ ! -f "$LLAMA_PREFIX/include/mtmd-helper.h" ]; }; then
    need_mtmd=1
fi
[ "$need_libs" = 0 ] && [ "$need_server" = 0 ] && [ "$need_bench" = 0 ] && [ "$need_mtmd" = 0 ] && exit 0

# 3. Build.
# The Vulkan build's own needs, said up front rather than as a CMake error minutes in.
if [ "$LLAMA_GPU" = vulkan ]; then
    vk_missing=""
    { [ -f /usr/include/vulkan/vulkan.h ] || pkg-config --exists vulkan 2>/dev/null; } || vk_missing="$vk_missing libvulkan-dev"
    command -v glslc >/dev/null 2>&1 || vk_missing="$vk_missing glslc"
    { [ -d /usr/share/cmake/SPIRV-Headers ] || [ -d /usr/lib/cmake/SPIRV-Headers ] \
        || [ -f /usr/include/spirv/unified1/spirv.hpp ]; } || vk_missing="$vk_missing spirv-headers"
    [ -z "$vk_missing" ] || hi_die "LLAMA_GPU=vulkan needs the Vulkan headers and shader compiler: on Debian/Ubuntu, apt-get install$vk_missing (and mesa-vulkan-drivers for the CPU's lavapipe device)"
fi
"$HI_SCRIPTS/setup-python.sh"
CMAKE="$HI_VENV/bin/cmake"
NINJA="$HI_VENV/bin/ninja"
[ -x "$CMAKE" ] && [ -x "$NINJA" ] || hi_die "cmake/ninja missing from $HI_VENV (run scripts/setup-python.sh)"
# The Vulkan shader generator is a nested CMake project that looks for ninja on PATH.
[ "$LLAMA_GPU" = none ] || export PATH="$HI_VENV/bin:$PATH"
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 \
    || hi_die "no C++ compiler found (on Debian/Ubuntu: apt-get install build-essential)"

JOBS="${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
case "$JOBS" in 1|2) est=6;; 3|4) est=4;; *) est=2;; esac
per=$est; [ "$need_libs" = 1 ] || est=0
# (llama-bench on top of the libraries' build dir reuses their objects; added alone it builds them.)
[ "$need_bench" = 1 ] && { [ "$need_libs" = 1 ] && est=$((est + per)) || est=$((est + per + per)); }
[ "$need_server" = 1 ] && est=$((est + per * 2))  # measured: the server is ~2x the libraries
# (libmtmd is part of the server's build: after it, only llama-mtmd-cli is left to build.)
[ "$need_mtmd" = 1 ] && { [ "$need_server" = 1 ] && est=$((est + 1)) || est=$((est + per * 2)); }
hi_log "building llama.cpp $LLAMA_CPP_PYTHON_VERSION (first run only, ~$est min)..."
t0=$(date +%s)

mkdir -p "$HI_CACHE/build"
WORK="$(mktemp -d "$HI_CACHE/build/llama.XXXXXX")"
trap 'rm -rf "$WORK"; rmdir "$HI_CACHE/build" 2>/dev/null || true' EXIT

SDIST_NAME="llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
SDIST="$WORK/$SDIST_NAME"
if [ -n "${LLAMA_SDIST:-}" ]; then
    [ -f "$LLAMA_SDIST" ] || hi_die "LLAMA_SDIST=$LLAMA_SDIST does not exist"
    SDIST="$LLAMA_SDIST"
else
    hi_log "downloading $SDIST_NAME from PyPI"
    if ! "$HI_VENV/bin/python" "$HI_SCRIPTS/pypi_download.py" "$HI_PYPI_URL" llama-cpp-python \
            "$LLAMA_CPP_PYTHON_VERSION" "$SDIST_NAME" "$SDIST"; then
        hi_log "PyPI JSON API download failed; falling back to pip download"
        "$HI_VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
            --no-binary llama-cpp-python -d "$WORK/pip" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
            || hi_die "could not download llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sdist from PyPI"
        mv "$WORK/pip/$SDIST_NAME" "$SDIST" || hi_die "pip download did not produce $SDIST_NAME"
    fi
fi
got="$(hi_sha256 "$SDIST")"
[ "$got" = "$LLAMA_CPP_PYTHON_SHA256" ] \
    || hi_die "sha256 mismatch for $SDIST_NAME: got $got, want $LLAMA_CPP_PYTHON_SHA256"

SRC_TOP="llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
tar -xzf "$SDIST" -C "$WORK" "$SRC_TOP" || hi_die "could not extract $SRC_TOP from $SDIST_NAME"
# The Llama 3 vocabulary the prompt-parity tests use, from this sdist rather than a second download.
LLAMA_SDIST="$SDIST" "$HI_SCRIPTS/fetch-vocab.sh" >/dev/null || hi_log "could not extract the Llama 3 vocabulary"
SRC="$WORK/$SRC_TOP"
# Debian 12's Vulkan headers predate one extension the Vulkan backend names; see the script.
if [ "$LLAMA_GPU" = vulkan ]; then
    "$HI_VENV/bin/python" "$HI_SCRIPTS/patch-ggml-vulkan.py" "$SRC" || hi_die "could not prepare the Vulkan backend's source"
fi
BLD="$WORK/build"

common_flags=(
    -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA"
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_INSTALL_PREFIX="$LLAMA_PREFIX"
    -DCMAKE_INSTALL_LIBDIR=lib
    -DCMAKE_INSTALL_RPATH='$ORIGIN;$ORIGIN/../lib'
    -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON
    -DBUILD_SHARED_LIBS=ON
    -DGGML_NATIVE="$LLAMA_NATIVE"
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF
    -DLLAMA_TOOLS_INSTALL=OFF
)
# Vulkan: every backend (CPU included) a module in lib/, found there by the path built into
# libggml (GGML_BACKEND_DIR) when llama_backend_init loads them; one native CPU module, as
# in the CPU build, rather than one per instruction set.
if [ "$LLAMA_GPU" = vulkan ]; then
    common_flags+=(-DGGML_BACKEND_DL=ON -DGGML_VULKAN=ON -DGGML_CPU_ALL_VARIANTS=OFF
                   -DGGML_BACKEND_DIR="$LLAMA_PREFIX/lib")
    # On x86 ggml refuses GGML_NATIVE with loadable backends (the CPU module's feature check
    # needs the instruction sets by name), so a native build names this CPU's own from
    # /proc/cpuinfo; the module then also refuses to load on a CPU that lacks one.
    case "$(uname -m)" in
        x86_64|amd64)
            if [ "$LLAMA_NATIVE" = ON ] && [ -r /proc/cpuinfo ]; then
                flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
                has() { case "$flags" in *" $1 "*) echo ON;; *) echo OFF;; esac; }
                avx512=OFF
                [ "$(has avx512f)$(has avx512cd)$(has avx512vl)$(has avx512dq)$(has avx512bw)" = ONONONONON ] && avx512=ON
                common_flags+=(-DGGML_NATIVE=OFF
                    -DGGML_SSE42="$(has sse4_2)" -DGGML_AVX="$(has avx)" -DGGML_AVX2="$(has avx2)"
                    -DGGML_FMA="$(has fma)" -DGGML_F16C="$(has f16c)" -DGGML_BMI2="$(has bmi2)"
                    -DGGML_AVX_VNNI="$(has avx_vnni)" -DGGML_AVX512="$avx512"
                    -DGGML_AVX512_VBMI="$(has avx512_vbmi)" -DGGML_AVX512_VNNI="$(has avx512_vnni)"
                    -DGGML_AVX512_BF16="$(has avx512_bf16)")
            fi ;;
    esac
fi
# AMX: `-march=native` on a Sapphire/Emerald Rapids host turns on ggml's AMX kernels,
# which crash (SIGILL in tinygemm_kernel_amx) in the pinned source. GCC and clang let
# an explicit -mno-<isa> win over -march whatever the order, so everything else native
# stays. The library also refuses the AMX buffer type at run time (CPUFeatures.swift),
# for llama.cpp builds that did not come from here.
if [ "$LLAMA_AMX" != "ON" ]; then
    case "$(uname -m)" in
        x86_64|amd64)
            no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
            common_flags+=(-DCMAKE_C_FLAGS="$no_amx" -DCMAKE_CXX_FLAGS="$no_amx"
                           -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF) ;;
    esac
fi
# Like run_quiet for a build, and on a terminal a progress bar from ninja's [n/m] lines.
run_build() {
    local log="$WORK/last.log"
    if [ -t 2 ]; then
        if ! "$@" 2>&1 | tee "$log" | hi_progress_bar "building llama.cpp"; then
            tail -n 40 "$log" >&2
            hi_die "command failed: $*"
        fi
    else
        run_quiet "$@"
    fi
}
run_quiet() {  # run a command, show its output only if it fails
    local log="$WORK/last.log"
    if ! "$@" >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        hi_die "command failed: $*"
    fi
}

# The tools' build dir (the server, libmtmd), with common + tools, so that they can be
# added to an existing prefix; configured the same way by each, so that the second
# reuses the first's objects (libllama-common, libmtmd).
TBLD="$WORK/build-tools"
# The GPU build makes libraries and tools in one build dir: its shaders take long to
# generate and compile, and a second dir would do it again.
[ "$LLAMA_GPU" = none ] || TBLD="$BLD"
configure_tools() {
    run_quiet "$CMAKE" -S "$SRC" -B "$TBLD" --no-warn-unused-cli "${common_flags[@]}" \
        -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
}

# The server: only the llama-server target. Only what the libraries' install lacks is
# copied (the binary, libllama-common, libmtmd, the server library); it finds the
# installed libllama/libggml through its $ORIGIN/../lib rpath: same source, same flags.
build_server() {
    local sbld="$TBLD" lib
    hi_log "building llama-server"
    configure_tools
    run_build "$CMAKE" --build "$sbld" -j "$JOBS" --target llama-server
    mkdir -p "$LLAMA_PREFIX/bin" "$LLAMA_PREFIX/lib"
    while IFS= read -r lib; do
        cp -P "$lib" "$LLAMA_PREFIX/lib/"
    done < <(find "$sbld" \( -name 'libllama-common.so*' -o -name 'libmtmd.so*' \
                -o -name 'libllama-server-impl.so*' \) \( -type f -o -type l \))
    # Copied then renamed, so a test that runs the old binary meanwhile is not disturbed.
    cp "$sbld/bin/llama-server" "$LLAMA_PREFIX/bin/.llama-server.new"
    mv -f "$LLAMA_PREFIX/bin/.llama-server.new" "$LLAMA_PREFIX/bin/llama-server"
    if command -v ldd >/dev/null 2>&1; then
        missing="$(ldd "$LLAMA_PREFIX/bin/llama-server" 2>&1 | grep 'not found' || true)"
        [ -z "$missing" ] || hi_die "llama-server: unresolved libraries: $(echo "$missing" | tr -s ' \t\n' ' ')"
    fi
    printf '%s' "$STAMP_WANT" > "$SERVER_STAMP"
    # The thought-parity tests' reference, against the libllama-common just installed. Not
    # fatal here (an app's prefix does not need it); scripts/setup.sh retries and fails.
    LLAMA_SRC="$SRC" "$HI_SCRIPTS/build-chat-parse-reference.sh" \
        || hi_log "chat-parse-reference not built: the thought-parity tests will miss it"
}

# libmtmd, its two public headers and llama-mtmd-cli (the tests' reference), from the
# tools' build dir. The library opens libmtmd at run time (never linked), so a prefix
# without it still serves text. Files already in the prefix are replaced by rename, never
# rewritten in place: a process may have the old libmtmd mapped.
build_mtmd() {
    local lib header name
    hi_log "building libmtmd and llama-mtmd-cli"
    configure_tools
    run_build "$CMAKE" --build "$TBLD" -j "$JOBS" --target mtmd llama-mtmd-cli
    mkdir -p "$LLAMA_PREFIX/bin" "$LLAMA_PREFIX/lib" "$LLAMA_PREFIX/include"
    while IFS= read -r lib; do
        name="$(basename "$lib")"
        if [ -L "$lib" ]; then
            cp -P "$lib" "$LLAMA_PREFIX/lib/.$name.new"
        elif [ "$name" = "${name#libllama-common}" ] || [ ! -e "$LLAMA_PREFIX/lib/$name" ]; then
            cp "$lib" "$LLAMA_PREFIX/lib/.$name.new"
        else
            continue  # libllama-common: the server's copy, same source and flags
        fi
        mv -f "$LLAMA_PREFIX/lib/.$name.new" "$LLAMA_PREFIX/lib/$name"
    done < <(find "$TBLD" \( -name 'libmtmd.so*' -o -name 'libllama-common.so*' \) \( -type f -o -type l \))
    for header in mtmd.h mtmd-helper.h; do
        cp "$SRC/tools/mtmd/$header" "$LLAMA_PREFIX/include/.$header.new"
        mv -f "$LLAMA_PREFIX/include/.$header.new" "$LLAMA_PREFIX/include/$header"
    done
    cp "$TBLD/bin/llama-mtmd-cli" "$LLAMA_PREFIX/bin/.llama-mtmd-cli.new"
    mv -f "$LLAMA_PREFIX/bin/.llama-mtmd-cli.new" "$LLAMA_PREFIX/bin/llama-mtmd-cli"
    if command -v ldd >/dev/null 2>&1; then
        missing="$(ldd "$LLAMA_PREFIX/bin/llama-mtmd-cli" "$LLAMA_PREFIX/lib/libmtmd.so" 2>&1 | grep 'not found' || true)"
        [ -z "$missing" ] || hi_die "libmtmd: unresolved libraries: $(echo "$missing" | tr -s ' \t\n' ' ')"
    fi
    printf '%s' "$STAMP_WANT" > "$MTMD_STAMP"
}

# llama-bench: the libraries' build dir (made here when only the bench is added), plus the
# common library it needs. Only the bench target is built, so its files are copied by hand
# instead of `cmake --install`; libraries the prefix already holds are left alone.
build_bench() {
    local lib
    hi_log "building llama-bench"
    run_quiet "$CMAKE" -S "$SRC" -B "$BLD" --no-warn-unused-cli "${common_flags[@]}" \
        -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON
    run_build "$CMAKE" --build "$BLD" -j "$JOBS" --target llama-bench
    mkdir -p "$LLAMA_PREFIX/bin" "$LLAMA_PREFIX/lib"
    while IFS= read -r lib; do
        [ -e "$LLAMA_PREFIX/lib/$(basename "$lib")" ] || cp -P "$lib" "$LLAMA_PREFIX/lib/"
    done < <(find "$BLD" \( -name 'libllama-common.so*' -o -name 'libllama-bench-impl.so*' \) \( -type f -o -type l \))
    cp "$BLD/bin/llama-bench" "$LLAMA_PREFIX/bin/.llama-bench.new"
    mv -f "$LLAMA_PREFIX/bin/.llama-bench.new" "$LLAMA_PREFIX/bin/llama-bench"
    printf '%s' "$STAMP_WANT" > "$BENCH_STAMP"
}

if [ "$need_libs" = 0 ]; then
    [ "$need_server" = 1 ] && build_server
    [ "$need_bench" = 1 ] && build_bench
    [ "$need_mtmd" = 1 ] && build_mtmd
    hi_log "llama.cpp tools added to $LLAMA_PREFIX ($(( $(date +%s) - t0 ))s)"
    exit 0
fi

# Libraries: llama + ggml only (no common/tools), then the regular cmake install.
run_quiet "$CMAKE" -S "$SRC" -B "$BLD" --no-warn-unused-cli "${common_flags[@]}" \
    -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TOOLS=OFF
run_build "$CMAKE" --build "$BLD" -j "$JOBS"
rm -f "$STAMP" "$SERVER_STAMP" "$BENCH_STAMP" "$MTMD_STAMP"
case "$LLAMA_PREFIX" in
    "$HI_CACHE"/*) rm -rf "$LLAMA_PREFIX" ;;  # our own cache dir: start clean
esac
run_quiet "$CMAKE" --install "$BLD"


# pkg-config file with our absolute prefix (replaces the upstream one).
mkdir -p "$LLAMA_PREFIX/lib/pkgconfig"
cat > "$LLAMA_PREFIX/lib/pkgconfig/llama.pc" <<PC
prefix=$LLAMA_PREFIX
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: llama
Description: llama.cpp (vendored in llama-cpp-python $LLAMA_CPP_PYTHON_VERSION)
Version: $LLAMA_CPP_PYTHON_VERSION
Libs: -L\${libdir} -lllama
Libs.private: -lggml -lggml-base
Cflags: -I\${includedir}
PC

# Sanity checks.
gpu_libs=""; [ "$LLAMA_GPU" = vulkan ] && gpu_libs="libggml-vulkan.so"
for lib in libllama.so libggml.so libggml-base.so libggml-cpu.so $gpu_libs; do
    [ -e "$LLAMA_PREFIX/lib/$lib" ] || hi_die "build finished but $LLAMA_PREFIX/lib/$lib is missing"
done
[ -f "$LLAMA_PREFIX/include/llama.h" ] || hi_die "build finished but llama.h was not installed"
if command -v ldd >/dev/null 2>&1; then
    missing="$(LD_LIBRARY_PATH="$LLAMA_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ldd "$LLAMA_PREFIX/lib/libllama.so" "$LLAMA_PREFIX/lib/libggml-cpu.so" 2>&1 | grep 'not found' || true)"
    [ -z "$missing" ] || hi_die "unresolved runtime libraries: $(echo "$missing" | tr -s ' \t\n' ' ')"
fi

printf '%s' "$STAMP_WANT" > "$STAMP"
[ "$need_bench" = 1 ] && build_bench
[ "$need_server" = 1 ] && build_server
[ "$need_mtmd" = 1 ] && build_mtmd
hi_log "llama.cpp $LLAMA_CPP_PYTHON_VERSION installed in $LLAMA_PREFIX ($(( $(date +%s) - t0 ))s)"
