#!/usr/bin/env bash
# Runs the system locally: moto (through our serializing launcher) and the services.
# Builds the jars when missing. Ctrl-C stops everything this script started.
# The gateway calls the services over mutual TLS; its own port is plaintext on loopback, or with --tls
# mutual TLS too. Certificates come from a local CA made on first start (see docs/security.md).
set -euo pipefail
cd "$(dirname "$0")"

GATEWAY_TLS=false
for arg in "$@"; do
  case "$arg" in
    --tls) GATEWAY_TLS=true ;;
    *) echo "usage: ./run.sh [--tls]" >&2; exit 2 ;;
  esac
done

MOTO_PORT="${MOTO_PORT:-5000}"
INVENTORY_GRPC_PORT="${INVENTORY_GRPC_PORT:-50052}"
INVENTORY_METRICS_PORT="${INVENTORY_METRICS_PORT:-9092}"
ORDER_GRPC_PORT="${ORDER_GRPC_PORT:-50053}"
ORDER_METRICS_PORT="${ORDER_METRICS_PORT:-9093}"
GATEWAY_GRPC_PORT="${GATEWAY_GRPC_PORT:-50051}"
GATEWAY_METRICS_PORT="${GATEWAY_METRICS_PORT:-9091}"
LOGS="${LOGS:-target/run-logs}"
CERTS="${CERTS:-target/run-certs}" # private keys: under target/, which git ignores
mkdir -p "$LOGS"
# Every JVM below logs one readable line per event (LOG_FORMAT=text); a deployment keeps the JSON default.
export LOG_FORMAT="${LOG_FORMAT:-text}"

# moto's server at its pinned version (tools/python-requirements.txt): the machine's, or installed into .venv.
source tools/python-env.sh

if [ ! -f inventory-service/target/inventory-service.jar ] || [ ! -f order-service/target/order-service.jar ] \
    || [ ! -f gateway/target/gateway.jar ] || [ ! -f dev-kit/target/dev-kit.jar ]; then
  echo "building the jars (first run) ..."
  # The commit goes into each process's build_info metric (the dashboard marks deploys by it).
  ./mvnw -B -q -DskipTests -Dbuild.revision="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" package
fi

# The JVM every process below runs on: a JDK 25 or later when the machine has one (tools/java-env.sh), for its AOT
# cache; otherwise the java on PATH, with a class-data-sharing archive (docs/operations/deploy.md#class-data-sharing).
# Each jar's train-cds run makes either, with that java, at the first start after a build. Without one, a process
# starts as before, only slower.
source tools/java-env.sh
JAVA="${JAVA_AOT:-java}"
for module in inventory-service order-service gateway; do
  jar="$module/target/$module.jar"
  if [ -n "$JAVA_AOT" ]; then
    # The JVM maps an AOT cache only with the JVM that made it, but JDK 25 before 25.0.4 also maps it with a
    # rebuilt jar, whose classes then differ from the cache's (JDK-8377932): what it was made from is kept beside
    # it and compared here.
    cache="$module/target/$module.aot" made_from="$module/target/$module.aot.made-from"
    source_id="$(cksum <"$jar") $JAVA_AOT $JAVA_AOT_VERSION"
    if [ ! -f "$cache" ] || [ "$(cat "$made_from" 2>/dev/null)" != "$source_id" ]; then
      echo "making $module's AOT cache with $JAVA_AOT (after each build) ..."
      rm -f "$cache" "$made_from"
      if "$JAVA" -XX:AOTCacheOutput="$cache" -jar "$jar" train-cds >"$LOGS/$module-train-aot.log" 2>&1; then
        echo "$source_id" >"$made_from"
      else
        rm -f "$cache"
        echo "  $module starts without one: its training run failed (see $LOGS/$module-train-aot.log)" >&2
      fi
    fi
  else
    archive="$module/target/$module.jsa"
    if ! java -XX:SharedArchiveFile="$archive" -Xshare:on -cp "$jar" -version >/dev/null 2>&1; then
      echo "making $module's class-data-sharing archive (after each build) ..."
      rm -f "$archive"
      if ! java -XX:ArchiveClassesAtExit="$archive" -jar "$jar" train-cds >"$LOGS/$module-train-cds.log" 2>&1; then
        rm -f "$archive"
        echo "  $module starts without one: its training run failed (see $LOGS/$module-train-cds.log)" >&2
      fi
    fi
  fi
