package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/tailscale/hujson"
)

// The rule for what counts as a credential in a settings file that asb
// would copy into the outer folder (committed, and seen by the VM): a URL
// with user:password@, a field whose name says key, token, secret,
// password or auth (at any depth, any case) holding a literal value, and a
// long random-looking string anywhere. A finding names where and why,
// never the value.

// Credential is one credential found in a file.
type Credential struct {
	Where string // $.provider.x.options.apiKey (JSON), or line 3
	Why   string
	// Key is the name of the field that holds it ("" when none).
	Key string
	// Path is the JSON keys down to the value (nil in text).
	Path []string
	// Lit is the string literal that holds it, in the parsed JSON tree the
	// finding came from (nil in text); [Start, End) is the credential's
	// part of the string's value: all of it, or the password of a URL.
	Lit        *hujson.Value
	Start, End int
}

const (
	whyName     = "the field's name says it is a credential"
	whyUserinfo = "a URL with user:password@"
	whyURLUser  = "a URL whose user name looks like a token"
	whyRandom   = "a long random-looking string (a key or token)"
)

// credentialWords are the words of a field name that say it holds a
// credential; credentialSuffixes are the ends of one-word names that do
// (accesstoken, clientsecret). "key" alone must be a word of its own:
// keybinds and hotkey name no credential, apiKey and x-api-key do.
var (
	credentialWords = map[string]bool{
		"key": true, "apikey": true, "token": true, "secret": true, "password": true,
		"passwd": true, "pwd": true, "passphrase": true, "auth": true,
		"authorization": true, "credential": true, "credentials": true, "bearer": true,
	}
	credentialSuffixes = []string{"apikey", "token", "secret", "password", "passwd", "credential", "credentials"}
)

// CredentialName reports whether a field's name says it holds a credential.
func CredentialName(name string) bool {
	for _, w := range NameWords(name) {
		if credentialWords[w] {
			return true
		}
		for _, s := range credentialSuffixes {
			if strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	return false
}

// NameWords splits a field's name (apiKey, x-api-key, GITHUB_TOKEN,
// APIKey) into lowercase words.
func NameWords(name string) []string {
	var words []string
	var cur []rune
	rs := []rune(name)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) ||
			(unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// CredentialReference reports whether a value names where a credential is
// rather than holding it: empty, {env:NAME}, {file:PATH}, ${NAME}, $NAME,
// a command that prints it (!cmd), or the name of a variable.
func CredentialReference(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || strings.HasPrefix(v, "{env:") || strings.HasPrefix(v, "{file:") ||
		strings.HasPrefix(v, "$") || strings.HasPrefix(v, "!") ||
		(ValidEnvName(v) && strings.ToUpper(v) == v)
}

// credentialValue reports whether the value of a field whose name says
// credential holds one: not a reference, and not a short lowercase word
// (none, oauth, bearer, xxx: a mode or a placeholder, not a secret).
func credentialValue(v string) bool {
	v = strings.TrimSpace(v)
	if CredentialReference(v) {
		return false
	}
	return len(v) >= 8 || strings.IndexFunc(v, func(r rune) bool { return (r < 'a' || r > 'z') && r != '-' }) >= 0
}

// minRandomSegment is the shortest run of letters and digits that can look
// random: shorter ones are ids, dates and versions.
const minRandomSegment = 16

// LooksRandom reports whether s (one word: no spaces) holds a long
// random-looking run: at least 16 letters and digits, mixed and
// interleaved, with high entropy, as keys and tokens are (ghp_…, sk-…,
// AKIA…, a JWT, a hex key). Paths (/…, ~/…, ./…), model names
// (claude-sonnet-4-5-20250929), versions and UUIDs do not.
func LooksRandom(s string) bool {
	if len(s) < 20 || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		(strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//")) {
		return false
	}
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return !isAlnum(r) }) {
		if randomSegment(seg) {
			return true
		}
	}
	return false
}

func isAlnum(r rune) bool {
	return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// randomSegment: long, letters and digits interleaved, high entropy.
func randomSegment(seg string) bool {
	if len(seg) < minRandomSegment {
		return false
	}
	digits, switches := 0, 0
	for i := range len(seg) {
		d := seg[i] >= '0' && seg[i] <= '9'
		if d {
			digits++
		}
		if i > 0 && d != (seg[i-1] >= '0' && seg[i-1] <= '9') {
			switches++
		}
	}
	return digits >= 2 && digits < len(seg)-1 && switches >= 3 && entropy(seg) >= 3.0
}

// entropy is Shannon's, in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(len(s))
		h -= p * math.Log2(p)
	}
	return h
}

var (
	userinfoRe = lazyRegexp(`[A-Za-z][A-Za-z0-9+.-]*://([^/?#@\s"'<>]+)@`)
	wordRe     = lazyRegexp(`[A-Za-z0-9+/=_.~-]+`)
)

// span is a credential's part of a string.
type span struct {
	start, end int
	why        string
}

