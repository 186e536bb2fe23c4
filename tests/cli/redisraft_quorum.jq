# tests/cli/test_record_redisraft.sh:
# Normal entries a leader appended (ClientRequest, type 0, accepted) and how many nodes ever
# held each committed: commitIndex at or past its index with the same term there.
[inputs | .event | select(. != null)] as $ev
| ($ev | map(select(.kind == "ClientRequest" and .args.ret == 0 and .args.type == 0)
             | {node, idx: .state.lastLogIndex, term: .args.entryTerm})) as $w
| [$w[] | . as $e
   | [$ev[] | select(.state.commitIndex >= $e.idx
                     and ((.state.logTermsFrom // 1) <= $e.idx)
                     and .state.logTerms[$e.idx - (.state.logTermsFrom // 1)] == $e.term) | .node]
   | unique | length]
| {entries: length, on_quorum: map(select(. >= 2)) | length}
