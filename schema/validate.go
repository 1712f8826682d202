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
	must("asb_env", ValidEnvName)
	must("asb_host", ValidHost)
	must("asb_image", ValidImageRef)
	must("asb_version", ValidVersion)
	must("asb_size", func(s string) bool { _, err := ParseSize(s); return err == nil })
	must("asb_port", func(s string) bool { _, err := ParsePort(s); return err == nil })
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

// ruleHelp says, per validator tag, what a valid value looks like.
var ruleHelp = map[string]string{
	"asb_project": "use lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters (e.g. my-project)",
	"asb_env":     "use an environment variable name: letters, digits and _, not starting with a digit (e.g. GITHUB_TOKEN)",
	"asb_host":    "use a domain name such as api.github.com or *.example.com (no scheme, port, path or IP address)",
	"asb_image":   "use an image reference such as debian:bookworm-slim",
	"asb_version": "use a version such as 1.2.3 or latest",
	"asb_size":    "use a number with a unit M or G, e.g. 512M or 4G (msb reads no other unit)",
	"asb_port":    "use HOST:GUEST, e.g. 8080:80 or 127.0.0.1:8080:80/tcp",
	"required":    "it must be set",
	"min":         "it is below the minimum",
	"max":         "it is above the maximum",
	"oneof":       "it must be one of the listed values",
	"dive":        "each entry must be valid",
}

// FieldError is one invalid value: which field, what was given, how to fix.
type FieldError struct {
	Field string // flag or key name, e.g. "--name" or "network.allow[0]"
	Value string
	Fix   string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Fix)
	}
	return fmt.Sprintf("%s %q is invalid: %s", e.Field, e.Value, e.Fix)
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
		fix, ok := ruleHelp[fe.Tag()]
		if !ok {
			fix = "it fails the " + fe.Tag() + " rule"
		}
		if fe.Tag() == "oneof" || fe.Tag() == "min" || fe.Tag() == "max" {
			fix = fmt.Sprintf("%s (%s %s)", fix, fe.Tag(), fe.Param())
		}
		// Namespace is Struct.field[0].sub; drop the struct name.
		ns := fe.Namespace()
		if _, rest, ok := strings.Cut(ns, "."); ok {
			ns = rest
		}
		out = append(out, &FieldError{Field: prefix + ns, Value: fmt.Sprint(fe.Value()), Fix: fix})
	}
	return errors.Join(out...)
}
