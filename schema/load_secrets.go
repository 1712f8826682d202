package schema

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SecretKeys are the keys of a binding in secrets.yaml msb 0.7.2 accepts.
var SecretKeys = []string{"value", "placeholder", "allow", "substitution", "passthrough", "violation_action", "require_tls_identity"}

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
		f := name + "." + key
		if isNull(v) {
			return
		}
		var ok bool
		switch key {
		case "value":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
				if !skip(v) {
					l.errf(v, f, fmt.Sprintf("write value: \"${%s}\"", envGuess(name)), "%s must be a string \"${VAR}\", not %s", f, describe(v))
				}
				good = false
				return
			}
			l.at[f] = v
			s.Value = v.Value
			ok = true
			if strings.HasPrefix(v.Value, "${") && strings.HasSuffix(v.Value, "}") {
				if _, ok := EnvRef(v.Value); !ok {
					// Only ${NAME} is an env reference for msb; the value is
					// not a secret here but is still not echoed.
					l.errf(v, f, "use ${NAME} with NAME of letters, digits and _, not starting with a digit",
						"%s is an unsupported environment expression; msb accepts only ${NAME}", f)
					good = false
				}
			}
		case "placeholder":
			s.Placeholder, ok = l.str(v, f)
		case "allow":
			s.Allow = l.strList(v, f)
			ok = true
		case "substitution":
			s.Substitution = &Substitution{}
			ok = l.mapping(v, f, []string{"headers", "query", "body"}, func(k string, _, bv *yaml.Node) {
				if isNull(bv) {
					return
				}
				b, bok := l.boolean(bv, f+"."+k)
				if !bok {
					good = false
					return
				}
				switch k {
				case "headers":
					s.Substitution.Headers = &b
				case "query":
					s.Substitution.Query = &b
				case "body":
					s.Substitution.Body = &b
				}
			})
		case "passthrough":
			s.Passthrough = l.strList(v, f)
			ok = true
		case "violation_action":
			s.ViolationAction, ok = l.oneOf(v, f, violationActions...)
		case "require_tls_identity":
			var b bool
			if b, ok = l.boolean(v, f); ok {
				s.RequireTLSIdentity = &b
			}
		}
		if !ok {
			good = false
		}
	})
	return s, good
}

func envGuess(name string) string {
	if ValidEnvName(name) {
		return name
	}
	return "VAR"
}

// countLines counts lines as YAML does: \r\n, \r, \n, NEL, LS and PS each
// end one.
