#!/usr/bin/env bash
# Makes a relocatable bundle of a build: bin/ (the caffe tools and C++ examples; with --tests also
# the test programs), tools/ and examples/ (links to them at the paths BVLC's build has), lib/
# (libcaffe and every shared library they need that a plain machine may lack), env.sh (sets
# LD_LIBRARY_PATH for the CUDA libraries found on the target) and run_tests.sh.
# Executables and libraries look in $ORIGIN/../lib (patchelf), so the folder runs from anywhere,
# e.g. on cluster nodes or GPU machines that have a CUDA driver but none of the Debian packages.
# The CUDA libraries (cudart, cuBLAS, cuRAND, cuDNN, NCCL) and the C library are NOT bundled:
# they are found on the target (its CUDA toolkit or the nvidia-* Python packages).
# When a program or libcaffe links libmpi, Open MPI's runtime comes along (mpirun, orted, the MCA
# components, PMIx's plugins, the help texts and conf files; env.sh points Open MPI and PMIx at
# them), and run_tests.sh runs the programs of bin/mpi_tests.txt under that mpirun.
#
#   scripts/make_bundle.sh                              # build-cuda/ -> bundle/caffe-bundle.tar.xz
#   scripts/make_bundle.sh --build build --tests --out bundle/cpu.tar.xz
#   scripts/make_bundle.sh --dir                        # a folder instead of a tarball
#   scripts/make_bundle.sh --programs "caffe test_mpi_util"  # only these programs of bin/
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=build-cuda
OUT=bundle/caffe-bundle.tar.xz
WITH_TESTS=0
AS_DIR=0
ONLY=""  # --programs: the names in bin/ to bundle, instead of the tools (and tests with --tests)
ONLY_GIVEN=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build|--out|--programs)
      [ $# -ge 2 ] || { echo "make_bundle: $1 needs a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --build) BUILD_DIR="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --tests) WITH_TESTS=1; shift ;;
    --dir) AS_DIR=1; shift ;;
    --programs) ONLY="$2"; ONLY_GIVEN=1; shift 2 ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
    *) echo "make_bundle: unknown option '$1' (expected --build DIR, --out PATH, --tests, --dir," \
            "--programs \"NAMES\")" >&2
       exit 2 ;;
  esac
done
[ -x "$BUILD_DIR/bin/caffe" ] || {
  echo "make_bundle: $BUILD_DIR/bin/caffe not found: build first (scripts/build.sh)" >&2; exit 1; }
for name in $ONLY; do
  [ -f "$BUILD_DIR/bin/$name" ] && [ -x "$BUILD_DIR/bin/$name" ] || {
    echo "make_bundle: --programs: $BUILD_DIR/bin/$name not found" >&2; exit 1; }
done
command -v patchelf > /dev/null || {
  echo "make_bundle: patchelf not found: run scripts/install_deps.sh" >&2; exit 1; }

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
ROOT="$STAGE/caffe-bundle"
mkdir -p "$ROOT/bin" "$ROOT/lib"

