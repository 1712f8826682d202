package initcmd

import (
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// credNote is one credential --import-host-config left on the host: the
// file, where in it, why it is one, and what took its place (Ref, with the
// variable Name and the Host it is sent to) when the agent reads a
// variable there. Never the value.
type credNote struct {
	File, Where, Why string
	Name, Ref, Host  string
}

// guardHostFile applies schema's credential rule to one file of the host's
// settings. Without a credential the file is copied as it is. In a file
// where the agent reads environment variables (hc.EnvRef), each credential
// is replaced by a reference and the file is copied; in any other, the
// file is not copied. Each credential is named in notes either way.
func guardHostFile(hc *schema.HostConfig, f outer.HostFile, used map[string]bool) (content []byte, notes []credNote, copyIt bool) {
	root, found := schema.FindCredentials(f.Rel, f.Content)
	if len(found) == 0 {
		return f.Content, nil, true
	}
	for _, c := range found {
		notes = append(notes, credNote{File: f.Rel, Where: c.Where, Why: c.Why})
	}
	if root == nil || hc.EnvRef == "" || !envRefFile(hc, f.Rel) {
		return nil, notes, false
	}
	notes = notes[:0]
	for _, cs := range byLiteral(found) {
		lit := cs[0].Lit
		s := lit.Value.(hujson.Literal).String()
		for _, c := range cs { // from the end, so that each span stays put
			name := envName(c, used)
			ref := strings.ReplaceAll(hc.EnvRef, "NAME", name)
			s = s[:c.Start] + ref + s[c.End:]
			notes = append(notes, credNote{File: f.Rel, Where: c.Where, Why: c.Why, Name: name, Ref: ref, Host: sendsTo(root, c.Path)})
		}
		lit.Value = hujson.String(s)
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Where < notes[j].Where })
	out := root.Pack()
	if _, left := schema.FindCredentials(f.Rel, out); len(left) > 0 {
		return nil, notes, false // never copy what the rule still objects to
	}
	return out, notes, true
}

func envRefFile(hc *schema.HostConfig, rel string) bool {
	for _, f := range hc.EnvRefFiles {
		if f == rel {
			return true
		}
	}
	return false
}

// byLiteral groups the findings by the string that holds them, in the
// file's order (so that names are given the same way each time), each
// group from its last span to its first.
func byLiteral(found []schema.Credential) [][]schema.Credential {
	var groups [][]schema.Credential
	at := map[*hujson.Value]int{}
	for _, c := range found {
		i, ok := at[c.Lit]
		if !ok {
			i = len(groups)
			at[c.Lit] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	for _, cs := range groups {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Start > cs[j].Start })
	}
	return groups
}

// genericKeys are the JSON keys that say nothing of whose credential it
// is: the name comes from the key above them (provider.anthropic.options
// .apiKey is ANTHROPIC_API_KEY).
var genericKeys = map[string]bool{
	"provider": true, "providers": true, "options": true, "mcp": true, "headers": true,
	"environment": true, "env": true, "command": true, "args": true, "config": true,
}

// envName names the variable that takes a credential's place: the key
// itself when it is a variable's name (GITHUB_TOKEN), else its owner and
// key in capitals (ANTHROPIC_API_KEY), unique within the import.
func envName(c schema.Credential, used map[string]bool) string {
	key := c.Key
	if schema.ValidEnvName(key) && strings.ToUpper(key) == key && schema.CredentialName(key) {
		return unique(key, used)
	}
	var parts []string
	for i := len(c.Path) - 2; i >= 0; i-- {
		if p := c.Path[i]; !genericKeys[strings.ToLower(p)] && !isNumber(p) {
			parts = append(parts, p)
			break
		}
	}
	if key != "" {
		parts = append(parts, key)
	}
	if !schema.CredentialName(key) {
		parts = append(parts, "secret")
	}
	name := envWords(strings.Join(parts, "_"))
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "HOST_CONFIG_" + name
	}
	return unique(name, used)
}

// envWords writes a name in capitals, words joined by _ (apiKey: API_KEY).
func envWords(s string) string {
	var words []string
	for _, w := range schema.NameWords(s) {
		words = append(words, strings.ToUpper(w))
	}
	return strings.Join(words, "_")
}

func isNumber(s string) bool { _, err := strconv.Atoi(s); return err == nil }

func unique(name string, used map[string]bool) string {
	n := name
	for i := 2; used[n]; i++ {
		n = name + "_" + strconv.Itoa(i)
	}
	used[n] = true
	return n
}

// sendsTo is the host a credential goes to, when its settings say: the
// baseURL or url of the object that holds it or of one above ("" when
// none does).
func sendsTo(root *hujson.Value, path []string) string {
	for d := len(path) - 1; d >= 0; d-- {
		v := root.Find(pointer(path[:d]))
		if v == nil {
			continue
		}
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			continue
		}
		for _, m := range obj.Members {
			name := strings.ToLower(m.Name.Value.(hujson.Literal).String())
			lit, isLit := m.Value.Value.(hujson.Literal)
			if (name == "baseurl" || name == "url" || name == "endpoint") && isLit && lit.Kind() == '"' {
				if u, err := url.Parse(lit.String()); err == nil && u.Hostname() != "" && schema.Host(u.Hostname()) == nil {
					return u.Hostname()
				}
			}
		}
	}
	return ""
}

// pointer is the JSON Pointer (RFC 6901) of path.
func pointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}
