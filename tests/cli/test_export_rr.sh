#!/bin/sh
# export --to sysmobench of a RedisRaft trace: the RedisRaft dialect of SysMoBench's harness
# (Timeout, BecomeLeader, Handle{RequestVote,AppendEntries}{Request,Response}, ClientRequest,
# AdvanceCommitIndex), each with the state its harness writes (tla_trace.c: full {term, role,
# commitIndex, lastLogIndex, lastLogTerm, votedFor}, weak {term, role} for a response, commit
# {term, role, commitIndex}), read the way its trace spec reads them: the vote response before the
# BecomeLeader it causes and as a Candidate, commit advances on the leader only, roles Follower,
# Candidate and Leader.
# tests/data/rr/leader-kill.ndjson: the end of a real capture (spectap record redisraft, RedisRaft
# 5945c02, scenario leader-kill, seed 1) exported with --to json: its header and last 370 events,
# from before the election in which s3 (pre-vote first) becomes leader after s1 is killed.
. tests/cli/lib.sh
RR=tests/data/rr/leader-kill.ndjson

run_status 0 "$T/o" "$T/e" "$SPECTAP" import --from json "$RR" -o "$T/r.spt"
run_status 0 "$T/r.ndjson" "$T/e" "$SPECTAP" export --to sysmobench "$T/r.spt"
cp "$T/e" "$T/drops"
tail -n +2 "$T/r.ndjson" >"$T/ev"
jq -c .event "$T/ev" >"$T/in"

# Found by the header's system; servers and nodes are s<id>.
check_eq "config line" '{"tag":"config","ts":"0","config":{"servers":["s1","s2","s3"]}}' "$(head -n 1 "$T/r.ndjson")"
check_eq "events by name" \
	'{"AdvanceCommitIndex":42,"BecomeLeader":1,"ClientRequest":40,"HandleAppendEntriesRequest":46,"HandleAppendEntriesResponse":46,"HandleRequestVoteRequest":1,"HandleRequestVoteResponse":1,"Timeout":1}' \
	"$(jq -s -c 'group_by(.name) | map({(.[0].name): length}) | add' "$T/in")"
check_eq "envelope of every line" "178" \
	"$(jq -s '[.[] | select(.tag == "trace" and (.ts | test("^[0-9]+$")) and (keys == ["event","tag","ts"]))] | length' "$T/ev")"
check_eq "nodes s1..s3" '["s1","s2","s3"]' "$(jq -s -c 'map(.nid) | unique' "$T/in")"
check_eq "event fields" '["name","nid","state","msg"]' \
	"$(jq -c 'select(.name == "HandleAppendEntriesRequest") | keys_unsorted' "$T/in" | sort -u)"

# State: the fields the harness writes for each event, in its order, with its types.
FULL='["term","role","commitIndex","lastLogIndex","lastLogTerm","votedFor"]'
check_eq "full state fields in order" "$FULL" \
	"$(jq -c 'select(.name | test("Response$|^AdvanceCommitIndex$") | not) | .state | keys_unsorted' "$T/in" | sort -u)"
check_eq "full state types" '["number","string","number","number","number","string"]' \
	"$(jq -c 'select(.state | has("votedFor")) | .state | [.term, .role, .commitIndex, .lastLogIndex, .lastLogTerm, .votedFor | type]' "$T/in" | sort -u)"
check_eq "a response's weak state" '["term","role"] ["number","string"]' \
	"$(jq -c 'select(.name | test("^Handle.*Response$")) | "\(.state | keys_unsorted) \(.state | [.term, .role | type])"' "$T/in" | sort -u | jq -r .)"
check_eq "a commit advance's state" '["term","role","commitIndex"]' \
	"$(jq -c 'select(.name == "AdvanceCommitIndex") | .state | keys_unsorted' "$T/in" | sort -u)"
check_eq "commit advances on the leader only" '["Leader"]' \
	"$(jq -s -c 'map(select(.name == "AdvanceCommitIndex") | .state.role) | unique' "$T/in")"
check_eq "append responses on the leader only" '["Leader"]' \
	"$(jq -s -c 'map(select(.name == "HandleAppendEntriesResponse") | .state.role) | unique' "$T/in")"
check_eq "roles" '["Candidate","Follower","Leader"]' "$(jq -s -c 'map(.state.role) | unique' "$T/in")"
check_eq "votedFor: \"\" for none, else a node" '["","s3"]' "$(jq -s -c 'map(select(.state | has("votedFor")) | .state.votedFor) | unique' "$T/in")"
check_eq "a follower that never voted" '""' \
	"$(jq -c 'select(.name == "HandleAppendEntriesRequest" and .state.term == 1) | .state.votedFor' "$T/in" | sort -u)"