# Programs: those of --programs, else every tool (not the test programs unless asked).
for program in "$BUILD_DIR"/bin/*; do
  [ -f "$program" ] && [ -x "$program" ] || continue
  name="$(basename "$program")"
  if [ "$ONLY_GIVEN" = 1 ]; then
    [[ " $ONLY " == *" $name "* ]] || continue
  elif [[ "$name" == test_* ]] && [ "$WITH_TESTS" != 1 ]; then
    continue
  fi
  cp "$program" "$ROOT/bin/"
done
# BVLC's C++ examples (examples/<folder>/<name>.bin in the build) go to bin/ too, with links
# where the build has them, as the build's tools/<name> and <name>.bin links to bin/: users'
# scripts and the tests call the programs by those paths (a link's $ORIGIN is the real file's).
for program in "$BUILD_DIR"/examples/*/*.bin; do
  [ -f "$program" ] && [ -x "$program" ] || continue
  name="$(basename "$program")"
  if [ "$ONLY_GIVEN" = 1 ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  folder="$ROOT/examples/$(basename "$(dirname "$program")")"
  mkdir -p "$folder"
  cp "$program" "$ROOT/bin/"
  ln -s "../../bin/$name" "$folder/$name"
done
for link in "$BUILD_DIR"/tools/*; do
  [ -L "$link" ] && [ -f "$ROOT/bin/$(basename "$(readlink "$link")")" ] || continue
  mkdir -p "$ROOT/tools"
  ln -s "../bin/$(basename "$(readlink "$link")")" "$ROOT/tools/$(basename "$link")"
done
# libcaffe and the modules it loads on demand (libcaffe_image_opencv.so).
cp "$BUILD_DIR"/lib/libcaffe*.so* "$ROOT/lib/"

# Libraries found on the target rather than bundled: the C runtime, the GPU driver and the
# CUDA libraries (whose versions must match the target's driver).
is_target_library() {
  case "$1" in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libutil.so*) return 0 ;;
    libresolv.so*|libcuda.so*|libcudart.so*|libcublas*|libcurand.so*|libcudnn*|libnccl.so*) return 0 ;;
    libnvidia*|libnvrtc*|libnvJitLink*) return 0 ;;
  esac
  return 1
}

# Open MPI components for networks that single-node runs do not use (UCX, libfabric, verbs, PSM,
# netlink) or for OpenSHMEM: left out, with the large libraries they would bring.
is_unwanted_library() {
  case "$1" in
    libucp.so*|libucs.so*|libuct.so*|libucm.so*|libfabric.so*|libefa.so*) return 0 ;;
    libibverbs.so*|librdmacm.so*|libpsm*|libinfinipath.so*|libnl-*|liboshmem.so*) return 0 ;;
  esac
  return 1
}

# Copies an MCA component (Open MPI's or PMIx's) that loads here and needs no unwanted library;
# the others are named in $LEFT_OUT.
LEFT_OUT=""
copy_component() {  # copy_component <component.so> <folder>
  local deps soname
  deps="$(ldd "$1" 2>&1)" || deps="not found"
  for soname in $(awk '/=>/ {print $1}' <<< "$deps"); do
    if is_unwanted_library "$soname"; then deps="not found"; fi
  done
  if grep -q 'not found' <<< "$deps"; then
    LEFT_OUT="$LEFT_OUT $(basename "$1" .so)"
  else
    cp "$1" "$2/"
  fi
}

# Open MPI's runtime, so that the bundle's mpirun works where Open MPI is not installed. The
# layout is the bundle's own (env.sh names each folder to Open MPI and PMIx):
#   bin/orterun (mpirun, mpiexec), bin/orted, bin/ompi_info
#   lib/openmpi/, share/openmpi/, etc/openmpi/  Open MPI's MCA components, help texts, conf files
#   lib/pmix/, share/pmix/  PMIx's plugins and help texts (PMIx warns, a line each, about every
#                           file in its plugin folder that is not one of its own)
WITH_PMIX=0
bundle_open_mpi() {
  command -v ompi_info > /dev/null || {
    echo "make_bundle: the programs link libmpi but ompi_info (openmpi-bin) is not installed:" \
         "cannot bundle Open MPI's runtime" >&2; exit 1; }
  # Where Open MPI is installed here, not where a sourced bundle's OPAL_* would say. Debian:
  # bindir /usr/bin, pkglibdir /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 (the components),
  # pkgdatadir /usr/share/openmpi (help texts), sysconfdir /etc/openmpi.
  local paths bindir pkglibdir pkgdatadir sysconfdir var tool component conf libpmix pmix_libdir
  paths="$(for var in $(compgen -e); do
             if [[ "$var" == OPAL_* || "$var" == PMIX_* ]]; then unset "$var"; fi
           done
           ompi_info --parsable --path all)"
  bindir="$(awk -F: '$2 == "bindir" && !n++ {print $3}' <<< "$paths")"
  pkglibdir="$(awk -F: '$2 == "pkglibdir" && !n++ {print $3}' <<< "$paths")"
  pkgdatadir="$(awk -F: '$2 == "pkgdatadir" && !n++ {print $3}' <<< "$paths")"
  sysconfdir="$(awk -F: '$2 == "sysconfdir" && !n++ {print $3}' <<< "$paths")"
  [ -x "$bindir/orterun" ] && [ -x "$bindir/orted" ] || {
    echo "make_bundle: $bindir/orterun or orted not found (Open MPI 4's mpirun)" >&2; exit 1; }
  mkdir -p "$ROOT/lib/openmpi" "$ROOT/share/openmpi" "$ROOT/etc/openmpi"
  # mpirun forks the local ranks itself; orted starts remote ones and those of a singleton.
  for tool in orterun orted ompi_info; do
    if [ -x "$bindir/$tool" ]; then cp "$bindir/$tool" "$ROOT/bin/"; fi
  done
  ln -s orterun "$ROOT/bin/mpirun"
  ln -s orterun "$ROOT/bin/mpiexec"
  for component in "$pkglibdir"/mca_*.so; do
    copy_component "$component" "$ROOT/lib/openmpi"
  done
  # What a single-node run needs (Open MPI 4's names): fail here rather than on the target.
  for component in ess_hnp ess_pmi ess_singleton plm_isolated plm_rsh odls_default oob_tcp \
      rml_oob routed_direct grpcomm_direct iof_hnp iof_orted state_hnp state_app \
      errmgr_default_hnp errmgr_default_app schizo_ompi rmaps_round_robin filem_raw pml_ob1 \
      bml_r2 btl_self btl_vader btl_tcp coll_basic coll_tuned coll_libnbc pmix_ext3x pmix_pmix3x; do
    if [ -e "$pkglibdir/mca_$component.so" ] && [ ! -e "$ROOT/lib/openmpi/mca_$component.so" ]; then
      echo "make_bundle: Open MPI's mca_$component.so does not load (see ldd" \
           "$pkglibdir/mca_$component.so)" >&2; exit 1
    fi
  done
  cp "$pkgdatadir"/help-*.txt "$ROOT/share/openmpi/"
  if [ -d "$pkgdatadir/amca-param-sets" ]; then
    cp -r "$pkgdatadir/amca-param-sets" "$ROOT/share/openmpi/"
  fi
  # Debian's MCA defaults (no openib/ofi/ucx) and the default hostfile.
  for conf in openmpi-mca-params.conf openmpi-default-hostfile; do
    if [ -f "$sysconfdir/$conf" ]; then cp "$sysconfdir/$conf" "$ROOT/etc/openmpi/"; fi
  done
  # An external PMIx (Debian: /usr/lib/x86_64-linux-gnu/pmix2) keeps its plugins in lib/pmix
  # and its help texts in share/pmix beside its library. Its pmix-mca-params.conf is left out:
  # it only names that plugin folder, absolutely.
  libpmix="$(ldd "$ROOT"/lib/openmpi/mca_pmix_*.so 2>/dev/null |
             awk '$1 ~ /^libpmix\.so/ && !n++ {print $3}')" || true
  if [ -n "$libpmix" ]; then
    WITH_PMIX=1
    pmix_libdir="$(dirname "$(readlink -f "$libpmix")")"
    mkdir -p "$ROOT/lib/pmix" "$ROOT/share/pmix"
    for component in "$pmix_libdir"/pmix/pmix_mca_*.so; do
      if [ -f "$component" ]; then copy_component "$component" "$ROOT/lib/pmix"; fi
    done
    for conf in "$(dirname "$pmix_libdir")"/share/pmix/help-*.txt; do
      if [ -f "$conf" ]; then cp "$conf" "$ROOT/share/pmix/"; fi
    done
  fi
  echo "make_bundle: Open MPI runtime: $(find "$ROOT/lib/openmpi" -name '*.so' | wc -l) components" \
       "of $pkglibdir${libpmix:+ and $(find "$ROOT/lib/pmix" -name '*.so' | wc -l) of PMIx}" \
       "(left out:${LEFT_OUT:- none})"
}
WITH_MPI=0
if for file in "$ROOT"/bin/* "$ROOT"/lib/libcaffe*.so*; do ldd "$file" 2>/dev/null; done |
    grep 'libmpi\.so' > /dev/null; then
  WITH_MPI=1
  bundle_open_mpi
fi

# Every library the programs, libcaffe and the MCA components load, from ldd on this machine.
for file in "$ROOT"/bin/* "$ROOT"/lib/libcaffe*.so* "$ROOT"/lib/openmpi/* "$ROOT"/lib/pmix/*; do
  [ -e "$file" ] || continue  # lib/openmpi/* when there is no MPI
  ldd "$file" 2>/dev/null | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r soname path; do
  is_target_library "$soname" && continue
  [ -e "$ROOT/lib/$soname" ] || cp -L "$path" "$ROOT/lib/$soname"
done

# Smaller and relocatable: strip symbols, and look for libraries beside the bundle (the MCA
# components, in lib/openmpi and lib/pmix, one folder up).
for file in "$ROOT"/bin/* "$ROOT"/lib/* "$ROOT"/lib/openmpi/* "$ROOT"/lib/pmix/*; do
  [ -f "$file" ] && [ ! -L "$file" ] || continue
  strip --strip-unneeded "$file" 2> /dev/null || true
  if [[ "$file" == "$ROOT"/lib/*/* ]]; then
    patchelf --set-rpath '$ORIGIN/..:$ORIGIN' "$file"
  else
    patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN' "$file"
  fi
