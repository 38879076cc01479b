package main

// runrecord.project: docs/runrecord.md sections 1, 2 and 5.1.

import (
	"encoding/json"
	"regexp"
)

var harnExecutionID = regexp.MustCompile(`^hxe-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

var runMembers = []string{"kind", "status", "session_id", "execution_id", "id", "spans", "flight_recording", "gaps", "execution_gap_reason"}

func strOrNull(fs *Findings, o *Object, name, path string) {
	if x, ok := o.Get(name); ok && x != nil {
		if _, isS := x.(string); !isS {
			fs.Add("wrong_type", Member(path, name), "expected a string or null")
		}
	}
}

func strMember(fs *Findings, o *Object, name, path string) {
	if x, ok := o.Get(name); ok {
		if _, isS := x.(string); !isS {
			fs.Add("wrong_type", Member(path, name), "expected a string")
		}
	}
}

func getStr(o *Object, name string) (string, bool) {
	x, ok := o.Get(name)
	if !ok {
		return "", false
	}
	s, isS := x.(string)
	return s, isS
}

func projectRun(input *Object) (any, Findings) {
	var fs Findings
	closed(&fs, input, "$", []string{"run", "events"}, []string{"run"})
	var run *Object
	if x, ok := input.Get("run"); ok {
		r, isO := x.(*Object)
		if !isO {
			fs.Add("wrong_type", "$.run", "the run is an object")
		}
		run = r
	}
	var events []any
	if x, ok := input.Get("events"); ok {
		arr, isA := x.([]any)
		if !isA {
			fs.Add("wrong_type", "$.events", "events is an array")
		}
		events = arr
	}
	var spans []any
	if run != nil {
		closed(&fs, run, "$.run", runMembers, nil)
		strMember(&fs, run, "kind", "$.run")
		strMember(&fs, run, "status", "$.run")
		strOrNull(&fs, run, "session_id", "$.run")
		strOrNull(&fs, run, "execution_id", "$.run")
		strMember(&fs, run, "id", "$.run")
		strMember(&fs, run, "execution_gap_reason", "$.run")
		if x, ok := run.Get("spans"); ok {
			arr, isA := x.([]any)
			if !isA {
				fs.Add("wrong_type", "$.run.spans", "expected an array")
			}
			spans = arr
		}
		if x, ok := run.Get("flight_recording"); ok {
			if _, isO := x.(*Object); !isO {
				fs.Add("wrong_type", "$.run.flight_recording", "expected an object")
			}
		}
		if x, ok := run.Get("gaps"); ok {
			arr, isA := x.([]any)
			if !isA {
				fs.Add("wrong_type", "$.run.gaps", "expected an array")
			}
			for i, g := range arr {
				gp := Index("$.run.gaps", i)
				go_, isO := g.(*Object)
				if !isO {
					fs.Add("wrong_type", gp, "a gap is an object")
					continue
				}
				r := []string{"component", "code", "message"}
				closed(&fs, go_, gp, r, r)
				for _, name := range r {
					strMember(&fs, go_, name, gp)
				}
			}
		}
	}
	// the events, with the run's shape
	var prevID json.Number
	havePrev := false
	for i, e := range events {
		ep := Index("$.events", i)
		var efs Findings
		validateEvent(&efs, e, ep)
		if eo, ok := e.(*Object); ok {
			if id, ok := eo.Vals["id"].(json.Number); ok {
				if havePrev && numRat(id).Cmp(numRat(prevID)) <= 0 {
					efs.Add("events_not_increasing", Member(ep, "id"), "ids must increase")
				}
				prevID, havePrev = id, true
			}
			if len(efs) == 0 {
				if pl, ok := eo.Get("payload"); ok {
					if p, bad := firstUnsafeInteger(pl, Member(ep, "payload")); bad {
						efs.Add("canonical_unsafe_integer", p, "no RFC 8785 form")
					}
				}
			}
		}
		fs = append(fs, efs...)
	}
	if len(fs) > 0 {
		return nil, fs
	}

	// contradictions: invalid_run at $.run
	kind, hasKind := getStr(run, "kind")
	status, hasStatus := getStr(run, "status")
	sessionID, hasSession := getStr(run, "session_id")
	execID, hasExec := getStr(run, "execution_id")
	runID, hasID := getStr(run, "id")
	reason, hasReason := getStr(run, "execution_gap_reason")
	var gaps []*Object
	if x, ok := run.Get("gaps"); ok {
		for _, g := range x.([]any) {
			gaps = append(gaps, g.(*Object))
		}
	}
	specIdentityGap := false
	for _, g := range gaps {
		if c, _ := getStr(g, "component"); c == "execution_identity" {
			specIdentityGap = true
		}
	}
	contradiction := func(msg string) (any, Findings) {
		return nil, Findings{{"invalid_run", "$.run", msg}}
	}
	if !hasKind || !hasStatus {
		return contradiction("kind and status are required")
	}
	if kind != "run" && kind != "workflow" && kind != "session" {
		return contradiction("kind is run, workflow or session")
	}
	switch kind {
	case "run":
		if !hasExec {
			return contradiction("a run needs its execution_id")
		}
		if hasID && runID != execID {
			return contradiction("a run's id is its execution_id")
		}
	case "workflow":
		if !hasID || (defect != "workflow_empty_id_accepted" && runID == "") {
			return contradiction("a workflow needs its own id")
		}
	case "session":
		if !hasSession {
			return contradiction("a session record needs its session_id")
		}
	}
	if hasExec && (specIdentityGap || hasReason) {
		return contradiction("an owner together with an execution_identity gap or reason")
	}
	if hasReason && specIdentityGap {
		return contradiction("a reason together with an execution_identity gap")
	}
	for _, e := range events {
		sid, _ := getStr(e.(*Object), "sessionId")
		if !hasSession || sid != sessionID {
			return contradiction("events of another session")
		}
	}
	var fr *Object
	if x, ok := run.Get("flight_recording"); ok {
		fr = x.(*Object)
		for _, name := range []string{"execution_id", "content_hash", "byte_length", "retained_events"} {
			if _, ok := fr.Get(name); !ok {
				return contradiction("the flight recording lacks " + name)
			}
		}
	}

	// the owner's relabelling
	recordID := execID
	switch kind {
	case "workflow":
		recordID = runID
	case "session":
		recordID = sessionID
		if hasID {
			recordID = runID
		}
	}
	if hasExec {
		relabelled := (hasSession && execID == sessionID) || ((kind == "workflow" || kind == "session") && execID == recordID)
		for _, e := range events {
			eo := e.(*Object)
			if s, _ := getStr(eo, "sessionId"); s == execID {
				relabelled = true
			}
			if r, ok := getStr(eo, "runId"); ok && r == execID && defect != "run_id_relabel_allowed" {
				relabelled = true
			}
		}
		if relabelled {
			return nil, Findings{{"execution_id_relabelled", "$.run.execution_id", "an execution id is never a run or session id relabelled"}}
		}
	}

	owned := hasExec && harnExecutionID.MatchString(execID)
	if defect == "execution_id_uppercase_accepted" && hasExec {
		owned = harnExecutionID.MatchString(toLowerASCII(execID)) && len(execID) > 0
	}

	// the spans: their schema, the tree and the owner, together
	var spanFs Findings
	for i, s := range spans {
		validateSpan(&spanFs, s, Index("$.run.spans", i))
	}
	if len(spanFs) > 0 {
		return nil, spanFs
	}
	spansOut := make([]any, 0, len(spans))
	for _, s := range spans {
		so := Clone(s).(*Object)
		if hasExec && !owned {
			if md, ok := so.Vals["metadata"].(*Object); ok {
				md.Delete("harn.execution.id")
			}
		}
		if defect == "spans_drop_links" {
			so.Delete("links")
		}
		spansOut = append(spansOut, so)
	}
	fs = spanTreeFindings(spansOut, "$.run.spans")
	if !(hasExec && !owned) {
		for i, s := range spansOut {
			md, ok := s.(*Object).Vals["metadata"].(*Object)
			if !ok {
				continue
			}
			if v, ok := md.Get("harn.execution.id"); ok {
				if v == nil && !hasExec {
					continue // null names no owner
				}
				if _, isS := v.(string); !isS && defect == "span_owner_non_string_ignored" {
					continue
				}
				if !owned || !Equal(v, execID) {
					fs.Add("span_execution_mismatch", Member(Member(Index("$.run.spans", i), "metadata"), "harn.execution.id"), "names another owner")
				}
			}
		}
	}
	if len(fs) > 0 {
		return nil, fs
	}

	// the record
	evidence := NewObject()
	evidence.Set("schema_version", json.Number("1"))
	var evExec any
	if owned {
		evExec = execID
	}
	evidence.Set("execution_id", evExec)
	evidence.Set("trace_spans", spansOut)
	var frOut any
	if fr != nil && owned {
		f := NewObject()
		f.Set("schema_version", json.Number("1"))
		f.Set("execution_id", fr.Vals["execution_id"])
		f.Set("format", "harn.flight.v1+json")
		path, ok := fr.Get("path")
		if !ok {
			path = nil
		}
		f.Set("path", path)
		f.Set("content_hash", fr.Vals["content_hash"])
		f.Set("byte_length", fr.Vals["byte_length"])
		f.Set("retained_events", fr.Vals["retained_events"])
		dropped, ok := fr.Get("dropped_events")
		if !ok {
			dropped = json.Number("0")
		}
		f.Set("dropped_events", dropped)
		f.Set("value_policy", "omitted")
		frOut = f
	}
	evidence.Set("flight_recording", frOut)
	gapsOut := []any{}
	if !hasExec && !specIdentityGap {
		g := NewObject()
		g.Set("component", "execution_identity")
		g.Set("code", "owner_not_recorded")
		msg := reason
		if !hasReason {
			if kind == "session" {
				msg = "session-only projection: no VM execution owner is recorded for this session"
			} else {
				msg = "the VM execution that owned this record was not recorded"
			}
		}
		g.Set("message", msg)
		gapsOut = append(gapsOut, g)
	}
	for _, g := range gaps {
		gapsOut = append(gapsOut, Clone(g))
	}
	if hasExec && !owned {
		has := false
		for _, g := range gaps {
			c, _ := getStr(g, "component")
			d, _ := getStr(g, "code")
			if c == "execution_identity" && d == "projection_invalid" {
				has = true
			}
		}
		if !has {
			g := NewObject()
			g.Set("component", "execution_identity")
			g.Set("code", "projection_invalid")
			g.Set("message", "The persisted run contained invalid Harn execution evidence.")
			gapsOut = append(gapsOut, g)
		}
	}
	evidence.Set("gaps", gapsOut)

	record := NewObject()
	record.Set("id", recordID)
	record.Set("kind", kind)
	if hasSession {
		record.Set("session_id", sessionID)
	} else {
		record.Set("session_id", nil)
	}
	record.Set("status", status)
	metadata := NewObject()
	if hasSession {
		var receipt any
		for _, e := range events {
			eo := e.(*Object)
			if k, _ := getStr(eo, "kind"); k != "session_attribute" {
				continue
			}
			pl := eo.Vals["payload"].(*Object)
			if n, _ := getStr(pl, "name"); n == "completion_receipt" {
				v := pl.Vals["value"]
				if defect == "null_receipt_skipped" && v == nil {
					continue
				}
				receipt = Clone(v)
			}
		}
		metadata.Set("completion_receipt", receipt)
	}
	record.Set("metadata", metadata)
	record.Set("evidence", evidence)

	// the record's own schema, findings named by the run member they come from
	fs = nil
	idPath := "$.run"
	if hasID {
		idPath = "$.run.id"
	}
	var rf Findings
	checkString(&rf, recordID, idPath, 1, 256)
	if kind == "session" && !hasID && sessionID == "" {
		// a session's id is its session_id: reported at both
		rf.Add("min_length", "$.run.session_id", "empty")
	}
	fs = append(fs, rf...)
	if hasSession {
		checkString(&fs, sessionID, "$.run.session_id", 1, 256)
	}
	checkString(&fs, status, "$.run.status", 1, 64)
	if owned {
		checkString(&fs, execID, "$.run.execution_id", 1, 256)
	}
	if f, ok := frOut.(*Object); ok {
		fp := "$.run.flight_recording"
		if !Equal(f.Vals["execution_id"], evExec) {
			fs.Add("same_value", Member(fp, "execution_id"), "the artifact belongs to another execution")
		}
		checkString(&fs, f.Vals["execution_id"], Member(fp, "execution_id"), 1, 256)
		if s, ok := f.Vals["content_hash"].(string); !ok {
			fs.Add("wrong_type", Member(fp, "content_hash"), "expected a string")
		} else if !blake3Re.MatchString(s) {
			fs.Add("pattern", Member(fp, "content_hash"), "blake3: and 64 hex digits")
		}
		if p := f.Vals["path"]; p != nil {
			if _, ok := p.(string); !ok {
				fs.Add("wrong_type", Member(fp, "path"), "expected a string or null")
			}
		}
		for _, name := range []string{"byte_length", "retained_events", "dropped_events"} {
			checkSafeInt(&fs, f.Vals[name], Member(fp, name), true)
		}
	}
	if len(fs) > 0 {
		return nil, dedupe(fs)
	}
	return record, nil
}

var blake3Re = regexp.MustCompile(`^blake3:[0-9a-fA-F]{64}$`)

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func dedupe(fs Findings) Findings {
	seen := map[[2]string]bool{}
	var out Findings
	for _, f := range fs {
		k := [2]string{f.Code, f.Path}
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// spanTreeFindings: x-spanTree (docs/runrecord.md section 2).
func spanTreeFindings(spans []any, at string) Findings {
	var fs Findings
	byID := map[string]int{}
	ids := make([]string, len(spans))
	dup := make([]bool, len(spans))
	for i, s := range spans {
		so, ok := s.(*Object)
		if !ok {
			continue
		}
		id, ok := so.Vals["span_id"].(json.Number)
		if !ok {
			continue
		}
		key := numRat(id).RatString()
		ids[i] = key
		if _, seen := byID[key]; seen {
			fs.Add("span_id_duplicate", Member(Index(at, i), "span_id"), "a later span reuses an id")
			dup[i] = true
			continue
		}
		byID[key] = i
	}
	parent := func(i int) (int, bool) {
		so := spans[i].(*Object)
		p, ok := so.Vals["parent_span_id"].(json.Number)
		if !ok {
			return 0, false
		}
		j, ok := byID[numRat(p).RatString()]
		return j, ok
	}
	// walk from each span in order; state 0 unvisited, 1 on current walk, 2 done
	state := make([]int, len(spans))
	for start := range spans {
		if ids[start] == "" || dup[start] || state[start] != 0 {
			continue
		}
		var walk []int
		i := start
		for {
			if state[i] == 2 {
				break
			}
			if state[i] == 1 {
				// the walk comes back to a span it visited: reported there
				at_ := i
				if defect == "span_cycle_at_last_walked" {
					at_ = walk[len(walk)-1]
				}
				fs.Add("span_cycle", Member(Index(at, at_), "parent_span_id"), "parent links loop")
				break
			}
			state[i] = 1
			walk = append(walk, i)
			j, ok := parent(i)
			if !ok {
				break
			}
			i = j
		}
		for _, w := range walk {
			state[w] = 2
		}
	}
	return fs
}
