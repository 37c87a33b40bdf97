#!/bin/sh
# A git pre-commit hook: review the staged changes, block the commit on a high or
# critical issue, and say why in one line per finding.
#
#   cp docs/examples/pre-commit-review.sh .git/hooks/pre-commit
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT

agentrun review --staged --fail-on high --format json -q > "$out"
status=$?
case "$status" in
0) exit 0 ;;
1)
    echo "agentrun review blocked this commit:" >&2
    jq -r '.issues[] | select(.severity == "high" or .severity == "critical")
           | "  \(.file):\(.line): [\(.severity)] \(.message)"' "$out" >&2
    echo "(git commit --no-verify skips the review once)" >&2
    exit 1
    ;;
*)
    # No model, no network, a timeout: say so, and block (the review did not happen).
    echo "agentrun review could not run (exit $status): $(jq -r '.error.message // "see above"' "$out" 2>/dev/null)" >&2
    exit "$status"
    ;;
esac
