#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): `ripple-render check` over the scenes, with the
# report folder and JUnit XML kept for the next steps. The check writes the job summary and an
# annotation on each failing scene itself (it sees GITHUB_STEP_SUMMARY and GITHUB_ACTIONS).
# The step passes either way and says the verdict in its outputs, so that the report can be
# uploaded before the job fails.
#
# Inputs (environment): SCENES (glob patterns, `**` allowed, one or more separated by spaces or
# lines), REFS, REPORT (the folder), ARGS (more options for check), GITHUB_OUTPUT.
set -euo pipefail
# (bash 3.2, macOS's own, has no globstar: `**` is then `*`.)
shopt -s nullglob
shopt -s globstar 2>/dev/null || true

report=${REPORT:-ripple-render-report}
refs=${REFS:-refs}
scenes=()
# The patterns split at spaces and lines (not expanded yet), then each expanded as the shell
# would, and kept as written when it matches nothing, so that check names it.
set -f
# shellcheck disable=SC2206 # split here, expanded below
patterns=(${SCENES:-scenes/*.toml})
set +f
for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2206 # the pattern is to be expanded here
    matched=($pattern)
    if [ ${#matched[@]} -eq 0 ]; then matched=("$pattern"); fi
    scenes+=("${matched[@]}")
done
# ARGS are words, as on a command line.
read -r -a more <<<"${ARGS:-}"

set +e
ripple-render check "${scenes[@]}" --refs "$refs" --report "$report" --junit "$report.junit.xml" ${more[@]+"${more[@]}"}
code=$?
set -e
case $code in
    0) result=passed ;;
    1) result=failed ;;
    *) result=error ;;
esac
{
    echo "result=$result"
    echo "report=$report"
    echo "junit=$report.junit.xml"
} >>"${GITHUB_OUTPUT:-/dev/null}"
if [ "$result" = failed ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
        echo
        echo "To accept the change once you have looked at it: download the \`$report\` artifact, unzip it into \`$report/\` and run"
        echo
        echo "    ripple-render check --accept-from $report"
    } >>"$GITHUB_STEP_SUMMARY"
fi
# Bad input (exit 2) or an I/O failure (3) fails the step at once: there is no report to keep.
if [ "$result" = error ]; then exit "$code"; fi
