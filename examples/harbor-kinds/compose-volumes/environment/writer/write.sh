#!/bin/sh
# Builds the manifest on its tmpfs, then leaves it in the shared volume.
set -e
{
  echo "release=$(cat /opt/writer/release)"
  echo "region=$REGION"
  echo "owner=$OWNER"
  echo "writer_tmpfs=$(awk '$2 == "/work" {print $3 "," $4}' /proc/mounts)"
} > /work/manifest.txt
cp /work/manifest.txt /out/manifest.txt
