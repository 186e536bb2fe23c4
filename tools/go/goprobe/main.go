// goprobe: where a Go function's arguments are at its entry and its return sites, and how to
// read expressions over them (field paths), for a package whose source is on the machine. It
// knows no particular program: the system description (systems/<name>/system.yaml) names the
// package, the functions and the reads; spectap turns the answer into uprobe reads.
//
// Built offline with Debian's Go, as tools/go/putload is:
//
//	cd tools/go/goprobe && GO111MODULE=off GOPROXY=off go build -o goprobe .
//
// Usage:
//
//	GOPATH=/usr/share/gocode goprobe --package github.com/nats-io/nats-server/server [--request FILE]
//
// The request: {"functions": [{"name": "(*raft).processVoteRequest", "reads": ["n.term",
// "vr.candidate", "len(n.peers)"]}]}. A function is "F", "(*T).M" or "(T).M". A read is a
// parameter (named as in the source; the receiver too) followed by field selectors, through
// pointers and embedded fields, optionally inside len(...) or, for a string read as its bytes,
// bytes(...). The answer (stdout, JSON) gives each
// parameter's registers (DWARF numbers) or stack offset at the entry (from rsp; rsp+0 is the
// return address) and its spill slot (its place in the caller's frame, where the function may
// save a register argument), and each read as a chain the generic BPF program performs: a
// source (a parameter's register or stack slot), pointer dereferences, and a final read.
//
// The layout is the gc compiler's for amd64 (go/types' SizesFor("gc", "amd64")) and the
// argument assignment Go's internal register ABI (ABIInternal, Go 1.17+): integer arguments in
// RAX, RBX, RCX, RDI, RSI, R8, R9, R10, R11; an argument that does not fit goes on the stack.
// The Go version this tool was built with is in the answer: the binary probed must match it,
// or the offsets may not hold.
//
// Exit status: 0 answered, 1 an error (one line on stderr: what and where; an error about the
// request's function F or its read R starts "request F R:", R -1 for the function itself), 2
// usage.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"runtime"
	"sort"
	"strings"
)

type request struct {
	Functions []struct {
		Name  string   `json:"name"`
		Reads []string `json:"reads"`
	} `json:"functions"`
}

type param struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Regs  []int  `json:"regs,omitempty"` // DWARF register numbers, one per word
	Stack int    `json:"stack"`          // offset from rsp at the entry, or -1 (in registers)
	Spill int    `json:"spill"`          // spill slot offset from rsp at the entry, or -1
	Size  int64  `json:"size"`
}

// part is one uprobe read: v = source; v = *(v + d) for d in Derefs; then the read.
type part struct {
	Role   string  `json:"role"`   // "value", "len", "bytes" or "elems"
	Param  string  `json:"param"`  // whose register or slot is the source
	Word   int     `json:"word"`   // register parameters: which word (a string's len: 1)
	Derefs []int64 `json:"derefs"` // offsets of the pointer loads
	Read   string  `json:"read"`   // "value" (the source word itself), "mem", "block" or "array"
	// mem, block: offset of the final read; a "value" of a parameter on the stack: the byte
	// offset in the parameter; array: the field's offset in each element
	Off    int64 `json:"off"`
	Size   int64 `json:"size"` // bytes (block: at most 64); array: elements (at most 8)
	Signed bool  `json:"signed,omitempty"`
	Slot   int64 `json:"slot,omitempty"`   // a block through a pointer in a stack parameter: its offset there
	Stride int64 `json:"stride,omitempty"` // array: bytes from one element to the next
	Tail   bool  `json:"tail,omitempty"`   // array: the last Size elements, not the first
}

type readAnswer struct {
	Expr  string `json:"expr"`
	Kind  string `json:"kind"` // int, uint, bool, string, bytes, pointer, hex, array (of 8-byte integers)
	Parts []part `json:"parts"`
}

type funcAnswer struct {
	Name   string       `json:"name"`
	Symbol string       `json:"symbol"` // the name in the binary's function table
	Pos    string       `json:"pos"`
	Params []param      `json:"params"`
	Reads  []readAnswer `json:"reads"`
}

type answer struct {
	Go        string       `json:"go"`
	Package   string       `json:"package"`
	Functions []funcAnswer `json:"functions"`
}

const maxBlock = 64

var intRegs = []int{0, 3, 2, 5, 4, 8, 9, 10, 11} // RAX RBX RCX RDI RSI R8 R9 R10 R11 (DWARF)

var sizes = types.SizesFor("gc", "amd64")

