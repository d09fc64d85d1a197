// lincheck: checks a recorded Ringstore history (JSON, see history.ts) for linearizability with
// Porcupine, one register per key (or, with -model ranges, one row of volume segments per key: ranges.go),
// and prints one JSON line with the verdict.
//
// Usage: lincheck [-timeout 60s] [-model register|ranges] [-visualize out.html] history.json
// Exit codes: 0 linearizable, 1 not linearizable, 2 unknown (timed out), 3 bad usage or input.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

const (
	exitLinearizable    = 0
	exitNotLinearizable = 1
	exitUnknown         = 2
	exitBadInput        = 3

	defaultTimeout = 60 * time.Second
	// historyBytesMax bounds what we read into memory: far above any fault test's history.
	historyBytesMax = 512 << 20
	// returnAtInfinity is the return time of an operation whose outcome is unknown: it may be
	// linearized anywhere after its invocation, including after everything else ("never happened").
	returnAtInfinity = math.MaxInt64
)

type jsonInput struct {
	Op        string  `json:"op"`
	Value     *string `json:"value"`
	IfVersion *int64  `json:"ifVersion"`
}

type jsonOutput struct {
	Status  string  `json:"status"`
	Value   *string `json:"value"`
	Version *int64  `json:"version"`
}

// jsonOperationOf is one operation of a history, whatever its model's input and output.
type jsonOperationOf[Input any, Output any] struct {
	ClientId *int    `json:"clientId"`
	Key      *string `json:"key"`
	Input    *Input  `json:"input"`
	Output   *Output `json:"output"`
	InvokeNs *int64  `json:"invokeNs"`
	ReturnNs *int64  `json:"returnNs"`
}

type jsonOperation = jsonOperationOf[jsonInput, jsonOutput]

