// The sequential specification of one Ringstore key: a versioned register whose version only grows,
// with reads, unconditional writes, compare-and-set on version, create-if-absent and deletes (tombstones).
package main

import (
	"fmt"
	"hash/fnv"

	"github.com/anishathalye/porcupine"
)

// Operation kinds, as in the history JSON.
const (
	opRead   = "read"
	opWrite  = "write"
	opCas    = "cas"
	opCreate = "create"
	opDelete = "delete"
)

// Output statuses, as in the history JSON.
const (
	statusOk                 = "ok"
	statusNotFound           = "notFound"
	statusPreconditionFailed = "preconditionFailed"
	statusUnknown            = "unknown"
)

// regState is one key's state. A deleted key keeps its version (the tombstone), so a later write
// continues from it. Comparable, so Porcupine can cache visited states by value.
type regState struct {
	exists  bool
	version int64
	value   string
}

// opInput is what a client asked for. ifVersion is set for cas, and optionally for delete (If-Match).
type opInput struct {
	key       string
	op        string
	value     string
	ifVersion int64
	hasIfVer  bool
}

// opOutput is what the client saw. A field the service did not return constrains nothing.
type opOutput struct {
	status     string
	value      string
	hasValue   bool
	version    int64
	hasVersion bool
}

func versionIs(out opOutput, want int64) bool {
	return !out.hasVersion || out.version == want
}

// step is the register's transition function: whether `in` could have produced `out` from `s`, and
// the state after it. An unknown outcome is applied exactly when its condition holds, because the
// checker places it at "return = infinity": linearizing it last also covers "it never happened".
func step(s regState, in opInput, out opOutput) (bool, regState) {
	switch in.op {
	case opRead:
		switch out.status {
		case statusOk:
			return s.exists && out.hasValue && s.value == out.value && versionIs(out, s.version), s
		case statusNotFound:
			return !s.exists, s
		case statusUnknown:
			return true, s
		}
	case opWrite:
		next := regState{exists: true, version: s.version + 1, value: in.value}
		switch out.status {
		case statusOk:
			return versionIs(out, next.version), next
		case statusUnknown:
			return true, next
		}
	case opCas, opCreate, opDelete:
		holds, next := conditionalWrite(s, in)
		failure := statusPreconditionFailed
		if in.op == opDelete && !in.hasIfVer {
			failure = statusNotFound
		}
		switch out.status {
		case statusOk:
			return holds && versionIs(out, next.version), next
		case failure:
			return !holds, s
		case statusUnknown:
			if holds {
				return true, next
			}
			return true, s
		}
	}
	return false, s
}

// conditionalWrite says whether the operation's precondition holds in s, and the state if it applies.
func conditionalWrite(s regState, in opInput) (bool, regState) {
	switch in.op {
	case opCas:
		return s.exists && s.version == in.ifVersion, regState{exists: true, version: s.version + 1, value: in.value}
	case opCreate:
		return !s.exists, regState{exists: true, version: s.version + 1, value: in.value}
	default: // delete: of a live key, and at the given version when If-Match was sent
		holds := s.exists && (!in.hasIfVer || s.version == in.ifVersion)
		return holds, regState{exists: false, version: s.version + 1}
	}
}

func describeInput(in opInput) string {
	switch in.op {
	case opRead:
		return fmt.Sprintf("%s: read", in.key)
	case opWrite, opCreate:
		return fmt.Sprintf("%s: %s(%q)", in.key, in.op, in.value)
	case opCas:
		return fmt.Sprintf("%s: cas(%q if v%d)", in.key, in.value, in.ifVersion)
	default:
		if in.hasIfVer {
			return fmt.Sprintf("%s: delete(if v%d)", in.key, in.ifVersion)
		}
		return fmt.Sprintf("%s: delete", in.key)
	}
}

func describeOutput(out opOutput) string {
	switch {
	case out.status != statusOk:
		return out.status
	case out.hasValue && out.hasVersion:
		return fmt.Sprintf("%q@v%d", out.value, out.version)
	case out.hasValue:
		return fmt.Sprintf("%q", out.value)
	case out.hasVersion:
		return fmt.Sprintf("ok v%d", out.version)
	default:
		return "ok"
	}
}

func describeState(s regState) string {
	if !s.exists {
		return fmt.Sprintf("absent@v%d", s.version)
	}
	return fmt.Sprintf("%q@v%d", s.value, s.version)
}

func hashState(s regState) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%t|%d|%s", s.exists, s.version, s.value)
	return h.Sum64()
}

// registerModel is the per-key model; partitioned says whether Porcupine should split the history
// by key itself (used for the whole-history visualization; the check splits by key beforehand).
func registerModel(partitioned bool) porcupine.Model {
	m := porcupine.Model{
		Init: func() interface{} { return regState{} },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			return step(state.(regState), input.(opInput), output.(opOutput))
		},
		Equal: func(a, b interface{}) bool { return a.(regState) == b.(regState) },
		Hash:  func(s interface{}) uint64 { return hashState(s.(regState)) },
		DescribeOperation: func(in, out interface{}) string {
			return describeInput(in.(opInput)) + " → " + describeOutput(out.(opOutput))
		},
		DescribeState: func(s interface{}) string { return describeState(s.(regState)) },
	}
	if partitioned {
		m.Partition = func(history []porcupine.Operation) [][]porcupine.Operation {
			_, parts := partitionBy(history, registerKeyOf)
			return parts
		}
	}
	return m
}

// registerKeyOf is a register operation's key.
func registerKeyOf(input interface{}) string { return input.(opInput).key }

// partitionBy groups operations by key, keys in sorted order, each group in history order.
func partitionBy(history []porcupine.Operation, keyOf func(input interface{}) string) ([]string, [][]porcupine.Operation) {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		key := keyOf(op.Input)
		byKey[key] = append(byKey[key], op)
	}
	keys := sortedKeys(byKey)
	parts := make([][]porcupine.Operation, len(keys))
	for i, key := range keys {
		parts[i] = byKey[key]
	}
	return keys, parts
}
