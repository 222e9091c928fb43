#!/usr/bin/env bash
# Builds PT-Scotch (the parallel graph partitioner op2 uses with the
# `ptscotch` feature) against MPICH and installs it under PREFIX (default
# ~/.cache/op2-ptscotch), where op2-mpi's build script looks for it
# (OP2_PTSCOTCH_DIR overrides). Debian's libptscotch-dev is built for OpenMPI
# only, and one process cannot mix two MPI libraries, so the source comes from
# Debian's source archive (`apt-get source`, which needs a deb-src entry; as
# root this script adds one) and is built with cmake here: 32-bit SCOTCH_Num,
# no threads (every rank single-threaded inside Scotch, MPI_THREAD_SINGLE is
# enough), no compression libraries. Needs cmake, flex, bison and mpicc.mpich.
set -euo pipefail
PREFIX="${1:-${OP2_PTSCOTCH_DIR:-$HOME/.cache/op2-ptscotch}}"
SCOTCH_VERSION=7.0.3
if [ -e "$PREFIX/lib/libptscotch.a" ] && [ -e "$PREFIX/include/ptscotch.h" ]; then
    echo "PT-Scotch already in $PREFIX"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get source --download-only scotch >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && [ ! -e /etc/apt/sources.list.d/op2-debian-src.sources ]; then
        codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$codename" > /etc/apt/sources.list.d/op2-debian-src.sources
        apt-get update -qq
    fi
    apt-get source --download-only scotch >/dev/null
fi
# The version this op2 was tested with (bookworm's).
ls scotch_"$SCOTCH_VERSION".orig.tar.xz >/dev/null
tar xf scotch_"$SCOTCH_VERSION".orig.tar.xz
cmake -S scotch-"$SCOTCH_VERSION" -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF \
    -DMPI_C_COMPILER=mpicc.mpich -DBUILD_PTSCOTCH=ON -DTHREADS=OFF -DMPI_THREAD_MULTIPLE=OFF \
    -DBUILD_LIBESMUMPS=OFF -DBUILD_LIBSCOTCHMETIS=OFF -DINSTALL_METIS_HEADERS=OFF \
    -DUSE_ZLIB=OFF -DUSE_LZMA=OFF -DUSE_BZ2=OFF >/dev/null
cmake --build build -j "$(nproc)" >/dev/null 2>&1 || cmake --build build -j 1
cmake --install build >/dev/null
echo "PT-Scotch $SCOTCH_VERSION installed in $PREFIX"
