# Sets up a Debian/Ubuntu machine for op2's whole test suite; source it
# (`. scripts/setup.sh`) so that the variables it exports stay set.
#
# Plain `cargo test --workspace` needs only Rust and a C compiler. The
# optional features need more, which this installs:
# - a C toolchain with OpenMP (gcc brings libgomp): the jit backend's compiler;
# - OpenCL's ICD loader and PoCL (OpenCL on the CPU): the opencl backend;
# - MPICH and libclang (rsmpi generates its bindings): mpi;
# - HDF5 built with MPICH: hdf5 (OP2's mesh files, read in parallel through MPI-IO);
# - Gmsh, which writes the meshes the Gmsh tests read (OP2_GMSH_MESHES);
# - cmake, flex and bison, to build PT-Scotch against MPICH (ptscotch);
# - NVRTC and ptxas from NVIDIA's Python packages: the CUDA checks, which
#   compile generated CUDA to PTX and assemble it (no GPU needed).
#
# System packages go in with apt-get as root, or through sudo when it asks
# no password; otherwise the script says what to install and stops.

OP2_FEATURES=jit,opencl,mpi,cuda,hdf5,ptscotch
export OP2_FEATURES

op2_packages="build-essential pkg-config ocl-icd-opencl-dev pocl-opencl-icd mpich libmpich-dev libclang-dev libhdf5-mpich-dev gmsh cmake flex bison"
# shellcheck disable=SC2086
if ! dpkg -s $op2_packages >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        op2_sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        op2_sudo="sudo"
    else
        echo "scripts/setup.sh: please install, as root: apt-get install -y $op2_packages" >&2
        return 1 2>/dev/null || exit 1
    fi
    $op2_sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $op2_sudo apt-get install -y -qq $op2_packages >/dev/null
fi

# PT-Scotch against MPICH (Debian's libptscotch-dev is built for OpenMPI),
# into ~/.cache/op2-ptscotch (about 30 s, once).
bash "$(dirname "${BASH_SOURCE[0]}")/build_ptscotch.sh"

# NVRTC and ptxas, in a private directory.
OP2_CUDA_TOOLS="${OP2_CUDA_TOOLS:-$HOME/.cache/op2-cuda-tools}"
if [ ! -e "$OP2_CUDA_TOOLS/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] || [ ! -x "$OP2_CUDA_TOOLS/nvidia/cuda_nvcc/bin/ptxas" ]; then
    python3 -m pip install -q --no-deps --target "$OP2_CUDA_TOOLS" nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12
fi
export LD_LIBRARY_PATH="$OP2_CUDA_TOOLS/nvidia/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OP2_PTXAS="$OP2_CUDA_TOOLS/nvidia/cuda_nvcc/bin/ptxas"
export OP2_REQUIRE_NVRTC=1

# Meshes written afresh by the real Gmsh (ASCII and binary) from the .geo
# files beside the committed copies; the tests read these.
OP2_GMSH_MESHES="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/gmsh"
export OP2_GMSH_MESHES
mkdir -p "$OP2_GMSH_MESHES"
op2_geo="$(dirname "${BASH_SOURCE[0]}")/../op2-gmsh/tests/data"
gmsh -2 -format msh41 "$op2_geo/mixed.geo" -o "$OP2_GMSH_MESHES/mixed.msh" >/dev/null
gmsh -2 -format msh41 -bin "$op2_geo/mixed.geo" -o "$OP2_GMSH_MESHES/mixed_bin.msh" >/dev/null
gmsh -2 -format msh41 "$op2_geo/cylinder.geo" -o "$OP2_GMSH_MESHES/cylinder.msh" >/dev/null
