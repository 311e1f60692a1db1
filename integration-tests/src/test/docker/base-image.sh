#!/usr/bin/env bash
# Makes the base image of kpipe's local Kafka image from Debian's packages, with no image registry: a minimal
# bookworm with a Java 17 runtime, bootstrapped with debootstrap and imported into the Docker engine as IMAGE
# (default kpipe-it/debian-jre:bookworm-17). Does nothing when IMAGE is already in the engine (reused while present).
#
# Needs root (debootstrap), debootstrap, a docker client talking to a running engine, and Debian's package
# mirror (default http://deb.debian.org/debian, or $KPIPE_DEBIAN_MIRROR). Exits non-zero, with one line on
# stderr saying why, when one is missing. Takes about 80 s (and ~480 MB) the first time.
#
# Usage: base-image.sh [IMAGE]
set -euo pipefail
image="${1:-kpipe-it/debian-jre:bookworm-17}"
mirror="${KPIPE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if ! command -v docker >/dev/null 2>&1; then echo "base-image: no docker client on PATH" >&2; exit 2; fi
if docker image inspect "$image" >/dev/null 2>&1; then echo "base-image: $image present, reused"; exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "base-image: debootstrap needs root (uid $(id -u))" >&2; exit 2; fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "base-image: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2
fi
root="$(mktemp -d "${TMPDIR:-/tmp}/kpipe-base-image.XXXXXX")"
trap 'rm -rf "$root"' EXIT
start=$(date +%s)
# minbase: essential packages and apt only; the headless JRE is what the broker needs; bash, coreutils, grep and sed
# (all essential) are what the entrypoint uses; procps gives ps for kafka-server-stop and debugging.
debootstrap --variant=minbase --include=openjdk-17-jre-headless,procps bookworm "$root" "$mirror" \
  >"$root.log" 2>&1 || { echo "base-image: debootstrap failed, last lines of $root.log:" >&2; tail -n 20 "$root.log" >&2; exit 1; }
rm -f "$root.log"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import -c 'ENV LANG=C.UTF-8' -m "debootstrap minbase bookworm + openjdk-17-jre-headless" - "$image" >/dev/null
echo "base-image: $image built in $(( $(date +%s) - start )) s"