done

# The build's list of MPI test runs ("<program> <processes>"), for the programs bundled.
if [ -f "$BUILD_DIR/bin/mpi_tests.txt" ]; then
  while read -r name processes; do
    if [ -n "$name" ] && [ -f "$ROOT/bin/$name" ]; then echo "$name $processes"; fi
  done < "$BUILD_DIR/bin/mpi_tests.txt" > "$ROOT/bin/mpi_tests.txt"
  [ -s "$ROOT/bin/mpi_tests.txt" ] || rm "$ROOT/bin/mpi_tests.txt"
fi

cat > "$ROOT/env.sh" <<'EOF'
# Source this: puts the bundle's tools on PATH and the target's CUDA libraries (its toolkit, or
# the nvidia-* Python packages that PyTorch installs) on LD_LIBRARY_PATH.
BUNDLE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PATH="$BUNDLE_DIR/bin:$PATH"
cuda_dirs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && cuda_dirs="$cuda_dirs:$dir"
done
for python in python3 /opt/torch/.venv/bin/python3; do
  site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)" || continue
  [ -d "$site/nvidia" ] || continue
  for dir in $(find "$site/nvidia" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | sort -u); do
    cuda_dirs="$cuda_dirs:$dir"
  done
  break
done
export LD_LIBRARY_PATH="${cuda_dirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset cuda_dirs dir site python
EOF
if [ "$WITH_MPI" = 1 ]; then
  cat >> "$ROOT/env.sh" <<'EOF'
