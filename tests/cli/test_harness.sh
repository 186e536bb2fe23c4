#!/bin/sh
# The launcher, load and scenarios of a system described as data, on a real system from Debian
# with no probes (tests/data/systems/redis-replicas: redis-server, one primary and its replicas,
# asked over TCP in Redis's protocol): ready and status by a text sent over TCP, the leader as
# the node whose answer says so, a node of its own for the first node (${first|...|...}) and
# another node's port and address (${port.client@1}, ${host@1}), a load in Redis's protocol, kill
# and restart, and a partition (every node in a network namespace).
. tests/cli/lib.sh
S=tests/data/systems
if [ ! -x /usr/bin/redis-server ]; then
	echo "SKIP: the harness test needs Debian's redis-server"
	finish
	exit $?
fi
run_status 0 "$T/o.json" "$T/e" env SPECTAP_SYSTEMS=$S "$SPECTAP" record redis-replicas --scenario kill-replica \
	--no-probes --json
check_eq "every operation is acknowledged, killed replica or not" "120 120 0" \
	"$(jq -r '"\(.load.ops) \(.load.acked) \(.load.failed)"' "$T/o.json")"
check_eq "three nodes ran" 3 "$(jq .nodes "$T/o.json")"
run_status 0 "$T/o2" "$T/e2" env SPECTAP_SYSTEMS=$S "$SPECTAP" record redis-replicas --scenario kill-replica --no-probes
check_contains "the leader is the node whose status says it leads" "$T/e2" "r1 leads"
check_contains "a follower is struck" "$T/e2" "killing r"
check_contains "and started again" "$T/e2" "restarting r"
check "nothing is left running" test -z "$(pgrep -f 'spectap-record-.*/r[0-9].conf' || true)"
# A partition: the nodes in network namespaces, a replica cut off while the primary takes the
# load, then reconnected; the namespaces are gone after.
ns_before=$(ip netns list 2>/dev/null | grep -c '^spt-' || true)
run_status 0 "$T/p.json" "$T/pe" env SPECTAP_SYSTEMS=$S "$SPECTAP" record redis-replicas --scenario partition-replica \
	--no-probes
check_contains "partition: each node in a network namespace" "$T/pe" "3 nodes of redis-replicas up, each in a network namespace"
check_contains "partition: a replica is cut off" "$T/pe" "cutting r"
check_contains "partition: and reconnected" "$T/pe" "reconnecting r"
check_contains "partition: the primary took every operation" "$T/pe" "load: 50 operations so far, 50 acknowledged"
check_eq "partition: no namespace is left" "$ns_before" "$(ip netns list 2>/dev/null | grep -c '^spt-' || true)"
check "partition: nothing is left running" test -z "$(pgrep -f 'spectap-record-.*/r[0-9].conf' || true)"
run_status 2 "$T/o3" "$T/e3" env SPECTAP_SYSTEMS=$S "$SPECTAP" record redis-replicas --scenario kill-replica -o "$T/x.spt"
check_contains "a description without probes records only with --no-probes" "$T/e3" "describes no probes"
check "and writes nothing" test ! -e "$T/x.spt"
# A description's template that names a node that does not exist fails with its place.
mkdir -p "$T/sys"
cp -r $S/redis-replicas "$T/sys/"
sed -i 's/${port.client@1}/${port.client@7}/' "$T/sys/redis-replicas/system.yaml"
run_status 1 "$T/o4" "$T/e4" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record redis-replicas --scenario kill-replica --no-probes
check_contains "a node out of range is named" "$T/e4" "'port.client@7': @ takes a node's number"
finish
