package main

// runrecord.provider_call_response: docs/runrecord.md sections 3 and 5.2.

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ---- strict JSON for tool-call bodies (no duplicate keys, no lone surrogates) ----

var loneSurrogate = regexp.MustCompile(`\\u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\u[dD][c-fC-F][0-9a-fA-F]{2}`)

func hasLoneSurrogate(raw string) bool {
	// count backslash runs properly: only an escape when preceded by an even run
	for _, loc := range loneSurrogate.FindAllStringIndex(raw, -1) {
		bs := 0
		for i := loc[0] - 1; i >= 0 && raw[i] == '\\'; i-- {
			bs++
		}
		if bs%2 == 1 {
			continue
		}
		m := raw[loc[0]:loc[1]]
		if len(m) == 12 { // a high and a low surrogate: a pair
			continue
		}
		return true
	}
	return false
}

type strictErr string

func (e strictErr) Error() string { return string(e) }

const errDuplicate = strictErr("duplicate key")

// strictObjectPrefix reads one JSON object at the start of s (after JSON
// white space) and returns it and the byte offset after it.
func strictObjectPrefix(s string) (*Object, int, bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\r", s[i]) >= 0 {
		i++
	}
	if i >= len(s) || s[i] != '{' {
		return nil, 0, false
	}
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	dec.UseNumber()
	v, err := readValue(dec, true)
	if err != nil {
		return nil, 0, false
	}
	end := i + int(dec.InputOffset())
	if hasLoneSurrogate(s[i:end]) {
		return nil, 0, false
	}
	o, ok := v.(*Object)
	return o, end, ok
}

func strictWhole(s string) (any, bool) {
	v, err := readWhole(strings.NewReader(s), true)
	if err != nil || hasLoneSurrogate(s) {
		return nil, false
	}
	return v, true
}

// ---- the parse ----

type parsedCall struct {
	id   any // string or nil
	name string
	args *Object
}

func (c parsedCall) json() *Object {
	o := NewObject()
	o.Set("id", c.id)
	o.Set("name", c.name)
	o.Set("arguments", c.args)
	return o
}

func normID(v any) (any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case string:
		if t == "" {
			return nil, true
		}
		return t, true
	}
	return nil, false
}

func normArgs(v any, present bool) (*Object, bool) {
	if !present || v == nil {
		return NewObject(), true
	}
	switch t := v.(type) {
	case *Object:
		return t, true
	case string:
		if t == "" {
			return NewObject(), true
		}
		parsed, ok := strictWhole(t)
		if !ok {
			return nil, false
		}
		o, ok := parsed.(*Object)
		return o, ok
	}
	return nil, false
}

func nativeCall(tc *Object) (parsedCall, bool) {
	var idV, nameV, argsV any
	argsPresent := false
	get := func(o *Object, k string) any { v, _ := o.Get(k); return v }
	if fn, ok := tc.Vals["function"].(*Object); ok {
		idV, nameV = get(tc, "id"), get(fn, "name")
		argsV, argsPresent = fn.Get("arguments")
	} else if t, _ := tc.Vals["type"].(string); t == "tool_use" {
		idV, nameV = get(tc, "id"), get(tc, "name")
		argsV, argsPresent = tc.Get("input")
	} else if fc, ok := tc.Vals["functionCall"].(*Object); ok {
		idV, nameV = get(fc, "id"), get(fc, "name")
		argsV, argsPresent = fc.Get("args")
	} else if t == "function_call" {
		idV, nameV = get(tc, "call_id"), get(tc, "name")
		argsV, argsPresent = tc.Get("arguments")
	} else {
		idV, nameV = get(tc, "id"), get(tc, "name")
		argsV, argsPresent = tc.Get("arguments")
	}
	id, ok := normID(idV)
	if !ok {
		return parsedCall{}, false
	}
	name, ok := nameV.(string)
	if !ok || name == "" {
		return parsedCall{}, false
	}
	args, ok := normArgs(argsV, argsPresent)
	if !ok {
		return parsedCall{}, false
	}
	return parsedCall{id, name, Clone(args).(*Object)}, true
}

