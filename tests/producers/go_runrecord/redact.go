package main

// Harn's default redaction policy (docs/redaction.md part 1): the URL step,
// the pattern scan with <redacted:NAME:LEN>, sensitive JSON keys.

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

type harnPattern struct {
	name string
	re   *Pattern
}

var catalogSource = [][2]string{
	{"jwt", `\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\b`},
	{"github_token", `\bgh[pousr]_[A-Za-z0-9]{36,255}\b`},
	{"github_pat_fine", `\bgithub_pat_[A-Za-z0-9_]{20,255}\b`},
	{"slack_token", `\bxox[abprs]-[A-Za-z0-9-]{10,255}\b`},
	{"aws_access_key", `\b(?:AKIA|ASIA|AGPA|AIDA|ANPA|AROA|AIPA)[A-Z0-9]{16}\b`},
	{"gitlab_token", `\bglpat-[A-Za-z0-9_-]{20,255}\b`},
	{"huggingface_token", `\bhf_[A-Za-z0-9]{20,255}\b`},
	{"cerebras_key", `\bcsk-[A-Za-z0-9]{20,255}\b`},
	{"together_key", `\btgp_v1_[A-Za-z0-9_-]{20,255}\b`},
	{"google_api_key", `\bAIza[A-Za-z0-9_-]{35}\b`},
	{"npm_token", `\bnpm_[A-Za-z0-9]{36}\b`},
	{"openai_key", `\bsk-[A-Za-z0-9_-]{20,255}\b`},
	{"stripe_key", `\b(?:rk|sk)_(?:live|test)_[0-9A-Za-z]{16,255}\b`},
	{"private_key_block", `(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----`},
	{"bearer_token", `(?i)\bBearer\s+[A-Za-z0-9._\-+/=]{12,}`},
	{"sensitive_assignment", `(?i)\b(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|passwd|secret|token)\s*[:=]\s*(?:"[A-Za-z0-9._\-+/=]{6,}"|'[A-Za-z0-9._\-+/=]{6,}'|[A-Za-z0-9._\-+/=]*[0-9._\-+/=][A-Za-z0-9._\-+/=]*|secret|hidden|hideme|password|passwd|token)`},
}

var catalog []harnPattern

func init() {
	for _, c := range catalogSource {
		src := c[1]
		re, err := CompilePattern(src)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", c[0], err))
		}
		catalog = append(catalog, harnPattern{c[0], re})
	}
}

// Detection: one placeholder in a text and the text it replaced.
type Detection struct {
	Secret      string
	Placeholder string
	Start, End  int // rune offsets in the text the pattern read
}

// redactText is Harn's redact_string under the default policy. It returns the
// redacted text and the detections of the pattern scan.
func redactText(s string) (string, []Detection) {
	s = urlStep(s)
	if s == "" {
		return s, nil
	}
	if len(s) > windowBytes {
		return redactWindows(s)
	}
	var dets []Detection
	cur := []rune(s)
	for _, p := range catalog {
		ms := p.re.FindAll(cur)
		if len(ms) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, m := range ms {
			secret := string(cur[m[0]:m[1]])
			ph := fmt.Sprintf("<redacted:%s:%d>", p.name, len(secret))
			b.WriteString(string(cur[last:m[0]]))
			b.WriteString(ph)
			last = m[1]
			dets = append(dets, Detection{secret, ph, m[0], m[1]})
		}
		b.WriteString(string(cur[last:]))
		cur = []rune(b.String())
	}
	return string(cur), dets
}

// Harn's windows for a text over 256 KiB (docs/redaction.md part 1, step 4).
const windowBytes = 262144
const windowStep = windowBytes - 8192

type keptMatch struct {
	start, end int // byte offsets in the original string
	ph         string
}

