// A run-record producer for the session-contracts producer protocol
// (docs/protocol.md), written from the public docs alone.
//
// GO_RUNRECORD_DEFECT=name plants one defect (see FINDINGS.md).
package main

import (
	"bufio"
	"fmt"
	"os"
)

var defect = os.Getenv("GO_RUNRECORD_DEFECT")

func write(w *bufio.Writer, v any) {
	w.Write(Encode(v))
	w.WriteByte('\n')
	w.Flush()
}

func started() *Object {
	impl := NewObject()
	impl.Set("name", "go-runrecord")
	impl.Set("version", "0.1.0")
	impl.Set("language", "go")
	o := NewObject()
	o.Set("protocol_version", 1)
	o.Set("implementation", impl)
	o.Set("contracts", []any{"run-record"})
	o.Set("operations", []any{"runrecord.project", "runrecord.provider_call_response"})
	return o
}

func answer(seq any, op string, input any) (out *Object) {
	out = NewObject()
	out.Set("seq", seq)
	defer func() {
		if r := recover(); r != nil {
			out = NewObject()
			out.Set("seq", seq)
			out.Set("outcome", "errored")
			out.Set("message", fmt.Sprintf("panic: %v", r))
		}
	}()
	in, ok := input.(*Object)
	if !ok {
		return rejected(out, Findings{{"wrong_type", "$", "the input is an object"}})
	}
	var result any
	var fs Findings
	switch op {
	case "runrecord.project":
		result, fs = projectRun(in)
	case "runrecord.provider_call_response":
		result, fs = providerCallResponse(in)
	default:
		out.Set("outcome", "skipped")
		out.Set("reason", "operation "+op+" is not implemented")
		return out
	}
	if len(fs) > 0 {
		return rejected(out, fs)
	}
	out.Set("outcome", "result")
	out.Set("output", result)
	return out
}

func rejected(out *Object, fs Findings) *Object {
	sortFindings(fs)
	if len(fs) > 1000 {
		fs = fs[:1000]
	}
	rej := NewObject()
	rej.Set("code", fs[0].Code)
	rej.Set("path", fs[0].Path)
	rej.Set("message", fs[0].Message)
	var list []any
	for _, f := range fs {
		o := NewObject()
		o.Set("code", f.Code)
		o.Set("path", f.Path)
		o.Set("message", f.Message)
		list = append(list, o)
	}
	rej.Set("findings", list)
	out.Set("outcome", "rejected")
	out.Set("rejection", rej)
	return out
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			msg, perr := Parse(line)
			if perr != nil {
				fmt.Fprintln(os.Stderr, "unreadable line:", perr)
				os.Exit(1)
			}
			m, _ := msg.(*Object)
			if m == nil {
				continue
			}
			switch m.Vals["cmd"] {
			case "start":
				write(w, started())
			case "stop":
				return
			case "run":
				c, _ := m.Vals["case"].(*Object)
				if c == nil {
					continue
				}
				op, _ := c.Vals["operation"].(string)
				write(w, answer(m.Vals["seq"], op, c.Vals["input"]))
			}
		}
		if err != nil {
			return
		}
	}
}