func main() {
	pkgPath := flag.String("package", "", "import path of the package the functions are in")
	reqPath := flag.String("request", "", "the request's file (default: standard input)")
	flag.Parse()
	if *pkgPath == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: goprobe --package IMPORT/PATH [--request FILE] < request.json")
		os.Exit(2)
	}
	in := os.Stdin
	if *reqPath != "" {
		f, err := os.Open(*reqPath)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		in = f
	}
	var req request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		fail(fmt.Errorf("reading the request: %v", err))
	}
	ans, err := resolve(*pkgPath, &req)
	if err != nil {
		fail(err)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", " ")
	if err := out.Encode(ans); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "goprobe: %v\n", err)
	os.Exit(1)
}

func resolve(pkgPath string, req *request) (*answer, error) {
	im := newImporter()
	files, info, err := im.check(pkgPath, "", true)
	if err != nil {
		return nil, err
	}
	ans := &answer{Go: runtime.Version(), Package: pkgPath}
	for fi, rf := range req.Functions {
		decl, fn := findFunc(files, info, rf.Name)
		if fn == nil {
			return nil, fmt.Errorf("request %d -1: function %s is not in package %s", fi, rf.Name, pkgPath)
		}
		fa := funcAnswer{Name: rf.Name, Symbol: pkgPath + "." + rf.Name, Pos: im.fset.Position(decl.Pos()).String()}
		fa.Params = assign(decl, fn.Type().(*types.Signature))
		for ri, expr := range rf.Reads {
			ra, err := resolveRead(expr, fa.Params, decl, fn.Type().(*types.Signature))
			if err != nil {
				return nil, fmt.Errorf("request %d %d: %v", fi, ri, err)
			}
			fa.Reads = append(fa.Reads, *ra)
		}
		ans.Functions = append(ans.Functions, fa)
	}
	return ans, nil
}

// findFunc finds "F", "(*T).M" or "(T).M".
func findFunc(files []*ast.File, info *types.Info, name string) (*ast.FuncDecl, *types.Func) {
	recv, method := "", name
	if strings.HasPrefix(name, "(") {
		i := strings.Index(name, ").")
		if i < 0 {
			return nil, nil
		}
		recv, method = name[1:i], name[i+2:]
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != method || (fd.Recv == nil) != (recv == "") {
				continue
			}
			if recv != "" && recvString(fd.Recv.List[0].Type) != recv {
				continue
			}
			if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
				return fd, fn
			}
		}
	}
	return nil, nil
}

func recvString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvString(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvString(t.X)
	}
	return "?"
}

// words is how many integer registers a value of type t takes, or -1 when it cannot go in
// registers (floats are not readable by the probes: they count as not assignable here only
// for what we read, see assign).
func words(t types.Type) (n int, floats int, ok bool) {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsFloat != 0:
			return 0, 1, true
		case u.Info()&types.IsComplex != 0:
			return 0, 2, true
		case u.Kind() == types.String:
			return 2, 0, true
		case u.Kind() == types.UnsafePointer:
			return 1, 0, true
		default:
			return 1, 0, true
		}
	case *types.Pointer, *types.Map, *types.Chan, *types.Signature:
		return 1, 0, true
	case *types.Interface:
		return 2, 0, true
	case *types.Slice:
		return 3, 0, true
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			a, b, ok := words(u.Field(i).Type())
			if !ok {
				return 0, 0, false
			}
			n, floats = n+a, floats+b
		}
		return n, floats, true
	case *types.Array:
		switch u.Len() {
		case 0:
			return 0, 0, true
		case 1:
			return words(u.Elem())
		}
		return 0, 0, false
	}
	return 0, 0, false
}

func align(x, a int64) int64 { return (x + a - 1) / a * a }

