package main

// A small backtracking matcher for the portable pattern dialect of
// docs/redaction.md ("The pattern dialect"), with its meanings: code points,
// leftmost-first, \s as Unicode White_Space, \b as a Unicode 14.0 word
// boundary, (?i) as ASCII folding plus U+212A and U+017F.
// Go's regexp is not used for Harn's catalog: its \b and \s are ASCII.

import (
	"fmt"
	"strconv"
	"strings"
)

type nodeKind int

const (
	nChar nodeKind = iota // a set of characters
	nConcat
	nAlt
	nRepeat
	nGroup
	nBegin
	nEnd
	nWordB
)

type node struct {
	kind     nodeKind
	match    func(rune) bool
	subs     []*node
	min, max int // max -1: unbounded
	lazy     bool
}

type Pattern struct {
	root *node
	src  string
}

type parser struct {
	src       []rune
	pos       int
	fold, dot bool
}

func CompilePattern(src string) (*Pattern, error) {
	p := &parser{src: []rune(src)}
	for _, pre := range []string{"(?is)", "(?si)", "(?i)", "(?s)"} {
		if strings.HasPrefix(src, pre) {
			p.fold = strings.Contains(pre, "i")
			p.dot = strings.Contains(pre, "s")
			p.pos = len([]rune(pre))
			break
		}
	}
	n, err := p.alternation()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("unexpected %q at %d", p.src[p.pos], p.pos)
	}
	return &Pattern{root: n, src: src}, nil
}

func (p *parser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return -1
}

func (p *parser) alternation() (*node, error) {
	var branches []*node
	for {
		b, err := p.branch()
		if err != nil {
			return nil, err
		}
		branches = append(branches, b)
		if p.peek() != '|' {
			break
		}
		p.pos++
	}
	if len(branches) == 1 {
		return branches[0], nil
	}
	return &node{kind: nAlt, subs: branches}, nil
}

func (p *parser) branch() (*node, error) {
	var pieces []*node
	for p.pos < len(p.src) && p.peek() != '|' && p.peek() != ')' {
		a, err := p.atom()
		if err != nil {
			return nil, err
		}
		a, err = p.quantifier(a)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, a)
	}
	return &node{kind: nConcat, subs: pieces}, nil
}

func (p *parser) quantifier(a *node) (*node, error) {
	min, max := -2, -2
	switch p.peek() {
	case '*':
		min, max = 0, -1
		p.pos++
	case '+':
		min, max = 1, -1
		p.pos++
	case '?':
		min, max = 0, 1
		p.pos++
	case '{':
		end := p.pos
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		body := string(p.src[p.pos+1 : end])
		p.pos = end + 1
		parts := strings.SplitN(body, ",", 2)
		lo, err := strconv.Atoi(parts[0])
		if err != nil {
			return nil, err
		}
		min, max = lo, lo
		if len(parts) == 2 {
			if parts[1] == "" {
				max = -1
			} else if max, err = strconv.Atoi(parts[1]); err != nil {
				return nil, err
			}
		}
	default:
		return a, nil
	}
	r := &node{kind: nRepeat, subs: []*node{a}, min: min, max: max}
	if p.peek() == '?' {
		r.lazy = true
		p.pos++
	}
	return r, nil
}

var whiteSpace = map[rune]bool{0x9: true, 0xA: true, 0xB: true, 0xC: true, 0xD: true, 0x20: true, 0x85: true, 0xA0: true, 0x1680: true, 0x2028: true, 0x2029: true, 0x202F: true, 0x205F: true, 0x3000: true}

func isWhiteSpace(r rune) bool { return whiteSpace[r] || (r >= 0x2000 && r <= 0x200A) }

// foldSet: the characters r matches under (?i).
func foldSet(r rune) []rune {
	switch {
	case r == 'k' || r == 'K' || r == 0x212A:
		return []rune{'k', 'K', 0x212A}
	case r == 's' || r == 'S' || r == 0x17F:
		return []rune{'s', 'S', 0x17F}
	case r >= 'a' && r <= 'z':
		return []rune{r, r - 32}
	case r >= 'A' && r <= 'Z':
		return []rune{r, r + 32}
	}
	return []rune{r}
}

func (p *parser) escape() (rune, func(rune) bool, error) {
	p.pos++ // the backslash
	c := p.peek()
	p.pos++
	switch c {
	case 'n':
		return '\n', nil, nil
	case 't':
		return '\t', nil, nil
	case 'r':
		return '\r', nil, nil
	case 'f':
		return '\f', nil, nil
	case 'v':
		return '\v', nil, nil
	case 's':
		return 0, isWhiteSpace, nil
	case 'x':
		h, err := strconv.ParseUint(string(p.src[p.pos:p.pos+2]), 16, 32)
		p.pos += 2
		return rune(h), nil, err
	}
	if strings.ContainsRune(`\.+*?()|[]{}^$/-`, c) {
		return c, nil, nil
	}
	return 0, nil, fmt.Errorf("escape \\%c outside the dialect", c)
}

func (p *parser) single(r rune) func(rune) bool {
	if p.fold {
		set := foldSet(r)
		return func(c rune) bool {
			for _, x := range set {
				if c == x {
					return true
				}
			}
			return false
		}
	}
	return func(c rune) bool { return c == r }
}

