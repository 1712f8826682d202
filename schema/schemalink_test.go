package schema_test

import (
	"encoding/json"
	"path"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// Each `$schema=` line of a generated file names a file of the same outer
// folder (so it resolves on every clone, offline), asb writes that file,
// it is the schema of this package, and it accepts the file.
func TestSchemaLinksResolve(t *testing.T) {
	modeline := regexp.MustCompile(`(?m)^# yaml-language-server: \$schema=(\S+)$`)
	for i, o := range seedOptions() {
		plan, err := generator.Render(templates.FS, o)
		if err != nil {
			t.Fatal(err)
		}
		links := 0
		for _, f := range plan.Files {
			for _, m := range modeline.FindAllSubmatch(f.Content, -1) {
				links++
				target := path.Join(path.Dir(f.Path), string(m[1]))
				sf, ok := plan.Lookup(target)
				if !ok {
					t.Errorf("options %d: %s links %s, which asb does not write", i, f.Path, target)
					continue
				}
				if want := schema.JSONSchemas()[path.Base(target)]; string(want) != string(sf.Content) {
					t.Errorf("%s is not schema/%s", target, path.Base(target))
				}
				var s map[string]any
				if err := json.Unmarshal(sf.Content, &s); err != nil {
					t.Fatalf("%s: %v", target, err)
				}
				var doc any
				if err := yaml.Unmarshal(f.Content, &doc); err != nil {
					t.Fatal(err)
				}
				if err := validate(s, s, doc, ""); err != nil {
					t.Errorf("options %d: %s does not validate against %s: %v", i, f.Path, target, err)
				}
			}
		}
		if links < 2 {
			t.Errorf("options %d: %d $schema lines, want sandbox.yaml's and secrets.yaml's", i, links)
		}
	}
}