// assign places the receiver and the parameters as ABIInternal does on amd64.
func assign(decl *ast.FuncDecl, sig *types.Signature) []param {
	var vars []*types.Var
	var names []string
	if r := sig.Recv(); r != nil {
		vars = append(vars, r)
		names = append(names, fieldName(decl.Recv, 0, "recv"))
	}
	for i := 0; i < sig.Params().Len(); i++ {
		vars = append(vars, sig.Params().At(i))
		names = append(names, paramName(decl.Type.Params, i))
	}
	ps := make([]param, len(vars))
	ireg, freg := 0, 0
	var stack int64
	for i, v := range vars {
		t := v.Type()
		ps[i] = param{Name: names[i], Type: types.TypeString(t, relative), Stack: -1, Spill: -1,
			Size: sizes.Sizeof(t)}
		n, f, ok := words(t)
		if ok && ireg+n <= len(intRegs) && freg+f <= 15 {
			ps[i].Regs = append([]int(nil), intRegs[ireg:ireg+n]...)
			ireg, freg = ireg+n, freg+f
			continue
		}
		stack = align(stack, sizes.Alignof(t))
		ps[i].Stack = 8 + int(stack)
		stack += sizes.Sizeof(t)
	}
	// Results take registers of their own and stack space after the arguments; only their
	// stack part moves the spill area.
	var rstack int64
	rireg, rfreg := 0, 0
	for i := 0; i < sig.Results().Len(); i++ {
		t := sig.Results().At(i).Type()
		n, f, ok := words(t)
		if ok && rireg+n <= len(intRegs) && rfreg+f <= 15 {
			rireg, rfreg = rireg+n, rfreg+f
			continue
		}
		rstack = align(stack+rstack, sizes.Alignof(t)) - stack
		rstack += sizes.Sizeof(t)
	}
	spill := align(stack+rstack, 8)
	for i, v := range vars {
		if ps[i].Regs == nil {
			continue
		}
		spill = align(spill, sizes.Alignof(v.Type()))
		ps[i].Spill = 8 + int(spill)
		spill += sizes.Sizeof(v.Type())
	}
	return ps
}

func relative(p *types.Package) string { return p.Name() }

func fieldName(fl *ast.FieldList, i int, dflt string) string {
	k := 0
	for _, f := range fl.List {
		if len(f.Names) == 0 {
			if k == i {
				return dflt
			}
			k++
			continue
		}
		for _, n := range f.Names {
			if k == i {
				if n.Name == "_" {
					return dflt
				}
				return n.Name
			}
			k++
		}
	}
	return dflt
}

func paramName(fl *ast.FieldList, i int) string { return fieldName(fl, i, fmt.Sprintf("arg%d", i)) }

// A place being read: either a parameter's own words (inRegs/onStack), or memory at
// deref-chain + off.
type place struct {
	p      *param
	word   int // which word of the parameter, while still in its own words
	inMem  bool
	derefs []int64
	off    int64
	slot   int64 // a parameter on the stack: the offset in it of the first pointer followed
}

