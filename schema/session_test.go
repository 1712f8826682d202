package schema

import (
	"strings"
	"testing"
)

func TestSessionName(t *testing.T) {
	for _, ok := range []string{"a", "fix-login", "x1", strings.Repeat("a", MaxSessionName)} {
		if re := SessionName(ok); re != nil {
			t.Errorf("SessionName(%q) = %v, want ok", ok, re)
		}
	}
	for bad, why := range map[string]string{
		"":                                    "needs a name",
		"Fix":                                 "not a valid session name",
		"1abc":                                "not a valid session name",
		"a_b":                                 "not a valid session name",
		"../x":                                "not a valid session name",
		"a/b":                                 "not a valid session name",
		"end-":                                "not a valid session name",
		"-x":                                  "not a valid session name",
		strings.Repeat("a", MaxSessionName+1): "longer than",
	} {
		re := SessionName(bad)
		if re == nil || !strings.Contains(re.Error(), why) {
			t.Errorf("SessionName(%q) = %v, want %q", bad, re, why)
		}
	}
}

func TestSessionPathsStayUnderSessionsDir(t *testing.T) {
	p := SessionPathsOf("one")
	for _, s := range []string{p.Dir, p.Record, p.Conf, p.Workspace} {
		if !strings.HasPrefix(s, SessionsDir+"/one") {
			t.Errorf("%s is not under %s/one", s, SessionsDir)
		}
	}
}
