package main

// The redaction of a provider_call_response payload before it is stored
// (docs/runrecord.md section 3.5): each string alone with its key as context,
// each string as it reads in text, then every secret found in one view
// scrubbed from every other stored string.

import (
	"fmt"
	"sort"
	"strings"
)

type viewKind int

const (
	viewNone   viewKind = iota
	viewMember          // "key": "value"
	viewLine            // key: value (a loop-state line)
)

type slot struct {
	raw   string
	cur   string
	whole bool // replaced whole: never redacted again
}

type store struct {
	slots   []*slot
	secrets map[string]string // secret -> placeholder
}

func newStore() *store { return &store{secrets: map[string]string{}} }

func (st *store) secret(s, ph string) {
	if runeLen(s) < 8 {
		return
	}
	if _, ok := st.secrets[s]; !ok {
		st.secrets[s] = ph
	}
}

// wholeSecret remembers every string inside a value replaced whole.
func (st *store) wholeSecret(v any) {
	switch t := v.(type) {
	case string:
		st.secret(t, "[redacted]")
	case []any:
		for _, x := range t {
			st.wholeSecret(x)
		}
	case *Object:
		for _, k := range t.Keys {
			st.wholeSecret(t.Vals[k])
		}
	}
}

// member reads a member's key k and value v: the key as written (its secrets
// replaced), and whether the key is sensitive; then its value of any type goes
// whole (docs/runrecord.md 3.5) and is not written.
func (st *store) member(k string, v any) (string, bool) {
	rk := st.key(k)
	if isSensitiveKey(k) {
		st.wholeSecret(v)
		return rk, true
	}
	return rk, false
}

func (st *store) key(k string) string {
	out, dets := redactText(k)
	for _, d := range dets {
		st.secret(d.Secret, d.Placeholder)
	}
	return out
}

func jsonStringContent(s string) string {
	e := string(Encode(s))
	return e[1 : len(e)-1]
}

// add stores one string redacted alone, and checks its text view.
func (st *store) add(s, key string, view viewKind, rawLine string) *slot {
	return st.addValue(s, s, key, view, rawLine)
}

// addValue: valueText is the value as it reads in the view (a loop-state
// number or boolean reads as its raw text).
func (st *store) addValue(s, valueText, key string, view viewKind, rawLine string) *slot {
	out, dets := redactText(s)
	for _, d := range dets {
		st.secret(d.Secret, d.Placeholder)
	}
	sl := &slot{raw: s, cur: out}
	var vtext string
	var vstart, vend int // rune range of the value in the view
	switch view {
	case viewMember:
		k := jsonStringContent(key)
		v := jsonStringContent(s)
		vtext = `"` + k + `": "` + v + `"`
		vstart = runeLen(k) + 5
		vend = vstart + runeLen(v)
	case viewLine:
		vtext = rawLine
		c := strings.IndexByte(rawLine, ':')
		rest := rawLine[c+1:]
		lead := len(rest) - len(strings.TrimLeftFunc(rest, pyStripSet))
		vstart = runeLen(rawLine[:c+1+lead])
		vend = vstart + runeLen(valueText)
	}
	if view != viewNone {
		_, vdets := redactText(vtext)
		for _, d := range vdets {
			inside := d.Start >= vstart && d.End <= vend
			overlaps := d.Start < vend && d.End > vstart
			// a loop-state line: any detection outside the value replaces it;
			// a JSON member: only one that overlaps the value and leaves it
			if (view == viewLine && !inside) || (view == viewMember && overlaps && !inside) {
				d.Placeholder = fmt.Sprintf("<redacted:%s:%d>", strings.SplitN(d.Placeholder, ":", 3)[1], len(valueText))
				// reaches across the key or the syntax: fail closed
				sl.cur = d.Placeholder
				sl.whole = true // not scrubbed elsewhere: the reference does not
				break
			}
		}
	}
	st.slots = append(st.slots, sl)
	return sl
}

// walk replaces every string of a JSON value by a slot, keys redacted.
func (st *store) walk(v any, _ bool) any {
	switch t := v.(type) {
	case string:
		return st.add(t, "", viewNone, "")
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = st.walk(x, true)
		}
		return out
	case *Object:
		o := NewObject()
		for _, k := range t.Keys {
			x := t.Vals[k]
			rk, sensitive := st.member(k, x)
			if sensitive {
				o.Set(rk, &slot{cur: "[redacted]", whole: true})
				continue
			}
			if s, isS := x.(string); isS {
				o.Set(rk, st.add(s, k, viewMember, ""))
				continue
			}
			o.Set(rk, st.walk(x, true))
		}
		return o
	}
	return v
}

func (st *store) finish() {
	keys := make([]string, 0, len(st.secrets))
	for k := range st.secrets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, sl := range st.slots {
		if sl.whole {
			continue
		}
		s := sl.cur
		for _, k := range keys {
			ph := st.secrets[k]
			s = strings.ReplaceAll(s, k, ph)
			if esc := jsonStringContent(k); esc != k {
				s = strings.ReplaceAll(s, esc, ph)
			}
		}
		if s != sl.cur {
			s, _ = redactText(s)
			sl.cur = s
		}
	}
}

func (st *store) resolve(v any) any {
	switch t := v.(type) {
	case *slot:
		return t.cur
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = st.resolve(x)
		}
		return out
	case *Object:
		o := NewObject()
		for _, k := range t.Keys {
			o.Set(k, st.resolve(t.Vals[k]))
		}
		return o
	}
	return v
}