func resolveRead(expr string, ps []param, decl *ast.FuncDecl, sig *types.Signature) (*readAnswer, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	wantLen, wantBytes, wantHex := false, false, false
	if call, ok := e.(*ast.CallExpr); ok {
		id, ok := call.Fun.(*ast.Ident)
		switch {
		case ok && id.Name == "len" && len(call.Args) == 1:
			wantLen, e = true, call.Args[0]
		case ok && id.Name == "bytes" && len(call.Args) == 1:
			wantBytes, e = true, call.Args[0]
		case ok && id.Name == "hex" && len(call.Args) == 1:
			wantHex, e = true, call.Args[0]
		default:
			return nil, errors.New("only len(...), bytes(...) and hex(...) may be called")
		}
	}
	// The selectors from the parameter on; one of them may be sliced (x[:8] or x[-8:]): the
	// first or last elements of a slice, and the selectors after it a field of each element.
	var chain []string
	sliced, sliceN := -1, int64(0)
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			chain = append(chain, x.Sel.Name)
			e = x.X
			continue
		case *ast.SliceExpr:
			if sliced >= 0 {
				return nil, errors.New("one slice per read")
			}
			n, err := sliceBound(x)
			if err != nil {
				return nil, err
			}
			sliced, sliceN = len(chain), n
			e = x.X
			continue
		case *ast.Ident:
			chain = append(chain, x.Name)
		default:
			return nil, fmt.Errorf("%T is not a parameter, a field selector or a slice's first or last elements", e)
		}
		break
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	if sliced >= 0 {
		sliced = len(chain) - 1 - sliced // the index of the sliced name, from the parameter on
	}
	var pl place
	var t types.Type
	vars := allVars(sig)
	for i := range ps {
		if ps[i].Name == chain[0] {
			pl.p, t = &ps[i], vars[i].Type()
		}
	}
	if pl.p == nil {
		names := []string{}
		for _, p := range ps {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no parameter %s (the function has %s)", chain[0], strings.Join(names, ", "))
	}
	var elems *arrayRead
	if sliced == 0 {
		if elems, pl, t, err = startArray(pl, t, sliceN); err != nil {
			return nil, err
		}
	}
	for ci, name := range chain[1:] {
		if ptr, ok := t.Underlying().(*types.Pointer); ok {
			if elems != nil {
				return nil, fmt.Errorf("%s: a field behind a pointer in an element cannot be read", name)
			}
			pl = derefPlace(pl)
			t = ptr.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a struct", name, types.TypeString(t, relative))
		}
		var pkg *types.Package
		if nt, ok := t.(*types.Named); ok {
			pkg = nt.Obj().Pkg()
		}
		obj, index, _ := types.LookupFieldOrMethod(t, true, pkg, name)
		fv, ok := obj.(*types.Var)
		if !ok || !fv.IsField() {
			return nil, fmt.Errorf("%s has no field %s", types.TypeString(t, relative), name)
		}
		// index walks embedded fields: each step is a field of the struct reached so far.
		for k, fi := range index {
			if k > 0 {
				if ptr, ok := t.Underlying().(*types.Pointer); ok {
					if elems != nil {
						return nil, fmt.Errorf("%s: a field behind a pointer in an element cannot be read", name)
					}
					pl = derefPlace(pl)
					t = ptr.Elem()
				}
				st = t.Underlying().(*types.Struct)
			}
			fields := make([]*types.Var, st.NumFields())
			for i := range fields {
				fields[i] = st.Field(i)
			}
			offs := sizes.Offsetsof(fields)
			if elems != nil {
				elems.off += offs[fi]
			} else {
				pl = fieldPlace(pl, offs[fi], st, fi)
			}
			t = st.Field(fi).Type()
		}
		if ci+1 == sliced {
			if elems, pl, t, err = startArray(pl, t, sliceN); err != nil {
				return nil, err
			}
		}
	}
	if elems != nil {
		if wantLen || wantBytes || wantHex {
			return nil, errors.New("len(...), bytes(...) and hex(...) of a slice's elements")
		}
		b, ok := t.Underlying().(*types.Basic)
		if !ok || b.Info()&types.IsInteger == 0 || sizes.Sizeof(t) != 8 {
			return nil, fmt.Errorf("the elements' field is %s: only 8-byte integers are read from each element",
				types.TypeString(t, relative))
		}
		return &readAnswer{Expr: expr, Kind: "array", Parts: []part{elems.lenPart, {Role: "elems",
			Param: elems.data.p.Name, Word: elems.data.word, Derefs: append([]int64{}, elems.data.derefs...),
			Read: "array", Off: elems.off, Size: elems.n, Stride: elems.stride, Tail: elems.tail,
			Slot: elems.data.slot}}}, nil
	}
	ra, err := finalRead(expr, pl, t, wantLen)
	if err == nil && wantBytes {
		if ra.Kind != "string" {
			return nil, errors.New("bytes(...) takes a string")
		}
		ra.Kind = "bytes"
	}
	if err == nil && wantHex { // an id as a name: the same type whatever its value
		if ra.Kind != "int" && ra.Kind != "uint" && ra.Kind != "pointer" {
			return nil, errors.New("hex(...) takes an integer")
		}
		ra.Kind = "hex"
	}
	return ra, err
}

// arrayRead is a slice's first or last n elements: its length's read, where element 0 is, and
// the offset of the field read in each element.
type arrayRead struct {
	lenPart part
	data    place // memory at element 0
	n       int64
	tail    bool
	stride  int64
	off     int64
}

// sliceBound reads x[:n] (the first n) or x[-n:] (the last n), 1 <= n <= 8.
func sliceBound(x *ast.SliceExpr) (int64, error) {
	lit := func(e ast.Expr) (int64, bool) {
		neg := false
		if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
			neg, e = true, u.X
		}
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.INT {
			return 0, false
		}
		var v int64
		if _, err := fmt.Sscan(b.Value, &v); err != nil {
			return 0, false
		}
		if neg {
			v = -v
		}
		return v, true
	}
	bad := errors.New("a slice is read as x[:N] (its first N elements) or x[-N:] (its last N), N in 1..8")
	if x.Slice3 {
		return 0, bad
	}
	if x.Low == nil && x.High != nil {
		if v, ok := lit(x.High); ok && v >= 1 && v <= 8 {
			return v, nil
		}
	}
	if x.High == nil && x.Low != nil {
		if v, ok := lit(x.Low); ok && v <= -1 && v >= -8 {
			return v, nil
		}
	}
	return 0, bad
}

