package main

// Hand-written checks of the schema types this producer reads: the shapes of
// schemas/session-event.schema.json and schemas/run-record.schema.json, with
// the x- rules of docs/x-keywords.md that apply to them.

import (
	"encoding/json"
	"math/big"
	"regexp"
	"sort"
	"unicode/utf8"
)

type Finding struct {
	Code    string
	Path    string
	Message string
}

type Findings []Finding

func (f *Findings) Add(code, path, msg string) { *f = append(*f, Finding{code, path, msg}) }

func sortFindings(fs Findings) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Path != fs[j].Path {
			return lessCodePoints(fs[i].Path, fs[j].Path)
		}
		return fs[i].Code < fs[j].Code
	})
}

func lessCodePoints(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		if ra[i] != rb[i] {
			return ra[i] < rb[i]
		}
	}
	return len(ra) < len(rb)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case *Object:
		return "object"
	}
	return "?"
}

// checkString: a string with optional minLength (characters) and UTF-8 byte limit (0: none).
func checkString(fs *Findings, v any, path string, minLen, maxBytes int) bool {
	s, ok := v.(string)
	if !ok {
		fs.Add("wrong_type", path, "expected a string")
		return false
	}
	if minLen > 0 && utf8.RuneCountInString(s) < minLen {
		fs.Add("min_length", path, "too short")
	}
	if maxBytes > 0 && len(s) > maxBytes {
		fs.Add("max_utf8_bytes", path, "too many UTF-8 bytes")
	}
	return true
}

// checkSafeInt: an integer literal within the safe range (x-jsSafeInteger),
// unsigned when unsigned is set.
func checkSafeInt(fs *Findings, v any, path string, unsigned bool) bool {
	n, ok := v.(json.Number)
	if !ok {
		fs.Add("wrong_type", path, "expected an integer")
		return false
	}
	r := numRat(n)
	neg := r.Sign() < 0
	if isIntLiteral(n) {
		abs := new(big.Int).Abs(r.Num())
		if abs.Cmp(bigMaxSafe) > 0 {
			fs.Add("unsafe_integer", path, "beyond the safe-integer range")
			return false
		}
		if unsigned && neg {
			fs.Add("minimum", path, "negative")
			return false
		}
		return true
	}
	if r.IsInt() {
		fs.Add("integer_literal_required", path, "write the integer without fraction or exponent")
	} else {
		fs.Add("wrong_type", path, "not an integer")
	}
	if unsigned && neg {
		fs.Add("minimum", path, "negative")
	}
	return false
}

func checkNullable(fs *Findings, v any, path string, inner func(any, string) bool) bool {
	if v == nil {
		return true
	}
	return inner(v, path)
}

// closed reports unknown members and missing required ones of an object.
func closed(fs *Findings, o *Object, path string, allowed []string, required []string) {
	set := map[string]bool{}
	for _, a := range allowed {
		set[a] = true
	}
	for _, k := range o.Keys {
		if !set[k] {
			fs.Add("unknown_field", Member(path, k), "not a member")
		}
	}
	for _, r := range required {
		if _, ok := o.Vals[r]; !ok {
			fs.Add("required", Member(path, r), "missing")
		}
	}
}

var snakeRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ---- session-event.event ----

var eventKinds = map[string]bool{"message": true, "loop_checkpoint": true, "tool_call": true, "tool_result": true, "plan": true, "progress": true, "terminal": true, "provider_call_response": true, "session_attribute": true, "transcript_reset": true, "other": true}

var eventHeader = []string{"id", "sessionId", "runId", "turnId", "iteration", "executionId", "topic", "kind", "recordedAtUnixMs", "payload"}

// eachObject reports wrong_type where x is not an array and where an item is not an
// object, and calls each with every item that is one and its path.
func eachObject(fs *Findings, x any, p string, each func(o *Object, ip string)) {
	arr, isA := x.([]any)
	if !isA {
		fs.Add("wrong_type", p, "expected an array")
	}
	for i, it := range arr {
		ip := Index(p, i)
		o, isO := it.(*Object)
		if !isO {
			fs.Add("wrong_type", ip, "expected an object")
			continue
		}
		each(o, ip)
	}
}

// members checks each named member that o has with check, at the member's path.
func members(fs *Findings, o *Object, p string, check func(*Findings, any, string) bool, names ...string) {
	for _, name := range names {
		if x, ok := o.Get(name); ok {
			check(fs, x, Member(p, name))
		}
	}
}

