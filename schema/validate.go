package schema

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"
)

// NewValidator returns a validator with asb's own rules registered. Each
// caller gets its own instance: there is no package-level state.
func NewValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	must := func(tag string, fn func(string) bool) {
		if err := v.RegisterValidation(tag, func(fl validator.FieldLevel) bool {
			return fn(fl.Field().String())
		}); err != nil {
			panic(err) // only on a programming error in the tag table
		}
	}
	must("asb_project", ValidProjectName)
	must("asb_image", ValidImageRef)
	must("asb_version", ValidVersion)
	must("asb_relpath", ValidRelPath)
	must("asb_envname", ValidEnvName)
	must("asb_envvalue", ValidEnvValue)
	must("asb_agent_target", func(s string) bool { return AgentTarget(s) == nil })
	// The rules of rules.go, so that a flag is judged as validate and the
	// edit commands judge the same value.
	for tag, rule := range stringRules {
		must(tag, func(s string) bool { return rule(s) == nil })
	}
	if err := v.RegisterValidation("asb_cpus", func(fl validator.FieldLevel) bool { return CPUs(int(fl.Field().Int())) == nil }); err != nil {
		panic(err)
	}
	// Name fields after the flag (or YAML key) a user typed, not the Go name.
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		for _, key := range []string{"flag", "yaml"} {
			if name, _, _ := strings.Cut(f.Tag.Get(key), ","); name != "" && name != "-" {
				return name
			}
		}
		return f.Name
	})
	return v
}

// stringRules are the rules.go rules behind validator tags.
var stringRules = map[string]func(string) *RuleError{
	"asb_secret": SecretName,
	"asb_name":   ProjectName,
	"asb_host":   Host,
	"asb_memory": Memory,
	"asb_port":   func(s string) *RuleError { _, re := Port(s); return re },
}

// ruleHelp says, per validator tag, what a valid value looks like.
var ruleHelp = map[string]string{
	"asb_project":      "use lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters (e.g. my-project)",
	"asb_env":          "use an environment variable name: letters, digits and _, not starting with a digit (e.g. GITHUB_TOKEN)",
	"asb_host":         "use a domain name such as api.github.com or *.example.com (no scheme, port, path or IP address)",
	"asb_image":        "use an image reference such as debian:bookworm-slim",
	"asb_version":      "use a version such as 1.2.3 or latest",
	"asb_agent_target": "use /home/dev/PATH, or /etc/NAME for an agent's system layer",
	"asb_relpath":      "use a relative path of plain names, e.g. opencode-ai/node_modules",
	"asb_envname":      "use an environment variable name: letters, digits and _, not starting with a digit",
	"asb_envvalue":     "use letters, digits, spaces and . _ : / , = + @ - only",
	"asb_size":         "use a number with a unit M or G, e.g. 512M or 4G (msb reads no other unit)",
	"asb_port":         "use HOST:GUEST, e.g. 8080:80 or 127.0.0.1:8080:80/tcp",
	"required":         "it must be set",
	"min":              "it is below the minimum",
	"max":              "it is above the maximum",
	"oneof":            "it must be one of the listed values",
	"dive":             "each entry must be valid",
}

// ruleOf returns the rules.go verdict behind a validator error, nil when
// the tag is not one of those rules.
func ruleOf(fe validator.FieldError) *RuleError {
	if rule, ok := stringRules[fe.Tag()]; ok {
		if s, ok := fe.Value().(string); ok {
			return rule(s)
		}
	}
	if fe.Tag() == "asb_cpus" {
		if n, ok := fe.Value().(int); ok {
			return CPUs(n)
		}
	}
	return nil
}

// FieldError is one invalid value: which field, what was given, why it is
// refused (a rule's reason, when one judged it) and how to fix it.
type FieldError struct {
	Field string // flag or key name, e.g. "--name" or "network.allow[0]"
	Value string
	Why   string
	Fix   string
}

func (e *FieldError) Error() string {
	switch {
	case e.Value == "" && e.Why != "":
		return fmt.Sprintf("%s: %s; %s", e.Field, e.Why, e.Fix)
	case e.Value == "":
		return fmt.Sprintf("%s: %s", e.Field, e.Fix)
	case e.Why != "":
		return fmt.Sprintf("%s %q %s; %s", e.Field, e.Value, e.Why, e.Fix)
	}
	return fmt.Sprintf("%s %q is invalid: %s", e.Field, e.Value, e.Fix)
}

// RuleField frames a rule's verdict on a flag or key.
func RuleField(field string, re *RuleError) *FieldError {
	return &FieldError{Field: field, Value: re.Value, Why: re.Why, Fix: re.Fix}
}

// Explain turns validator errors into FieldErrors; prefix is put before each
// field name ("--" for flags). Other errors pass through unchanged.
func Explain(err error, prefix string) error {
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return err
	}
	out := make([]error, 0, len(verrs))
	for _, fe := range verrs {
		ns := fe.Namespace()
		if _, rest, ok := strings.Cut(ns, "."); ok {
			ns = rest // Struct.field[0].sub: drop the struct name
		}
		if re := ruleOf(fe); re != nil {
			out = append(out, &FieldError{Field: prefix + ns, Value: fmt.Sprint(fe.Value()), Why: re.Why, Fix: re.Fix})
			continue
		}
		fix, ok := ruleHelp[fe.Tag()]
		if !ok {
			fix = "it fails the " + fe.Tag() + " rule"
		}
		if fe.Tag() == "oneof" || fe.Tag() == "min" || fe.Tag() == "max" {
			fix = fmt.Sprintf("%s (%s %s)", fix, fe.Tag(), fe.Param())
		}
		out = append(out, &FieldError{Field: prefix + ns, Value: fmt.Sprint(fe.Value()), Fix: fix})
	}
	return errors.Join(out...)
}
