// The sequential specification of byte ranges of one block volume (docs/volumes.md): a row of segments, each
// holding the id of the last write that covered it (0: never written). A write of segments [first, last] sets
// them all at one instant; a read of [first, last] sees each segment's id as of one instant. A torn write or a
// read that mixes two instants has no linearization.
package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Range operation kinds, as in the history JSON.
const (
	opRangeRead  = "rangeRead"
	opRangeWrite = "rangeWrite"
)

// rangeSegmentsMax bounds the row a history may address.
const rangeSegmentsMax = 64

// rangeState is the row of write ids, comma-joined: comparable, so Porcupine can cache visited states by value.
type rangeState string

type rangeInput struct {
	volume string
	op     string
	first  int
	last   int
	id     int
}

type rangeOutput struct {
	status string
	ids    []int
}

func rangeIds(s rangeState) []int {
	ids := make([]int, rangeSegmentsMax)
	if s == "" {
		return ids
	}
	for i, part := range strings.Split(string(s), ",") {
		ids[i], _ = strconv.Atoi(part)
	}
	return ids
}

func rangeStateOf(ids []int) rangeState {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return rangeState(strings.Join(parts, ","))
}

// rangeStep: a read is legal when it saw exactly the row's ids over its segments; a write (acknowledged or of
// unknown outcome, which the checker may place last: "never happened") sets its segments to its id.
func rangeStep(s rangeState, in rangeInput, out rangeOutput) (bool, rangeState) {
	ids := rangeIds(s)
	if in.op == opRangeRead {
		if out.status == statusUnknown {
			return true, s
		}
		for i := in.first; i <= in.last; i++ {
			if out.ids[i-in.first] != ids[i] {
				return false, s
			}
		}
		return true, s
	}
	for i := in.first; i <= in.last; i++ {
		ids[i] = in.id
	}
	return true, rangeStateOf(ids)
}

func rangesModel() porcupine.Model {
	return porcupine.Model{
		Init: func() interface{} { return rangeStateOf(make([]int, rangeSegmentsMax)) },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			return rangeStep(state.(rangeState), input.(rangeInput), output.(rangeOutput))
		},
		Equal: func(a, b interface{}) bool { return a.(rangeState) == b.(rangeState) },
		Hash: func(s interface{}) uint64 {
			h := fnv.New64a()
			h.Write([]byte(s.(rangeState)))
			return h.Sum64()
		},
		DescribeOperation: func(in, out interface{}) string {
			i, o := in.(rangeInput), out.(rangeOutput)
			if i.op == opRangeWrite {
				return fmt.Sprintf("%s: write #%d over [%d, %d] → %s", i.volume, i.id, i.first, i.last, o.status)
			}
			return fmt.Sprintf("%s: read [%d, %d] → %s %v", i.volume, i.first, i.last, o.status, o.ids)
		},
		DescribeState: func(s interface{}) string { return string(s.(rangeState)) },
	}
}

type jsonRangeInput struct {
	Op    string `json:"op"`
	First *int   `json:"first"`
	Last  *int   `json:"last"`
	Id    *int   `json:"id"`
}

type jsonRangeOutput struct {
	Status string `json:"status"`
	Ids    []int  `json:"ids"`
}

type jsonRangeOperation = jsonOperationOf[jsonRangeInput, jsonRangeOutput]

// parseRangeHistory reads a history of byte-range operations (history.ts, RangeHistory).
func parseRangeHistory(data []byte) ([]porcupine.Operation, error) {
	return parseOperations(data, convertRange)
}

func convertRange(op jsonRangeOperation) (porcupine.Operation, error) {
	switch {
	case op.ClientId == nil || op.Key == nil || op.Input == nil || op.Output == nil || op.InvokeNs == nil:
		return porcupine.Operation{}, errors.New("clientId, key, input, output and invokeNs are required")
	case op.Input.First == nil || op.Input.Last == nil:
		return porcupine.Operation{}, errors.New("input.first and input.last are required")
	}
	in := rangeInput{volume: *op.Key, op: op.Input.Op, first: *op.Input.First, last: *op.Input.Last}
	if in.first < 0 || in.last < in.first || in.last >= rangeSegmentsMax {
		return porcupine.Operation{}, fmt.Errorf("segments [%d, %d] are not within [0, %d)", in.first, in.last, rangeSegmentsMax)
	}
	out := rangeOutput{status: op.Output.Status, ids: op.Output.Ids}
	if out.status != statusOk && out.status != statusUnknown {
		return porcupine.Operation{}, fmt.Errorf("output.status %q is not ok or unknown", out.status)
	}
	switch in.op {
	case opRangeWrite:
		if op.Input.Id == nil || *op.Input.Id <= 0 {
			return porcupine.Operation{}, errors.New("a rangeWrite needs a positive input.id")
		}
		in.id = *op.Input.Id
	case opRangeRead:
		if out.status == statusOk && len(out.ids) != in.last-in.first+1 {
			return porcupine.Operation{}, fmt.Errorf("a read of [%d, %d] needs %d output.ids", in.first, in.last, in.last-in.first+1)
		}
	default:
		return porcupine.Operation{}, fmt.Errorf("unknown input.op %q", in.op)
	}
	ret, err := returnTime(out.status, *op.InvokeNs, op.ReturnNs)
	if err != nil {
		return porcupine.Operation{}, err
	}
	return porcupine.Operation{ClientId: *op.ClientId, Input: in, Call: *op.InvokeNs, Output: out, Return: ret}, nil
}
