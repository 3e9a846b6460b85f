#!/usr/bin/env bash
# Installs the C library into PREFIX, as `make install` would:
#
#   PREFIX/include/shardline.h
#   PREFIX/lib/libshardline.so.<VERSION>          the library, SONAME libshardline.so.<ABI>
#   PREFIX/lib/libshardline.so.<ABI> -> libshardline.so.<VERSION>   what the loader looks for
#   PREFIX/lib/libshardline.so -> libshardline.so.<ABI>             what `-lshardline` links
#   PREFIX/lib/libshardline.a
#   PREFIX/lib/pkgconfig/shardline.pc             relocatable (${pcfiledir}), Libs.private for -static;
#                                                 Cflags define SHARDLINE_FEATURE_ETCD when the
#                                                 library was built with the `etcd` feature
#
#   scripts/install-c.sh [--lib-dir DIR] [--static-libs "-lgcc_s ..."] PREFIX
#
# --lib-dir: where cargo put libshardline.so and .a (default: a release build it runs itself).
# --static-libs: what rustc's --print native-static-libs reported (default: asks rustc).
# A script rather than cargo-c: Debian's cargo-c (0.9.14) is built on a cargo too old for this
# workspace, and cargo-c from source takes long to compile on small machines, for what is five
# files and a text file here.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/version.sh"

lib_dir=
static_libs=
while [ $# -gt 0 ]; do
    case "$1" in
        --lib-dir) lib_dir=$2; shift 2 ;;
        --static-libs) static_libs=$2; shift 2 ;;
        -*) echo "install-c.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
prefix=${1:?usage: scripts/install-c.sh [--lib-dir DIR] [--static-libs FLAGS] PREFIX}

if [ -z "$lib_dir" ] || [ -z "$static_libs" ]; then
    note=$(cd "$root" && cargo rustc --release -p shardline-ffi --lib -- --print native-static-libs 2>&1 |
        sed -n 's/.*native-static-libs: //p' | tail -n 1)
    lib_dir=${lib_dir:-${CARGO_TARGET_DIR:-$root/target}/release}
    static_libs=${static_libs:-$note}
fi
for f in libshardline.so libshardline.a; do
    [ -f "$lib_dir/$f" ] || { echo "install-c.sh: $lib_dir/$f not found" >&2; exit 1; }
done
if [ -z "$static_libs" ]; then
    echo "install-c.sh: no native static libraries known (pass --static-libs)" >&2
    exit 1
fi

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 "$root/include/shardline.h" "$prefix/include/shardline.h"
install -m 755 "$lib_dir/libshardline.so" "$prefix/lib/libshardline.so.$VERSION"
ln -sfn "libshardline.so.$VERSION" "$prefix/lib/libshardline.so.$ABI"
ln -sfn "libshardline.so.$ABI" "$prefix/lib/libshardline.so"
install -m 644 "$lib_dir/libshardline.a" "$prefix/lib/libshardline.a"

# The SONAME comes from ffi/build.rs; a library without it would break every program linked
# against this tree at the next ABI bump.
soname=$(readelf -d "$prefix/lib/libshardline.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libshardline.so.$ABI" ]; then
    echo "install-c.sh: SONAME is '${soname}', expected libshardline.so.$ABI" >&2
    exit 1
fi

# The header declares the etcd functions only under SHARDLINE_FEATURE_ETCD; a library that has
# them says so through the flags every program compiles with.
# shellcheck disable=SC2016 # ${includedir} is a pkg-config variable
cflags='-I${includedir}'
# grep reads all of readelf's output (no -q): with -q it can exit at the first match, readelf
# then dies of SIGPIPE, and pipefail turns a found symbol into "not found".
if readelf --dyn-syms -W "$prefix/lib/libshardline.so.$VERSION" | grep -w shardline_etcd_connect >/dev/null; then
    cflags="$cflags -DSHARDLINE_FEATURE_ETCD"
fi

# shellcheck disable=SC2016 # ${pcfiledir} and ${prefix} are pkg-config variables
cat >"$prefix/lib/pkgconfig/shardline.pc" <<EOF
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: shardline
Description: Placement brain for sharded actor systems (C ABI $ABI)
URL: https://example.invalid/shardline
Version: $VERSION
Cflags: $cflags
Libs: -L\${libdir} -lshardline
Libs.private: $static_libs
EOF
echo "install-c.sh: installed shardline $VERSION (ABI $ABI) into $prefix"
