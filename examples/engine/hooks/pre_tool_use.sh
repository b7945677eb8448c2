#!/bin/sh
# A Claude Code PreToolUse command hook: the tool call arrives as JSON on stdin.
# Exit 2 blocks the call (stderr is the reason); exit 0 lets it run.
if grep -q 'rm -rf'; then
    echo "destructive command refused by hooks/pre_tool_use.sh" >&2
    exit 2
fi
exit 0
