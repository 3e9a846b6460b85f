#!/usr/bin/env bash
# Installs the artifacts scripts/package.sh put in dist/ the way users install them, with no
# cargo or rustc on PATH, and runs the same smoke program (tests/install/) in each language:
#
#   Python  a fresh venv, `pip install --no-index --find-links dist/python shardline`
#   Node    a fresh npm project, `npm install --offline` of the two tarballs
#   JVM     a fresh Maven project whose only extra <repository> is dist/maven
#   C       a program built with `pkg-config --cflags --libs shardline` (and --static)
#
# Each must decide examples/vectors/demo.json as the vectors expect and take a coordinator
# from start to "loading" once its lease is granted; Python, Node and the JVM also run a
# coordinator driver on a real etcd (lease and fenced store). Prints `install tests: N passed`.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. scripts/version.sh
. scripts/etcd-lib.sh
bash scripts/install-deps.sh pkg-config etcd

dist=$root/dist
vectors=$root/examples/vectors/demo.json
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/install-test
rm -rf "$work"
mkdir -p "$work"
[ -d "$dist/python" ] || { echo "no dist/: run scripts/package.sh first" >&2; exit 1; }

# PATH without the Rust toolchain: any install step that falls back to a source build fails.
path=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    [ -x "$d/cargo" ] || [ -x "$d/rustc" ] || path=${path:+$path:}$d
done
export PATH=$path
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    echo "test-install: cargo is still on PATH" >&2
    exit 1
fi

trap etcd_stop EXIT
etcd_start

passed=()
# check LANGUAGE OUTPUT-FILE: the smoke lines every language prints, compared with the vectors.
check() {
    python3 - "$1" "$2" "$vectors" <<'EOF'
import json, sys
lang, out, vectors = sys.argv[1], sys.argv[2], sys.argv[3]
lines = dict(l.split(" ", 1) for l in open(out).read().splitlines() if " " in l)
decisions = json.loads(lines["DECIDE"])
for vector, got in zip(json.load(open(vectors)), decisions, strict=True):
    want = vector["expect"]
    if any(got.get(k) != v for k, v in want.items()):
        sys.exit(f"{lang}: vector {vector['id']}: decided {got}, expected {want}")
# Each language spells phases its own way: acquiringLease, acquiring-lease, ACQUIRING_LEASE.
phases = [p.replace("_", "").replace("-", "").lower() for p in lines["PHASES"].split()]
if phases != ["acquiringlease", "loading"]:
    sys.exit(f"{lang}: coordinator phases {lines['PHASES']}, expected acquiringLease loading")
print(f"{lang}: {len(decisions)} decisions as expected; coordinator {lines['PHASES']}")
EOF
}

# check_etcd LANGUAGE OUTPUT-FILE: the ETCD line of a coordinator driver on the test etcd.
check_etcd() {
    local etcd_line
    etcd_line=$(sed -n 's/^ETCD //p' "$2")
    case "$etcd_line" in
        [1-9]*" active") echo "$1: coordinator active on etcd with fencing token ${etcd_line% *}" ;;
        *) echo "$1: the coordinator on etcd is not active: $etcd_line" >&2; exit 1 ;;
    esac
}

echo "=== Python: wheel from dist/python into a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index \
    --find-links "$dist/python" "shardline==$VERSION"
"$work/venv/bin/python" tests/install/smoke.py "$vectors" "$ETCD_ENDPOINT" | tee "$work/python.out"
check python "$work/python.out"
check_etcd python "$work/python.out"
passed+=(python)

echo "=== Node: npm tarballs from dist/npm into a fresh project"
mkdir -p "$work/node"
(
    cd "$work/node"
    npm init -y >/dev/null
    # --offline: the two tarballs must be all it takes.
    npm install --offline --no-audit --no-fund --loglevel=error \
        "$dist/npm/shardline-$VERSION.tgz" "$dist/npm"/shardline-linux-*-"$VERSION".tgz
    # Inside the project, where `import 'shardline'` resolves.
    cp "$root/tests/install/smoke.mjs" .
    node smoke.mjs "$vectors" "$ETCD_ENDPOINT"
) | tee "$work/node.out"
check node "$work/node.out"
check_etcd node "$work/node.out"
passed+=(node)

