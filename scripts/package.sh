#!/usr/bin/env bash
# Builds the release artifacts of every language into dist/, one release build per platform:
#
#   dist/python/  shardline-<v>-cp310-abi3-manylinux_2_17_<arch>.whl (etcd included), the sdist
#   dist/npm/     shardline-<v>.tgz and one shardline-<npm-platform>-<v>.tgz per platform (etcd
#                 included)
#   dist/maven/   a Maven repository: org/shardline/{shardline-parent,shardline,shardline-pekko}
#                 (jars with every platform's JNI library, etcd included, under native/<os>-<arch>/, -sources,
#                 -javadoc)
#   dist/c/       shardline-<v>-<platform>/ (include/, lib/ with libshardline.so.<ABI>, .a and
#                 pkgconfig/shardline.pc) and the same as a .tar.gz
#
#   scripts/package.sh [PLATFORM...]      (default: linux-x86_64)
#
# Needs Rust, Python >= 3.10, Node >= 20 with npm, JDK 17 + Maven; the build tools (maturin,
# Zig from the `ziglang` wheel, cargo-zigbuild, auditwheel) are pip-installed into a venv under
# the target dir. Zig links against an old glibc, so the artifacts run on glibc >= 2.17 whatever
# the build machine has. Release profile without LTO: it keeps this step a few minutes on two
# cores. Honours CARGO_TARGET_DIR.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. scripts/version.sh

target=${CARGO_TARGET_DIR:-$root/target}
dist=$root/dist
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x86_64)

# The platform matrix: one line per platform a release ships. A new platform is one more line
# here (and `rustup target add <rust target>` on a machine that can build it).
#   platform       Rust target (Zig glibc floor)      npm platform     wheel compatibility
platform_row() {
    case "$1" in
        linux-x86_64)  echo "x86_64-unknown-linux-gnu.2.17  linux-x64-gnu    manylinux2014" ;;
        linux-aarch64) echo "aarch64-unknown-linux-gnu.2.17 linux-arm64-gnu  manylinux2014" ;;
        *) echo "package.sh: unknown platform $1 (known: linux-x86_64, linux-aarch64)" >&2; return 1 ;;
    esac
}

start=$(date +%s)
check_versions

# Build tools, pinned: maturin has lagged new Zig releases before.
tools=$target/package-tools
if [ ! -x "$tools/bin/cargo-zigbuild" ] || [ ! -x "$tools/bin/auditwheel" ]; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install --quiet --disable-pip-version-check \
        maturin==1.16.0 ziglang==0.17.1 cargo-zigbuild==0.24.0 auditwheel==6.8.2
fi
export PATH="$tools/bin:$PATH"

rm -rf "$dist"
mkdir -p "$dist/python" "$dist/npm" "$dist/maven" "$dist/c"
stage=$target/package-stage
rm -rf "$stage"
mkdir -p "$stage"

# The JNI libraries of every platform end up in one jar.
jni_out=$stage/jni
npm_platforms=()

