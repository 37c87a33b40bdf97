#!/bin/sh
# Fan a list of edits out over parallel jobs, each in a git worktree of its own on its own
# branch, then merge into the current branch the branches whose change passes a check.
#
#   docs/examples/fan-out-and-merge.sh tasks.txt 'make test'
#
# tasks.txt holds one task per line ("Fix the lint warnings in src/parse.c"). CHECK runs
# with sh in each job's branch, checked out in a temporary worktree of its own; the branch
# is merged when CHECK exits 0. Branches that fail it, or that conflict with what was
# merged before them, are left for you (`agentrun worktrees list`). Exits 0 when every
# job's change was merged, 1 when some were not, else the batch's exit status.
set -u
usage="usage: fan-out-and-merge.sh TASKS.txt CHECK"
tasks=${1:?$usage}
check=${2:?$usage}

# Merging needs a current branch without uncommitted changes to tracked files.
if ! git diff --quiet || ! git diff --cached --quiet; then
    echo "fan-out-and-merge: commit or stash your changes first" >&2
    exit 2
fi

jobs=$(mktemp)
results=$(mktemp)
trap 'rm -f "$jobs" "$results"' EXIT
jq -R -c 'select(length > 0)' "$tasks" |
    jq -s -c 'to_entries[] | {id: ("t" + (.key + 1 | tostring)), prompt: .value,
                             allow_edits: true}' > "$jobs"

# Every job in a worktree of its own, side by side; a job that succeeds commits its change.
agentrun batch -j 4 --worktrees --commit -o "$results" "$jobs"
status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ] && [ "$status" -ne 4 ]; then
    exit "$status"      # usage, budget, interrupted: nothing to merge
fi

merged=0 rejected=0
# The branches that hold a job's commit (a job that changed nothing left none), in the
# order of the tasks: when two conflict, the earlier task's change is the one merged.
branches=$(jq -s -r 'sort_by(.id | ltrimstr("t") | tonumber)[]
                     | select(.ok and .worktree.commit != null) | .worktree.branch' "$results")
for branch in $branches; do
    dir=$(mktemp -d)
    git worktree add -q --detach "$dir" "$branch"
    if (cd "$dir" && sh -c "$check") > /dev/null 2>&1; then
        if git merge -q --no-edit "$branch" > /dev/null 2>&1; then
            echo "merged $branch"
            merged=$((merged + 1))
        else
            git merge --abort
            echo "conflict: $branch (left for you)"
            rejected=$((rejected + 1))
        fi
    else
        echo "check failed: $branch (left for you)"
        rejected=$((rejected + 1))
    fi
    git worktree remove --force "$dir"
done
failed=$(jq -s '[.[] | select(.ok | not)] | length' "$results")
echo "$merged merged, $rejected left, $failed jobs failed" >&2
[ "$rejected" -eq 0 ] && [ "$failed" -eq 0 ]
