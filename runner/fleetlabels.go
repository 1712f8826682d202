package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/agents-sandbox/asb/generator"
)

// msb ls lists no labels (0.7.2 to 0.7.8), and msb inspect shows one
// sandbox's: read naively, asb ls, df and prune --dry-run would start one
// msb per VM. So what msb inspect showed is kept, per VM, under the name and
// the creation time msb ls lists: a VM made again under the same name is a
// new key. asb never changes a VM's labels; msb modify --label can, and a
// listing may then show the old ones until the VM is made again, which is
// why prune reads every VM afresh before it removes anything (MSB.Fresh).
// The cache is this user's (in the state folder), one file per MSB_HOME.

type labelEntry struct {
	Created int64             `json:"created_ns"`
	Labels  map[string]string `json:"labels"`
}

type labelFile struct {
	Home string                `json:"msb_home"`
	VMs  map[string]labelEntry `json:"vms"`
}

// labelCache is the file of home's labels, nil when there is no state
// folder to keep it in.
type labelCache struct {
	dir, name string
	f         labelFile
	changed   bool
}

func (m MSB) labelCache(home string) *labelCache {
	if m.Fresh {
		return nil
	}
	state, err := StateDir(m.getenv)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256([]byte(home))
	c := &labelCache{dir: filepath.Join(state, "msb-labels"), name: hex.EncodeToString(sum[:8]) + ".json"}
	raw, err := os.ReadFile(filepath.Join(c.dir, c.name))
	if err != nil || json.Unmarshal(raw, &c.f) != nil || c.f.Home != home {
		c.f = labelFile{Home: home}
	}
	if c.f.VMs == nil {
		c.f.VMs = map[string]labelEntry{}
	}
	return c
}

// get returns vm's labels when they are known for the VM msb lists now.
func (c *labelCache) get(vm Sandbox) (map[string]string, bool) {
	if c == nil {
		return nil, false
	}
	e, ok := c.f.VMs[vm.Name]
	return e.Labels, ok && !vm.Created.IsZero() && e.Created == vm.Created.UnixNano()
}

func (c *labelCache) put(vm Sandbox) {
	if c == nil || vm.Created.IsZero() {
		return
	}
	c.f.VMs[vm.Name] = labelEntry{Created: vm.Created.UnixNano(), Labels: vm.Labels}
	c.changed = true
}

// save keeps the entries of the VMs listed, and only those.
func (c *labelCache) save(listed []Sandbox) {
	if c == nil {
		return
	}
	keep := map[string]bool{}
	for _, vm := range listed {
		keep[vm.Name] = true
	}
	for n := range c.f.VMs {
		if !keep[n] {
			delete(c.f.VMs, n)
			c.changed = true
		}
	}
	if !c.changed {
		return
	}
	raw, err := json.Marshal(c.f)
	if err != nil || os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	_ = generator.WriteFileAtomic(c.dir, c.name, raw, 0o600) // a cache: lost, it is made again
}