echo "=== JVM: a fresh Maven project resolving org.shardline from dist/maven"
mkdir -p "$work/maven"
# Maven keeps what it resolved: drop an earlier run's copy so this run reads dist/maven.
rm -rf "${MAVEN_LOCAL_REPO:-$HOME/.m2/repository}/org/shardline"
cat >"$work/maven/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>uses-shardline</artifactId>
  <version>1</version>
  <repositories>
    <repository>
      <id>shardline-dist</id>
      <url>file://$dist/maven</url>
    </repository>
  </repositories>
  <dependencies>
    <dependency>
      <groupId>org.shardline</groupId>
      <artifactId>shardline</artifactId>
      <version>$VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.shardline</groupId>
      <artifactId>shardline-pekko</artifactId>
      <version>$VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.pekko</groupId>
      <artifactId>pekko-cluster-sharding_2.13</artifactId>
      <version>1.7.0</version>
    </dependency>
  </dependencies>
</project>
EOF
(cd "$work/maven" && mvn -B -ntp -q -Dstyle.color=never ${MVN_ARGS:-} \
    dependency:build-classpath -Dmdep.outputFile=classpath.txt)
for kind in sources javadoc; do
    for artifact in shardline shardline-pekko; do
        f=$dist/maven/org/shardline/$artifact/$VERSION/$artifact-$VERSION-$kind.jar
        [ -s "$f" ] || { echo "jvm: $f missing" >&2; exit 1; }
    done
done
java -cp "$(cat "$work/maven/classpath.txt")" tests/install/Smoke.java "$vectors" "$ETCD_ENDPOINT" | tee "$work/jvm.out"
check jvm "$work/jvm.out"
check_etcd jvm "$work/jvm.out"
grep -qx 'LOADED ShardlineAllocationStrategy' "$work/jvm.out" || { echo "jvm: Pekko adapter did not load" >&2; exit 1; }
passed+=(jvm)

echo "=== C: the install tree in dist/c through pkg-config"
prefix=$(ls -d "$dist"/c/shardline-"$VERSION"-*/ | head -n 1)
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion shardline)" = "$VERSION" ] || { echo "c: pkg-config reports $(pkg-config --modversion shardline)" >&2; exit 1; }
libdir=$(pkg-config --variable=libdir shardline)
# shellcheck disable=SC2046 # pkg-config prints several words
gcc -std=c11 -Wall -Wextra -Werror tests/install/smoke.c $(pkg-config --cflags --libs shardline) \
    -Wl,-rpath,"$libdir" -o "$work/smoke-c"
needed=$(readelf -d "$work/smoke-c" | sed -n 's/.*(NEEDED).*\[\(libshardline[^]]*\)\]/\1/p')
[ "$needed" = "libshardline.so.$ABI" ] || { echo "c: the program needs '$needed', expected libshardline.so.$ABI" >&2; exit 1; }
"$work/smoke-c" "$vectors" "$ETCD_ENDPOINT" | tee "$work/c.out"
check c "$work/c.out"
check_etcd c "$work/c.out"
# Static: the archive plus Libs.private; the program then needs no libshardline at run time.
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror tests/install/smoke.c $(pkg-config --cflags shardline) \
    $(pkg-config --static --libs shardline | sed 's/-lshardline\b/-l:libshardline.a/') -o "$work/smoke-c-static"
if readelf -d "$work/smoke-c-static" | grep 'libshardline' >/dev/null; then  # no -q: see install-c.sh
    echo "c: the static build still needs libshardline.so" >&2
    exit 1
fi
"$work/smoke-c-static" "$vectors" "$ETCD_ENDPOINT" >"$work/c-static.out"
check "c (static)" "$work/c-static.out"
check_etcd "c (static)" "$work/c-static.out"
passed+=(c)

echo "install tests: ${#passed[@]} passed (${passed[*]}), with no cargo on PATH"