done
# The flags that start a JVM of MODULE's jar on the chosen java: its AOT cache or archive, when it has one.
startup_flags() {
  if [ -n "$JAVA_AOT" ]; then
    # Netty's allocations through sun.misc.Unsafe, allowed without JDK 25's warning on stderr (see the Dockerfile).
    echo "--sun-misc-unsafe-memory-access=allow"
  fi
  if [ -n "$JAVA_AOT" ] && [ -f "$1/target/$1.aot.made-from" ]; then
    echo "-XX:AOTCache=$1/target/$1.aot"
  elif [ -z "$JAVA_AOT" ] && [ -f "$1/target/$1.jsa" ]; then
    echo "-XX:SharedArchiveFile=$1/target/$1.jsa -Xshare:auto"
  fi
}

# The dev kit (dev-kit.jar, kept out of the production jars) makes the local credentials and loads the demo data.
DEV_KIT=(java -jar dev-kit/target/dev-kit.jar)

# A local CA and one certificate per process, made on first start and reused after (renewed when close
# to expiry). The project's own code makes them: nothing else to install.
"${DEV_KIT[@]}" certs "$CERTS"
GATEWAY_ID=spiffe://warehouse.local/gateway
INVENTORY_ID=spiffe://warehouse.local/inventory-service
ORDER_ID=spiffe://warehouse.local/order-service

pids=()
stop_all() {
  trap - INT TERM EXIT
  echo
  echo "stopping ..."
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "stopped"
}
trap stop_all INT TERM EXIT

wait_for_port() { # name port pid
  for _ in $(seq 1 120); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
    if ! kill -0 "$3" 2>/dev/null; then echo "$1 exited; see $LOGS/$1.log" >&2; exit 1; fi
    sleep 0.5
  done
  echo "$1 did not open port $2 within 60 s; see $LOGS/$1.log" >&2
  exit 1
}

"$MOTO_PYTHON" tools/moto/serialized_moto_server.py --host 127.0.0.1 --port "$MOTO_PORT" >"$LOGS/moto.log" 2>&1 &
pids+=($!)
wait_for_port moto "$MOTO_PORT" "${pids[-1]}"

# One key per run, shared by every instance, so page tokens work across instances.
PAGE_TOKEN_KEY="${PAGE_TOKEN_KEY:-$(head -c 32 /dev/urandom | base64)}"
export DYNAMODB_ENDPOINT="http://127.0.0.1:$MOTO_PORT" TABLE_AUTO_CREATE=true PAGE_TOKEN_KEY
# Every port on loopback only; every process trusts the local CA.
export GRPC_BIND_ADDRESS=127.0.0.1 METRICS_BIND_ADDRESS=127.0.0.1 TLS_CA_FILE="$CERTS/ca.pem"

# The services: mutual TLS, and only the gateway's identity may call them (health: any certificate of the CA);
# the inventory's reservations only the order-service's (RESERVATION_TRUSTED_PEERS' default).
GRPC_PORT="$INVENTORY_GRPC_PORT" METRICS_PORT="$INVENTORY_METRICS_PORT" \
  GRPC_TLS_MODE=mtls TLS_TRUSTED_PEERS="$GATEWAY_ID" \
  TLS_CERT_FILE="$CERTS/inventory-service.pem" TLS_KEY_FILE="$CERTS/inventory-service-key.pem" \
  "$JAVA" -Xmx256m @deploy/jvm.options $(startup_flags inventory-service) -jar inventory-service/target/inventory-service.jar >"$LOGS/inventory-service.log" 2>&1 &
pids+=($!)
wait_for_port inventory-service "$INVENTORY_GRPC_PORT" "${pids[-1]}"

