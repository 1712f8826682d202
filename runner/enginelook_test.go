package runner

import (
	"slices"
	"testing"
)

func TestLookingEnvKeepsNoValue(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "AWS_SECRET_ACCESS_KEY=s1", "OPENCODE_API_KEY=s2", "LC_ALL=C",
		"XDG_STATE_HOME=/s", "ASB_TASK_ENGINE=/e", "TASK_TEMP_DIR=.t", "GITHUB_TOKEN=s3", "PATHX=s4", "TERM=xterm",
		"ASB_SERVE_PASSWORD=s5"}
	got := LookingEnv(env)
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "XDG_STATE_HOME=/s", "ASB_TASK_ENGINE=/e", "TASK_TEMP_DIR=.t", "TERM=xterm"}
	if !slices.Equal(got, want) {
		t.Errorf("LookingEnv = %q, want %q", got, want)
	}
	for _, s := range []EngineSpec{{List: true}, {Dry: true}, {Summary: "agent"}} {
		if !s.Looking() {
			t.Errorf("%+v does not look", s)
		}
	}
	if (EngineSpec{Tasks: []string{"agent"}}).Looking() {
		t.Error("a run looks")
	}
}