type report struct {
	Linearizable *bool    `json:"linearizable"`
	Operations   int      `json:"operations"`
	Keys         int      `json:"keys"`
	FailingKeys  []string `json:"failingKeys"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("lincheck", flag.ContinueOnError)
	flags.SetOutput(stderr)
	timeout := flags.Duration("timeout", defaultTimeout, "give up (result unknown, exit 2) after this long; the visualization gets as long again")
	visualize := flags.String("visualize", "", "write Porcupine's HTML visualization of the whole history to this path")
	modelName := flags.String("model", "register", "register (a key's versioned value) or ranges (a volume's byte ranges)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: lincheck [-timeout 60s] [-visualize out.html] history.json")
		flags.PrintDefaults()
	}
	// The flag package's own exit code 2 would read as "unknown": usage errors are bad input.
	if err := flags.Parse(args); err != nil {
		return exitBadInput
	}
	if flags.NArg() != 1 || *timeout <= 0 || (*modelName != "register" && *modelName != "ranges") {
		flags.Usage()
		return exitBadInput
	}

	kind := registerKind
	if *modelName == "ranges" {
		kind = rangesKind
	}
	history, err := readHistory(flags.Arg(0), kind)
	if err != nil {
		fmt.Fprintf(stderr, "lincheck: %v\n", err)
		return exitBadInput
	}

	keys, verdicts := checkByKey(history, kind, *timeout)
	out := report{Operations: len(history), Keys: len(keys), FailingKeys: []string{}}
	var timedOut []string
	for i, key := range keys {
		switch verdicts[i] {
		case porcupine.Illegal:
			out.FailingKeys = append(out.FailingKeys, key)
		case porcupine.Unknown:
			timedOut = append(timedOut, key)
		}
	}
	code := exitLinearizable
	switch {
	case len(out.FailingKeys) > 0:
		code = exitNotLinearizable
		out.Linearizable = boolPtr(false)
	case len(timedOut) > 0:
		code = exitUnknown
		fmt.Fprintf(stderr, "lincheck: timed out after %s on %d key(s): %v\n", *timeout, len(timedOut), timedOut)
	default:
		out.Linearizable = boolPtr(true)
	}

	if *visualize != "" {
		// A second, verbose pass: Porcupine's visualization needs the whole history in one check.
		model := kind.model(true)
		_, info := porcupine.CheckOperationsVerbose(model, history, *timeout)
		if err := porcupine.VisualizePath(model, info, *visualize); err != nil {
			fmt.Fprintf(stderr, "lincheck: writing the visualization: %v\n", err)
		}
	}

	line, _ := json.Marshal(out)
	fmt.Fprintln(stdout, string(line))
	return code
}

// historyKind is what a history's operations are: how its JSON reads, the model, and each operation's key.
type historyKind struct {
	parse func(data []byte) ([]porcupine.Operation, error)
	model func(partitioned bool) porcupine.Model
	keyOf func(input interface{}) string
}

var registerKind = historyKind{
	parse: parseRegisterHistory,
	model: registerModel,
	keyOf: registerKeyOf,
}

var rangesKind = historyKind{
	parse: parseRangeHistory,
	model: func(partitioned bool) porcupine.Model {
		m := rangesModel()
		if partitioned {
			m.Partition = func(history []porcupine.Operation) [][]porcupine.Operation {
				_, parts := partitionBy(history, func(input interface{}) string { return input.(rangeInput).volume })
				return parts
			}
		}
		return m
	},
	keyOf: func(input interface{}) string { return input.(rangeInput).volume },
}

// checkByKey checks each key's sub-history on its own, so a failure names its key, at most
// GOMAXPROCS keys at a time, all under one deadline.
func checkByKey(history []porcupine.Operation, kind historyKind, timeout time.Duration) ([]string, []porcupine.CheckResult) {
	keys, parts := partitionBy(history, kind.keyOf)
	verdicts := make([]porcupine.CheckResult, len(keys))
	model := kind.model(false)
	deadline := time.Now().Add(timeout)
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		slots <- struct{}{}
		go func(i int) {
			defer func() { <-slots; wg.Done() }()
			remaining := time.Until(deadline)
			if remaining <= 0 { // a timeout of 0 would mean "no limit" to Porcupine
				verdicts[i] = porcupine.Unknown
				return
			}
			verdicts[i] = porcupine.CheckOperationsTimeout(model, parts[i], remaining)
		}(i)
	}
	wg.Wait()
	return keys, verdicts
}

func readHistory(path string, kind historyKind) ([]porcupine.Operation, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, historyBytesMax+1))
	if err != nil {
		return nil, err
	}
	if len(data) > historyBytesMax {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, historyBytesMax)
	}
	ops, err := kind.parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ops, nil
}

// parseRegisterHistory reads a history of register operations (history.ts).
func parseRegisterHistory(data []byte) ([]porcupine.Operation, error) {
	return parseOperations(data, convert)
}

// parseOperations reads a history's "operations" array, each converted by `convert`.
func parseOperations[J any](data []byte, convert func(J) (porcupine.Operation, error)) ([]porcupine.Operation, error) {
	var raw struct {
		Operations *[]J `json:"operations"`
	}
	// Times are decoded straight into int64, so nanosecond values above 2^53 stay exact.
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if raw.Operations == nil {
		return nil, errors.New(`the history has no "operations" array`)
	}
	ops := make([]porcupine.Operation, 0, len(*raw.Operations))
	for i, op := range *raw.Operations {
		converted, err := convert(op)
		if err != nil {
			return nil, fmt.Errorf("operations[%d]: %w", i, err)
		}
		ops = append(ops, converted)
	}
	return ops, nil
}

// returnTime is an operation's return: its returnNs, or infinity for an unknown outcome (which may omit it).
func returnTime(status string, invokeNs int64, returnNs *int64) (int64, error) {
	ret := int64(returnAtInfinity)
	if status != statusUnknown {
		if returnNs == nil {
			return 0, errors.New("returnNs is missing (only an unknown outcome may omit it)")
		}
		ret = *returnNs
	}
	if ret < invokeNs {
		return 0, fmt.Errorf("returnNs %d is before invokeNs %d", ret, invokeNs)
	}
	return ret, nil
}

// allowedStatuses lists, per operation, the outcomes the service can report.
func allowedStatuses(in opInput) []string {
	switch in.op {
	case opRead:
		return []string{statusOk, statusNotFound, statusUnknown}
	case opWrite:
		return []string{statusOk, statusUnknown}
	case opDelete:
		if !in.hasIfVer {
			return []string{statusOk, statusNotFound, statusUnknown}
		}
	}
	return []string{statusOk, statusPreconditionFailed, statusUnknown}
}

func convert(op jsonOperation) (porcupine.Operation, error) {
	switch {
	case op.ClientId == nil:
		return porcupine.Operation{}, errors.New("clientId is missing")
	case op.Key == nil:
		return porcupine.Operation{}, errors.New("key is missing")
	case op.Input == nil:
		return porcupine.Operation{}, errors.New("input is missing")
	case op.Output == nil:
		return porcupine.Operation{}, errors.New("output is missing")
	case op.InvokeNs == nil:
		return porcupine.Operation{}, errors.New("invokeNs is missing")
	}

	in := opInput{key: *op.Key, op: op.Input.Op}
	switch in.op {
	case opRead:
	case opWrite, opCreate, opCas:
		if op.Input.Value == nil {
			return porcupine.Operation{}, fmt.Errorf("a %s needs input.value", in.op)
		}
		in.value = *op.Input.Value
		if in.op == opCas && op.Input.IfVersion == nil {
			return porcupine.Operation{}, errors.New("a cas needs input.ifVersion")
		}
	case opDelete:
	default:
		return porcupine.Operation{}, fmt.Errorf("unknown input.op %q", in.op)
	}
	if (in.op == opCas || in.op == opDelete) && op.Input.IfVersion != nil {
		in.ifVersion, in.hasIfVer = *op.Input.IfVersion, true
	}

	out := opOutput{status: op.Output.Status}
	allowed := allowedStatuses(in)
	if !contains(allowed, out.status) {
		return porcupine.Operation{}, fmt.Errorf("output.status %q is not one of %v for a %s", out.status, allowed, in.op)
	}
	if out.status == statusOk {
		if op.Output.Value != nil {
			out.value, out.hasValue = *op.Output.Value, true
		}
		if op.Output.Version != nil {
			out.version, out.hasVersion = *op.Output.Version, true
		}
		if in.op == opRead && !out.hasValue {
			return porcupine.Operation{}, errors.New("a successful read needs output.value")
		}
	}

	ret, err := returnTime(out.status, *op.InvokeNs, op.ReturnNs)
	if err != nil {
		return porcupine.Operation{}, err
	}
	return porcupine.Operation{ClientId: *op.ClientId, Input: in, Call: *op.InvokeNs, Output: out, Return: ret}, nil
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

func boolPtr(b bool) *bool { return &b }