# The order-service holds its orders' stock at the inventory, calling it directly over mutual TLS.
GRPC_PORT="$ORDER_GRPC_PORT" METRICS_PORT="$ORDER_METRICS_PORT" \
  GRPC_TLS_MODE=mtls TLS_TRUSTED_PEERS="$GATEWAY_ID" \
  TLS_CERT_FILE="$CERTS/order-service.pem" TLS_KEY_FILE="$CERTS/order-service-key.pem" \
  INVENTORY_ADDRESSES="127.0.0.1:$INVENTORY_GRPC_PORT" INVENTORY_TLS_MODE=mtls \
  INVENTORY_TRUSTED_PEERS="spiffe://warehouse.local/inventory-service" \
  "$JAVA" -Xmx256m @deploy/jvm.options $(startup_flags order-service) -jar order-service/target/order-service.jar >"$LOGS/order-service.log" 2>&1 &
pids+=($!)
wait_for_port order-service "$ORDER_GRPC_PORT" "${pids[-1]}"

# Who may call what (docs/security.md): the development policy, and a new signing key at every start.
# The gateway reads the key's public JWKS; the tokens, one per role, are for you and the demo loader.
# The private key is never written; tokens and JWKS stay under target/, which git ignores.
AUTH_DIR="${AUTH_DIR:-target/run-auth}"
"${DEV_KIT[@]}" dev-tokens "$AUTH_DIR" deploy/auth/policy.dev.yaml --subject customer=C4821 >"$LOGS/dev-tokens.log"
export AUTH_POLICY_FILE=deploy/auth/policy.dev.yaml AUTH_JWKS_FILE="$AUTH_DIR/jwks.json" \
  AUTH_JWT_ISSUER=warehouse-dev AUTH_JWT_AUDIENCE=warehouse-gateway

# The gateway: calls the services over mutual TLS with its own certificate, checking theirs; its client
# port is plaintext (loopback only), or mutual TLS with --tls.
if [ "$GATEWAY_TLS" = true ]; then GATEWAY_MODE=mtls; else GATEWAY_MODE=plaintext; fi
GRPC_PORT="$GATEWAY_GRPC_PORT" METRICS_PORT="$GATEWAY_METRICS_PORT" \
  INVENTORY_ADDRESSES="127.0.0.1:$INVENTORY_GRPC_PORT" ORDER_ADDRESSES="127.0.0.1:$ORDER_GRPC_PORT" \
  GRPC_TLS_MODE="$GATEWAY_MODE" BACKEND_TLS_MODE=mtls INVENTORY_TRUSTED_PEERS="$INVENTORY_ID" ORDER_TRUSTED_PEERS="$ORDER_ID" \
  TLS_CERT_FILE="$CERTS/gateway.pem" TLS_KEY_FILE="$CERTS/gateway-key.pem" \
  "$JAVA" -Xmx256m @deploy/jvm.options $(startup_flags gateway) -jar gateway/target/gateway.jar >"$LOGS/gateway.log" 2>&1 &
pids+=($!)
wait_for_port gateway "$GATEWAY_GRPC_PORT" "${pids[-1]}"

# Waits until every service is SERVING through the gateway, then writes what is missing; a call answered
# "not now" (RESOURCE_EXHAUSTED, UNAVAILABLE, ABORTED) is asked again after its RetryInfo's delay. A load that
# still fails is reported, and the stack keeps running: the data can be loaded again by hand.
if [ "$GATEWAY_TLS" = true ]; then
  LOAD_DEMO=("${DEV_KIT[@]}" load-demo-data --cacert "$CERTS/ca.pem" --cert "$CERTS/client.pem"
    --key "$CERTS/client-key.pem" --token-file "$AUTH_DIR/admin.jwt" "127.0.0.1:$GATEWAY_GRPC_PORT")
  GRPCURL="grpcurl -cacert $CERTS/ca.pem -cert $CERTS/client.pem -key $CERTS/client-key.pem"
else
  LOAD_DEMO=("${DEV_KIT[@]}" load-demo-data --token-file "$AUTH_DIR/admin.jwt" "127.0.0.1:$GATEWAY_GRPC_PORT")
  GRPCURL="grpcurl -plaintext"
fi
if ! "${LOAD_DEMO[@]}"; then
  echo "run.sh: the demo data did not load (above); the stack keeps running. To load it again:" >&2
  printf '  %q' "${LOAD_DEMO[@]}" >&2
  echo >&2
fi
GRPCURL="$GRPCURL -H \"authorization: Bearer \$TOKEN\""