func (p *parser) atom() (*node, error) {
	c := p.peek()
	switch c {
	case '(':
		p.pos++
		if strings.HasPrefix(string(p.src[p.pos:]), "?:") {
			p.pos += 2
		}
		inner, err := p.alternation()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, fmt.Errorf("unclosed group")
		}
		p.pos++
		return &node{kind: nGroup, subs: []*node{inner}}, nil
	case '[':
		return p.class()
	case '.':
		p.pos++
		if p.dot {
			return &node{kind: nChar, match: func(rune) bool { return true }}, nil
		}
		return nil, fmt.Errorf(". without s")
	case '^':
		p.pos++
		return &node{kind: nBegin}, nil
	case '$':
		p.pos++
		return &node{kind: nEnd}, nil
	case '\\':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == 'b' {
			p.pos += 2
			return &node{kind: nWordB}, nil
		}
		r, f, err := p.escape()
		if err != nil {
			return nil, err
		}
		if f != nil {
			return &node{kind: nChar, match: f}, nil
		}
		return &node{kind: nChar, match: p.single(r)}, nil
	}
	p.pos++
	return &node{kind: nChar, match: p.single(c)}, nil
}

func (p *parser) class() (*node, error) {
	p.pos++ // [
	negate := false
	if p.peek() == '^' {
		negate = true
		p.pos++
	}
	type rng struct{ lo, hi rune }
	var ranges []rng
	var funcs []func(rune) bool
	first := true
	for {
		c := p.peek()
		if c == -1 {
			return nil, fmt.Errorf("unclosed class")
		}
		if c == ']' && !first {
			p.pos++
			break
		}
		first = false
		var lo rune
		if c == '\\' {
			r, f, err := p.escape()
			if err != nil {
				return nil, err
			}
			if f != nil {
				funcs = append(funcs, f)
				continue
			}
			lo = r
		} else {
			lo = c
			p.pos++
		}
		hi := lo
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			if p.peek() == '\\' {
				r, _, err := p.escape()
				if err != nil {
					return nil, err
				}
				hi = r
			} else {
				hi = p.peek()
				p.pos++
			}
		}
		ranges = append(ranges, rng{lo, hi})
	}
	fold := p.fold
	in := func(c rune) bool {
		for _, r := range ranges {
			if c >= r.lo && c <= r.hi {
				return true
			}
		}
		for _, f := range funcs {
			if f(c) {
				return true
			}
		}
		return false
	}
	m := func(c rune) bool {
		ok := false
		if fold {
			for _, x := range foldSet(c) {
				if in(x) {
					ok = true
					break
				}
			}
		} else {
			ok = in(c)
		}
		return ok != negate
	}
	return &node{kind: nChar, match: m}, nil
}

// ---- matching ----

type matcher struct {
	text []rune
}

func (m *matcher) isWord(i int) bool {
	if i < 0 || i >= len(m.text) {
		return false
	}
	return isWordChar(m.text[i])
}

func (m *matcher) run(n *node, pos int, k func(int) bool) bool {
	switch n.kind {
	case nChar:
		if pos < len(m.text) && n.match(m.text[pos]) {
			return k(pos + 1)
		}
		return false
	case nBegin:
		return pos == 0 && k(pos)
	case nEnd:
		return pos == len(m.text) && k(pos)
	case nWordB:
		if m.isWord(pos-1) != m.isWord(pos) {
			return k(pos)
		}
		return false
	case nGroup:
		return m.run(n.subs[0], pos, k)
	case nAlt:
		for _, s := range n.subs {
			if m.run(s, pos, k) {
				return true
			}
		}
		return false
	case nConcat:
		return m.concat(n.subs, pos, k)
	case nRepeat:
		sub := n.subs[0]
		if sub.kind == nChar {
			// a repeated single character: count the run, then try each length
			limit := len(m.text) - pos
			if n.max >= 0 && n.max < limit {
				limit = n.max
			}
			cnt := 0
			if n.lazy {
				for {
					if cnt >= n.min && k(pos+cnt) {
						return true
					}
					if cnt >= limit || !sub.match(m.text[pos+cnt]) {
						return false
					}
					cnt++
				}
			}
			for cnt < limit && sub.match(m.text[pos+cnt]) {
				cnt++
			}
			for ; cnt >= n.min; cnt-- {
				if k(pos + cnt) {
					return true
				}
			}
			return false
		}
		return m.repeat(n, 0, pos, -1, k)
	}
	return false
}

func (m *matcher) concat(subs []*node, pos int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(pos)
	}
	return m.run(subs[0], pos, func(p int) bool { return m.concat(subs[1:], p, k) })
}

func (m *matcher) repeat(n *node, count, pos, last int, k func(int) bool) bool {
	canStop := count >= n.min
	canMore := (n.max < 0 || count < n.max) && pos != last
	more := func() bool {
		return canMore && m.run(n.subs[0], pos, func(p int) bool { return m.repeat(n, count+1, p, pos, k) })
	}
	if n.lazy {
		return (canStop && k(pos)) || more()
	}
	return more() || (canStop && k(pos))
}

// FindAll gives the leftmost-first, non-overlapping matches as rune ranges.
func (pt *Pattern) FindAll(text []rune) [][2]int {
	m := &matcher{text: text}
	var out [][2]int
	for start := 0; start < len(text); {
		end := -1
		m.run(pt.root, start, func(p int) bool { end = p; return true })
		if end > start {
			out = append(out, [2]int{start, end})
			start = end
		} else {
			start++
		}
	}
	return out
}

func isWordChar(r rune) bool {
	if defect == "ascii_word_boundary" {
		return r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}
	lo, hi := 0, len(wordRanges)-1
	for lo <= hi {
		mid := (lo + hi) / 2
		if r < wordRanges[mid][0] {
			hi = mid - 1
		} else if r > wordRanges[mid][1] {
			lo = mid + 1
		} else {
			return true
		}
	}
	return false
}
