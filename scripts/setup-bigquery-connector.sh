#!/usr/bin/env bash
# Resolve the spark-bigquery-connector that Dataproc's Spark 3.5 images ship, from Maven Central, and
# make the TLS certificate the local BigQuery emulator's Storage Write port is fronted with (the
# connector speaks gRPC over TLS only), with a Java truststore that trusts it:
#   ~/.cache/uniview/bigquery-connector/<version>/spark-3.5-bigquery-<version>.jar
#   ~/.cache/uniview/bigquery-connector/<version>/tls/{cert.pem,key.pem,truststore.jks}
# ($UNIVIEW_CACHE overrides ~/.cache/uniview).  Idempotent; prints the folder on its last line.
set -euo pipefail

VERSION=0.42.1   # keep in step with uniview/local/bigquery_connector.py CONNECTOR_VERSION
CACHE="${UNIVIEW_CACHE:-$HOME/.cache/uniview}/bigquery-connector/$VERSION"
JAR="$CACHE/spark-3.5-bigquery-$VERSION.jar"

for tool in mvn openssl keytool; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: the spark-bigquery-connector tests need $tool (Maven, OpenSSL and a JDK's keytool)" >&2
    exit 1
  fi
done

if [ ! -f "$JAR" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/uniview-connector.XXXXXX")
  if ! mvn -q dependency:copy "-Dartifact=com.google.cloud.spark:spark-3.5-bigquery:$VERSION" \
      "-DoutputDirectory=$work" >"$work/mvn.log" 2>&1; then
    echo "error: could not resolve com.google.cloud.spark:spark-3.5-bigquery:$VERSION from Maven Central:" >&2
    tail -20 "$work/mvn.log" >&2
    exit 1
  fi
  mkdir -p "$CACHE"
  mv "$work/spark-3.5-bigquery-$VERSION.jar" "$JAR.partial" && mv "$JAR.partial" "$JAR"
  rm -rf "$work"
fi

if [ ! -f "$CACHE/tls/truststore.jks" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/uniview-tls.XXXXXX")
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 3650 \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" >/dev/null 2>&1
  keytool -importcert -noprompt -alias uniview-local-bigquery -file "$work/cert.pem" \
    -keystore "$work/truststore.jks" -storepass uniview-local >/dev/null 2>&1
  rm -rf "$CACHE/tls" && mkdir -p "$CACHE" && mv "$work" "$CACHE/tls"
fi
echo "$CACHE"
