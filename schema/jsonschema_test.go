package schema_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
)

func loadJSONSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("%s: $schema = %v, want draft 2020-12", name, s["$schema"])
	}
	return s
}

// lookup follows a slash path ("$defs/mount/anyOf/1") through the schema.
func lookup(t *testing.T, s map[string]any, p string) map[string]any {
	t.Helper()
	var cur any = s
	for _, part := range strings.Split(p, "/") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[part]
		case []any:
			var i int
			fmt.Sscan(part, &i)
			cur = c[i]
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("no object at %s", p)
	}
	return m
}

func yamlKeys(typ reflect.Type) []string {
	var keys []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys
}

// Every struct of the config has its object in the schema with the same
// keys, and additionalProperties false (msb rejects unknown keys).
func TestJSONSchemaMatchesTypes(t *testing.T) {
	sb := loadJSONSchema(t, "sandbox.schema.json")
	sec := loadJSONSchema(t, "secrets.schema.json")
	cases := []struct {
		schema map[string]any
		path   string
		typ    any
		loader []string // the keys the loader accepts, when it has a list
	}{
		{sb, "", schema.Sandbox{}, schema.SandboxKeys},
		{sb, "$defs/mount/anyOf/1", schema.Mount{}, schema.MountKeys},
		{sb, "$defs/tmpfs", schema.TmpfsOpts{}, nil},
		{sb, "$defs/network/anyOf/1", schema.Network{}, schema.NetworkKeys},
		{sb, "$defs/dns", schema.DNS{}, nil},
		{sb, "$defs/tls", schema.TLS{}, nil},
		{sec, "$defs/secret", schema.Secret{}, schema.SecretKeys},
		{sec, "$defs/substitution", schema.Substitution{}, nil},
	}
	for _, tc := range cases {
		name := reflect.TypeOf(tc.typ).Name()
		obj := tc.schema
		if tc.path != "" {
			obj = lookup(t, tc.schema, tc.path)
		}
		if obj["additionalProperties"] != false {
			t.Errorf("%s (%s): additionalProperties = %v, want false", name, tc.path, obj["additionalProperties"])
		}
		props, _ := obj["properties"].(map[string]any)
		var inSchema []string
		for k := range props {
			inSchema = append(inSchema, k)
		}
		sort.Strings(inSchema)
		want := yamlKeys(reflect.TypeOf(tc.typ))
		if !slices.Equal(inSchema, want) {
			t.Errorf("%s: schema keys %v, struct keys %v", name, inSchema, want)
		}
		if tc.loader != nil {
			l := slices.Sorted(slices.Values(tc.loader))
			if !slices.Equal(l, want) {
				t.Errorf("%s: loader keys %v, struct keys %v", name, l, want)
			}
		}
	}
}

// The schemas accept what asb init writes and reject the bad cases that are
// about keys and types, judged by a small validator of the subset of JSON
// Schema the two files use.
func TestJSONSchemaAcceptsGeneratedFiles(t *testing.T) {
	for _, f := range []struct{ file, schemaFile string }{{"sandbox.yaml", "sandbox.schema.json"}, {"secrets.yaml", "secrets.schema.json"}} {
		s := loadJSONSchema(t, f.schemaFile)
		for i, data := range seeds(t, f.file)[:len(seedOptions())] {
			var doc any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if err := validate(s, s, doc, ""); err != nil {
				t.Errorf("%s seed %d: %v\n%s", f.file, i, err, data)
			}
		}
	}
	sb := loadJSONSchema(t, "sandbox.schema.json")
	sec := loadJSONSchema(t, "secrets.schema.json")
	for _, bad := range []struct {
		s   map[string]any
		doc string
	}{
		{sb, goodSandbox + "bogus: 1\n"},
		{sb, replace(goodSandbox, "cpus: 2", `cpus: "two"`)},
		{sb, replace(goodSandbox, "cpus: 2", "cpus: 0")},
		{sb, replace(goodSandbox, `memory: "4G"`, "memory: lots")},
		{sb, replace(goodSandbox, "  - bind: ./workspace\n", "  - bind: ./workspace\n    named: v\n")},
		{sb, replace(goodSandbox, "    readonly: true", "    readonly: true\n    mode: 1")},
		{sb, goodSandbox + "ports: [\"8080\"]\n"},
		{sb, "network: everything\n"},
		{sec, replace(goodSecrets, `"${OPENCODE_API_KEY}"`, `"literal"`)},
		{sec, replace(goodSecrets, "  allow:\n    - opencode.ai\n", "")},
		{sec, goodSecrets + "  header_fields: [x]\n"},
	} {
		var doc any
		if err := yaml.Unmarshal([]byte(bad.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if validate(bad.s, bad.s, doc, "") == nil {
			t.Errorf("the schema accepts\n%s", bad.doc)
		}
	}
}

// validate checks v against s (root resolves $ref). It knows the keywords
// the two schema files use and fails on any other, so it cannot silently
// pass a schema it does not understand.
func validate(root, s map[string]any, v any, at string) error {
	known := []string{"$schema", "$id", "title", "description", "type", "properties", "additionalProperties", "required",
		"items", "anyOf", "oneOf", "enum", "pattern", "minimum", "maximum", "minItems", "$ref", "$defs", "propertyNames"}
	for k := range s {
		if !slices.Contains(known, k) {
			return fmt.Errorf("%s: validator does not know keyword %s", at, k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		return validate(root, lookupRef(root, ref), v, at)
	}
	if typ, ok := s["type"].(string); ok && !hasType(v, typ) {
		return fmt.Errorf("%s: %v is not %s", at, v, typ)
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return x == v }) {
		return fmt.Errorf("%s: %v not in %v", at, v, e)
	}
	if p, ok := s["pattern"].(string); ok {
		if str, isStr := v.(string); isStr && !regexp.MustCompile(p).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", at, str, p)
		}
	}
	if n, ok := toFloat(v); ok {
		if m, has := s["minimum"].(float64); has && n < m {
			return fmt.Errorf("%s: %v < %v", at, n, m)
		}
		if m, has := s["maximum"].(float64); has && n > m {
			return fmt.Errorf("%s: %v > %v", at, n, m)
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		var errs []string
		for _, a := range alts {
			err := validate(root, a.(map[string]any), v, at)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err.Error())
		}
		if errs != nil {
			return fmt.Errorf("%s: no alternative matches: %s", at, strings.Join(errs, "; "))
		}
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, a := range alts {
			if validate(root, a.(map[string]any), v, at) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: %d of oneOf match, want 1", at, n)
		}
	}
	if list, ok := v.([]any); ok {
		if m, has := s["minItems"].(float64); has && float64(len(list)) < m {
			return fmt.Errorf("%s: fewer than %v items", at, m)
		}
		if items, has := s["items"].(map[string]any); has {
			for i, it := range list {
				if err := validate(root, items, it, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, has := obj[r.(string)]; !has {
				return fmt.Errorf("%s: %s is required", at, r)
			}
		}
		for k, val := range obj {
			if pn, has := s["propertyNames"].(map[string]any); has {
				if err := validate(root, pn, k, at+"."+k); err != nil {
					return err
				}
			}
			if ps, has := props[k]; has {
				if err := validate(root, ps.(map[string]any), val, at+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: unknown key %s", at, k)
				}
			case map[string]any:
				if err := validate(root, ap, val, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func lookupRef(root map[string]any, ref string) map[string]any {
	cur := root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cur, _ = cur[part].(map[string]any)
	}
	return cur
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		_, ok := v.(int)
		return ok
	case "null":
		return v == nil
	}
	return false
}