func idString(fs *Findings, v any, p string) bool { return checkString(fs, v, p, 1, 256) }
func label(fs *Findings, v any, p string) bool    { return checkString(fs, v, p, 0, 256) }
func text(fs *Findings, v any, p string) bool     { return checkString(fs, v, p, 0, 1048576) }

func validateEvent(fs *Findings, v any, path string) {
	o, ok := v.(*Object)
	if !ok {
		fs.Add("wrong_type", path, "an event is an object")
		return
	}
	kv, ok := o.Get("kind")
	if !ok {
		fs.Add("required", Member(path, "kind"), "missing")
		return
	}
	kind, _ := kv.(string)
	if !eventKinds[kind] {
		fs.Add("not_allowed_value", Member(path, "kind"), "unknown kind")
		return
	}
	closed(fs, o, path, eventHeader, eventHeader)
	nullable := func(p string, f func(*Findings, any, string) bool) {
		if x, ok := o.Get(p); ok && x != nil {
			f(fs, x, Member(path, p))
		}
	}
	if x, ok := o.Get("id"); ok {
		checkSafeInt(fs, x, Member(path, "id"), true)
	}
	if x, ok := o.Get("sessionId"); ok {
		idString(fs, x, Member(path, "sessionId"))
	}
	nullable("runId", idString)
	nullable("turnId", idString)
	nullable("executionId", idString)
	if x, ok := o.Get("iteration"); ok && x != nil {
		checkSafeInt(fs, x, Member(path, "iteration"), true)
	}
	if x, ok := o.Get("recordedAtUnixMs"); ok {
		checkSafeInt(fs, x, Member(path, "recordedAtUnixMs"), true)
	}
	if x, ok := o.Get("topic"); ok {
		if kind == "provider_call_response" {
			if s, isStr := x.(string); !isStr {
				fs.Add("wrong_type", Member(path, "topic"), "expected a string")
			} else if s != "agent.transcript.llm" {
				fs.Add("not_allowed_value", Member(path, "topic"), "must be agent.transcript.llm")
			}
		} else {
			checkString(fs, x, Member(path, "topic"), 1, 256)
		}
	}
	pv, ok := o.Get("payload")
	if !ok {
		return
	}
	pp := Member(path, "payload")
	if kind != "provider_call_response" {
		validatePayload(fs, kind, pv, pp)
		return
	}
	validateProviderCallResponse(fs, pv, pp)
	// x-sameValue: executionId ~ payload.execution_id, iteration ~ payload.iteration
	if po, ok := pv.(*Object); ok {
		for _, pair := range [][2]string{{"executionId", "execution_id"}, {"iteration", "iteration"}} {
			a, okA := o.Get(pair[0])
			b, okB := po.Get(pair[1])
			if okA && okB && !Equal(a, b) {
				fs.Add("same_value", Member(pp, pair[1]), "differs from the event's "+pair[0])
			}
		}
	}
}