# The election: Timeout is becoming candidate (term incremented, self-vote); pre-votes dropped.
check_eq "Timeout: s3 a candidate of term 2 voting for itself" \
	'{"name":"Timeout","nid":"s3","state":{"term":2,"role":"Candidate","commitIndex":45,"lastLogIndex":46,"lastLogTerm":1,"votedFor":"s3"}}' \
	"$(jq -c 'select(.name == "Timeout")' "$T/in")"
check_eq "HandleRequestVoteRequest with the vote s2 sent" '{"from":"s3","to":"s2","term":2,"voteGranted":true} "s2" "s3"' \
	"$(jq -r 'select(.name == "HandleRequestVoteRequest") | "\(.msg | tojson) \(.nid | tojson) \(.state.votedFor | tojson)"' "$T/in")"
check_eq "HandleRequestVoteResponse: written as a candidate, before counting the vote" \
	'{"term":2,"role":"Candidate"} {"from":"s2","to":"s3","voteGranted":true}' \
	"$(jq -r 'select(.name == "HandleRequestVoteResponse") | "\(.state | tojson) \(.msg | tojson)"' "$T/in")"
check_eq "BecomeLeader: s3 in term 2, after its no-op" 's3 2 Leader 47 2' \
	"$(jq -r 'select(.name == "BecomeLeader") | "\(.nid) \(.state.term) \(.state.role) \(.state.lastLogIndex) \(.state.lastLogTerm)"' "$T/in")"
check_eq "order: Timeout, vote, the response that makes it leader, BecomeLeader" \
	'Timeout HandleRequestVoteRequest HandleRequestVoteResponse BecomeLeader' \
	"$(jq -r 'select(.name | test("Timeout|RequestVote|BecomeLeader")) | .name' "$T/in" | paste -sd' ')"

# Messages as the dialect writes them: receives on the receiver, its fields only.
check_eq "HandleAppendEntriesRequest msg fields" '["from","to","term","prevLogIndex","prevLogTerm","leaderCommit"]' \
	"$(jq -c 'select(.name == "HandleAppendEntriesRequest") | .msg | keys_unsorted' "$T/in" | sort -u)"
check_eq "HandleAppendEntriesResponse msg fields and types" '["from","to","success","matchIndex"] ["string","string","boolean","number"]' \
	"$(jq -c 'select(.name == "HandleAppendEntriesResponse") | .msg | "\(keys_unsorted) \([.from, .to, .success, .matchIndex | type])"' "$T/in" | sort -u | jq -r .)"
check_eq "messages are on their receiver" "[true]" \
	"$(jq -s -c '[.[] | select(.msg) | .nid == .msg.to] | unique' "$T/in")"
check_eq "no message type or id" "0" "$(jq -s '[.[] | select(.msg.type or .msg.id or .msg.msgId)] | length' "$T/in")"
check_eq "events without a message have none" "[false]" \
	"$(jq -s -c '[.[] | select(.name | test("^Handle") | not) | has("msg")] | unique' "$T/in")"

# What the dialect has no name for is dropped and counted by kind.
check_contains "drops sends" "$T/drops" "SendAppendEntriesRequest events (the dialect traces receives only): 90"
check_contains "drops election start" "$T/drops" "Timeout events (an election starts; the dialect's Timeout is BecomeCandidate): 1"
check_contains "drops pre-votes" "$T/drops" "HandleRequestVoteRequest/Response events of a pre-vote (the dialect models none): 2"
check_contains "drops BecomeFollower" "$T/drops" "BecomeFollower events (no event of the RedisRaft dialect): 1"
check_contains "drops UpdateTerm" "$T/drops" "UpdateTerm events (no event of the RedisRaft dialect): 2"
check_contains "drops state fields" "$T/drops" "state fields with no name in the dialect (leaderId, logTerms, ...): 356"
check_contains "counts what a weak state leaves out" "$T/drops" "state fields the harness leaves out of a response's weak state or a commit's (lastLogIndex, lastLogTerm, votedFor, ...): 314"
check_contains "drops followers' commit advances" "$T/drops" "AdvanceCommitIndex events of a node that is no leader (the harness writes them in raft_update_commit_idx, the leader's): 41"
run_status 0 "$T/s" "$T/e" "$SPECTAP" export --to sysmobench --json "$T/r.spt" -o "$T/r2.ndjson"
check_eq "written + dropped events = all" "370" \
	"$(jq '178 + ([.dropped | to_entries[] | select(.key | test("^[A-Z][A-Za-z/]* events ")) | .value] | add)' "$T/s")"