G="localhost:$GATEWAY_GRPC_PORT"
cat <<INFO

  gateway             127.0.0.1:$GATEWAY_GRPC_PORT ($GATEWAY_MODE)   metrics http://127.0.0.1:$GATEWAY_METRICS_PORT/metrics   <- point clients here
  inventory-service   127.0.0.1:$INVENTORY_GRPC_PORT (mtls: gateway; reservations: order-service)   metrics http://127.0.0.1:$INVENTORY_METRICS_PORT/metrics
  order-service       127.0.0.1:$ORDER_GRPC_PORT (mtls, gateway only)   metrics http://127.0.0.1:$ORDER_METRICS_PORT/metrics
  moto (DynamoDB)     http://127.0.0.1:$MOTO_PORT
  certificates        $CERTS/ (local CA; rotate: java -jar dev-kit/target/dev-kit.jar certs $CERTS --renew)
  logs                $LOGS/

Every call but health needs a token; one per role of deploy/auth/policy.dev.yaml, valid 12 h ($AUTH_DIR/):
$(for f in "$AUTH_DIR"/*.jwt; do printf '  %-11s %s\n' "$(basename "$f" .jwt)" "$(cat "$f")"; done)
  TOKEN=\$(cat $AUTH_DIR/debugger.jwt)    # reads and reflection; writes are PERMISSION_DENIED (admin.jwt may write)

One grpcurl per access pattern (reflection is on; no .proto files needed):
  $GRPCURL $G list
  A1 $GRPCURL -d '{"serial_number":"SN-98471"}' $G warehouse.inventory.v1.InventoryService/GetSerialItem
  A2 $GRPCURL -d '{"product_id":"P100","warehouse_id":"W2"}' $G warehouse.inventory.v1.InventoryService/GetProductInventory
  A3 $GRPCURL -d '{"product_id":"P100"}' $G warehouse.inventory.v1.InventoryService/ListProductWarehouses
  A4 $GRPCURL -d '{"warehouse_id":"W1"}' $G warehouse.inventory.v1.InventoryService/ListWarehouseProducts
  A5 $GRPCURL -d '{"customer_id":"C4821","date_prefix":"2026-07"}' $G warehouse.order.v1.OrderService/ListCustomerOrders
  A6 $GRPCURL -d '{"order_id":"O900"}' $G warehouse.order.v1.OrderService/GetOrder
  A7 $GRPCURL -d '{}' $G warehouse.inventory.v1.InventoryService/ListLowStock
  The last 2 units of P100 at W3 (TOKEN=\$(cat $AUTH_DIR/admin.jwt)): the first buyer gets them, the second OUT_OF_STOCK:
  W4 $GRPCURL -d '{"customer_id":"C1","request_id":"buy-1","lines":[{"product_id":"P100","warehouse_id":"W3","quantity":2,"unit_price":{"currency_code":"EUR","units":65}}]}' $G warehouse.order.v1.OrderService/PlaceOrder
  W4 $GRPCURL -d '{"customer_id":"C2","request_id":"buy-2","lines":[{"product_id":"P100","warehouse_id":"W3","quantity":1,"unit_price":{"currency_code":"EUR","units":65}}]}' $G warehouse.order.v1.OrderService/PlaceOrder
  The demo customer C4821 (TOKEN=\$(cat $AUTH_DIR/customer.jwt)) sees its own orders only; another's is PERMISSION_DENIED:
     $GRPCURL -d '{"customer_id":"C4821"}' $G warehouse.order.v1.OrderService/ListCustomerOrders
     $GRPCURL -d '{"order_id":"O900"}' $G warehouse.order.v1.OrderService/GetOrder
     $GRPCURL -d '{"customer_id":"C1"}' $G warehouse.order.v1.OrderService/ListCustomerOrders     # OUT_OF_SCOPE
  a service directly (mTLS; health answers any certificate of the CA, everything else only the gateway's):
     grpcurl -cacert $CERTS/ca.pem -cert $CERTS/client.pem -key $CERTS/client-key.pem localhost:$INVENTORY_GRPC_PORT grpc.health.v1.Health/Check
  consistency audit (orders):            DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT java -jar order-service/target/order-service.jar audit
  consistency audit (low-stock markers): DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT java -jar inventory-service/target/inventory-service.jar audit

Press Ctrl-C to stop.
INFO
wait