// startArray begins reading the elements of the slice at pl (type t).
func startArray(pl place, t types.Type, n int64) (*arrayRead, place, types.Type, error) {
	sl, ok := t.Underlying().(*types.Slice)
	if !ok {
		return nil, pl, t, fmt.Errorf("%s is not a slice", types.TypeString(t, relative))
	}
	a := &arrayRead{lenPart: wordPart(pl, "len", 1, 8, false), data: derefPlace(pl), n: n, tail: n < 0,
		stride: sizes.Sizeof(sl.Elem())}
	if a.tail {
		a.n = -n
	}
	return a, pl, sl.Elem(), nil
}

func allVars(sig *types.Signature) []*types.Var {
	var vs []*types.Var
	if sig.Recv() != nil {
		vs = append(vs, sig.Recv())
	}
	for i := 0; i < sig.Params().Len(); i++ {
		vs = append(vs, sig.Params().At(i))
	}
	return vs
}

// derefPlace follows the pointer held at pl: what it points to is memory at offset 0.
func derefPlace(pl place) place {
	if !pl.inMem {
		// The pointer is the parameter's word itself (or, on the stack, the word at pl.off of
		// it): the source value.
		return place{p: pl.p, word: pl.word, inMem: true, slot: pl.off}
	}
	d := append(append([]int64(nil), pl.derefs...), pl.off)
	return place{p: pl.p, word: pl.word, inMem: true, derefs: d, off: 0, slot: pl.slot}
}

// fieldPlace moves to field fi (at byte offset off) of the struct at pl.
func fieldPlace(pl place, off int64, st *types.Struct, fi int) place {
	if pl.inMem {
		pl.off += off
		return pl
	}
	if pl.p.Regs == nil {
		// A struct passed on the stack is memory at rsp + its offset: a source slot.
		pl.off += off
		return pl
	}
	// A struct in registers: its fields are words of the parameter.
	w := 0
	for i := 0; i < fi; i++ {
		n, _, _ := words(st.Field(i).Type())
		w += n
	}
	pl.word += w
	return pl
}

func finalRead(expr string, pl place, t types.Type, wantLen bool) (*readAnswer, error) {
	ra := &readAnswer{Expr: expr}
	word := func(role string, w int64, size int64, signed bool) part {
		return wordPart(pl, role, w, size, signed)
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.String && wantLen:
			ra.Kind = "uint"
			ra.Parts = []part{word("len", 1, 8, false)}
		case u.Kind() == types.String:
			ra.Kind = "string"
			ra.Parts = []part{word("len", 1, 8, false), blockPart(pl, "bytes")}
		case wantLen:
			return nil, fmt.Errorf("len of %s", u.Name())
		case u.Info()&types.IsBoolean != 0:
			ra.Kind = "bool"
			ra.Parts = []part{word("value", 0, 1, false)}
		case u.Info()&types.IsInteger != 0:
			ra.Kind = "uint"
			signed := u.Info()&types.IsUnsigned == 0
			if signed {
				ra.Kind = "int"
			}
			ra.Parts = []part{word("value", 0, sizes.Sizeof(u), signed)}
		case u.Kind() == types.UnsafePointer:
			ra.Kind = "pointer"
			ra.Parts = []part{word("value", 0, 8, false)}
		default:
			return nil, fmt.Errorf("type %s cannot be read", u.Name())
		}
	case *types.Pointer, *types.Chan, *types.Signature:
		if wantLen {
			return nil, fmt.Errorf("len of %s", types.TypeString(t, relative))
		}
		ra.Kind = "pointer"
		ra.Parts = []part{word("value", 0, 8, false)}
	case *types.Slice:
		b, isBytes := u.Elem().Underlying().(*types.Basic)
		switch {
		case wantLen:
			ra.Kind = "uint"
			ra.Parts = []part{word("len", 1, 8, false)}
		case isBytes && b.Kind() == types.Byte:
			ra.Kind = "bytes"
			ra.Parts = []part{word("len", 1, 8, false), blockPart(pl, "bytes")}
		default:
			return nil, fmt.Errorf("a slice of %s: read len(%s) instead", types.TypeString(u.Elem(), relative), expr)
		}
	case *types.Map:
		if !wantLen {
			return nil, fmt.Errorf("a map: read len(%s) instead", expr)
		}
		// A map is a pointer to the runtime's hmap, whose first word is the count.
		p := derefPlace(pl)
		ra.Kind = "uint"
		ra.Parts = []part{memPart(p, "len", 0, 8, false)}
	case *types.Interface:
		ra.Kind = "pointer"
		ra.Parts = []part{word("value", 1, 8, false)} // the data word
	default:
		return nil, fmt.Errorf("type %s cannot be read", types.TypeString(t, relative))
	}
	return ra, nil
}

