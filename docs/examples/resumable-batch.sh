#!/bin/sh
# Many prompts, resumable: the same command picks up where an interrupted or partly
# failed run left off, and results.jsonl ends with exactly one record per id.
#
#   docs/examples/resumable-batch.sh questions.txt results.jsonl
set -u
questions=${1:?usage: resumable-batch.sh QUESTIONS.txt RESULTS.jsonl}
results=${2:?usage: resumable-batch.sh QUESTIONS.txt RESULTS.jsonl}

# One job per non-empty line; the id is its line number in the file (blank lines
# counted), so it is stable across runs, and q7 is line 7 of questions.txt.
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT
jq -R -s -c 'split("\n") | to_entries[] | select(.value | length > 0)
             | {id: ("q" + (.key + 1 | tostring)), prompt: .value}' "$questions" > "$jobs"

agentrun batch -j 4 --resume -o "$results" "$jobs"
status=$?

done=$(jq -s '[.[] | select(.ok)] | length' "$results")
total=$(wc -l < "$jobs")
echo "$done of $total answered; run again to retry the rest" >&2
exit "$status"
