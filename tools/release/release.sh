#!/usr/bin/env bash
# Cross-builds Sluice's release artifacts into $DIST (make release sets
# VERSION, REVISION, LDFLAGS, DIST and GO): for each platform a static
# binary (CGO_ENABLED=0, -trimpath, stamped) packed with README.md and
# CHANGELOG.md as sluice-VERSION-OS-ARCH.tar.gz, a CycloneDX SBOM of the
# binary's modules from cyclonedx-gomod (sluice-VERSION-OS-ARCH.cdx.json),
# and SHA256SUMS over all of them. docs/releases.md describes them.
set -euo pipefail

: "${VERSION:?}" "${REVISION:?}" "${LDFLAGS:?}" "${DIST:?}"
GO=${GO:-go}
PLATFORMS=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64"}
# A well-kept SBOM generator, pinned; installed once per version into a
# tools dir beside Go's build cache.
CDX_VERSION=v1.10.0
TOOLS=${SLUICE_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice/tools}
CDX=$TOOLS/cyclonedx-gomod-$CDX_VERSION/cyclonedx-gomod

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)
stage=$(mktemp -d)
pids=() # the SBOM generators running in the background
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; rm -rf "$stage"' EXIT

# Archives carry the commit's time and no owner, so the same commit packs
# the same bytes (given the same Go release).
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD 2>/dev/null || date +%s)}

install_cdx() {
	if [ -x "$CDX" ]; then
		return
	fi
	echo "installing cyclonedx-gomod $CDX_VERSION into $(dirname "$CDX")"
	GOBIN=$(dirname "$CDX") GOOS= GOARCH= "$GO" install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CDX_VERSION"
}

build() { # os arch
	local name="sluice-$VERSION-$1-$2"
	mkdir -p "$stage/$name"
	echo "building $name"
	CGO_ENABLED=0 GOOS=$1 GOARCH=$2 "$GO" build -trimpath -ldflags "-s -w $LDFLAGS" -o "$stage/$name/sluice" ./cmd/sluice
	cp README.md CHANGELOG.md "$stage/$name/"
	if [ -f LICENSE ]; then cp LICENSE "$stage/$name/"; fi
	chmod 0755 "$stage/$name/sluice"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" --mode=go-w \
		-C "$stage" -cf - "$name" | gzip -n > "$DIST/$name.tar.gz"
}

# sbom os arch: the modules a build for os/arch links, as cyclonedx-gomod
# sees them under the same constraints. The generator versions the main
# module from git tags (a pseudo-version off the last tag unless HEAD is
# tagged); the release's own version replaces that, so the SBOM and the
# binary agree.
sbom() {
	local name="sluice-$VERSION-$1-$2" out
	out="$DIST/$name.cdx.json"
	CGO_ENABLED=0 GOOS=$1 GOARCH=$2 "$CDX" app -json -licenses -main cmd/sluice -output "$out" . 2>"$stage/$name.cdx.log" ||
		{ cat "$stage/$name.cdx.log" >&2; return 1; }
	local got
	got=$(grep -o -m1 "pkg:golang/$MODULE@[^?#\"]*" "$out" | head -1)
	got=${got##*@}
	if [ -n "$got" ] && [ "$got" != "v$VERSION" ]; then
		sed -i "s/@$got\([?#\"]\)/@v$VERSION\1/g; s/\"version\": \"$got\"/\"version\": \"v$VERSION\"/" "$out"
	fi
}

start=$(date +%s)
MODULE=$("$GO" list -m)
rm -f "$DIST"/sluice-"$VERSION"-* "$DIST/SHA256SUMS"
echo "releasing sluice $VERSION (revision $REVISION) into $DIST"
install_cdx
# The SBOMs read the source, not the binaries: they run beside the
# builds, which keep both cores busy only while compiling.
for p in $PLATFORMS; do
	sbom "${p%/*}" "${p#*/}" &
	pids+=($!)
done
for p in $PLATFORMS; do
	t=$(date +%s)
	build "${p%/*}" "${p#*/}"
	echo "  ($(($(date +%s) - t)) s)"
done
for pid in "${pids[@]}"; do
	wait "$pid" || { echo "release: an SBOM failed" >&2; exit 1; }
done
pids=()
(cd "$DIST" && sha256sum sluice-"$VERSION"-*.tar.gz sluice-"$VERSION"-*.cdx.json >SHA256SUMS)
echo "released in $(($(date +%s) - start)) s:"
(cd "$DIST" && ls -l sluice-"$VERSION"-* SHA256SUMS)