func validatePayload(fs *Findings, kind string, v any, p string) {
	o, ok := v.(*Object)
	if !ok {
		fs.Add("wrong_type", p, "a payload is an object")
		return
	}
	m := func(name string) (any, string, bool) {
		x, ok := o.Get(name)
		return x, Member(p, name), ok
	}
	switch kind {
	case "message":
		closed(fs, o, p, []string{"role", "visibility", "text"}, []string{"role", "visibility", "text"})
		if x, xp, ok := m("role"); ok {
			if s, isStr := x.(string); !isStr {
				fs.Add("wrong_type", xp, "expected a string")
			} else if s != "user" && s != "assistant" && s != "system" && s != "tool" {
				fs.Add("not_allowed_value", xp, "unknown role")
			}
		}
		if x, xp, ok := m("visibility"); ok && x != nil {
			label(fs, x, xp)
		}
		if x, xp, ok := m("text"); ok && x != nil {
			text(fs, x, xp)
		}
	case "loop_checkpoint":
		closed(fs, o, p, []string{"checkpoint", "iteration"}, []string{"checkpoint", "iteration"})
		if x, xp, ok := m("checkpoint"); ok {
			snakeCase(fs, x, xp)
		}
		if x, xp, ok := m("iteration"); ok && x != nil {
			checkSafeInt(fs, x, xp, false)
		}
	case "tool_call":
		closed(fs, o, p, []string{"callId", "toolName", "input"}, []string{"callId", "toolName", "input"})
		if x, xp, ok := m("callId"); ok && x != nil {
			idString(fs, x, xp)
		}
		if x, xp, ok := m("toolName"); ok && x != nil {
			checkString(fs, x, xp, 1, 256)
		}
	case "tool_result":
		closed(fs, o, p, []string{"callId", "toolName", "isError", "output", "verification"}, []string{"callId", "toolName", "isError", "output", "verification"})
		if x, xp, ok := m("callId"); ok && x != nil {
			idString(fs, x, xp)
		}
		if x, xp, ok := m("toolName"); ok && x != nil {
			checkString(fs, x, xp, 1, 256)
		}
		if x, xp, ok := m("isError"); ok {
			if _, isB := x.(bool); !isB {
				fs.Add("wrong_type", xp, "expected a boolean")
			}
		}
		if x, xp, ok := m("verification"); ok && x != nil {
			vo, isO := x.(*Object)
			if !isO {
				fs.Add("wrong_type", xp, "expected an object")
			} else {
				closed(fs, vo, xp, []string{"schema", "status", "verifiedPaths"}, []string{"schema", "status", "verifiedPaths"})
				members(fs, vo, xp, label, "schema", "status")
				if y, ok := vo.Get("verifiedPaths"); ok {
					arr, isA := y.([]any)
					if !isA {
						fs.Add("wrong_type", Member(xp, "verifiedPaths"), "expected an array")
					}
					for i, it := range arr {
						text(fs, it, Index(Member(xp, "verifiedPaths"), i))
					}
				}
			}
		}
	case "plan":
		req := []string{"documentId", "revisionId", "title", "summary", "steps", "event"}
		closed(fs, o, p, req, req)
		members(fs, o, p, idString, "documentId", "revisionId")
		members(fs, o, p, text, "title", "summary")
		if x, xp, ok := m("steps"); ok {
			eachObject(fs, x, xp, func(so *Object, ip string) {
				closed(fs, so, ip, []string{"id", "content", "status"}, []string{"id", "content", "status"})
				if y, ok := so.Get("id"); ok {
					idString(fs, y, Member(ip, "id"))
				}
				if y, ok := so.Get("content"); ok {
					text(fs, y, Member(ip, "content"))
				}
				if y, ok := so.Get("status"); ok {
					enumString(fs, y, Member(ip, "status"), "pending", "in_progress", "completed", "blocked", "cancelled")
				}
			})
		}
		if x, xp, ok := m("event"); ok && x != nil {
			eo, isO := x.(*Object)
			if !isO {
				fs.Add("wrong_type", xp, "expected an object")
			} else {
				r := []string{"kind", "eventId", "inputRevisionId"}
				closed(fs, eo, xp, r, r)
				if y, ok := eo.Get("kind"); ok {
					enumString(fs, y, Member(xp, "kind"), "created", "updated")
				}
				if y, ok := eo.Get("eventId"); ok {
					idString(fs, y, Member(xp, "eventId"))
				}
				if y, ok := eo.Get("inputRevisionId"); ok && y != nil {
					idString(fs, y, Member(xp, "inputRevisionId"))
				}
			}
		}
	case "progress":
		r := []string{"message", "entries", "replace"}
		closed(fs, o, p, r, r)
		if x, xp, ok := m("message"); ok && x != nil {
			text(fs, x, xp)
		}
		if x, xp, ok := m("replace"); ok && x != nil {
			if _, isB := x.(bool); !isB {
				fs.Add("wrong_type", xp, "expected a boolean or null")
			}
		}
		if x, xp, ok := m("entries"); ok {
			eachObject(fs, x, xp, func(eo *Object, ip string) {
				r := []string{"content", "status", "priority"}
				closed(fs, eo, ip, r, r)
				if y, ok := eo.Get("content"); ok {
					text(fs, y, Member(ip, "content"))
				}
				if y, ok := eo.Get("status"); ok {
					label(fs, y, Member(ip, "status"))
				}
				if y, ok := eo.Get("priority"); ok && y != nil {
					label(fs, y, Member(ip, "priority"))
				}
			})
		}
	case "terminal":
		r := []string{"kind", "owner", "finalStatus", "stopReason", "reason"}
		closed(fs, o, p, r, r)
		for _, name := range r {
			if x, xp, ok := m(name); ok && x != nil {
				text(fs, x, xp)
			}
		}
	case "session_attribute":
		closed(fs, o, p, []string{"name", "value"}, []string{"name", "value"})
		if x, xp, ok := m("name"); ok {
			checkString(fs, x, xp, 1, 256)
		}
	case "transcript_reset":
		closed(fs, o, p, nil, nil)
	case "other":
		// open
	}
}

