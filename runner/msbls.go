package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The labels asb puts on each VM it creates (Taskfile.yml's vm:create):
// whose VM it is. msb 0.7 has labels on sandboxes only, not on volumes or
// images; those are told apart through the VMs that use them.
const (
	LabelFolder  = "asb.folder"  // the outer folder's absolute path on this machine
	LabelSession = "asb.session" // the session's name; "" for the folder's own VM
	LabelAgent   = "asb.agent"   // the agent it runs
	LabelHome    = "asb.home"    // the home volume it mounts at /home/dev
)

// Sandbox is one VM in msb's listing, with the labels msb inspect shows.
type Sandbox struct {
	Name    string            `json:"name"`
	Image   string            `json:"image"`
	Status  string            `json:"status"`
	Created time.Time         `json:"created_at"`
	Labels  map[string]string `json:"-"`
}

// Sandboxes lists every VM of this MSB_HOME (msb ls --format json) with
// each one's labels: msb inspect's (the listing has none), read once per
// VM and kept (fleetlabels.go). A VM that vanishes between the two is left
// out.
func (m MSB) Sandboxes(ctx context.Context) ([]Sandbox, error) {
	out, err := Output(ctx, "", m.bin(), "ls", "--format", "json")
	if err != nil {
		return nil, err
	}
	var vms []Sandbox
	if err := json.Unmarshal(bytes.TrimSpace(out), &vms); err != nil {
		return nil, fmt.Errorf("msb ls --format json: %w", err)
	}
	cache := m.labelCache(m.Home())
	defer func() { cache.save(vms) }()
	kept := make([]Sandbox, 0, len(vms))
	for _, vm := range vms {
		if labels, ok := cache.get(vm); ok {
			vm.Labels = labels
			kept = append(kept, vm)
			continue
		}
		raw, err := Output(ctx, "", m.bin(), "inspect", vm.Name, "--format", "json")
		if err != nil {
			continue // removed meanwhile
		}
		var rec struct {
			Config struct {
				Labels map[string]string `json:"labels"`
			} `json:"config"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("msb inspect %s --format json: %w", vm.Name, err)
		}
		vm.Labels = rec.Config.Labels
		cache.put(vm)
		kept = append(kept, vm)
	}
	return kept, nil
}

// Image is one image in msb's cache (msb image ls --format json).
type Image struct {
	Ref     string    `json:"reference"`
	Digest  string    `json:"digest"`
	Size    int64     `json:"size_bytes"`
	Created time.Time `json:"created_at"`
}

// Images lists msb's cached images.
func (m MSB) Images(ctx context.Context) ([]Image, error) {
	out, err := Output(ctx, "", m.bin(), "image", "ls", "--format", "json")
	if err != nil {
		return nil, err
	}
	var imgs []Image
	if err := json.Unmarshal(bytes.TrimSpace(out), &imgs); err != nil {
		return nil, fmt.Errorf("msb image ls --format json: %w", err)
	}
	return imgs, nil
}

// Volume is one named volume (msb volume ls --format json). msb 0.7.2
// reports used_bytes 0 for a dir volume: asb measures its folder itself.
type Volume struct {
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Used    int64     `json:"used_bytes"`
	Created time.Time `json:"created_at"`
}

// VolumeInfo lists msb's volumes with what msb says of them.
func (m MSB) VolumeInfo(ctx context.Context) ([]Volume, error) {
	out, err := Output(ctx, "", m.bin(), "volume", "ls", "--format", "json")
	if err != nil {
		return nil, err
	}
	var vols []Volume
	if err := json.Unmarshal(bytes.TrimSpace(out), &vols); err != nil {
		return nil, fmt.Errorf("msb volume ls --format json: %w", err)
	}
	return vols, nil
}

// Home is msb's state folder: $MSB_HOME, or ~/.microsandbox. A VM's disk
// is Home/sandboxes/NAME and a volume's Home/volumes/NAME (msb 0.7.2).
func (m MSB) Home() string {
	if h := m.getenv("MSB_HOME"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".microsandbox")
}