func textCallBody(body string) (parsedCall, bool) {
	trimmed := strings.Trim(body, " \t\n\r")
	v, ok := strictWhole(trimmed)
	if !ok {
		return parsedCall{}, false
	}
	o, ok := v.(*Object)
	if !ok {
		return parsedCall{}, false
	}
	for _, k := range o.Keys {
		if k != "id" && k != "name" && k != "arguments" {
			return parsedCall{}, false
		}
	}
	name, ok := o.Vals["name"].(string)
	if !ok || name == "" {
		return parsedCall{}, false
	}
	argsV, present := o.Get("arguments")
	var args *Object
	if !present {
		args = NewObject()
	} else if a, isO := argsV.(*Object); isO {
		args = a
	} else {
		return parsedCall{}, false
	}
	id, ok := normID(o.Vals["id"])
	if !ok {
		return parsedCall{}, false
	}
	return parsedCall{id, name, args}, true
}

var legacyHead = regexp.MustCompile(`^[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)\(`)

type textCall struct {
	pos  int
	call parsedCall
}

// lineStarts / blocks
type span struct{ start, end int } // byte offsets, end exclusive

func pyStripSet(r rune) bool { return isWhiteSpace(r) || (r >= 0x1C && r <= 0x1F) }

func pyStrip(s string) string { return strings.TrimFunc(s, pyStripSet) }

type line struct {
	start, end int // byte offsets of the content (without \n)
}

func splitLines(t string) []line {
	var ls []line
	start := 0
	for i := 0; i < len(t); i++ {
		if t[i] == '\n' {
			ls = append(ls, line{start, i})
			start = i + 1
		}
	}
	ls = append(ls, line{start, len(t)})
	return ls
}

// loopBlocks finds the complete LOOP_STATE blocks: their line ranges.
func loopBlocks(t string, ls []line) [][2]int {
	var blocks [][2]int
	open := -1
	for i, l := range ls {
		s := pyStrip(t[l.start:l.end])
		if s == "## LOOP_STATE" {
			open = i // a block opened again drops the first opening
		} else if s == "## END_LOOP_STATE" {
			if open >= 0 {
				blocks = append(blocks, [2]int{open, i})
				open = -1
			}
		}
	}
	return blocks
}

func textCalls(t string) []textCall {
	ls := splitLines(t)
	blocks := loopBlocks(t, ls)
	inBlock := func(pos int) bool {
		for _, b := range blocks {
			if pos >= ls[b[0]].start && pos <= ls[b[1]].end {
				return true
			}
		}
		return false
	}
	var calls []textCall
	// closed <tool_call> elements
	var elements []span
	for i := 0; ; {
		o := strings.Index(t[i:], "<tool_call>")
		if o < 0 {
			break
		}
		o += i
		c := strings.Index(t[o+len("<tool_call>"):], "</tool_call>")
		if c < 0 {
			break // unclosed: no call, lines after it may be legacy calls
		}
		c += o + len("<tool_call>")
		elements = append(elements, span{o, c + len("</tool_call>")})
		if !inBlock(o) {
			if call, ok := textCallBody(t[o+len("<tool_call>") : c]); ok {
				calls = append(calls, textCall{o, call})
			}
		}
		i = c + len("</tool_call>")
	}
	inElement := func(a, b int) bool {
		for _, e := range elements {
			if a < e.end && b > e.start {
				return true
			}
		}
		return false
	}
	// legacy lines
	for li := 0; li < len(ls); li++ {
		l := ls[li]
		content := t[l.start:l.end]
		m := legacyHead.FindStringSubmatchIndex(content)
		if m == nil {
			continue
		}
		bodyStart := l.start + m[1]
		obj, n, ok := strictObjectPrefix(t[bodyStart:])
		if !ok || t[bodyStart] != '{' {
			continue
		}
		after := bodyStart + n
		if after >= len(t) || t[after] != ')' {
			continue
		}
		// to the end of the line: blanks only
		end := after + 1
		for end < len(t) && (t[end] == ' ' || t[end] == '\t') {
			end++
		}
		if end < len(t) && t[end] != '\n' {
			continue
		}
		if inBlock(l.start) || inElement(l.start, end) {
			continue
		}
		calls = append(calls, textCall{l.start, parsedCall{nil, content[m[2]:m[3]], obj}})
		// skip the lines the call spans
		for li+1 < len(ls) && ls[li+1].start <= end {
			li++
		}
	}
	// text order
	for i := 1; i < len(calls); i++ {
		for j := i; j > 0 && calls[j].pos < calls[j-1].pos; j-- {
			calls[j], calls[j-1] = calls[j-1], calls[j]
		}
	}
	return calls
}

