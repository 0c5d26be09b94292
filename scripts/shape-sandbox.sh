#!/usr/bin/env bash
# The operator's sandbox of docs/SHAPE.md, end to end: a mainnet-shaped synthetic Ethereum node,
# the service indexing it with the sample configuration of real chains from a start block within
# the node's head, and the API answering ETH's price and a pool's candles from what it indexed.
# Everything it starts stops when it ends (or on Ctrl-C). Run from anywhere: scripts/shape-sandbox.sh
#
# Settings (environment), with their defaults: ports chosen so as not to meet the demo's.
#   NODE_PORT=8546  API_PORT=8090  PG_PORT=54339  DATA=.data/shape  START_BLOCK=200
#   POOLS=2000  HISTORY_BLOCKS=300  READY_TIMEOUT=600 (seconds)
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_PORT=${NODE_PORT:-8546}
API_PORT=${API_PORT:-8090}
PG_PORT=${PG_PORT:-54339}
DATA=${DATA:-.data/shape}
START_BLOCK=${START_BLOCK:-200}
POOLS=${POOLS:-2000}
HISTORY_BLOCKS=${HISTORY_BLOCKS:-300}
READY_TIMEOUT=${READY_TIMEOUT:-600}
API=http://127.0.0.1:$API_PORT
# `npx tokenmarket` runs bin/tokenmarket.js; run directly, each background process is one pid to stop.
tokenmarket=(node bin/tokenmarket.js)
began=$(date +%s)
pids=()
stop() {
  # SIGTERM: a background job of a script ignores SIGINT.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop EXIT

echo "== 1. the node: synthetic Ethereum, $POOLS pools, $HISTORY_BLOCKS trading blocks, a fixed head"
"${tokenmarket[@]}" devnet --shape ethereum --port "$NODE_PORT" --pools "$POOLS" \
  --history-blocks "$HISTORY_BLOCKS" --live false >"$DATA.node.log" 2>&1 &
pids+=($!)
rpc() {
  curl -sf -X POST -H 'content-type: application/json' \
    --data "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":[]}" "http://127.0.0.1:$NODE_PORT"
}
until head=$(rpc eth_blockNumber); do sleep 0.5; done
head=$(( $(echo "$head" | sed -E 's/.*"result":"(0x[0-9a-f]+)".*/\1/') ))
echo "   head $head; indexing from block $START_BLOCK"

echo "== 2. the service: config/mainnet.example.json, chain 1 only, read from that node"
export TOKENMARKET_CONFIG=config/mainnet.example.json TOKENMARKET_CHAINS=1
export TOKENMARKET_RPC_1=http://127.0.0.1:$NODE_PORT TOKENMARKET__chains__0__startBlock=$START_BLOCK
export TOKENMARKET_API_PORT=$API_PORT
export TOKENMARKET__database__embedded__dataDir=$DATA TOKENMARKET__database__embedded__port=$PG_PORT
mkdir -p "$(dirname "$DATA")"
"${tokenmarket[@]}" start >"$DATA.service.log" 2>&1 &
pids+=($!)

echo "== 3. /readyz until ready (the factory scan's share, then the backfill)"
last=""
until ready=$(curl -sf "$API/readyz"); do
  if ! kill -0 "${pids[1]}" 2>/dev/null; then
    echo "the service stopped:"; tail -n 5 "$DATA.service.log"; exit 1
  fi
  reason=$(curl -s "$API/readyz" | sed -nE 's/.*"reason":"([^"]*)".*/\1/p' || true)
  if [ -n "$reason" ] && [ "$reason" != "$last" ]; then echo "   $(( $(date +%s) - began )) s: $reason"; last=$reason; fi
  if [ $(( $(date +%s) - began )) -gt "$READY_TIMEOUT" ]; then echo "not ready after $READY_TIMEOUT s"; exit 1; fi
  sleep 1
done
echo "   ready after $(( $(date +%s) - began )) s: $ready"

echo "== 4. an API key, ETH's price and the hourly candles of WETH in its busiest pool"
KEY=$("${tokenmarket[@]}" keys create --name "sandbox-$(date +%s)" | grep -o 'tm_[A-Za-z0-9_-]*')
echo "   GET /v1/coins/price?symbol=ETH"
echo "   $(curl -s -H "x-api-key: $KEY" "$API/v1/coins/price?symbol=ETH")"
WETH=0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2
pairs=$(curl -s -H "x-api-key: $KEY" "$API/api/v1/pairs?asset_id=$WETH:1&limit=1")
pair=$(echo "$pairs" | sed -nE 's/.*"pair_id":"(0x[0-9a-f]{40}:1)".*/\1/p')
if [ -z "$pair" ]; then echo "no pair of WETH: $pairs"; exit 1; fi
echo "   GET /api/v1/candles?pair_id=$pair&asset_id=$WETH:1&interval=1h&limit=3"
echo "   $(curl -s -H "x-api-key: $KEY" "$API/api/v1/candles?pair_id=$pair&asset_id=$WETH:1&interval=1h&limit=3")"
echo "== done in $(( $(date +%s) - began )) s (logs: $DATA.node.log, $DATA.service.log)"