# Open MPI (libopen-pal) takes where it is installed from these, not from where it was built:
# its MCA components, help texts and conf files are in the bundle, orted in bin (OPAL_PREFIX/bin).
# The GPU machines run as root, which mpirun refuses without the last two.
export OPAL_PREFIX="$BUNDLE_DIR" OPAL_LIBDIR="$BUNDLE_DIR/lib" \
  OPAL_PKGLIBDIR="$BUNDLE_DIR/lib/openmpi" OPAL_PKGDATADIR="$BUNDLE_DIR/share/openmpi" \
  OPAL_SYSCONFDIR="$BUNDLE_DIR/etc/openmpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CAFFE_MPIEXEC="$BUNDLE_DIR/bin/mpirun"  # the mpirun test_caffe_ddl runs the tool under
EOF
fi
if [ "$WITH_PMIX" = 1 ]; then
  cat >> "$ROOT/env.sh" <<'EOF'
# The same for PMIx (a library of its own, with its own variables, which Open MPI leaves unset):
# its plugins and help texts; etc/pmix has no conf file (PMIx's names its plugins' folder).
export PMIX_PREFIX="$BUNDLE_DIR" PMIX_LIBDIR="$BUNDLE_DIR/lib" \
  PMIX_PKGLIBDIR="$BUNDLE_DIR/lib/pmix" PMIX_PKGDATADIR="$BUNDLE_DIR/share/pmix" \
  PMIX_SYSCONFDIR="$BUNDLE_DIR/etc/pmix"