func enumString(fs *Findings, v any, p string, allowed ...string) {
	s, ok := v.(string)
	if !ok {
		fs.Add("wrong_type", p, "expected a string")
		return
	}
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	fs.Add("not_allowed_value", p, "not an allowed value")
}

func snakeCase(fs *Findings, v any, p string) {
	s, ok := v.(string)
	if !ok {
		fs.Add("wrong_type", p, "expected a string")
		return
	}
	if !snakeRe.MatchString(s) {
		fs.Add("pattern", p, "not snake_case")
	}
	if len(s) > 128 {
		fs.Add("max_utf8_bytes", p, "too long")
	}
}

// ---- run-record.provider-call-response (open) ----

func validateProviderCallResponse(fs *Findings, v any, p string) {
	o, ok := v.(*Object)
	if !ok {
		fs.Add("wrong_type", p, "expected an object")
		return
	}
	closed(fs, o, p, o.Keys, []string{"call_id", "iteration", "span_id", "text", "tool_calls", "loop_state"})
	m := func(name string) (any, string, bool) {
		x, ok := o.Get(name)
		return x, Member(p, name), ok
	}
	if x, xp, ok := m("type"); ok {
		enumString(fs, x, xp, "provider_call_response")
	}
	if x, xp, ok := m("call_id"); ok {
		checkString(fs, x, xp, 1, 256)
	}
	if x, xp, ok := m("iteration"); ok {
		checkSafeInt(fs, x, xp, true)
	}
	if x, xp, ok := m("span_id"); ok && x != nil {
		checkSafeInt(fs, x, xp, true)
	}
	if x, xp, ok := m("execution_id"); ok && x != nil {
		checkString(fs, x, xp, 1, 256)
	}
	if x, xp, ok := m("text"); ok {
		checkString(fs, x, xp, 0, 0)
	}
	for _, name := range []string{"tool_calls", "raw_tool_calls"} {
		if x, xp, ok := m(name); ok {
			arr, isA := x.([]any)
			if !isA {
				fs.Add("wrong_type", xp, "expected an array")
			}
			for i, it := range arr {
				if _, isO := it.(*Object); !isO {
					fs.Add("wrong_type", Index(xp, i), "expected an object")
				}
			}
		}
	}
	if x, xp, ok := m("parsed_tool_calls"); ok {
		eachObject(fs, x, xp, func(co *Object, ip string) {
			closed(fs, co, ip, []string{"id", "name", "arguments"}, []string{"name", "arguments"})
			if y, ok := co.Get("id"); ok && y != nil {
				checkString(fs, y, Member(ip, "id"), 1, 256)
			}
			if y, ok := co.Get("name"); ok {
				checkString(fs, y, Member(ip, "name"), 1, 256)
			}
			if y, ok := co.Get("arguments"); ok {
				if _, isO := y.(*Object); !isO {
					fs.Add("wrong_type", Member(ip, "arguments"), "expected an object")
				}
			}
		})
		tc, _ := o.Get("tool_calls")
		if arr, isA := x.([]any); isA && len(arr) > 0 {
			if tca, isA := tc.([]any); isA && Equal(arr, tca) {
				fs.Add("prefer_reference", xp, "write parsed_tool_calls_ref instead")
			}
		}
	}
	if x, xp, ok := m("parsed_tool_calls_ref"); ok {
		enumString(fs, x, xp, "tool_calls")
		if _, both := o.Get("parsed_tool_calls"); both {
			fs.Add("not", p, "parsed_tool_calls and parsed_tool_calls_ref together")
		}
		if tc, ok := o.Get("tool_calls"); ok {
			if tca, isA := tc.([]any); isA && len(tca) == 0 {
				fs.Add("min_items", Member(p, "tool_calls"), "a reference to an empty array")
			}
		}
	}
	if x, xp, ok := m("loop_state"); ok && x != nil {
		lo, isO := x.(*Object)
		if !isO {
			fs.Add("wrong_type", xp, "expected an object or null")
		} else {
			for _, k := range lo.Keys {
				switch lo.Vals[k].(type) {
				case *Object, []any:
					fs.Add("wrong_type", Member(xp, k), "a loop-state value is a primitive")
				}
			}
		}
	}
	for _, name := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_creation_input_tokens"} {
		if x, xp, ok := m(name); ok {
			if n, isN := x.(json.Number); !isN || !numRat(n).IsInt() {
				fs.Add("wrong_type", xp, "expected an integer")
			}
		}
	}
	for _, name := range []string{"timestamp", "provider", "model"} {
		if x, xp, ok := m(name); ok {
			checkString(fs, x, xp, 0, 0)
		}
	}
	for _, name := range []string{"thinking", "thinking_summary", "stop_reason"} {
		if x, xp, ok := m(name); ok && x != nil {
			checkString(fs, x, xp, 0, 0)
		}
	}
	for _, name := range []string{"cost_usd", "cache_hit_ratio", "cache_savings_usd"} {
		if x, xp, ok := m(name); ok && x != nil {
			if _, isN := x.(json.Number); !isN {
				fs.Add("wrong_type", xp, "expected a number")
			}
		}
	}
	if x, xp, ok := m("cache_hit"); ok {
		if _, isB := x.(bool); !isB {
			fs.Add("wrong_type", xp, "expected a boolean")
		}
	}
	if x, xp, ok := m("response_ms"); ok {
		checkSafeInt(fs, x, xp, true)
	}
}