// wordPart reads word w (8 bytes each) of the value at pl: from memory when pl is memory,
// else the parameter's word itself.
func wordPart(pl place, role string, w int64, size int64, signed bool) part {
	if pl.inMem || pl.p.Regs == nil {
		return memPart(pl, role, w*8, size, signed)
	}
	return part{Role: role, Param: pl.p.Name, Word: pl.word + int(w), Derefs: []int64{}, Read: "value", Size: size,
		Signed: signed}
}

// memPart reads size bytes at pl + delta. A place on the stack that is not memory yet is the
// parameter's stack slot: the source is then the slot's word, read as a value.
func memPart(pl place, role string, delta, size int64, signed bool) part {
	if !pl.inMem {
		// A stack parameter: the bytes at its slot + pl.off + delta, read as a value.
		return part{Role: role, Param: pl.p.Name, Derefs: []int64{}, Read: "value", Off: pl.off + delta, Size: size,
			Signed: signed}
	}
	return part{Role: role, Param: pl.p.Name, Word: pl.word, Derefs: append([]int64{}, pl.derefs...), Read: "mem",
		Off: pl.off + delta, Size: size, Signed: signed, Slot: pl.slot}
}

// blockPart reads the bytes a string or slice header at pl points to (its word 0).
func blockPart(pl place, role string) part {
	if pl.inMem {
		d := append(append([]int64{}, pl.derefs...), pl.off)
		return part{Role: role, Param: pl.p.Name, Word: pl.word, Derefs: d, Read: "block", Off: 0, Size: maxBlock,
			Slot: pl.slot}
	}
	if pl.p.Regs == nil {
		// The header on the stack: its word 0 is the source slot's value, a pointer.
		return part{Role: role, Param: pl.p.Name, Derefs: []int64{}, Read: "block", Off: 0, Size: maxBlock,
			Slot: pl.off}
	}
	return part{Role: role, Param: pl.p.Name, Word: pl.word, Derefs: []int64{}, Read: "block", Off: 0, Size: maxBlock}
}

// importer type-checks packages from their source, found as the go command finds them in
// GOPATH mode, including its "minimal module compatibility": an import path with a major
// version element (github.com/x/y/v2/z) is also looked up without it, as Debian's packaged
// sources are laid out. cgo is off: the packages' pure-Go files are what is checked.
type importer struct {
	fset *token.FileSet
	ctx  build.Context
	pkgs map[string]*types.Package
}

func newImporter() *importer {
	ctx := build.Default
	ctx.CgoEnabled = false
	return &importer{fset: token.NewFileSet(), ctx: ctx, pkgs: map[string]*types.Package{}}
}

func (im *importer) Import(path string) (*types.Package, error) { return im.ImportFrom(path, "", 0) }

func (im *importer) ImportFrom(path, dir string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	bp, err := im.find(path, dir)
	if err != nil {
		return nil, err
	}
	if p, ok := im.pkgs[bp.ImportPath]; ok {
		return p, nil
	}
	_, _, err = im.check(bp.ImportPath, dir, false)
	return im.pkgs[bp.ImportPath], err
}

func (im *importer) find(path, dir string) (*build.Package, error) {
	bp, err := im.ctx.Import(path, dir, 0)
	if err == nil {
		return bp, nil
	}
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		if len(p) > 1 && p[0] == 'v' && strings.Trim(p[1:], "0123456789") == "" {
			short := strings.Join(append(append([]string{}, parts[:i]...), parts[i+1:]...), "/")
			if bp2, err2 := im.ctx.Import(short, dir, 0); err2 == nil {
				return bp2, nil
			}
		}
	}
	return nil, err
}

// check parses and type-checks one package; with defs, it also returns its files and the
// objects their identifiers define.
func (im *importer) check(path, dir string, defs bool) ([]*ast.File, *types.Info, error) {
	bp, err := im.find(path, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("package %s: %v (is its -dev package installed, and GOPATH set?)", path, err)
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(im.fset, bp.Dir+"/"+name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: im, Sizes: sizes}
	info := &types.Info{}
	if defs {
		info.Defs = map[*ast.Ident]types.Object{}
	}
	p, err := conf.Check(bp.ImportPath, im.fset, files, info)
	if err != nil {
		return nil, nil, fmt.Errorf("type-checking %s: %v", bp.ImportPath, err)
	}
	im.pkgs[bp.ImportPath] = p
	return files, info, nil
}
