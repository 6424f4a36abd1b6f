#!/bin/sh
# The S3 server of compose.yaml: SeaweedFS (master, volume, filer and S3 gateway in one process) with
# one identity (S3_ACCESS_KEY / S3_SECRET_KEY), its data in /data, and the bucket S3_BUCKET made on
# the first start. /data/.ready marks a server whose bucket exists (the health check reads it).
set -eu
: "${S3_ACCESS_KEY:?S3_ACCESS_KEY is not set}"
: "${S3_SECRET_KEY:?S3_SECRET_KEY is not set}"
BUCKET="${S3_BUCKET:-dailies}"
DATA=/data
rm -f "$DATA/.ready"
mkdir -p "$DATA/weed"
umask 077
cat > "$DATA/s3.json" <<JSON
{"identities": [{"name": "dailies",
  "credentials": [{"accessKey": "$S3_ACCESS_KEY", "secretKey": "$S3_SECRET_KEY"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
umask 022

weed server -ip=127.0.0.1 -ip.bind=0.0.0.0 -dir="$DATA/weed" -master.telemetry=false \
    -volume.max="${SEAWEEDFS_VOLUMES:-100}" -master.volumeSizeLimitMB="${SEAWEEDFS_VOLUME_SIZE_MB:-1024}" \
    -filer -s3 -s3.port=8333 -s3.config="$DATA/s3.json" -s3.port.iceberg=0 -s3.port.lance=0 &
server=$!
trap 'kill -TERM "$server" 2>/dev/null; wait "$server"; exit 0' TERM INT

# The first start makes the bucket; later starts find it (the filer keeps it in /data).
tries=0
until echo "s3.bucket.list" | weed shell -master=127.0.0.1:9333 2>/dev/null | grep -q "^  *$BUCKET[[:space:]]"; do
    kill -0 "$server" 2>/dev/null || { echo "seaweedfs exited" >&2; exit 1; }
    tries=$((tries + 1))
    if [ "$tries" -gt 120 ]; then echo "bucket $BUCKET could not be made" >&2; kill "$server"; exit 1; fi
    echo "s3.bucket.create -name $BUCKET" | weed shell -master=127.0.0.1:9333 >/dev/null 2>&1 || true
    sleep 1
done
echo "seaweedfs: bucket $BUCKET ready on :8333"
touch "$DATA/.ready"
wait "$server"