EOF
fi

cat > "$ROOT/run_tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs every test program of the bundle (or those named: run_tests.sh test_gpu_math_functions)
# and prints one line per run and a summary; extra gtest flags come from $GTEST_ARGS. The
# programs that bin/mpi_tests.txt lists ("<program> <processes>") run under the bundle's mpirun,
# once per listed count ("PASS test_ring_communicator (np 3)"); the others run alone.
# $RUN_TESTS_JOBS runs that many at once (default 1; the lines keep the programs' order).
# Exit status: the number of runs that failed (0 when all passed).
set -uo pipefail
BUNDLE_DIR="$(cd "$(dirname "$0")" && pwd)"
source "$BUNDLE_DIR/env.sh"
programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  mapfile -t programs < <(cd "$BUNDLE_DIR/bin" && ls test_* 2>/dev/null)
fi
declare -A processes=()
if [ -f "$BUNDLE_DIR/bin/mpi_tests.txt" ]; then
  while read -r name np; do
    [ -n "$np" ] && processes[$name]="${processes[$name]:-} $np"
  done < "$BUNDLE_DIR/bin/mpi_tests.txt"
fi
LOG_DIR="${LOG_DIR:-$BUNDLE_DIR/test_logs}"
JOBS="${RUN_TESTS_JOBS:-1}"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || {
  echo "run_tests: RUN_TESTS_JOBS must be a whole number of 1 or more, got '$JOBS'" >&2; exit 255; }
mkdir -p "$LOG_DIR"
RESULTS="$(mktemp -d)"
trap 'rm -rf "$RESULTS"' EXIT
runs=0
run() {  # run <result file> <name> <log> <command...>
  local result="$1" name="$2" log="$3"
  shift 3
  if "$@" ${GTEST_ARGS:-} > "$log" 2>&1; then
    echo "PASS $name ($(grep -c '^\[       OK \]' "$log") ok," \
         "$(grep -c '^\[  SKIPPED \]' "$log") skipped)" > "$result"
  else
    { echo "FAIL $name: see $log"; grep '^\[  FAILED  \]' "$log" | sort -u | head -20; } > "$result"
  fi
  touch "$result.done"
}
printed=0
print_done() {  # the finished runs' lines, in order, up to the first run still going
  while [ -f "$RESULTS/$printed.done" ]; do
    cat "$RESULTS/$printed"
    printed=$((printed + 1))
  done
}
start() {  # start <name> <log> <command...>, with at most $JOBS running
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
    wait -n
    print_done
  done
  run "$RESULTS/$runs" "$@" &
  runs=$((runs + 1))
}
for program in "${programs[@]}"; do
  if [ -z "${processes[$program]:-}" ]; then
    start "$program" "$LOG_DIR/$program.log" "$BUNDLE_DIR/bin/$program"
    continue
  fi
  # One OpenMP thread per rank (the ranks share the cores); no colours (mpirun gives the ranks a
  # terminal, and the counts above look for plain lines).
  for np in ${processes[$program]}; do
    start "$program (np $np)" "$LOG_DIR/$program.np$np.log" env OMP_NUM_THREADS=1 GTEST_COLOR=no \
      "$BUNDLE_DIR/bin/mpirun" --oversubscribe -n "$np" "$BUNDLE_DIR/bin/$program"
  done
done
wait
print_done
failed=$(cat "$RESULTS"/[0-9]* 2> /dev/null | grep -c '^FAIL ')
echo "run_tests: $runs runs of ${#programs[@]} programs, $failed failed"
exit $failed
EOF
chmod +x "$ROOT/run_tests.sh"

mkdir -p "$(dirname "$OUT")"
if [ "$AS_DIR" = 1 ]; then
  rm -rf "$OUT"
  mv "$ROOT" "$OUT"
  echo "make_bundle: $OUT ($(du -sh "$OUT" | cut -f1))"
else
  tar -C "$STAGE" -cJf "$OUT" caffe-bundle
  echo "make_bundle: $OUT ($(du -h "$OUT" | cut -f1); unpack with tar -xJf, then source caffe-bundle/env.sh)"
fi