// spansIn finds the credentials of a string that no field name announces:
// URL passwords (or token user names), and random-looking words.
func spansIn(s string) []span {
	var out []span
	for _, m := range userinfoRe().FindAllStringSubmatchIndex(s, -1) {
		user := s[m[2]:m[3]]
		if i := strings.IndexByte(user, ':'); i >= 0 {
			if !CredentialReference(user[i+1:]) {
				out = append(out, span{m[2] + i + 1, m[3], whyUserinfo})
			}
		} else if LooksRandom(user) {
			out = append(out, span{m[2], m[3], whyURLUser})
		}
	}
	for _, m := range wordRe().FindAllStringIndex(s, -1) {
		if overlaps(out, m[0], m[1]) || !LooksRandom(s[m[0]:m[1]]) {
			continue
		}
		out = append(out, span{m[0], m[1], whyRandom})
	}
	return out
}

func overlaps(spans []span, start, end int) bool {
	for _, sp := range spans {
		if start < sp.end && sp.start < end {
			return true
		}
	}
	return false
}

// CredentialsInJSON finds the credentials in a parsed JSON (or JSONC)
// document: each string that a credential field holds (whole), and each
// credential inside any other string.
func CredentialsInJSON(root *hujson.Value) []Credential {
	var out []Credential
	walkJSON(root, nil, "", &out)
	return out
}

func walkJSON(v *hujson.Value, path []string, key string, out *[]Credential) {
	switch t := v.Value.(type) {
	case *hujson.Object:
		for i := range t.Members {
			m := &t.Members[i]
			name := m.Name.Value.(hujson.Literal).String()
			walkJSON(&m.Value, append(path[:len(path):len(path)], name), name, out)
		}
	case *hujson.Array:
		for i := range t.Elements {
			walkJSON(&t.Elements[i], append(path[:len(path):len(path)], strconv.Itoa(i)), key, out)
		}
	case hujson.Literal:
		if t.Kind() != '"' {
			return
		}
		s := t.String()
		c := Credential{Where: jsonPath(path), Key: key, Path: path, Lit: v}
		if key != "" && CredentialName(key) && credentialValue(s) {
			c.Why, c.Start, c.End = whyName, 0, len(s)
			*out = append(*out, c)
			return
		}
		for _, sp := range spansIn(s) {
			c.Why, c.Start, c.End = sp.why, sp.start, sp.end
			*out = append(*out, c)
		}
	}
}

var plainKeyRe = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// jsonPath writes keys as $.a.b[0]["odd key"].
func jsonPath(path []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, p := range path {
		switch {
		case isIndex(p):
			b.WriteString("[" + p + "]")
		case plainKeyRe().MatchString(p):
			b.WriteString("." + p)
		default:
			b.WriteString("[" + strconv.Quote(p) + "]")
		}
	}
	return b.String()
}

func isIndex(p string) bool {
	_, err := strconv.Atoi(p)
	return err == nil && p != "" && p[0] != '-'
}

// keyValueRe finds name: value and name = value pairs in a line of YAML
// (a Markdown file's front matter), TOML, an env file, or JSON in prose.
var keyValueRe = lazyRegexp(`["']?([A-Za-z0-9_.-]+)["']?\s*[:=]\s*("[^"]*"|'[^']*'|[^\s,}"']+)`)

// CredentialsInText finds the credentials of a text file (YAML, TOML, an
// env file, Markdown) line by line; they are named by line. In Markdown,
// field names count only in the front matter (between the --- lines that
// open the file): the body is prose, where "Password: never print it" is
// advice, not a field.
func CredentialsInText(data []byte, markdown bool) []Credential {
	var out []Credential
	lines := strings.Split(string(data), "\n")
	fields := len(lines)
	if markdown {
		fields = frontMatterEnd(lines)
	}
	for n, line := range lines {
		where := fmt.Sprintf("line %d", n+1)
		named := false
		for _, m := range keyValueRe().FindAllStringSubmatch(line, -1) {
			if n < fields && CredentialName(m[1]) && credentialValue(strings.Trim(m[2], `"'`)) {
				out = append(out, Credential{Where: where, Why: whyName + " (" + m[1] + ")", Key: m[1]})
				named = true
			}
		}
		if named {
			continue
		}
		for _, sp := range spansIn(line) {
			out = append(out, Credential{Where: where, Why: sp.why})
		}
	}
	return out
}

// frontMatterEnd is the index of the line that closes a Markdown file's
// front matter (0 when it has none).
func frontMatterEnd(lines []string) int {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			return i
		}
	}
	return 0
}

// FindCredentials finds the credentials of a settings file by its name:
// .json and .jsonc files as JSON (with comments), named by JSON path;
// anything else, or JSON that does not parse, line by line. root is the
// parsed JSON (nil otherwise), whose literals the findings point into.
func FindCredentials(name string, data []byte) (root *hujson.Value, found []Credential) {
	if strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonc") {
		if v, err := hujson.Parse(data); err == nil {
			return &v, CredentialsInJSON(&v)
		}
	}
	return nil, CredentialsInText(data, strings.HasSuffix(name, ".md"))
}
