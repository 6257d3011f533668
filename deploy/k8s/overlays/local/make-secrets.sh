#!/usr/bin/env bash
# Makes the local overlay's development credentials in secrets/ (ignored by git), with the project's own
# commands, as run.sh and compose do: a local CA and a certificate per process (dev-kit.jar certs), a
# signing key's public JWKS and one token per role of the development policy (dev-kit.jar dev-tokens),
# and a page-token key. Run again to renew what is about to expire and sign new tokens.
# Needs the dev kit's jar: ./mvnw -B -q -DskipTests -pl dev-kit -am package
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
jar="$root/dev-kit/target/dev-kit.jar"
out="$here/secrets"
[ -f "$jar" ] || { echo "missing $jar: ./mvnw -B -q -DskipTests -pl dev-kit -am package" >&2; exit 1; }
mkdir -p "$out/certs" "$out/auth"
chmod 700 "$out"
java -jar "$jar" certs "$out/certs"
java -jar "$jar" dev-tokens "$out/auth" "$root/deploy/auth/policy.dev.yaml" --subject customer=C4821
if [ ! -f "$out/page-token-key.env" ]; then
  # 32 random bytes, base64: what PAGE_TOKEN_KEY takes (kept across runs, so page tokens stay valid).
  (umask 077 && printf 'PAGE_TOKEN_KEY=%s\n' "$(head -c 32 /dev/urandom | base64 -w0)" > "$out/page-token-key.env")
fi
echo "secrets in $out; a token for grpcurl: cat $out/auth/debugger.jwt"
