// Unit tests of the register model's transitions and of the CLI's exit codes; the jest suite
// test/fault/linearizability-checker.test.ts checks whole histories through the TS wrapper.
package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStep(t *testing.T) {
	absent := regState{}
	live := regState{exists: true, version: 2, value: "a"}
	tomb := regState{exists: false, version: 3}
	ok := func(version int64) opOutput { return opOutput{status: statusOk, version: version, hasVersion: true} }
	cases := []struct {
		name  string
		from  regState
		in    opInput
		out   opOutput
		legal bool
		to    regState
	}{
		{"read sees value and version", live, opInput{op: opRead}, opOutput{status: statusOk, value: "a", hasValue: true, version: 2, hasVersion: true}, true, live},
		{"read of an older version", live, opInput{op: opRead}, opOutput{status: statusOk, value: "a", hasValue: true, version: 1, hasVersion: true}, false, live},
		{"read of a tombstone", tomb, opInput{op: opRead}, opOutput{status: statusNotFound}, true, tomb},
		{"write continues from a tombstone", tomb, opInput{op: opWrite, value: "b"}, ok(4), true, regState{true, 4, "b"}},
		{"write skipping a version", live, opInput{op: opWrite, value: "b"}, ok(4), false, regState{true, 3, "b"}},
		{"cas at the current version", live, opInput{op: opCas, value: "b", ifVersion: 2, hasIfVer: true}, ok(3), true, regState{true, 3, "b"}},
		{"cas at a stale version succeeds", live, opInput{op: opCas, value: "b", ifVersion: 1, hasIfVer: true}, ok(2), false, regState{true, 3, "b"}},
		{"cas on an absent key fails", absent, opInput{op: opCas, value: "b", ifVersion: 0, hasIfVer: true}, opOutput{status: statusPreconditionFailed}, true, absent},
		{"unknown cas that cannot apply", live, opInput{op: opCas, value: "b", ifVersion: 1, hasIfVer: true}, opOutput{status: statusUnknown}, true, live},
		{"create over a tombstone", tomb, opInput{op: opCreate, value: "c"}, ok(4), true, regState{true, 4, "c"}},
		{"create over a live key fails", live, opInput{op: opCreate, value: "c"}, opOutput{status: statusPreconditionFailed}, true, live},
		{"delete leaves a tombstone", live, opInput{op: opDelete}, ok(3), true, regState{false, 3, ""}},
		{"delete of an absent key", absent, opInput{op: opDelete}, opOutput{status: statusNotFound}, true, absent},
		{"unknown delete of an absent key", absent, opInput{op: opDelete}, opOutput{status: statusUnknown}, true, absent},
	}
	for _, c := range cases {
		legal, to := step(c.from, c.in, c.out)
		if legal != c.legal || (legal && to != c.to) {
			t.Errorf("%s: got (%v, %+v), want (%v, %+v)", c.name, legal, to, c.legal, c.to)
		}
	}
}

func runOn(t *testing.T, history string, args ...string) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.json")
	if err := os.WriteFile(path, []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(append(args, path), &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

func TestRunKeepsLargeTimesExact(t *testing.T) {
	// Two operations one nanosecond apart above 2^53: a float64 decoder would merge their times
	// and make the stale read concurrent with the write (and so legal).
	history := `{"operations":[
	  {"clientId":0,"key":"k","input":{"op":"write","value":"a"},"output":{"status":"ok","version":1},"invokeNs":9007199254740993,"returnNs":9007199254740995},
	  {"clientId":1,"key":"k","input":{"op":"read"},"output":{"status":"notFound"},"invokeNs":9007199254740996,"returnNs":9007199254740997}]}`
	code, out := runOn(t, history)
	if code != exitNotLinearizable || !strings.Contains(out, `"failingKeys":["k"]`) {
		t.Fatalf("exit %d, output %s", code, out)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	code, _ := runOn(t, `{"operations":[{"clientId":0,"key":"k","input":{"op":"write","value":"a"},"output":{"status":"notFound"},"invokeNs":1,"returnNs":2}]}`)
	if code != exitBadInput {
		t.Fatalf("exit %d, want %d", code, exitBadInput)
	}
}
