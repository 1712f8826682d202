package fakes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agents-sandbox/asb/host"
)

// msbStorage is msb df and msb prune, which msb has from 0.7.7 on (an
// older release does not know the words, as msb 0.7.2 does not).
func (e *env) msbStorage(cmd string, args []string) error {
	caps, err := host.CapsOf(fakeVersion())
	if err != nil {
		return err
	}
	if !caps.DfPrune {
		return exitError{2, fmt.Sprintf("error: unrecognized subcommand '%s'", cmd)}
	}
	if cmd == "df" {
		_, err := fmt.Fprintln(e.stdout, "TYPE       COUNT  IN USE  LOGICAL SIZE  RECLAIMABLE\nimages     -      -       -             -")
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "fake msb prune %s: 0 files\n", strings.Join(args, " "))
	return err
}

// fakeImageSize is what an image loaded without a size weighs.
const fakeImageSize = 4096

// VMDiskBytes is what the stand-in writes as a VM's disk
// ($MSB_HOME/sandboxes/NAME/upper.ext4, as msb 0.7.2 lays it out).
const VMDiskBytes = 64 << 10

// NowEnv, an RFC 3339 time, is the stand-in's clock (created_at).
const NowEnv = "ASB_FAKE_NOW"

func now() string {
	if v := os.Getenv(NowEnv); v != "" {
		return v
	}
	return time.Now().UTC().Format(time.RFC3339Nano)
}

