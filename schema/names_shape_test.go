package schema

import (
	"regexp"
	"strings"
	"testing"
)

// The rules written as loops (shaped) accept exactly what these regular
// expressions, their specification, accept.
func TestShapedRulesMatchTheirExpressions(t *testing.T) {
	rules := []struct {
		expr string
		fn   func(string) bool
	}{
		{`^[a-z0-9][a-z0-9-]{0,62}$`, ValidProjectName},
		{`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`, validLabel},
		{`^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$`, ValidVersion},
	}
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "-", ".", "+", "_", " ", "\n", "é", "\x00", "/"}
	var inputs []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1)
		}
	}
	grow("", 3)
	for _, n := range []int{61, 62, 63, 64, 65, 66} {
		for _, c := range []string{"a", "A", "-", "."} {
			inputs = append(inputs, "a"+strings.Repeat(c, n-2)+"b", strings.Repeat(c, n), "a"+strings.Repeat("b", n-2)+c)
		}
	}
	for _, r := range rules {
		re := regexp.MustCompile(r.expr)
		for _, in := range inputs {
			if got, want := r.fn(in), re.MatchString(in); got != want {
				t.Errorf("%s on %q: %v, the expression says %v", r.expr, in, got, want)
			}
		}
	}
}
