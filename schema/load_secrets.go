package schema

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SecretKeys are the keys of a binding in secrets.yaml msb 0.7.2 accepts.
var SecretKeys = []string{"value", "placeholder", "allow", "substitution", "passthrough", "violation_action", "require_tls_identity"}

// SubstitutionKeys are where msb 0.7.2 may swap a secret's placeholder.
var SubstitutionKeys = []string{"headers", "query", "body"}

func (l *loader) secrets(data []byte) (Secrets, *yaml.Node) {
	top := l.parse(data)
	if top == nil {
		return nil, nil
	}
	if isNull(top) {
		l.errf(top, "", "add a binding, e.g. NAME: {value: \"${NAME}\", allow: [api.example.com]}, or remove the file",
			"the file has no secrets; msb needs a YAML mapping of secret names")
		return nil, top
	}
	l.expansions(top, "")
	out := Secrets{}
	ok := l.mapping(top, "", nil, func(name string, k, v *yaml.Node) {
		l.at[name+".key"] = k
		if s, ok := l.secret(v, name); ok {
			out[name] = s
		}
	})
	if !ok {
		return nil, top
	}
	return out, top
}

func (l *loader) secret(n *yaml.Node, name string) (Secret, bool) {
	var s Secret
	if n.Kind != yaml.MappingNode {
		if !skip(n) {
			// Never echo the value: a user may have pasted the secret itself.
			l.errf(n, name, fmt.Sprintf("write %s: {value: \"${%s}\", allow: [HOST]}", name, name), "%s must be a mapping with value and allow, not %s", name, describe(n))
		}
		return s, false
	}
	good := true
	l.mapping(n, name, SecretKeys, func(key string, _, v *yaml.Node) {
		if !isNull(v) && !l.secretKey(&s, name, key, v) {
			good = false
		}
	})
	return s, good
}

// secretKey reads one key of the binding of secret name into s.
func (l *loader) secretKey(s *Secret, name, key string, v *yaml.Node) bool {
	f := name + "." + key
	var ok bool
	switch key {
	case "value":
		s.Value, ok = l.secretValue(v, name, f)
	case "placeholder":
		s.Placeholder, ok = l.nonEmpty(v, f)
	case "allow":
		s.Allow, ok = l.strList(v, f), true
	case "substitution":
		s.Substitution, ok = l.substitution(v, f)
	case "passthrough":
		s.Passthrough, ok = l.strList(v, f), true
	case "violation_action":
		s.ViolationAction, ok = l.oneOf(v, f, violationActions...)
	case "require_tls_identity":
		s.RequireTLSIdentity = l.optBool(v, f)
		ok = s.RequireTLSIdentity != nil
	}
	return ok
}

// secretValue reads value: "${VAR}". An error never echoes the value: a
// user may have pasted the secret itself.
func (l *loader) secretValue(v *yaml.Node, name, f string) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		if !skip(v) {
			l.errf(v, f, fmt.Sprintf("write value: \"${%s}\"", envGuess(name)), "%s must be a string \"${VAR}\", not %s", f, describe(v))
		}
		return "", false
	}
	l.at[f] = v
	ref, isRef := EnvRef(v.Value)
	// (A name that is no variable name is CheckDir's error: SecretName.)
	if strings.Contains(v.Value, "${") && ValidEnvName(name) && !(isRef && ref == name) {
		// msb expands any other ${…} into a literal (stored in plain text),
		// or reads another binding's variable.
		l.errf(v, f, fmt.Sprintf("write value: \"${%s}\" and put the real value in secrets.env as %s=…", envGuess(name), envGuess(name)),
			"not supported by asb: %s other than \"${%s}\", because the binding must read the variable of its own name (msb would expand any other form from the host environment)", f, name)
		return v.Value, false
	}
	return v.Value, true
}

// substitution reads where msb may swap the placeholder: headers, query, body.
func (l *loader) substitution(v *yaml.Node, f string) (*Substitution, bool) {
	sub := &Substitution{}
	good := true
	ok := l.mapping(v, f, SubstitutionKeys, func(k string, _, bv *yaml.Node) {
		if isNull(bv) {
			return
		}
		b := l.optBool(bv, f+"."+k)
		if b == nil {
			good = false
			return
		}
		switch k {
		case "headers":
			sub.Headers = b
		case "query":
			sub.Query = b
		case "body":
			sub.Body = b
		}
	})
	on := func(b *bool, dflt bool) bool { return (b == nil && dflt) || (b != nil && *b) }
	if ok && good && !on(sub.Headers, true) && !on(sub.Query, false) && !on(sub.Body, false) {
		l.errf(v, f, "set at least one of headers, query, body to true, or remove the secret", "%s: every place is false; msb needs at least one place to substitute", f)
		return sub, false
	}
	return sub, ok && good
}

func envGuess(name string) string {
	if ValidEnvName(name) {
		return name
	}
	return "VAR"
}

// countLines counts lines as YAML does: \r\n, \r, \n, NEL, LS and PS each
// end one.

// expansions refuses ${…} anywhere in secrets.yaml but a binding's value
// (secretValue judges that one): msb expands it from the host environment.
func (l *loader) expansions(n *yaml.Node, field string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "${") {
			l.errf(n, field, "write the value itself", "not supported by asb: ${…} in %s, because %s", orFile(field), ExpandRefused)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			l.expansions(c, fmt.Sprintf("%s[%d]", field, i))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f := joinField(field, k.Value)
			l.expansions(k, field)
			if strings.Count(f, ".") == 1 && strings.HasSuffix(f, ".value") {
				continue
			}
			l.expansions(v, f)
		}
	}
}