# Without a header naming the system, RedisRaft's events are recognised by themselves.
tail -n +2 "$RR" >"$T/bare.ndjson"
"$SPECTAP" import --from json "$T/bare.ndjson" -o "$T/b.spt" >/dev/null
run_status 0 "$T/b.ndjson" "$T/e" "$SPECTAP" export --to sysmobench "$T/b.spt"
tail -n +2 "$T/b.ndjson" >"$T/bev"
check "no header: the same events" cmp -s "$T/ev" "$T/bev"
check_eq "no header: servers in order of appearance" '["s2","s1","s3"]' "$(head -n 1 "$T/b.ndjson" | jq -c .config.servers)"

# Numeric node ids and votedFor (an imported file) are named s<id>; 0 is none.
cat >"$T/num.ndjson" <<'JSON'
{"event":{"node":"2","seq":1,"ts_ns":10,"kind":"BecomeCandidate","state":{"term":3,"role":"Candidate","commitIndex":0,"lastLogIndex":0,"lastLogTerm":0,"votedFor":2}}}
{"event":{"node":"1","seq":1,"ts_ns":20,"kind":"HandleRequestVoteRequest","state":{"term":3,"role":"Follower","commitIndex":0,"lastLogIndex":0,"lastLogTerm":0,"votedFor":0},"msg":{"dir":"recv","from":"2","to":"1","type":"RequestVoteRequest","fields":{"term":3,"prevote":false}}}}
JSON
"$SPECTAP" import --from json "$T/num.ndjson" -o "$T/n.spt" >/dev/null
run_status 0 "$T/n.out" "$T/e" "$SPECTAP" export --to sysmobench "$T/n.spt"
check_eq "numeric ids" '"s2" "s2" "s1" "" {"from":"s2","to":"s1","term":3}' \
	"$(tail -n +2 "$T/n.out" | jq -r '.event | "\(.nid | tojson) \(.state.votedFor | tojson)"' | paste -sd' ') $(sed -n 3p "$T/n.out" | jq -c .event.msg)"
check_contains "a vote request without its response" "$T/e" "voteGranted of HandleRequestVoteRequest events without their SendRequestVoteResponse (left out): 1"

# Where the harness writes no line: a vote response raft_recv_requestvote_response ignores (stale,
# or to a node that is no candidate), an append response to a node that is no leader, a commit
# advance of a follower. A response of a higher term steps the node down and is written. A
# PreCandidate is a Candidate. A BecomeLeader with no vote response after it is written as it is.
ST='"commitIndex":0,"lastLogIndex":0,"lastLogTerm":0'
cat >"$T/skip.ndjson" <<JSON
{"event":{"node":"s1","seq":1,"ts_ns":10,"kind":"BecomeCandidate","state":{"term":2,"role":"Candidate",$ST,"votedFor":"s1"}}}
{"event":{"node":"s2","seq":1,"ts_ns":11,"kind":"SendRequestVoteResponse","state":{"term":2,"role":"Follower",$ST,"votedFor":"s1"},"msg":{"id":1,"dir":"send","from":"s2","to":"s1","type":"RequestVoteResponse","fields":{"prevote":false,"requestTerm":1,"term":2,"voteGranted":true}}}}
{"event":{"node":"s1","seq":2,"ts_ns":20,"kind":"HandleRequestVoteResponse","state":{"term":2,"role":"Candidate",$ST,"votedFor":"s1"},"msg":{"id":1,"dir":"recv","from":"s2","to":"s1","type":"RequestVoteResponse","fields":{"prevote":false,"requestTerm":1,"term":2,"voteGranted":true}}}}
{"event":{"node":"s3","seq":1,"ts_ns":21,"kind":"SendRequestVoteResponse","state":{"term":3,"role":"Follower",$ST,"votedFor":""},"msg":{"id":2,"dir":"send","from":"s3","to":"s1","type":"RequestVoteResponse","fields":{"prevote":false,"requestTerm":2,"term":3,"voteGranted":false}}}}
{"event":{"node":"s1","seq":3,"ts_ns":30,"kind":"HandleRequestVoteResponse","state":{"term":3,"role":"Follower",$ST,"votedFor":""},"msg":{"id":2,"dir":"recv","from":"s3","to":"s1","type":"RequestVoteResponse","fields":{"prevote":false,"requestTerm":2,"term":3,"voteGranted":false}}}}
{"event":{"node":"s3","seq":2,"ts_ns":31,"kind":"SendAppendEntriesResponse","state":{"term":3,"role":"Follower",$ST,"votedFor":""},"msg":{"id":3,"dir":"send","from":"s3","to":"s1","type":"AppendEntriesResponse","fields":{"term":3,"success":false,"currentIdx":0}}}}
{"event":{"node":"s1","seq":4,"ts_ns":40,"kind":"HandleAppendEntriesResponse","state":{"term":3,"role":"Follower",$ST,"votedFor":""},"msg":{"id":3,"dir":"recv","from":"s3","to":"s1","type":"AppendEntriesResponse","fields":{"term":3,"success":false,"currentIdx":0}}}}
{"event":{"node":"s1","seq":5,"ts_ns":50,"kind":"AdvanceCommitIndex","state":{"term":3,"role":"Follower",$ST,"votedFor":""},"args":{"from":0,"to":1}}}
{"event":{"node":"s2","seq":2,"ts_ns":60,"kind":"BecomePreCandidate","state":{"term":2,"role":"PreCandidate",$ST,"votedFor":"s1"}}}
{"event":{"node":"s2","seq":3,"ts_ns":70,"kind":"ClientRequest","state":{"term":2,"role":"PreCandidate",$ST,"votedFor":"s1"},"args":{"type":0}}}
{"event":{"node":"s3","seq":3,"ts_ns":80,"kind":"BecomeLeader","state":{"term":3,"role":"Leader",$ST,"votedFor":"s3"}}}
JSON
"$SPECTAP" import --from json "$T/skip.ndjson" -o "$T/skip.spt" >/dev/null
run_status 0 "$T/skip.out" "$T/e" "$SPECTAP" export --to sysmobench "$T/skip.spt"
check_eq "lines the harness writes" 'Timeout:s1:Candidate HandleRequestVoteResponse:s1:Follower ClientRequest:s2:Candidate BecomeLeader:s3:Leader' \
	"$(tail -n +2 "$T/skip.out" | jq -r '.event | "\(.name):\(.nid):\(.state.role)"' | paste -sd' ')"