// ---- run-record.span ----

var spanMembers = []string{"trace_id", "span_id", "parent_span_id", "kind", "name", "start_ms", "duration_ms", "ttft_ms", "metadata", "links", "events", "cost_usd"}
var spanRequired = []string{"trace_id", "span_id", "parent_span_id", "kind", "name", "start_ms", "duration_ms", "metadata"}

func validateSpan(fs *Findings, v any, p string) {
	o, ok := v.(*Object)
	if !ok {
		fs.Add("wrong_type", p, "a span is an object")
		return
	}
	closed(fs, o, p, spanMembers, spanRequired)
	for _, name := range []string{"trace_id", "kind", "name"} {
		if x, ok := o.Get(name); ok {
			checkString(fs, x, Member(p, name), 0, 0)
		}
	}
	for _, name := range []string{"span_id", "start_ms", "duration_ms", "ttft_ms"} {
		if x, ok := o.Get(name); ok {
			checkSafeInt(fs, x, Member(p, name), true)
		}
	}
	if x, ok := o.Get("parent_span_id"); ok && x != nil {
		checkSafeInt(fs, x, Member(p, "parent_span_id"), true)
	}
	if x, ok := o.Get("metadata"); ok {
		if _, isO := x.(*Object); !isO {
			fs.Add("wrong_type", Member(p, "metadata"), "expected an object")
		}
	}
	if x, ok := o.Get("cost_usd"); ok {
		if _, isN := x.(json.Number); !isN {
			fs.Add("wrong_type", Member(p, "cost_usd"), "expected a number")
		}
	}
	if x, ok := o.Get("links"); ok {
		lp := Member(p, "links")
		eachObject(fs, x, lp, func(lo *Object, ip string) {
			r := []string{"trace_id", "span_id", "attributes"}
			closed(fs, lo, ip, r, r)
			for _, name := range []string{"trace_id", "span_id"} {
				if y, ok := lo.Get(name); ok {
					checkString(fs, y, Member(ip, name), 0, 0)
				}
			}
			if y, ok := lo.Get("attributes"); ok {
				ao, isO := y.(*Object)
				if !isO {
					fs.Add("wrong_type", Member(ip, "attributes"), "expected an object")
				} else {
					for _, k := range ao.Keys {
						checkString(fs, ao.Vals[k], Member(Member(ip, "attributes"), k), 0, 0)
					}
				}
			}
		})
	}
	if x, ok := o.Get("events"); ok {
		ep := Member(p, "events")
		eachObject(fs, x, ep, func(eo *Object, ip string) {
			if y, ok := eo.Get("name"); ok {
				checkString(fs, y, Member(ip, "name"), 0, 0)
			}
			if y, ok := eo.Get("attributes"); ok {
				if _, isO := y.(*Object); !isO {
					fs.Add("wrong_type", Member(ip, "attributes"), "expected an object")
				}
			}
		})
	}
}

// firstUnsafeInteger finds the first integer literal beyond the safe range,
// in the order the members are written (for canonical_unsafe_integer).
func firstUnsafeInteger(v any, path string) (string, bool) {
	switch t := v.(type) {
	case json.Number:
		if isIntLiteral(t) {
			abs := new(big.Int).Abs(numRat(t).Num())
			if abs.Cmp(bigMaxSafe) > 0 {
				return path, true
			}
		}
	case []any:
		for i, x := range t {
			if p, ok := firstUnsafeInteger(x, Index(path, i)); ok {
				return p, true
			}
		}
	case *Object:
		for _, k := range t.Keys {
			if p, ok := firstUnsafeInteger(t.Vals[k], Member(path, k)); ok {
				return p, true
			}
		}
	}
	return "", false
}