func redactWindows(s string) (string, []Detection) {
	n := len(s)
	var windows [][2]int
	for k := 0; ; k++ {
		start := k * windowStep
		for start > 0 && !utf8.RuneStart(s[start]) {
			start--
		}
		end := k*windowStep + windowBytes
		if end > n {
			end = n
		}
		for end < n && !utf8.RuneStart(s[end]) {
			end++
		}
		windows = append(windows, [2]int{start, end})
		if end == n {
			break
		}
	}
	var kept []keptMatch
	for _, p := range catalog {
		for _, w := range windows {
			text := s[w[0]:w[1]]
			runes := []rune(text)
			// byte offset of each rune index within the window
			offsets := make([]int, len(runes)+1)
			at := 0
			for i, r := range runes {
				offsets[i] = at
				at += utf8.RuneLen(r)
			}
			offsets[len(runes)] = at
			for _, m := range p.re.FindAll(runes) {
				start, end := w[0]+offsets[m[0]], w[0]+offsets[m[1]]
				if (start == w[0] && w[0] != 0) || (end == w[1] && w[1] != n) {
					continue
				}
				overlaps := false
				for _, o := range kept {
					if start < o.end && end > o.start {
						overlaps = true
						break
					}
				}
				if overlaps {
					continue
				}
				ph := fmt.Sprintf("<redacted:%s:%d>", p.name, end-start)
				kept = append(kept, keptMatch{start, end, ph})
			}
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	var b strings.Builder
	var dets []Detection
	last := 0
	for _, m := range kept {
		b.WriteString(s[last:m.start])
		b.WriteString(m.ph)
		last = m.end
		startRune := utf8.RuneCountInString(s[:m.start])
		dets = append(dets, Detection{s[m.start:m.end], m.ph, startRune, startRune + utf8.RuneCountInString(s[m.start:m.end])})
	}
	b.WriteString(s[last:])
	return b.String(), dets
}

func compactName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			r += 32
		}
		if r == '_' || r == '-' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var sensitiveKeyExact = map[string]bool{"authorization": true, "proxyauthorization": true, "cookie": true, "setcookie": true, "apikey": true, "xamzsecuritytoken": true, "xapikey": true, "xauthtoken": true, "xcsrftoken": true, "xxsrftoken": true, "accesstoken": true, "refreshtoken": true, "idtoken": true, "bearertoken": true, "clientsecret": true, "password": true, "secret": true, "passwd": true, "privatekey": true, "sessiontoken": true}

func isSensitiveKey(k string) bool {
	c := compactName(k)
	if sensitiveKeyExact[c] {
		return true
	}
	suffixes := []string{"token", "secret", "password", "apikey"}
	if defect == "sensitive_key_suffix_apikey_missing" {
		suffixes = suffixes[:3]
	}
	for _, s := range suffixes {
		if strings.HasSuffix(c, s) {
			return true
		}
	}
	return false
}

var sensitiveParamExact = map[string]bool{"apikey": true, "accesstoken": true, "refreshtoken": true, "idtoken": true, "clientsecret": true, "password": true, "secret": true, "token": true, "auth": true, "bearer": true, "sig": true, "signature": true}

func isSensitiveParam(k string) bool {
	c := compactName(k)
	if sensitiveParamExact[c] {
		return true
	}
	for _, s := range []string{"token", "secret", "password"} {
		if strings.HasSuffix(c, s) {
			return true
		}
	}
	return false
}

// ---- the standalone-URL step (a WHATWG subset for http and https) ----

func urlStep(s string) string {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return s
	}
	trimmed := strings.TrimFunc(s, isWhiteSpace)
	if strings.IndexFunc(trimmed, isWhiteSpace) >= 0 {
		return s
	}
	out, ok := normalizeURL(trimmed)
	if !ok || out == trimmed {
		return s
	}
	return out
}

func normalizeURL(u string) (string, bool) {
	scheme := "http"
	rest := u[len("http://"):]
	if strings.HasPrefix(u, "https://") {
		scheme = "https"
		rest = u[len("https://"):]
	}
	rest = strings.ReplaceAll(rest, `\`, "/")
	fragment, hasFragment := "", false
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		fragment, hasFragment = rest[i+1:], true
		rest = rest[:i]
	}
	query, hasQuery := "", false
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		query, hasQuery = rest[i+1:], true
		rest = rest[:i]
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	removed := false
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		if i > 0 {
			removed = true
		}
		authority = authority[i+1:]
	}
	host, port := authority, ""
	if !strings.HasPrefix(host, "[") {
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host, port = host[:i], host[i+1:]
		}
	}
	if host == "" {
		return "", false
	}
	for _, r := range host {
		if r > 127 || strings.ContainsRune(" #%/:<>?@[\\]^|", r) && !strings.HasPrefix(host, "[") {
			return "", false
		}
	}
	host = toLowerASCII(host)
	if port != "" {
		for _, r := range port {
			if r < '0' || r > '9' {
				return "", false
			}
		}
		for len(port) > 1 && port[0] == '0' {
			port = port[1:]
		}
		if len(port) > 5 || atoi(port) > 65535 {
			return "", false
		}
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			port = ""
		}
	}
	// path: dot segments, percent-encoding of the path set
	segs := strings.Split(path, "/")
	var outSegs []string
	if path == "" {
		segs = []string{"", ""}
	}
	for i, seg := range segs[1:] {
		last := i == len(segs)-2
		l := strings.ToLower(seg)
		switch l {
		case ".", "%2e":
			if last {
				outSegs = append(outSegs, "")
			}
			continue
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(outSegs) > 0 {
				outSegs = outSegs[:len(outSegs)-1]
			}
			if last {
				outSegs = append(outSegs, "")
			}
			continue
		}
		outSegs = append(outSegs, percentEncode(seg, " \"#<>?`{}"))
	}
	if len(outSegs) == 0 {
		outSegs = []string{""}
	}
	// the query: sensitive parameters
	if hasQuery {
		var pairs [][2]string
		for _, piece := range strings.Split(query, "&") {
			if piece == "" {
				continue
			}
			name, value := piece, ""
			if i := strings.IndexByte(piece, '='); i >= 0 {
				name, value = piece[:i], piece[i+1:]
			}
			name, value = formDecode(name), formDecode(value)
			if isSensitiveParam(name) {
				value = "[redacted]"
				removed = true
			}
			pairs = append(pairs, [2]string{name, value})
		}
		if removed && len(pairs) > 0 {
			var parts []string
			for _, p := range pairs {
				parts = append(parts, formEncode(p[0])+"="+formEncode(p[1]))
			}
			query = strings.Join(parts, "&")
		} else {
			query = percentEncode(query, " \"#<>'")
		}
	}
	var b strings.Builder
	b.WriteString(scheme + "://" + host)
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteString("/" + strings.Join(outSegs, "/"))
	if hasQuery {
		b.WriteString("?" + query)
	}
	if hasFragment {
		b.WriteString("#" + percentEncode(fragment, " \"<>`"))
	}
	return b.String(), true
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
		if n > 1<<20 {
			return n
		}
	}
	return n
}

func percentEncode(s, set string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || strings.IndexByte(set, c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func formDecode(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s)+0 && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func formEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
