package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// door is one way a value reaches asb: an init flag, an edit command, or a
// file asb validate reads. A door with nil args does not take that kind of
// value.
type door struct {
	name string
	run  func(h *harness, v string) int
}

// TestOneRuleEveryDoor feeds the same bad values through every door that
// takes them: asb init's flags, the edit commands, and asb validate of
// sandbox.yaml and secrets.yaml. Each must refuse, and each must give the
// reason the one rule in schema/ gives.
func TestOneRuleEveryDoor(t *testing.T) {
	initWith := func(flags ...string) func(h *harness, v string) int {
		return func(h *harness, v string) int {
			args := []string{"init", "--agent", "opencode", "--no-git"}
			for _, f := range flags {
				args = append(args, strings.ReplaceAll(f, "V", v))
			}
			return h.run(append(args, filepath.Join(filepath.Dir(h.dir), "fresh"))...)
		}
	}
	edit := func(args ...string) func(h *harness, v string) int {
		return func(h *harness, v string) int {
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.ReplaceAll(s, "V", v)
			}
			return h.run(a...)
		}
	}
	validate := func(file, text string) func(h *harness, v string) int {
		return func(h *harness, v string) int {
			orig := h.read(file)
			defer h.write(file, orig)
			h.write(file, strings.ReplaceAll(text, "V", v))
			return h.run("validate", h.dir)
		}
	}
	sandbox := func(extra string) string {
		return "image: \"proj:opencode-latest\"\nmounts:\n  - bind: ./workspace\n    target: /workspace\n  - bind: ./opencode\n    target: /home/dev/.config/opencode\n    readonly: true\nnetwork:\n  allow: [\"opencode.ai\", \"x.example.com\"]\n" + extra
	}
	secrets := "OPENCODE_API_KEY: {value: \"${OPENCODE_API_KEY}\", allow: [\"opencode.ai\"]}\n"
	rules := []struct {
		kind   string
		values []string
		why    func(v string) string
		doors  []door
	}{
		{"secret name", []string{"PATH", "HOME", "lower_case", "MSB_TOKEN", "ASB_X", "1TOKEN", "LC_ALL"},
			func(v string) string { return schema.SecretName(v).Why },
			[]door{
				{"init --secret", initWith("--secret", "V@x.example.com")},
				{"secret add", edit("secret", "add", "V", "--allow", "x.example.com")},
				{"validate secrets.yaml", validate("secrets.yaml", secrets+"V: {value: \"${V}\", allow: [\"x.example.com\"]}\n")},
			}},
		{"host", []string{"1.2.3.4", "https://x.example.com/a", "localhost", "*.com", "exa mple.com", "x.example.com:443"},
			func(v string) string { return schema.Host(v).Why },
			[]door{
				{"init --allow", initWith("--allow", "V")},
				{"init --secret", initWith("--secret", "TOKEN@V")},
				{"network allow", edit("network", "allow", "V")},
				{"network deny", edit("network", "deny", "V")},
				{"secret add", edit("secret", "add", "TOKEN", "--allow", "V")},
				{"validate network.allow", validate("sandbox.yaml", strings.Replace(sandbox(""), `"x.example.com"]`, `"x.example.com", "V"]`, 1))},
				{"validate secret allow", validate("secrets.yaml", secrets+"TOKEN: {value: \"${TOKEN}\", allow: [\"V\"]}\n")},
			}},
		{"port", []string{"80", "0:80", "8080:99999", "1.2.3:80:80", "80:80/sctp"},
			func(v string) string { _, re := schema.Port(v); return re.Why },
			[]door{
				{"init --port", initWith("--port", "V")},
				{"port add", edit("port", "add", "V")},
				{"validate ports", validate("sandbox.yaml", sandbox("ports: [\"V\"]\n"))},
			}},
		{"ports between them", []string{"5173:5174"},
			func(v string) string {
				_, re := schema.PortConflict([]schema.PortSpec{mustPort("5173:5173"), mustPort(v)})
				return re.Why
			},
			[]door{
				{"init --port twice", initWith("--port", "5173:5173", "--port", "V")},
				{"port add", func(h *harness, v string) int {
					h.write("sandbox.yaml", sandbox("ports: [\"5173:5173\"]\n"))
					return h.run("port", "add", v)
				}},
				{"validate ports", validate("sandbox.yaml", sandbox("ports: [\"5173:5173\", \"V\"]\n"))},
			}},
		{"cpus", []string{"0", "256", "1000"},
			func(v string) string { var n int; fmt.Sscan(v, &n); return schema.CPUs(n).Why },
			[]door{
				{"init --cpus", initWith("--cpus", "V")},
				{"validate cpus", validate("sandbox.yaml", sandbox("cpus: V\n"))},
			}},
		{"memory", []string{"100M", "0.1G", "12Q", "4GiB"},
			func(v string) string { return schema.Memory(v).Why },
			[]door{
				{"init --memory", initWith("--memory", "V")},
				{"validate memory", validate("sandbox.yaml", sandbox("memory: \"V\"\n"))},
			}},
	}
	for _, r := range rules {
		for _, v := range r.values {
			for _, d := range r.doors {
				t.Run(r.kind+"/"+v+"/"+d.name, func(t *testing.T) {
					h := newHarness(t, map[string]string{"OPENCODE_API_KEY": "x"})
					h.t = t
					code := d.run(h, v)
					all := h.out.String() + h.err.String()
					want := r.why(v)
					if code == 0 {
						t.Fatalf("%s %q was accepted\n%s", d.name, v, all)
					}
					if !strings.Contains(all, want) {
						t.Errorf("%s %q: the output does not give the rule's reason %q:\n%s", d.name, v, want, all)
					}
					if _, err := os.Stat(filepath.Join(filepath.Dir(h.dir), "fresh")); err == nil {
						t.Errorf("%s %q wrote a folder", d.name, v)
					}
				})
			}
		}
	}
}

func mustPort(s string) schema.PortSpec {
	p, err := schema.ParsePort(s)
	if err != nil {
		panic(err)
	}
	return p
}