// parseLabels reads --label KEY[=VALUE] as msb 0.7.2 does: a bare key is an
// empty value, an empty key and msb's reserved prefixes are refused; the
// flags win over the config file's labels.
func parseLabels(base map[string]string, flagValues []string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for _, l := range flagValues {
		k, v, _ := strings.Cut(l, "=")
		if k == "" {
			return nil, fail("error: invalid config: label key must not be empty")
		}
		for _, p := range []string{"sandbox.", "microsandbox.", "service."} {
			if strings.HasPrefix(k, p) {
				return nil, fail("error: invalid config: label key '%s' uses reserved prefix '%s'", k, p)
			}
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// msbList is `msb ls [--running|--stopped] [--label K=V]… [--format json|-q]`
// in msb 0.7.2's shapes: JSON objects of name, image, status and
// created_at, newest first; labels are not in it (msb inspect has them).
func (e *env) msbList(args []string) error {
	fl, _, _ := flags(args, "--format", "--label")
	vms, err := e.vms()
	if err != nil {
		return err
	}
	type row struct {
		Created string `json:"created_at"`
		Image   string `json:"image"`
		Name    string `json:"name"`
		Status  string `json:"status"`
	}
	rows := []row{}
	for _, vm := range vms {
		if !matches(vm, fl) {
			continue
		}
		rows = append(rows, row{vm.Created, vm.Image, vm.Name, vm.Status})
	}
	if fl["-q"] != nil || fl["--quiet"] != nil {
		for _, r := range rows {
			fmt.Fprintln(e.stdout, r.Name)
		}
		return nil
	}
	if last(fl["--format"]) != "json" {
		if len(rows) == 0 {
			_, err := fmt.Fprintln(e.stdout, "No sandboxes found.")
			return err
		}
		fmt.Fprintln(e.stdout, "NAME    IMAGE    STATUS    CREATED")
		for _, r := range rows {
			fmt.Fprintf(e.stdout, "%s    %s    %s    %s\n", r.Name, r.Image, strings.ToLower(r.Status), r.Created)
		}
		return nil
	}
	return e.encode(rows)
}

func matches(vm VMRecord, fl map[string][]string) bool {
	if fl["--running"] != nil && vm.Status != "Running" || fl["--stopped"] != nil && vm.Status != "Stopped" {
		return false
	}
	for _, l := range fl["--label"] {
		k, v, _ := strings.Cut(l, "=")
		if got, ok := vm.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// vms reads every VM record, newest first.
func (e *env) vms() ([]VMRecord, error) {
	names, err := e.names("msb-vms")
	if err != nil {
		return nil, err
	}
	var out []VMRecord
	for _, n := range names {
		var vm VMRecord
		if err := e.get("msb-vms", n, &vm); err != nil {
			return nil, err
		}
		out = append(out, vm)
	}
	slices.SortFunc(out, func(a, b VMRecord) int { return strings.Compare(b.Created+b.Name, a.Created+a.Name) })
	return out, nil
}

func (e *env) encode(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// imageList is `msb image ls --format json` (or -q) in 0.7.2's shape.
func (e *env) imageList(args []string) error {
	fl, _, _ := flags(args, "--format")
	refs, err := e.names("msb-images")
	if err != nil {
		return err
	}
	slices.Sort(refs)
	type row struct {
		Arch    string `json:"architecture"`
		Created string `json:"created_at"`
		Digest  string `json:"digest"`
		Layers  int    `json:"layer_count"`
		OS      string `json:"os"`
		Ref     string `json:"reference"`
		Size    int64  `json:"size_bytes"`
	}
	rows := []row{}
	for _, r := range refs {
		var img msbImage
		if err := e.get("msb-images", r, &img); err != nil {
			return err
		}
		rows = append(rows, row{"amd64", img.Created, "sha256:" + img.ID, 1, "linux", img.Reference, img.Size})
	}
	if last(fl["--format"]) != "json" {
		for _, r := range rows {
			fmt.Fprintln(e.stdout, r.Ref)
		}
		return nil
	}
	return e.encode(rows)
}

// imageRemove is `msb image rm REF…`. Like msb 0.7.2, it removes an
// image a stopped VM still names (checked against the real binary).
func (e *env) imageRemove(args []string) error {
	_, pos, _ := flags(args)
	for _, ref := range pos {
		ref = normRef(ref)
		if !e.exists("msb-images", ref) {
			return fail("error: image not found: %s", ref)
		}
		if err := os.Remove(e.path("msb-images", ref)); err != nil {
			return err
		}
	}
	return nil
}

// volumeList prints `msb volume ls --format json` in 0.7.2's shape (a dir
// volume's used_bytes is 0 there: msb does not measure it).
func (e *env) volumeList() error {
	names, err := e.names("msb-volumes")
	if err != nil {
		return err
	}
	slices.Sort(names)
	vols := []map[string]any{}
	for _, n := range names {
		var rec map[string]string
		if err := e.get("msb-volumes", n, &rec); err != nil {
			return err
		}
		vols = append(vols, map[string]any{"name": n, "kind": "dir", "used_bytes": 0, "capacity_bytes": nil,
			"created_at": rec["created_at"], "disk_format": nil, "disk_fstype": nil, "quota_mib": nil})
	}
	return e.encode(vols)
}

// vmDisk makes (or removes) the VM's folder under $MSB_HOME/sandboxes, as
// msb does, so disk usage can be measured; without MSB_HOME it does nothing.
func (e *env) vmDisk(name string, create bool) error {
	home := os.Getenv("MSB_HOME")
	if home == "" {
		return nil
	}
	dir := filepath.Join(home, "sandboxes", name)
	if !create {
		return os.RemoveAll(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "upper.ext4"), make64k(), 0o644)
}

func make64k() []byte {
	b := make([]byte, VMDiskBytes)
	for i := range b {
		b[i] = byte(i) // not sparse: every block allocated
	}
	return b
}

// volumeDir makes (or removes) $MSB_HOME/volumes/NAME, as msb does for a
// dir volume.
func (e *env) volumeDir(name string, create bool) error {
	home := os.Getenv("MSB_HOME")
	if home == "" {
		return nil
	}
	dir := filepath.Join(home, "volumes", name)
	if create {
		return os.MkdirAll(dir, 0o755)
	}
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Seed records, in the stand-in's state, VMs, their home volumes and one
// image, as msb create, volume create and load would leave them but
// without a process or a disk each: a fleet of hundreds costs a few files
// (the benchmark's fleet, asb ls at 200 VMs). A VM's Status is kept as
// given ("Running" has no lifecycle lock: a check of it asks msb).
func Seed(state string, vms []VMRecord, volumes []string, image string) error {
	e := &env{state: state}
	for _, vm := range vms {
		if vm.Created == "" {
			vm.Created = now()
		}
		if err := e.put("msb-vms", vm.Name, vm); err != nil {
			return err
		}
	}
	for _, v := range volumes {
		if err := e.put("msb-volumes", v, map[string]string{"name": v, "kind": "dir", "created_at": now()}); err != nil {
			return err
		}
	}
	if image == "" {
		return nil
	}
	ref := normRef(image)
	return e.put("msb-images", ref, msbImage{Reference: ref, ID: Digest(ref), Size: fakeImageSize, Created: now()})
}
