package cmdutil

import (
	"reflect"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/templates"
)

// TestOwnAgentsAreTheCheckedOnes: the presets Agents gives for asb's own
// templates (read once, not checked again) are exactly what the full
// check of each (generator.LoadAgent) gives, every preset included.
func TestOwnAgentsAreTheCheckedOnes(t *testing.T) {
	names, err := generator.Agents(templates.FS)
	if err != nil || len(names) == 0 {
		t.Fatalf("no presets: %v", err)
	}
	var checked []any
	for _, n := range names {
		a, err := generator.LoadAgent(templates.FS, n)
		if err != nil {
			t.Fatalf("preset %s fails its check: %v", n, err)
		}
		checked = append(checked, a)
	}
	var got []any
	for _, a := range Agents(&Factory{Templates: templates.FS}) {
		got = append(got, a)
	}
	if !reflect.DeepEqual(got, checked) {
		t.Errorf("Agents gives\n%+v\nthe checked presets are\n%+v", got, checked)
	}
}