// ---- loop state ----

var loopNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func loopValue(v string) any {
	switch v {
	case "true":
		return true
	case "false":
		return false
	case "null", "nil":
		return nil
	}
	if !loopNumber.MatchString(v) {
		return v
	}
	if isIntLiteral(json.Number(v)) {
		r := numRat(json.Number(v))
		if new(big.Int).Abs(r.Num()).Cmp(bigMaxSafe) > 0 {
			return v
		}
		return json.Number(r.Num().String()) // -0 is 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) {
		return v
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return json.Number(s)
}

// loopState decodes the last complete block, with each value's raw line.
func loopState(t string) (*Object, map[string]string) {
	ls := splitLines(t)
	blocks := loopBlocks(t, ls)
	if len(blocks) == 0 {
		return nil, nil
	}
	b := blocks[len(blocks)-1]
	if defect == "loop_state_first_block" {
		b = blocks[0]
	}
	o := NewObject()
	rawLines := map[string]string{}
	for i := b[0] + 1; i < b[1]; i++ {
		content := t[ls[i].start:ls[i].end]
		if pyStrip(content) == "" {
			continue
		}
		c := strings.IndexByte(content, ':')
		if c < 0 {
			continue
		}
		k := pyStrip(content[:c])
		if k == "" {
			continue
		}
		v := pyStrip(content[c+1:])
		o.Delete(k) // a repeated key keeps its last value
		o.Set(k, loopValue(v))
		rawLines[k] = content
	}
	return o, rawLines
}

// ---- the operation ----

func providerCallResponse(input *Object) (any, Findings) {
	var fs Findings
	closed(&fs, input, "$", []string{"response", "execution_id"}, []string{"response"})
	rv, hasResp := input.Get("response")
	resp, isObj := rv.(*Object)
	if hasResp && !isObj {
		fs.Add("wrong_type", "$.response", "a response is an object")
	}
	if len(fs) > 0 {
		return nil, fs
	}
	// stage 2: is it a response
	if x, ok := resp.Get("call_id"); !ok {
		fs.Add("required", "$.response.call_id", "missing")
	} else if _, isS := x.(string); !isS {
		fs.Add("wrong_type", "$.response.call_id", "expected a string")
	}
	if x, ok := resp.Get("iteration"); !ok {
		fs.Add("required", "$.response.iteration", "missing")
	} else if n, isN := x.(json.Number); !isN || !isIntLiteral(n) {
		fs.Add("wrong_type", "$.response.iteration", "expected an integer literal")
	}
	if x, ok := resp.Get("text"); !ok {
		fs.Add("required", "$.response.text", "missing")
	} else if _, isS := x.(string); !isS {
		fs.Add("wrong_type", "$.response.text", "expected a string")
	}
	if x, ok := resp.Get("tool_calls"); ok && x != nil {
		if _, isA := x.([]any); !isA {
			fs.Add("wrong_type", "$.response.tool_calls", "expected an array or null")
		}
	}
	if x, ok := input.Get("execution_id"); ok && x != nil {
		if _, isS := x.(string); !isS {
			fs.Add("wrong_type", "$.execution_id", "expected a string or null")
		}
	}
	if len(fs) > 0 {
		return nil, fs
	}
	// stage 3: the payload's schema
	callID := resp.Vals["call_id"].(string)
	callIDLimit := 256
	if defect == "call_id_limit_off_by_one" {
		callIDLimit = 257
	}
	checkString(&fs, callID, "$.response.call_id", 1, callIDLimit)
	checkSafeInt(&fs, resp.Vals["iteration"], "$.response.iteration", true)
	spanID, hasSpan := resp.Get("span_id")
	if !hasSpan {
		spanID = nil
	}
	if spanID != nil {
		checkSafeInt(&fs, spanID, "$.response.span_id", true)
	}
	execID, _ := input.Get("execution_id")
	if execID != nil {
		checkString(&fs, execID, "$.execution_id", 1, 256)
	}
	var rawCalls []any
	if x, ok := resp.Get("tool_calls"); ok && x != nil {
		rawCalls = x.([]any)
	}
	for i, c := range rawCalls {
		if _, isO := c.(*Object); !isO {
			fs.Add("wrong_type", Index("$.response.tool_calls", i), "a tool call is an object")
		}
	}
	if len(fs) > 0 {
		return nil, fs
	}
	// stage 4: the RFC 8785 form of tool_calls
	if p, bad := firstUnsafeInteger(rawCalls, "$.response.tool_calls"); bad {
		return nil, Findings{{"canonical_unsafe_integer", p, "no RFC 8785 form"}}
	}

	text := resp.Vals["text"].(string)
	// the parse, from the raw response
	var parse []parsedCall
	for _, c := range rawCalls {
		if pc, ok := nativeCall(c.(*Object)); ok {
			parse = append(parse, pc)
		}
	}
	for _, tc := range textCalls(text) {
		parse = append(parse, tc.call)
	}
	ls, rawLines := loopState(text)

	// redaction (3.5)
	st := newStore()
	storedText := st.add(text, "", viewNone, "")
	storedCalls := st.walk(Clone(rawCalls), true)
	var parseVals []any
	for _, pc := range parse {
		parseVals = append(parseVals, pc.json())
	}
	storedParse := st.walk(parseVals, true)
	var storedLoop any
	if ls != nil {
		lo := NewObject()
		for _, k := range ls.Keys {
			v := ls.Vals[k]
			rk, sensitive := st.member(k, v)
			if sensitive {
				lo.Set(rk, "[redacted]")
				continue
			}
			raw := rawLines[k]
			valueText := pyStrip(raw[strings.IndexByte(raw, ':')+1:])
			s, isS := v.(string)
			if !isS {
				s = ""
			}
			sl := st.addValue(s, valueText, k, viewLine, raw)
			if isS || sl.whole {
				lo.Set(rk, sl)
			} else {
				lo.Set(rk, v)
			}
		}
		storedLoop = lo
	}
	st.finish()
	textOut := st.resolve(storedText).(string)
	callsOut := st.resolve(storedCalls).([]any)
	var parseOut []any
	if storedParse != nil {
		for _, c := range st.resolve(storedParse).([]any) {
			co := c.(*Object)
			ok := true
			if id, isS := co.Vals["id"].(string); isS && (len(id) > 256 || id == "") {
				ok = false
			}
			if n, _ := co.Vals["name"].(string); len(n) > 256 || n == "" {
				ok = false
			}
			if _, bad := firstUnsafeInteger(co, "$"); bad {
				ok = false
			}
			if ok {
				parseOut = append(parseOut, co)
			}
		}
	}
	if parseOut == nil {
		parseOut = []any{}
	}
	loopOut := st.resolve(storedLoop)

	out := NewObject()
	out.Set("call_id", callID)
	out.Set("iteration", resp.Vals["iteration"])
	out.Set("span_id", spanID)
	out.Set("execution_id", execID)
	out.Set("text", textOut)
	out.Set("tool_calls", callsOut)
	identical := len(parseOut) > 0 && Equal(parseOut, callsOut)
	if defect == "ref_compared_as_text" {
		identical = len(parseOut) > 0 && bytes.Equal(Encode(parseOut), Encode(callsOut))
	}
	if identical {
		out.Set("parsed_tool_calls_ref", "tool_calls")
	} else {
		out.Set("parsed_tool_calls", parseOut)
	}
	out.Set("loop_state", loopOut)
	return out, nil
}

func utf8Len(s string) int { return len(s) }

var _ = utf8.RuneLen
