#!/bin/sh
# Rebuild bench/corpus/*.messages.json from the source repositories at the commits listed in
# bench/corpus/README.md. MIRRORS is a directory holding a git clone of each source repository
# as MIRRORS/<owner>+<name> (a bare clone or a .git directory; only `git show` is used).
# Usage: bench/corpus/build.sh MIRRORS
set -eu
MIRRORS=${1:?usage: bench/corpus/build.sh MIRRORS}
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

show() { # repo commit path -> file in $TMP
    out="$TMP/$(echo "$3" | tr '/' '_')"
    git -C "$MIRRORS/$1" show "$2:$3" > "$out"
    echo "$out"
}

SWEAGENT=SWE-agent+SWE-agent/repo; SWEAGENT_AT=3ea751c087f32b16e039a2233dd6eefecef325d5
OPENHANDS=All-Hands-AI+OpenHands/repo; OPENHANDS_AT=156d0686c46aafb0fa9d291da6421fb6f64dddc0
MINI=SWE-agent+mini-swe-agent/repo; MINI_AT=a83fcae82d2a08f0ee0c688f9d137b3566c097f8
AIDER=Aider-AI+aider/repo; AIDER_AT=5dc9490bb35f9729ef2c95d00a19ccd30c26339c

sweagent() { # name path
    $PYTHON -m bench.convert.sweagent "$(show $SWEAGENT $SWEAGENT_AT "$2")" "$HERE/sweagent__$1.messages.json"
}
sweagent pydicom-1458 "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj"
sweagent test-repo-i1 "tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj"
sweagent function-calling-simple "trajectories/demonstrations/function_calling_simple.traj"
sweagent humanevalfix-python-0 "trajectories/demonstrations/human_thought__swe-bench-HumanEvalFix-python__lcb__t-0.00__p-0.95__c-4.00__install-0/humanevalfix-python-0.traj"
sweagent marshmallow-1867-window100 "trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__default_sys-env_window100__t-0.20__p-0.95__c-2.00__install-1/marshmallow-code__marshmallow-1867.traj"
sweagent ctf-katy "trajectories/demonstrations/ctf/crypto/katy.traj"
sweagent ctf-eps "trajectories/demonstrations/ctf/crypto/eps.traj"
sweagent ctf-rock "trajectories/demonstrations/ctf/rev/rock.traj"
sweagent ctf-i-got-id "trajectories/demonstrations/ctf/web/i_got_id_demo.traj"

MSB=evaluation/benchmarks/multi_swe_bench/examples/output.jsonl
$PYTHON -m bench.convert.openhands "$(show $OPENHANDS $OPENHANDS_AT $MSB)" "$HERE/openhands__ponyc-4595.messages.json" --line 1
$PYTHON -m bench.convert.openhands "$(show $OPENHANDS $OPENHANDS_AT $MSB)" "$HERE/openhands__ponyc-4588.messages.json" --line 3
for name in basic basic_interactions wrong_initial_state; do
    $PYTHON -m bench.convert.openhands "$(show $OPENHANDS $OPENHANDS_AT tests/runtime/trajs/$name.json)" "$HERE/openhands__runtime_$name.messages.json"
done

$PYTHON -m bench.convert.mini_swe_agent "$(show $MINI $MINI_AT tests/test_data/local.traj.json)" "$HERE/mini-swe-agent__local.messages.json"

HISTORY=$(show $AIDER $AIDER_AT tests/fixtures/chat-history.md)
for session in 12 79 288 343 455 474 609 748; do
    $PYTHON -m bench.convert.aider "$HISTORY" "$HERE/aider__chat-history-$session.messages.json" --session $session
done
