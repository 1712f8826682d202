package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// PruneOptions steer PrunePlan.
type PruneOptions struct {
	Now       time.Time
	OlderThan time.Duration // only what is at least this old (by created_at)
	// Volumes are volumes the user named: removed even when their folder
	// is still there (never while a VM that stays mounts them).
	Volumes []string
	// SessionGone says whether a session of a folder that exists has
	// ended (asb session's record); a volume only that session's VMs
	// mount goes with it. nil: asb cannot tell, the volume stays.
	SessionGone func(folder, session string) bool
}

// Removal is one thing asb prune removes, and why.
type Removal struct {
	Kind string `json:"kind"` // "vm", "volume", "image"
	Name string `json:"name"`
	Owner
	Bytes int64  `json:"disk_bytes"`
	Why   string `json:"why"`
}

// stoppedStatus: msb's statuses of a VM that runs nothing.
var stoppedStatus = []string{"stopped", "crashed", "failed", "exited"}

// PrunePlan is what asb prune removes: asb's VMs that are stopped, the
// volumes whose outer folder is gone (and those named), and asb's images
// no remaining VM uses. A VM that runs or boots, anything not asb's, and
// the home volume of a folder still there (unless named) stay.
func (f Fleet) PrunePlan(o PruneOptions) []Removal {
	old := func(t time.Time) bool { return o.OlderThan <= 0 || !t.IsZero() && o.Now.Sub(t) >= o.OlderThan }
	var plan []Removal
	gone := map[string]bool{}
	for _, vm := range f.VMs {
		if vm.Folder == "" || !slices.Contains(stoppedStatus, strings.ToLower(vm.Status)) || !old(vm.Created) {
			continue
		}
		why := "stopped"
		if vm.FolderGone {
			why += "; its folder is gone"
		}
		gone[vm.Name] = true
		plan = append(plan, Removal{Kind: "vm", Name: vm.Name, Owner: vm.Owner, Bytes: vm.Bytes, Why: why})
	}
	staying := func(users []string) bool {
		return slices.ContainsFunc(users, func(u string) bool { return !gone[u] })
	}
	for _, v := range f.Volumes {
		if staying(v.UsedBy) {
			continue
		}
		if why := volumeWhy(v, o, old); why != "" {
			plan = append(plan, Removal{Kind: "volume", Name: v.Name, Owner: v.Owner, Bytes: v.Bytes, Why: why})
		}
	}
	for _, img := range f.Images {
		if img.Folder == "" || staying(img.UsedBy) || !old(img.Created) {
			continue
		}
		plan = append(plan, Removal{Kind: "image", Name: img.Ref, Owner: img.Owner, Bytes: img.Bytes, Why: "no VM uses it"})
	}
	kinds := []string{"vm", "volume", "image"} // the order they are removed in
	slices.SortStableFunc(plan, func(a, b Removal) int {
		return cmp.Or(cmp.Compare(slices.Index(kinds, a.Kind), slices.Index(kinds, b.Kind)), strings.Compare(a.Name, b.Name))
	})
	return plan
}

// volumeWhy is why a volume no remaining VM mounts goes, or "" when it
// stays: named, its folder gone, or its session ended (old enough).
func volumeWhy(v FleetVolume, o PruneOptions, old func(time.Time) bool) string {
	switch {
	case slices.Contains(o.Volumes, v.Name):
		return "named on the command line"
	case v.Folder == "" || !old(v.Created):
		return ""
	case v.FolderGone:
		return "its folder is gone"
	case v.Session != "" && o.SessionGone != nil && o.SessionGone(v.Folder, v.Session):
		return "its session is gone"
	}
	return ""
}

// Remove carries out one removal with msb.
func (m MSB) Remove(ctx context.Context, r Removal) error {
	var args []string
	switch r.Kind {
	case "vm":
		args = []string{"remove", "--quiet", r.Name}
	case "volume":
		args = []string{"volume", "rm", "--quiet", r.Name}
	case "image":
		args = []string{"image", "rm", "--quiet", r.Name}
	default:
		return fmt.Errorf("asb cannot remove a %s", r.Kind)
	}
	_, err := Output(ctx, "", m.bin(), args...)
	return err
}
