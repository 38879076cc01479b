package main

// An ordered JSON model: objects keep their member order, numbers keep their
// literal text (json.Decoder.UseNumber), so nothing is lost in a round trip.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

type Object struct {
	Keys []string
	Vals map[string]any
}

func NewObject() *Object { return &Object{Vals: map[string]any{}} }

func (o *Object) Set(k string, v any) {
	if _, ok := o.Vals[k]; !ok {
		o.Keys = append(o.Keys, k)
	}
	o.Vals[k] = v
}

func (o *Object) Get(k string) (any, bool) {
	v, ok := o.Vals[k]
	return v, ok
}

func (o *Object) Delete(k string) {
	if _, ok := o.Vals[k]; !ok {
		return
	}
	delete(o.Vals, k)
	for i, key := range o.Keys {
		if key == k {
			o.Keys = append(o.Keys[:i:i], o.Keys[i+1:]...)
			break
		}
	}
}

// Parse reads one JSON text exactly.
func Parse(data []byte) (any, error) {
	return readWhole(bytes.NewReader(data), false)
}

// readWhole reads one JSON value and then the end of r (see readValue).
func readWhole(r io.Reader, rejectDuplicates bool) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	v, err := readValue(dec, rejectDuplicates)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// readValue reads one JSON value; with rejectDuplicates an object that names a key
// twice is errDuplicate, else the last value of the key is kept.
func readValue(dec *json.Decoder, rejectDuplicates bool) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				if _, dup := obj.Vals[k]; dup && rejectDuplicates {
					return nil, errDuplicate
				}
				v, err := readValue(dec, rejectDuplicates)
				if err != nil {
					return nil, err
				}
				obj.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := readValue(dec, rejectDuplicates)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	default:
		return tok, nil // nil, bool, string, json.Number
	}
}

// Encode writes a value as compact JSON, members in their order.
func Encode(v any) []byte {
	var b bytes.Buffer
	encodeTo(&b, v)
	return b.Bytes()
}

func encodeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
}

func encodeTo(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		encodeString(b, t)
	case json.Number:
		b.WriteString(string(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case *Object:
		b.WriteByte('{')
		for i, k := range t.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			encodeTo(b, t.Vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeTo(b, x)
		}
		b.WriteByte(']')
	default:
		panic(fmt.Sprintf("cannot encode %T", v))
	}
}

// Clone copies a value deeply.
func Clone(v any) any {
	switch t := v.(type) {
	case *Object:
		o := NewObject()
		for _, k := range t.Keys {
			o.Set(k, Clone(t.Vals[k]))
		}
		return o
	case []any:
		a := make([]any, len(t))
		for i, x := range t {
			a[i] = Clone(x)
		}
		return a
	}
	return v
}

// ---- numbers ----

var intLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

const maxSafe = 9007199254740991

var bigMaxSafe = big.NewInt(maxSafe)

func numRat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return new(big.Rat)
	}
	return r
}

func isIntLiteral(n json.Number) bool { return intLiteral.MatchString(string(n)) }

// Equal is JSON equality: numbers by value, objects regardless of order.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numRat(x).Cmp(numRat(y)) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for _, k := range x.Keys {
			yv, ok := y.Vals[k]
			if !ok || !Equal(x.Vals[k], yv) {
				return false
			}
		}
		return true
	}
	return false
}

// ---- JSON paths (docs/protocol.md, "JSON paths") ----

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func Member(path, name string) string {
	if identRe.MatchString(name) {
		return path + "." + name
	}
	esc := strings.ReplaceAll(name, `\`, `\\`)
	esc = strings.ReplaceAll(esc, `'`, `\'`)
	return path + "['" + esc + "']"
}

func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
