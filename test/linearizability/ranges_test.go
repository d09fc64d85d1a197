// Unit tests of the byte-range model (ranges.go): a whole write read whole is linearizable, a torn one is not.
package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

func rangeOp(client int, call, ret int64, in rangeInput, out rangeOutput) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func TestRangeHistories(t *testing.T) {
	write := func(id, first, last int) rangeInput {
		return rangeInput{volume: "v", op: opRangeWrite, first: first, last: last, id: id}
	}
	read := func(first, last int) rangeInput {
		return rangeInput{volume: "v", op: opRangeRead, first: first, last: last}
	}
	ok := rangeOutput{status: statusOk}
	saw := func(ids ...int) rangeOutput { return rangeOutput{status: statusOk, ids: ids} }
	cases := []struct {
		name         string
		history      []porcupine.Operation
		linearizable bool
	}{
		{"a write read back over a wider range", []porcupine.Operation{
			rangeOp(0, 0, 10, write(1, 2, 4), ok),
			rangeOp(1, 20, 30, read(1, 5), saw(0, 1, 1, 1, 0)),
		}, true},
		{"overlapping writes, the later one on top", []porcupine.Operation{
			rangeOp(0, 0, 10, write(1, 0, 3), ok),
			rangeOp(1, 20, 30, write(2, 2, 5), ok),
			rangeOp(2, 40, 50, read(0, 5), saw(1, 1, 2, 2, 2, 2)),
		}, true},
		{"a torn write: half of each of two writes", []porcupine.Operation{
			rangeOp(0, 0, 10, write(1, 0, 3), ok),
			rangeOp(1, 20, 30, write(2, 0, 3), ok),
			rangeOp(2, 40, 50, read(0, 3), saw(2, 2, 1, 1)),
		}, false},
		{"a read during a write sees all of it or none", []porcupine.Operation{
			rangeOp(0, 0, 100, write(1, 0, 3), ok),
			rangeOp(1, 10, 20, read(0, 3), saw(1, 1, 1, 1)),
			rangeOp(2, 30, 40, read(0, 3), saw(0, 0, 0, 0)),
		}, false},
		{"a write of unknown outcome may never have happened", []porcupine.Operation{
			rangeOp(0, 0, returnAtInfinity, write(1, 0, 3), rangeOutput{status: statusUnknown}),
			rangeOp(1, 10, 20, read(0, 3), saw(0, 0, 0, 0)),
		}, true},
		{"a stale read after an acknowledged write", []porcupine.Operation{
			rangeOp(0, 0, 10, write(1, 0, 0), ok),
			rangeOp(1, 20, 30, read(0, 0), saw(0)),
		}, false},
	}
	for _, c := range cases {
		got := porcupine.CheckOperations(rangesModel(), c.history)
		if got != c.linearizable {
			t.Errorf("%s: linearizable %v, want %v", c.name, got, c.linearizable)
		}
	}
}
