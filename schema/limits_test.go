package schema_test

import (
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

func TestLimitRule(t *testing.T) {
	for _, tc := range []struct {
		name, value, why string // why "" accepts
	}{
		{"idle-timeout", "30m", ""},
		{"idle-timeout", "90s", ""},
		{"idle-timeout", "12h", ""},
		{"idle-timeout", "3600", ""},
		{"idle-timeout", "0", "is zero: not supported by asb"},
		{"idle-timeout", "0m", "is zero: not supported by asb"},
		{"idle-timeout", "1h30m", "is not a duration msb reads"},
		{"max-duration", "1d", "is not a duration msb reads"},
		{"max-duration", "1.5h", "is not a duration msb reads"},
		{"root-disk", "16G", ""},
		{"root-disk", "1.5G", ""},
		{"root-disk", "512M", "too small for the root disk"},
		{"root-disk", "4T", "is not a size msb reads"},
		{"root-disk", "4GiB", "is not a size msb reads"},
		{"container-disk", "256M", ""},
		{"container-disk", "255M", "too small"},
		{"tmp-size", "64M", ""},
		{"workspace-quota", "20G", ""},
		{"workspace-quota", "0", "is not a size msb reads"},
		{"memory", "4G", "is not a limit asb knows"},
	} {
		re := schema.Limit(tc.name, tc.value)
		switch {
		case tc.why == "" && re != nil:
			t.Errorf("Limit(%s, %q) = %v, want accepted", tc.name, tc.value, re)
		case tc.why != "" && (re == nil || !strings.Contains(re.Why, tc.why)):
			t.Errorf("Limit(%s, %q) = %v, want %q", tc.name, tc.value, re, tc.why)
		}
	}
}

func TestDurationSeconds(t *testing.T) {
	for in, want := range map[string]int64{"30m": 1800, "90s": 90, "12h": 43200, "45": 45} {
		if got := schema.DurationSeconds(in); got != want {
			t.Errorf("DurationSeconds(%q) = %d, want %d", in, got, want)
		}
	}
}

// Every limit the table names is one of the init flags (InitOptions) but
// max-duration, which asb init leaves unset (it stops a VM in use).
func TestLimitsHaveAFlag(t *testing.T) {
	o := schema.InitOptions{}
	for _, l := range schema.Limits {
		if l.Name == schema.LimitMaxDuration {
			continue
		}
		bad := "x"
		if l.Kind == "size" {
			bad = "1K"
		}
		o2 := o
		switch l.Name {
		case schema.LimitIdleTimeout:
			o2.IdleTimeout = bad
		case schema.LimitRootDisk:
			o2.RootDisk = bad
		case schema.LimitTmpSize:
			o2.TmpSize = bad
		case schema.LimitWorkspaceQuota:
			o2.WorkspaceQuota = bad
		case schema.LimitContainerDisk:
			o2.ContainerDisk = bad
		default:
			t.Fatalf("limit %s has no init flag", l.Name)
		}
		o2.Agent, o2.Name, o2.CPUs, o2.Memory, o2.Network, o2.BaseImage = "opencode", "p", 2, "4G", "allow", "debian:trixie-slim"
		err := o2.Validate()
		if err == nil || !strings.Contains(err.Error(), "--"+l.Name) {
			t.Errorf("--%s %s: Validate = %v, want the flag named", l.Name, bad, err)
		}
	}
}
