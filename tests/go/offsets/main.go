// Command offsets prints, as JSON, the memory layout of the etcd raft structures that spectap's
// etcd probes read (struct sizes, every field's offset, size and type, and the key fields by
// name), the enum values the probes decode, and the Go version it was built with. Built by
// run.sh against Debian's golang-etcd-server-dev source, offline, with the same compiler as
// Debian's etcd binary. See README.md.
package main

import (
	"encoding/json"
	"os"
	"reflect"
	"runtime"
	"sort"
	"unsafe"

	"go.etcd.io/etcd/raft"
	pb "go.etcd.io/etcd/raft/raftpb"
	"go.etcd.io/etcd/raft/tracker"
)

type field struct {
	Name   string  `json:"name"`
	Offset uintptr `json:"offset"`
	Size   uintptr `json:"size"`
	Type   string  `json:"type"`
}

type layout struct {
	Size   uintptr `json:"size"`
	Align  int     `json:"align"`
	Fields []field `json:"fields"`
}

type enumValue struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

type output struct {
	Go          string                 `json:"go"`
	GOARCH      string                 `json:"goarch"`
	Structs     map[string]layout      `json:"structs"`
	ProbeFields map[string]uintptr     `json:"probe_fields"`
	Enums       map[string][]enumValue `json:"enums"`
}

func describe(t reflect.Type) layout {
	l := layout{Size: t.Size(), Align: t.Align()}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		l.Fields = append(l.Fields, field{f.Name, f.Offset, f.Type.Size(), f.Type.String()})
	}
	return l
}

func enum(names map[int32]string) []enumValue {
	var v []enumValue
	for k, n := range names {
		v = append(v, enumValue{n, int64(k)})
	}
	sort.Slice(v, func(i, j int) bool { return v[i].Value < v[j].Value })
	return v
}

func main() {
	var m pb.Message
	var e pb.Entry
	out := output{
		Go:          runtime.Version(),
		GOARCH:      runtime.GOARCH,
		Structs:     map[string]layout{},
		ProbeFields: raft.SpectapProbeFields(),
		Enums: map[string][]enumValue{
			"raftpb.MessageType": enum(pb.MessageType_name),
			"raftpb.EntryType":   enum(pb.EntryType_name),
			"raft.StateType": {
				{"StateFollower", int64(raft.StateFollower)},
				{"StateCandidate", int64(raft.StateCandidate)},
				{"StateLeader", int64(raft.StateLeader)},
				{"StatePreCandidate", int64(raft.StatePreCandidate)},
			},
		},
	}
	for name, t := range raft.SpectapTypes() {
		out.Structs[name] = describe(t)
	}
	out.Structs["raftpb.Message"] = describe(reflect.TypeOf(m))
	out.Structs["raftpb.Entry"] = describe(reflect.TypeOf(e))
	out.Structs["tracker.ProgressTracker"] = describe(reflect.TypeOf(tracker.ProgressTracker{}))
	out.Structs["tracker.Progress"] = describe(reflect.TypeOf(tracker.Progress{}))
	for k, v := range map[string]uintptr{
		"raftpb.Message.Type":       unsafe.Offsetof(m.Type),
		"raftpb.Message.To":         unsafe.Offsetof(m.To),
		"raftpb.Message.From":       unsafe.Offsetof(m.From),
		"raftpb.Message.Term":       unsafe.Offsetof(m.Term),
		"raftpb.Message.LogTerm":    unsafe.Offsetof(m.LogTerm),
		"raftpb.Message.Index":      unsafe.Offsetof(m.Index),
		"raftpb.Message.Entries":    unsafe.Offsetof(m.Entries),
		"raftpb.Message.Commit":     unsafe.Offsetof(m.Commit),
		"raftpb.Message.Reject":     unsafe.Offsetof(m.Reject),
		"raftpb.Message.RejectHint": unsafe.Offsetof(m.RejectHint),
		"raftpb.Entry.Term":         unsafe.Offsetof(e.Term),
		"raftpb.Entry.Index":        unsafe.Offsetof(e.Index),
		"raftpb.Entry.Type":         unsafe.Offsetof(e.Type),
		"raftpb.Entry.Data":         unsafe.Offsetof(e.Data),
	} {
		out.ProbeFields[k] = v
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		os.Exit(1)
	}
}
