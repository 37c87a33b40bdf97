#!/bin/sh
# Ask for a JSON answer, then branch on the RunResult: ok and the value, or the
# error's code, and what it cost. Needs agentrun and jq.
#
#   docs/examples/branch-on-result.sh "Is this change risky? ..."
set -u
question=${1:-"Rate the risk of upgrading libuv from 1.44 to 1.48."}

schema=$(mktemp)
trap 'rm -f "$schema"' EXIT
cat > "$schema" <<'SCHEMA'
{"type": "object", "required": ["risk", "reason"],
 "properties": {"risk": {"enum": ["low", "medium", "high"]}, "reason": {"type": "string"}}}
SCHEMA

result=$(agentrun run --schema "$schema" --format json "$question")
status=$?

# --format json prints a RunResult even when the run never started.
code=$(printf '%s\n' "$result" | jq -r '.error.code // "none"')
cost=$(printf '%s\n' "$result" | jq -r '.cost_usd // "unknown"')

if [ "$status" -eq 0 ]; then
    risk=$(printf '%s\n' "$result" | jq -r '.json.risk')
    echo "risk: $risk (cost \$$cost)"
    [ "$risk" = high ] && exit 10
    exit 0
fi
case "$code" in
rate_limit | api_error) echo "the model API failed ($code); try later" >&2 ;;
no_json | contract) echo "the answer was unusable ($code)" >&2 ;;
*) echo "agentrun failed: $code (exit $status)" >&2 ;;
esac
exit "$status"