check_contains "a stale vote response is dropped" "$T/e" "HandleRequestVoteResponse events the function ignores (stale, or the node no candidate): the harness writes none: 1"
check_contains "an append response to a follower is dropped" "$T/e" "HandleAppendEntriesResponse events of a node that is no leader (the function returns before the harness's line): 1"
check_contains "a follower's commit advance is dropped" "$T/e" "AdvanceCommitIndex events of a node that is no leader (the harness writes them in raft_update_commit_idx, the leader's): 1"

# The other systems' exports are unchanged: ZooKeeper's dialect and the generic envelope.
"$SPECTAP" import --from json tests/data/zk/election.ndjson -o "$T/z.spt" >/dev/null
check_eq "ZooKeeper still in its dialect" '["event","step","node","subnode","data","state"]' \
	"$("$SPECTAP" export --to sysmobench "$T/z.spt" 2>/dev/null | sed -n 2p | jq -c '.event | keys_unsorted')"
"$SPECTAP" import --from etcd-ndjson "$SAMPLE" -o "$T/c.spt" >/dev/null
check_eq "etcd still generic" '["name","nid","state","msg"] 1' \
	"$("$SPECTAP" export --to sysmobench "$T/c.spt" 2>/dev/null | sed -n 6p | jq -c '.event | keys_unsorted') $("$SPECTAP" export --to sysmobench "$T/c.spt" 2>/dev/null | head -n 1 | jq -r '.config.servers[0]')"

# Coverage through RrBenchMap's Branch (record redisraft --until-covered counts the same): each
# answer a node sends, by what it answered; the fixture's steps predate stepBegin, so of the
# step actions only the election timeout (a Timeout event) shows.
run_status 0 "$T/cov.json" "$T/e" "$SPECTAP" stat --coverage --map systems/redisraft/spec/RrBenchMap.tla \
	--spec systems/redisraft/spec/RedisRaft.tla "$T/r.spt" --json
check_eq "coverage: granted votes and accepted appends as sent" \
	"$(jq -s -c '[([.[] | select(.event.kind == "SendRequestVoteResponse" and .event.msg.fields.voteGranted)] | length),
		([.[] | select(.event.kind == "SendAppendEntriesResponse" and .event.msg.fields.success)] | length), 1]' "$RR")" \
	"$(jq -c '[.branches.VoteGranted, .branches.AppendAccepted, .branches.ElectionTimeout]' "$T/cov.json")"
check_eq "coverage: the refusals are listed, not seen" '["AppendRejected","VoteRejected"]' \
	"$(jq -c '[.missing[] | select(test("Rejected"))]' "$T/cov.json")"
finish