for platform in "${platforms[@]}"; do
    read -r zig_target npm_platform wheel_compat < <(platform_row "$platform")
    rust_target=${zig_target%%.2.*}
    if ! rustup target list --installed 2>/dev/null | grep -qx "$rust_target"; then
        echo "package.sh: Rust target $rust_target is not installed (rustup target add $rust_target)" >&2
        exit 1
    fi
    echo "=== $platform: native libraries ($zig_target)"
    out=$target/$rust_target/release

    # The C library, with etcd as every other language's package has it (install-c.sh then puts
    # -DSHARDLINE_FEATURE_ETCD in pkg-config's Cflags). --print native-static-libs names what a
    # static link needs (Libs.private); rustc prints it only when it compiles the crate, so the
    # last answer is kept.
    static_libs_file=$out/shardline-native-static-libs.txt
    note=$(cargo-zigbuild rustc --release --target "$zig_target" -p shardline-ffi --lib --features etcd \
        -- --print native-static-libs 2>&1 | tee -a /dev/stderr | sed -n 's/.*native-static-libs: //p' | tail -n 1)
    [ -z "$note" ] || printf '%s\n' "$note" >"$static_libs_file"
    if [ ! -s "$static_libs_file" ]; then
        echo "package.sh: rustc did not report the native static libraries" >&2
        exit 1
    fi

    # The addon and the JNI library ship etcd, as the wheel does (pyproject.toml).
    cargo-zigbuild zigbuild --release --target "$zig_target" -p shardline-node -p shardline-java \
        --features shardline-node/etcd,shardline-java/etcd

    echo "=== $platform: C install tree"
    bash scripts/install-c.sh --lib-dir "$out" --static-libs "$(cat "$static_libs_file")" \
        "$dist/c/shardline-$VERSION-$platform"
    tar -C "$dist/c" -czf "$dist/c/shardline-$VERSION-$platform.tar.gz" "shardline-$VERSION-$platform"

    echo "=== $platform: Python wheel"
    # Its own target dir: maturin's environment differs from cargo-zigbuild's in what build
    # scripts watch, so in a shared one each rebuilds the other's crates on every run.
    CARGO_TARGET_DIR=$target/package-wheel maturin build --release --zig --target "$rust_target" \
        --compatibility "$wheel_compat" -m bindings/python/Cargo.toml --out "$dist/python"

    echo "=== $platform: npm platform package $npm_platform"
    pkg=$stage/npm/$npm_platform
    mkdir -p "$pkg"
    cp bindings/node/npm/"$npm_platform"/package.json bindings/node/npm/"$npm_platform"/README.md LICENSE "$pkg/"
    cp "$out/libshardline_node.so" "$pkg/shardline.$npm_platform.node"
    (cd "$pkg" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)
    npm_platforms+=("$npm_platform")

    # NativeLibrary.java reads native/<os>-<arch>/ with the platform's own library name.
    mkdir -p "$jni_out/$platform"
    cp "$out/libshardline_java.so" "$jni_out/$platform/"
done

echo "=== Python sdist"
maturin sdist -m bindings/python/Cargo.toml --out "$dist/python"
for wheel in "$dist"/python/*.whl; do
    report=$(auditwheel show "$wheel")
    printf '%s\n' "$report"
    # Only a manylinux tag is accepted by an index; auditwheel names the one the wheel meets.
    if ! printf '%s\n' "$report" | tr '\n' ' ' | grep -q 'consistent with the following platform tag: *"manylinux_'; then
        echo "package.sh: auditwheel finds no manylinux tag for $wheel" >&2
        exit 1
    fi
done

echo "=== npm package shardline"
# napi-rs's publish layout: the main package carries the loader and lists each platform
# package as an optional dependency; npm installs the one whose os/cpu/libc match.
pkg=$stage/npm/shardline
mkdir -p "$pkg"
cp -r bindings/node/package.json bindings/node/README.md bindings/node/index.js \
    bindings/node/index.d.ts bindings/node/lib LICENSE "$pkg/"
node - "$pkg/package.json" "$VERSION" "${npm_platforms[@]}" <<'EOF'
const fs = require('fs')
const [file, version, ...platforms] = process.argv.slice(2)
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'))
pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [`${pkg.name}-${p}`, version]))
delete pkg.devDependencies
delete pkg.overrides
delete pkg.scripts
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n')
EOF
(cd "$pkg" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)

echo "=== Maven repository"
# The jar takes the libraries staged above (-Dshardline.native.skip: Maven does not run cargo);
# the release profile adds the -sources and -javadoc jars.
classes_native=bindings/java/shardline/target/classes/native
rm -rf "$classes_native"
mkdir -p "$classes_native"
cp -r "$jni_out"/. "$classes_native/"
(cd bindings/java && mvn -B -ntp -q -Dstyle.color=never ${MVN_ARGS:-} -Prelease \
    -Dshardline.native.skip=true -Dshardline.cli.dir= -DskipTests \
    -pl shardline,shardline-pekko -am \
    deploy -DaltDeploymentRepository="dist::file://$dist/maven")

echo
echo "=== dist/ ($(( $(date +%s) - start ))s)"
(cd "$dist" && find . -type f -not -path './maven/*' -o -type f -name '*.jar' | sort)
