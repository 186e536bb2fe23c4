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
check_contains "partition: the primary took every operation" "$T/pe" "load: 60 operations so far, 60 acknowledged"
check_contains "partition: a node named as nodes.name names it (r3) is struck" "$T/pe" "cutting r3 off the network"
check_contains "partition: a node cut off is restarted without waiting for an answer" "$T/pe" "restarting r3"
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

# C probes described as data (tests/data/systems/c-target): spectap's C test target, its
# functions and their parameters' fields through its DWARF, signed and unsigned, at entries and
# a return, a void * field cast to its struct; every value the loop set, for all 300 calls.
CT="$BUILD/tests/c_target"
run_status 0 "$T/ct.json" "$T/cte" env SPECTAP_SYSTEMS=$S "$SPECTAP" record c-target --scenario loop --binary "$CT" \
	-o "$T/ct.spt" --json
check_eq "C probes: 300 hits of each probe, nothing lost" "1800 0" "$(jq -r '"\(.events) \(.lost)"' "$T/ct.json")"
"$SPECTAP" export --to json "$T/ct.spt" -o "$T/ct.ndjson" 2>/dev/null
check_eq "the trace names the node as the description does (nodes.name t\${i})" '["t1"] ["t1"]' \
	"$(head -n 1 "$T/ct.ndjson" | jq -c .header.nodes) $(jq -c 'select(.event) | .event.node' "$T/ct.ndjson" | sort -u | jq -sc .)"
for k in candidate candidate_end append touch touch_end sum_end; do
	jq -c --arg k "$k" 'select(.event.kind == $k) | .event.state' "$T/ct.ndjson" >"$T/ct.$k"
done
check_eq "C probes: at raft_become_candidate's entry, me->... and node_id as the loop set them" 0 \
	"$(jq -s 'to_entries | map(select(.value != {term: (10 * .key), voted_for: -1, commit: .key, count: .key,
		node: (.key % 5 + 1)})) | length' "$T/ct.candidate")"
check_eq "C probes: at its return, the value returned and the parameters (kept by its entry) after it" 0 \
	"$(jq -s 'to_entries | map(select(.value != {term: (10 * .key + 1), after: (10 * .key + 1),
		voted: (.key % 5 + 1), node: (.key % 5 + 1)})) | length' "$T/ct.candidate_end")"
check_eq "C probes: raft_append_entry's entry, e->term and e->id and the server after the candidacy" 0 \
	"$(jq -s 'to_entries | map(select(.value != {term: (10 * .key + 1), voted_for: (.key % 5 + 1), commit: .key,
		count: .key, entry_term: (10 * .key + 1), entry_id: .key})) | length' "$T/ct.append")"
check_eq "C probes: a void * field read as the struct it points to" 0 \
	"$(jq -s 'to_entries | map(select(.value != {id: (.key % 3), term: (10 * .key + 1)})) | length' "$T/ct.touch")"
check_eq "C probes: at a return, through a cast of a kept parameter" 0 \
	"$(jq -s 'to_entries | map(select(.value != {term: (10 * .key + 1)})) | length' "$T/ct.touch_end")"
check_eq "C probes: at a return, a third parameter kept past two that cannot be (struct, double)" 0 \
	"$(jq -s 'to_entries | map(select(.value != {y: .key})) | length' "$T/ct.sum_end")"
check_eq "C probes: 300 of each" "300 300 300 300 300 300" "$(cat "$T/ct.candidate" | wc -l) $(cat "$T/ct.candidate_end" | wc -l) $(cat "$T/ct.append" | wc -l) $(cat "$T/ct.touch" | wc -l) $(cat "$T/ct.touch_end" | wc -l) $(cat "$T/ct.sum_end" | wc -l)"
# Bad C probes are named with their place before anything starts.
cp -r $S/c-target "$T/sys/"
Y="$T/sys/c-target/system.yaml"
sed 's/func: raft_node_touch,/func: raft_node_tuch,/' $S/c-target/system.yaml >"$Y"
run_status 1 "$T/o5" "$T/e5" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record c-target --scenario loop --binary "$CT" -o "$T/y.spt"
check_contains "C probes: a function the binary lacks is named with its line" "$T/e5" "system.yaml:20:7: raft_node_tuch"
sed 's/term: me->current_term,/term: me->current_trm,/' $S/c-target/system.yaml >"$Y"
run_status 1 "$T/o6" "$T/e6" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record c-target --scenario loop --binary "$CT" -o "$T/y.spt"
check_contains "C probes: a field that does not resolve is named" "$T/e6" "read term: "
check_contains "C probes: with the field" "$T/e6" "current_trm"
sed 's/reads: {term: return,/reads: {term: sink,/' $S/c-target/system.yaml >"$Y"
run_status 1 "$T/o7" "$T/e7" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record c-target --scenario loop --binary "$CT" -o "$T/y.spt"
check_contains "C probes: a read at a return that is no parameter is refused, saying what to do" "$T/e7" \
	"at a return, read \`return\` (the value it returns) or through one of the first 4 parameters"
sed 's/entry_id: e->id}/entry_id: return}/' $S/c-target/system.yaml >"$Y"
run_status 1 "$T/o8" "$T/e8" env SPECTAP_SYSTEMS="$T/sys" "$SPECTAP" record c-target --scenario loop --binary "$CT" -o "$T/y.spt"
check_contains "C probes: return read at an entry is refused" "$T/e8" "\`return\` is read at a return (at: return), not at the entry"
check "and nothing was written" test ! -e "$T/y.spt"

# etcd from its description (systems/etcd): tests/cli/test_etcd_described.sh.
finish
